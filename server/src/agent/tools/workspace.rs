//! Where the file tools write: one folder per user under the workspace root, and no way
//! out of it.
//!
//! Paths are checked as text first ([`check_path`]: relative, plain components, no
//! dotfiles), then opened with `cap-std` beneath the user's folder, which refuses any
//! resolution that leaves it (`openat2` `RESOLVE_BENEATH` on Linux), symbolic links
//! included; the final component is never followed as a link. A file is never written in
//! place: a new one replaces it by rename ([`super::replace_file`]), and only a plain file
//! with one link is replaced, so a hard link planted inside cannot lead out either.
//! Folders are created `0700` and files `0600`. A per-user quota bounds what the folder
//! may hold, folders included ([`super::workspace_usage`]); a write that would pass it
//! changes nothing, and one user's writes take turns, across processes too.

use std::path::{Component, Path, PathBuf};

use cap_std::fs::{Dir, DirBuilder, DirBuilderExt};

use super::replace_file::{existing_size, replace, Content, ReplaceError};
use super::workspace_usage::{folders_to_create, usage, FOLDER_BYTES};
use crate::domain::UserName;

/// Longest path accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 255;

/// How a write treats an existing file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    Replace,
    Append,
}

/// A user's workspace folder, opened for something other than the file tools (a
/// sandboxed call), perhaps holding its lock.
pub struct LockedFolder {
    /// Its path on the host.
    pub path: PathBuf,
    /// The folder.
    pub dir: Dir,
    /// The folder's lock, if taken: the file tools (and other holders) wait until it is
    /// dropped.
    _lock: Option<cap_std::fs::File>,
}

/// The workspaces of all users.
pub struct Workspaces {
    root: PathBuf,
    quota: u64,
    /// Writes are serialised so two runs cannot both pass the quota check.
    writes: tokio::sync::Mutex<()>,
}

impl Workspaces {
    /// Workspaces under `root`, each holding at most `quota` bytes.
    pub fn new(root: PathBuf, quota: u64) -> Self {
        Self {
            root,
            quota,
            writes: tokio::sync::Mutex::new(()),
        }
    }

    /// Bytes each user's folder may hold.
    pub fn quota(&self) -> u64 {
        self.quota
    }

    /// Opens `user`'s folder, created if missing; with `lock`, holds its lock (one writer
    /// at a time, as the file tools take it, across processes too) until it is dropped.
    /// Blocks: call it off the async workers.
    pub fn open_folder(&self, user: &UserName, lock: bool) -> std::io::Result<LockedFolder> {
        let dir = user_folder(&self.root, user)?;
        let lock = match lock {
            true => Some(self::lock(&dir)?),
            false => None,
        };
        Ok(LockedFolder {
            path: self.root.join(user.as_str()),
            dir,
            _lock: lock,
        })
    }

    /// Writes `content` to `path` in `user`'s workspace; returns the bytes written.
    pub async fn write(
        &self,
        user: &UserName,
        path: &str,
        content: Vec<u8>,
        mode: WriteMode,
    ) -> Result<u64, String> {
        check_path(path)?;
        let _one_at_a_time = self.writes.lock().await;
        let (root, user, path_owned, quota) = (
            self.root.clone(),
            user.clone(),
            path.to_string(),
            self.quota,
        );
        tokio::task::spawn_blocking(move || {
            write_beneath(&root, &user, &path_owned, &content, mode, quota)
        })
        .await
        .map_err(|_| format!("writing `{path}` failed unexpectedly"))?
    }
}

/// Checks a file tool's arguments: `path` (see [`check_path`]) and the text field
/// `field`, at most `max_bytes` bytes of UTF-8 (the schema can only count characters).
pub fn check_file_arguments(
    arguments: &serde_json::Value,
    field: &str,
    max_bytes: usize,
) -> Result<(), String> {
    check_path(arguments["path"].as_str().unwrap_or_default())?;
    let bytes = arguments[field].as_str().map_or(0, str::len);
    if bytes > max_bytes {
        return Err(format!(
            "`{field}` is {bytes} bytes; the most is {max_bytes}"
        ));
    }
    Ok(())
}

