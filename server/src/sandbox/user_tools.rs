//! A person's own tools (`PUT /api/tools/{name}`): checked as they are uploaded (the
//! name, the manifest, and the module as any sandboxed tool's), kept in the database so
//! every instance has them, and made ready for that person's runs alone. Compiled modules
//! are kept in memory by digest (and on disk in the sandbox's cache), so a run costs one
//! read of the person's manifests.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::engine::Sandbox;
use super::manifest::{check_name, Manifest};
use super::program::Program;
use super::tool::WasmTool;
use crate::agent::tools::{Tool, Workspaces};
use crate::domain::UserId;
use crate::store::{StoreError, UserTools};

/// The most modules kept compiled in memory; past it the map starts again (each is read
/// back from the disk cache in milliseconds).
const MAX_PROGRAMS: usize = 256;

/// Why an upload is refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UploadError {
    /// The module is larger than `--max-tool-module-bytes` (413).
    #[error("the module takes {bytes} bytes; at most {max}")]
    TooLarge { bytes: usize, max: usize },
    /// The name, the manifest or the module cannot be a tool (422).
    #[error("{0}")]
    Invalid(String),
}

/// An upload that passed every check, ready to store.
pub struct CheckedTool {
    pub manifest: Manifest,
    pub program: Program,
}

/// People's own tools, for their runs.
pub struct UserToolbox {
    sandbox: Arc<Sandbox>,
    workspaces: Arc<Workspaces>,
    max_module_bytes: usize,
    programs: Mutex<HashMap<String, Program>>,
}

impl UserToolbox {
    /// People's tools, run in `sandbox`, seeing `workspaces` as their manifests say, each
    /// module at most `max_module_bytes`.
    pub fn new(
        sandbox: Arc<Sandbox>,
        workspaces: Arc<Workspaces>,
        max_module_bytes: usize,
    ) -> Self {
        Self {
            sandbox,
            workspaces,
            max_module_bytes,
            programs: Mutex::new(HashMap::new()),
        }
    }

    /// The most bytes a module may take.
    pub fn max_module_bytes(&self) -> usize {
        self.max_module_bytes
    }

    /// Checks an upload: the name (not one of `taken`), the manifest, and the module,
    /// which is compiled (slow for a large one: call it off the async workers).
    pub fn check(
        &self,
        name: &str,
        manifest: &[u8],
        module: &[u8],
        taken: impl Fn(&str) -> bool,
    ) -> Result<CheckedTool, UploadError> {
        if module.len() > self.max_module_bytes {
            return Err(UploadError::TooLarge {
                bytes: module.len(),
                max: self.max_module_bytes,
            });
        }
        check_name(name).map_err(UploadError::Invalid)?;
        if taken(name) {
            return Err(UploadError::Invalid(format!(
                "a tool of the server is named `{name}`; pick another name"
            )));
        }
        let manifest = Manifest::parse(manifest).map_err(UploadError::Invalid)?;
        let program = self
            .sandbox
            .prepare(module)
            .map_err(|e| UploadError::Invalid(format!("the module cannot be a tool: {e}")))?;
        self.keep(&program);
        Ok(CheckedTool { manifest, program })
    }

    /// `user`'s tools as tools of their runs, by name. A stored tool that no longer loads
    /// (its module gone, or refused by a stricter server) is left out and logged.
    pub async fn tools_of<S: UserTools>(
        &self,
        store: &S,
        user: UserId,
    ) -> Result<Vec<Arc<dyn Tool>>, StoreError> {
        let rows = store.user_tools(user).await?;
        let mut tools: Vec<Arc<dyn Tool>> = Vec::with_capacity(rows.len());
        for row in rows {
            let manifest = match Manifest::parse(row.manifest.as_bytes()) {
                Ok(manifest) => manifest,
                Err(why) => {
                    tracing::warn!(%user, tool = %row.name, %why, "a stored tool does not load");
                    continue;
                }
            };
            let known = self.programs.lock().map(|p| p.get(&row.digest).cloned());
            let program = match known.ok().flatten() {
                Some(program) => program,
                None => {
                    let Some(module) = store.user_tool_module(user, &row.name, &row.digest).await?
                    else {
                        continue;
                    };
                    let sandbox = self.sandbox.clone();
                    let prepared = tokio::task::spawn_blocking(move || sandbox.prepare(&module));
                    match prepared.await {
                        Ok(Ok(program)) => {
                            self.keep(&program);
                            program
                        }
                        Ok(Err(why)) => {
                            tracing::warn!(%user, tool = %row.name, %why, "a stored tool does not load");
                            continue;
                        }
                        Err(_) => continue,
                    }
                }
            };
            let tool = WasmTool::new(
                row.name,
                manifest,
                program,
                self.sandbox.clone(),
                self.workspaces.clone(),
            );
            tools.push(Arc::new(tool));
        }
        Ok(tools)
    }

    fn keep(&self, program: &Program) {
        if let Ok(mut programs) = self.programs.lock() {
            if programs.len() >= MAX_PROGRAMS {
                programs.clear();
            }
            programs.insert(program.digest.clone(), program.clone());
        }
    }
}
