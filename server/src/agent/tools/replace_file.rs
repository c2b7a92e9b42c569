//! Writing a workspace file without ever writing into an existing inode.
//!
//! The new content (for an append: the file's content, read without following links,
//! then the new bytes) goes to a fresh temporary file in the same folder, created
//! exclusively with mode `0600` under a name starting with [`TEMP_PREFIX`] (no tool path
//! may start with `.`, so the model can never name one), is synced, then renamed over
//! the target. A reader sees the old file or the new one, never half of either; a hard
//! link planted in the folder keeps pointing at its own, untouched inode.
//!
//! An existing target must be a regular file with one link: a second name of the same
//! inode may be outside the workspace, and a symbolic link, folder or device is not a
//! file the tools write. A crash between creating and renaming leaves a temporary file;
//! [`is_stale_temp`] tells the workspace's measuring walk which ones to remove.
//!
//! It must not decide where a path may lead: the caller hands it a folder already opened
//! beneath the user's workspace (crate::agent::tools::workspace).

use std::ffi::OsStr;
use std::io::{self, Read, Write};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, Metadata, MetadataExt, OpenOptions, OpenOptionsExt};

/// How every temporary file's name starts.
pub const TEMP_PREFIX: &str = ".tandem-write-";
/// A temporary file older than this is a crash's leftover (a write of the largest file
/// the tools allow takes milliseconds), removed by the next write of its owner.
pub const STALE_TEMP_AFTER: Duration = Duration::from_secs(10 * 60);
/// How many fresh names are tried before giving up (a clash is already unlikely).
const TEMP_NAME_TRIES: usize = 8;

/// Why a file was not written.
#[derive(Debug, thiserror::Error)]
pub enum ReplaceError {
    #[error(
        "it has {0} hard links, and a file with more than one name may lead outside the \
         workspace; write to a new name instead"
    )]
    HardLinked(u64),
    #[error("it is not a regular file (a folder, a symbolic link or a device); write to a new name instead")]
    NotAFile,
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// How the new file's content is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content<'a> {
    /// Exactly these bytes.
    Replace(&'a [u8]),
    /// The existing file's bytes (none if there is no file), then these.
    Append(&'a [u8]),
}

/// The size of `name` in `dir` if it is a file the tools may replace, `None` if there is
/// no such name; an error for a link, a folder or a hard-linked file.
pub fn existing_size(dir: &Dir, name: &Path) -> Result<Option<u64>, ReplaceError> {
    match dir.symlink_metadata(name) {
        Ok(meta) => check_replaceable(&meta).map(|()| Some(meta.len())),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error.into()),
    }
}

/// Writes `content` as `name` in `dir` by a fresh temporary file renamed over it.
pub fn replace(dir: &Dir, name: &Path, content: Content<'_>) -> Result<(), ReplaceError> {
    existing_size(dir, name)?;
    let bytes = match content {
        Content::Replace(bytes) => bytes.to_vec(),
        Content::Append(more) => {
            let mut bytes = read_existing(dir, name)?;
            bytes.extend_from_slice(more);
            bytes
        }
    };
    let (temp_name, mut temp) = create_temp(dir)?;
    let written = temp
        .write_all(&bytes)
        .and_then(|()| temp.sync_all())
        .and_then(|()| dir.rename(&temp_name, dir, name));
    if let Err(error) = written {
        let _ = dir.remove_file(&temp_name);
        return Err(error.into());
    }
    // The rename is durable once the folder is synced too. The write is done either way:
    // a folder that cannot be synced is not a reason to report it failed.
    if let Err(error) = sync_folder(dir) {
        tracing::debug!(%error, "could not sync a workspace folder after a write");
    }
    Ok(())
}

/// Syncs the folder's entries (the rename) to disk.
fn sync_folder(dir: &Dir) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.read(true);
    dir.open_with(".", &options)?.sync_all()
}

/// Whether a folder entry is a temporary file of this module left by a crash.
pub fn is_stale_temp(name: &OsStr, meta: &Metadata) -> bool {
    let ours = name.to_str().is_some_and(|n| n.starts_with(TEMP_PREFIX));
    let age = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
        .saturating_sub(u64::try_from(meta.mtime()).unwrap_or(0));
    ours && meta.is_file() && age > STALE_TEMP_AFTER.as_secs()
}

/// A plain file with one link, or the reason it is not.
fn check_replaceable(meta: &Metadata) -> Result<(), ReplaceError> {
    if !meta.is_file() {
        return Err(ReplaceError::NotAFile);
    }
    if meta.nlink() > 1 {
        return Err(ReplaceError::HardLinked(meta.nlink()));
    }
    Ok(())
}

/// The bytes of `name` (none if it does not exist), opened without following a link and
/// checked again on the open handle, so a file swapped in after the first check is not
/// read either.
fn read_existing(dir: &Dir, name: &Path) -> Result<Vec<u8>, ReplaceError> {
    let mut options = OpenOptions::new();
    // O_NONBLOCK: opening a FIFO swapped in after the check cannot hang the write (the
    // check on the handle then refuses it); it changes nothing for a regular file.
    options.read(true).custom_flags(libc::O_NONBLOCK);
    options.follow(FollowSymlinks::No);
    let mut file = match dir.open_with(name, &options) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error.into()),
    };
    check_replaceable(&file.metadata()?)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// A new, empty `0600` file under a fresh [`TEMP_PREFIX`] name, created exclusively.
fn create_temp(dir: &Dir) -> io::Result<(String, cap_std::fs::File)> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true).mode(0o600);
    options.follow(FollowSymlinks::No);
    let mut last = io::Error::other("no temporary name was free");
    for _ in 0..TEMP_NAME_TRIES {
        let name = format!("{TEMP_PREFIX}{:016x}", fastrand::u64(..));
        match dir.open_with(&name, &options) {
            Ok(file) => return Ok((name, file)),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => last = error,
            Err(error) => return Err(error),
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_and_fifos_are_not_written_through() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("folder")).unwrap();
        let fifo = std::ffi::CString::new(root.path().join("pipe").to_str().unwrap()).unwrap();
        // SAFETY: a valid, NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let dir = Dir::open_ambient_dir(root.path(), cap_std::ambient_authority()).unwrap();
        for name in ["folder", "pipe"] {
            for content in [Content::Replace(b"x"), Content::Append(b"x")] {
                let refused = replace(&dir, Path::new(name), content);
                assert!(
                    matches!(refused, Err(ReplaceError::NotAFile)),
                    "{name} {content:?}: {refused:?}"
                );
            }
        }
    }
}
