//! A module made ready to call: checked to be a WASI preview 1 command that imports
//! nothing else, compiled once (or read back from the cache of compiled modules), and
//! linked ahead of its calls, so a call only instantiates it.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::{Engine, ExternType, InstancePre, Linker, Module};

use super::state::CallState;

/// The one module WASI preview 1 commands import from; a module that imports anything
/// else could reach what the sandbox does not grant.
pub const WASI_MODULE: &str = "wasi_snapshot_preview1";

/// A checked, compiled and linked module.
#[derive(Clone)]
pub struct Program {
    pub(super) pre: InstancePre<CallState>,
    /// The SHA-256 of the module's bytes, in hex.
    pub digest: String,
}

/// Why a module cannot be a tool.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProgramError {
    #[error("it is not a WebAssembly module: {0}")]
    NotWasm(String),
    #[error("it imports `{module}.{name}`; a tool may import only from `{WASI_MODULE}`")]
    ForbiddenImport { module: String, name: String },
    #[error("it imports what WASI preview 1 does not have: {0}")]
    UnknownImport(String),
    #[error("it exports no `_start` function taking and returning nothing (a WASI command)")]
    NoStart,
}

/// Checks, compiles (or reads from `cache`) and links `bytes`.
pub fn prepare(
    engine: &Engine,
    linker: &Linker<CallState>,
    cache: Option<&Path>,
    bytes: &[u8],
) -> Result<Program, ProgramError> {
    let digest = format!("{:x}", Sha256::digest(bytes));
    let module = match cache {
        Some(cache) => cached(engine, &cache.join(cache_name(engine, &digest)), bytes)?,
        None => compile(engine, bytes)?,
    };
    for import in module.imports() {
        if import.module() != WASI_MODULE {
            return Err(ProgramError::ForbiddenImport {
                module: import.module().to_string(),
                name: import.name().to_string(),
            });
        }
    }
    let starts = match module.get_export("_start") {
        Some(ExternType::Func(func)) => func.params().len() == 0 && func.results().len() == 0,
        _ => false,
    };
    if !starts {
        return Err(ProgramError::NoStart);
    }
    // Every import is WASI's by now; one WASI preview 1 does not have fails to link.
    let pre = linker
        .instantiate_pre(&module)
        .map_err(|e| ProgramError::UnknownImport(format!("{e:#}")))?;
    Ok(Program { pre, digest })
}

fn compile(engine: &Engine, bytes: &[u8]) -> Result<Module, ProgramError> {
    Module::from_binary(engine, bytes).map_err(|e| ProgramError::NotWasm(format!("{e:#}")))
}

/// The module compiled from `bytes`, read from `path` if an earlier start compiled it,
/// else compiled and written there (by rename, so a reader never sees half a file). One
/// compiler at a time per module: instances (or test processes) that start together wait
/// for the first to write it (a file lock beside it), then read it.
fn cached(engine: &Engine, path: &Path, bytes: &[u8]) -> Result<Module, ProgramError> {
    if let Some(module) = read_cache(engine, path) {
        return Ok(module);
    }
    let _compiling = lock_beside(path);
    if let Some(module) = read_cache(engine, path) {
        return Ok(module);
    }
    let module = compile(engine, bytes)?;
    if let Err(error) = write_cache(path, &module) {
        tracing::warn!(%error, path = %path.display(), "cannot cache a compiled module");
    }
    Ok(module)
}

fn read_cache(engine: &Engine, path: &Path) -> Option<Module> {
    if !path.is_file() {
        return None;
    }
    // SAFETY: the cache folder is the server's own: only `cached` writes it, with what
    // `Module::serialize` made for this engine's configuration (its name carries the
    // configuration's hash and the module's digest), and Wasmtime checks the version and
    // configuration again as it reads. An operator who lets others write the folder lets
    // them run native code in the server.
    match unsafe { Module::deserialize_file(engine, path) } {
        Ok(module) => Some(module),
        Err(error) => {
            tracing::warn!(%error, path = %path.display(), "recompiling a cached module");
            None
        }
    }
}

/// The exclusive lock of `path`'s `.lock` file, held until dropped; none if the file
/// cannot be made (each then compiles on its own, as without a cache).
fn lock_beside(path: &Path) -> Option<std::fs::File> {
    std::fs::create_dir_all(path.parent()?).ok()?;
    let file = std::fs::File::create(path.with_extension("lock")).ok()?;
    file.lock().ok()?;
    Some(file)
}

fn write_cache(path: &Path, module: &Module) -> anyhow::Result<()> {
    let folder = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(folder)?;
    let serialized = module.serialize()?;
    let mut temp = tempfile::NamedTempFile::new_in(folder)?;
    std::io::Write::write_all(&mut temp, &serialized)?;
    temp.persist(path)?;
    Ok(())
}

/// The cache's file name for a module of `digest` compiled by `engine`.
fn cache_name(engine: &Engine, digest: &str) -> PathBuf {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    PathBuf::from(format!("{digest}-{:016x}.cwasm", hasher.finish()))
}