/// Checks a path as text: relative, 1 to [`MAX_PATH_BYTES`] bytes, only plain names, none
/// starting with `.` (no dotfiles, no `..`).
pub fn check_path(relative: &str) -> Result<(), String> {
    if relative.is_empty() || relative.len() > MAX_PATH_BYTES || relative.contains('\0') {
        return Err(format!("a path must be 1 to {MAX_PATH_BYTES} bytes"));
    }
    let plain = Path::new(relative).components().all(|part| match part {
        Component::Normal(name) => !name.to_string_lossy().starts_with('.'),
        _ => false,
    });
    if !plain {
        return Err(format!(
            "`{relative}` must be a relative path inside the workspace: no `/` at the start, \
             no `..`, no names starting with `.`"
        ));
    }
    Ok(())
}

/// Takes the exclusive advisory lock of a workspace folder (`flock`, on a descriptor of
/// its own: the folder's handle may not take locks), held until the returned file closes.
fn lock(dir: &Dir) -> std::io::Result<cap_std::fs::File> {
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true);
    let folder = dir.open_with(".", &options)?;
    rustix::fs::flock(&folder, rustix::fs::FlockOperation::LockExclusive)?;
    Ok(folder)
}

/// `user`'s folder under `root`, created (`0700`, the root too) if missing.
fn user_folder(root: &Path, user: &UserName) -> std::io::Result<Dir> {
    std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
        .create(root)?;
    let root = Dir::open_ambient_dir(root, cap_std::ambient_authority())?;
    root.create_dir_with(user.as_str(), &private_dirs())?;
    root.open_dir(user.as_str())
}

fn private_dirs() -> DirBuilder {
    let mut builder = DirBuilder::new();
    builder.recursive(true).mode(0o700);
    builder
}

fn write_beneath(
    root: &Path,
    user: &UserName,
    path: &str,
    content: &[u8],
    mode: WriteMode,
    quota: u64,
) -> Result<u64, String> {
    let failed = |what: &str, e: std::io::Error| format!("cannot {what} `{path}`: {e}");
    let dir = user_folder(root, user).map_err(|e| failed("open the workspace for", e))?;
    // One write at a time per workspace, across runs and processes sharing it: an append
    // reads the file and renames a longer copy over it, and the quota check reads the
    // workspace's size; two at once would lose a line or pass the quota together. The lock
    // goes with the folder's descriptor at the end of this function.
    let _locked = lock(&dir).map_err(|e| failed("lock the workspace for", e))?;
    let relative = Path::new(path);
    let name = Path::new(relative.file_name().unwrap_or_default());
    let refused = |e: ReplaceError| format!("cannot write `{path}`: {e}");
    let used = usage(&dir).map_err(|e| failed("measure the workspace for", e))?;
    let new_folders = folders_to_create(&dir, relative).map_err(|e| failed("look up", e))?;
    let existing = match new_folders {
        0 => existing_size(&dir, relative).map_err(refused)?,
        _ => None,
    };
    let replaced = match mode {
        WriteMode::Replace => existing.unwrap_or(0),
        WriteMode::Append => 0,
    };
    let after = used - replaced.min(used) + new_folders * FOLDER_BYTES + content.len() as u64;
    if after > quota {
        let folders = match new_folders {
            0 => String::new(),
            n => format!(" and {n} new folders of {FOLDER_BYTES} bytes each"),
        };
        return Err(format!(
            "writing `{path}`{folders} would exceed your workspace quota of {quota} bytes \
             ({used} used)"
        ));
    }
    let folder = match relative.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => {
            dir.create_dir_with(parent, &private_dirs())
                .map_err(|e| failed("create the folder for", e))?;
            dir.open_dir(parent)
        }
        None => dir.try_clone(),
    }
    .map_err(|e| failed("open the folder of", e))?;
    let written = content.len() as u64;
    let content = match mode {
        WriteMode::Replace => Content::Replace(content),
        WriteMode::Append => Content::Append(content),
    };
    replace(&folder, name, content).map_err(refused)?;
    Ok(written)
}

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;
