//! An operator's WebAssembly tools, from a folder (`--wasm-tools DIR`): every
//! `NAME.wasm` with its manifest `NAME.json` beside it is the tool `NAME`. Each module is
//! checked and compiled as the server starts; one that cannot be a tool stops the start
//! with a message that names its file and what is wrong.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::engine::Sandbox;
use super::manifest::{check_name, Manifest};
use super::tool::WasmTool;
use crate::agent::tools::Workspaces;

/// Why the folder's tools cannot be loaded.
#[derive(Debug, thiserror::Error)]
#[error("{}: {why}", path.display())]
pub struct FolderError {
    /// The file (or folder) at fault.
    pub path: PathBuf,
    /// What is wrong with it.
    pub why: String,
}

/// The tools of `folder`, in name order. `taken` says whether a name is already a tool's
/// (a built-in one).
pub fn load(
    folder: &Path,
    sandbox: &Arc<Sandbox>,
    workspaces: &Arc<Workspaces>,
    taken: impl Fn(&str) -> bool,
) -> Result<Vec<WasmTool>, FolderError> {
    let fault = |path: &Path, why: String| FolderError {
        path: path.to_path_buf(),
        why,
    };
    let entries = std::fs::read_dir(folder).map_err(|e| fault(folder, e.to_string()))?;
    let mut found: BTreeMap<String, (bool, bool)> = BTreeMap::new();
    for entry in entries {
        let path = entry.map_err(|e| fault(folder, e.to_string()))?.path();
        let (Some(stem), Some(extension)) = (path.file_stem(), path.extension()) else {
            continue;
        };
        let (stem, extension) = (stem.to_string_lossy(), extension.to_string_lossy());
        let seen = found.entry(stem.into_owned()).or_default();
        match extension.as_ref() {
            "wasm" => seen.0 = true,
            "json" => seen.1 = true,
            _ => {}
        }
    }
    let mut tools = Vec::new();
    for (name, (module, manifest)) in found {
        let wasm = folder.join(format!("{name}.wasm"));
        let json = folder.join(format!("{name}.json"));
        match (module, manifest) {
            (true, true) => {}
            (true, false) => {
                return Err(fault(&wasm, format!("no manifest `{name}.json` beside it")))
            }
            (false, true) => {
                return Err(fault(&json, format!("no module `{name}.wasm` beside it")))
            }
            (false, false) => continue,
        }
        check_name(&name).map_err(|why| fault(&wasm, why))?;
        if taken(&name) {
            return Err(fault(&wasm, format!("a built-in tool is named `{name}`")));
        }
        let manifest = std::fs::read(&json).map_err(|e| fault(&json, e.to_string()))?;
        let manifest = Manifest::parse(&manifest).map_err(|why| fault(&json, why))?;
        let bytes = std::fs::read(&wasm).map_err(|e| fault(&wasm, e.to_string()))?;
        let program = sandbox
            .prepare(&bytes)
            .map_err(|e| fault(&wasm, format!("it cannot be a tool: {e}")))?;
        let tool = WasmTool::new(name, manifest, program, sandbox.clone(), workspaces.clone());
        tools.push(tool);
    }
    Ok(tools)
}
