//! What a sandboxed call sees of its user's workspace: the folder preopened at
//! `/workspace`, read-only or read-write.
//!
//! WASI resolves every path beneath the folder (cap-std: `..`, absolute paths and
//! symbolic links that lead out are refused). Two defences are the sandbox's own, as
//! `write_file` has them: a folder that holds a hard link (a file with another name,
//! perhaps outside the folder) is not opened at all, and a call that may write holds the
//! folder's lock for its whole run (one writer at a time, the file tools included) and is
//! stopped once the folder passes the user's quota (measured every few epoch ticks).

use std::path::{Path, PathBuf};

use cap_std::fs::{Dir, MetadataExt};

use crate::agent::tools::workspace::{LockedFolder, Workspaces};
use crate::agent::tools::workspace_usage::usage;
use crate::domain::UserName;

/// The deepest the hard-link search goes (the file tools nest no deeper).
const MAX_DEPTH: usize = 128;

/// A user's workspace folder, opened for one call.
pub struct WorkspaceAccess {
    folder: LockedFolder,
    writes: bool,
    quota: u64,
}

impl WorkspaceAccess {
    /// Opens `user`'s folder for a call that reads it, or reads and writes it (`writes`).
    pub fn open(workspaces: &Workspaces, user: &UserName, writes: bool) -> Result<Self, String> {
        let folder = workspaces
            .open_folder(user, writes)
            .map_err(|e| format!("cannot open the workspace: {e}"))?;
        if let Some(linked) = hard_link_in(&folder.dir, Path::new(""), 0)
            .map_err(|e| format!("cannot look through the workspace: {e}"))?
        {
            return Err(format!(
                "the workspace holds `{}`, a file with another name too (a hard link); a \
                 sandboxed tool may not open the workspace while it does",
                linked.display()
            ));
        }
        let access = WorkspaceAccess {
            folder,
            writes,
            quota: workspaces.quota(),
        };
        if access.over_quota() {
            return Err(format!(
                "the workspace holds more than its quota of {} bytes",
                access.quota
            ));
        }
        Ok(access)
    }

    /// The folder's path on the host.
    pub fn path(&self) -> &Path {
        &self.folder.path
    }

    /// Whether the call may write.
    pub fn writes(&self) -> bool {
        self.writes
    }

    /// Whether a call that may write has passed the quota (or the folder cannot be
    /// measured); never for a call that only reads.
    pub fn over_quota(&self) -> bool {
        self.writes && usage(&self.folder.dir).map_or(true, |used| used > self.quota)
    }
}

/// The first file beneath `dir` with more than one link, by its path from the folder.
fn hard_link_in(dir: &Dir, at: &Path, depth: usize) -> std::io::Result<Option<PathBuf>> {
    if depth > MAX_DEPTH {
        return Err(std::io::Error::other(
            "the workspace nests folders too deep",
        ));
    }
    for entry in dir.entries()? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let path = at.join(entry.file_name());
        if kind.is_dir() {
            if let Some(found) = hard_link_in(&entry.open_dir()?, &path, depth + 1)? {
                return Ok(Some(found));
            }
        } else if kind.is_file() && entry.metadata()?.nlink() > 1 {
            return Ok(Some(path));
        }
    }
    Ok(None)
}
