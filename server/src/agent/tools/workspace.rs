//! Where the file tools write: one folder per user under the workspace root, and no way
//! out of it.
//!
//! Paths are checked as text first ([`check_path`]: relative, plain components, no
//! dotfiles), then opened with `cap-std` beneath the user's folder, which refuses any
//! resolution that leaves it (`openat2` `RESOLVE_BENEATH` on Linux), symbolic links
//! included; the final component is never followed as a link. Folders are created
//! `0700` and files `0600`. A per-user quota bounds what the folder may hold.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, DirBuilder, DirBuilderExt, OpenOptions, OpenOptionsExt};

use crate::domain::UserName;

/// Longest path accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 255;
/// Deepest folder nesting walked when measuring a workspace.
const MAX_WALK_DEPTH: usize = 32;

/// How a write treats an existing file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    Replace,
    Append,
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
    std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
        .create(root)
        .map_err(|e| failed("prepare the workspace for", e))?;
    let root = Dir::open_ambient_dir(root, cap_std::ambient_authority())
        .map_err(|e| failed("open the workspace for", e))?;
    root.create_dir_with(user.as_str(), &private_dirs())
        .map_err(|e| failed("prepare the workspace for", e))?;
    let dir = root
        .open_dir(user.as_str())
        .map_err(|e| failed("open the workspace for", e))?;
    let relative = Path::new(path);
    if let Some(parent) = relative.parent().filter(|p| !p.as_os_str().is_empty()) {
        dir.create_dir_with(parent, &private_dirs())
            .map_err(|e| failed("create the folder for", e))?;
    }
    let used = usage(&dir, 0).map_err(|e| failed("measure the workspace for", e))?;
    let existing = match (mode, dir.symlink_metadata(relative)) {
        (WriteMode::Replace, Ok(meta)) if meta.is_file() => meta.len(),
        _ => 0,
    };
    let after = used - existing.min(used) + content.len() as u64;
    if after > quota {
        return Err(format!(
            "writing `{path}` would exceed your workspace quota of {quota} bytes ({used} used)"
        ));
    }
    let mut options = OpenOptions::new();
    options.write(true).create(true).mode(0o600);
    options.follow(FollowSymlinks::No);
    match mode {
        WriteMode::Replace => options.truncate(true),
        WriteMode::Append => options.append(true),
    };
    let mut file = dir
        .open_with(relative, &options)
        .map_err(|e| failed("open", e))?;
    file.write_all(content).map_err(|e| failed("write", e))?;
    file.sync_data().map_err(|e| failed("sync", e))?;
    Ok(content.len() as u64)
}

/// Bytes held by regular files under `dir` (links are not followed).
fn usage(dir: &Dir, depth: usize) -> std::io::Result<u64> {
    let mut total = 0;
    for entry in dir.entries()? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() && depth < MAX_WALK_DEPTH {
            total += usage(&entry.open_dir()?, depth + 1)?;
        } else if kind.is_file() {
            total += entry.metadata()?.len();
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn alice() -> UserName {
        UserName::parse("alice").unwrap()
    }

    #[test]
    fn paths_are_checked_as_text() {
        assert!(check_path("notes/a.txt").is_ok());
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            ".bashrc",
            "a/.git/config",
            "a\0b",
        ] {
            assert!(check_path(bad).is_err(), "{bad:?}");
        }
        assert!(check_path(&"a".repeat(256)).is_err());
    }

    #[tokio::test]
    async fn files_land_in_the_users_folder_private_to_the_owner() {
        let root = tempfile::tempdir().unwrap();
        let spaces = Workspaces::new(root.path().to_path_buf(), 1 << 20);
        spaces
            .write(&alice(), "n/a.txt", b"hi".to_vec(), WriteMode::Replace)
            .await
            .unwrap();
        spaces
            .write(&alice(), "n/a.txt", b"!".to_vec(), WriteMode::Append)
            .await
            .unwrap();
        let file = root.path().join("alice/n/a.txt");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "hi!");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(&root.path().join("alice")), 0o700);
        assert_eq!(mode(&root.path().join("alice/n")), 0o700);
    }

    #[tokio::test]
    async fn symbolic_links_cannot_lead_out() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let spaces = Workspaces::new(root.path().to_path_buf(), 1 << 20);
        spaces
            .write(&alice(), "seed.txt", b"x".to_vec(), WriteMode::Replace)
            .await
            .unwrap();
        let home = root.path().join("alice");
        std::os::unix::fs::symlink(outside.path(), home.join("out")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("f.txt"), home.join("f.txt")).unwrap();
        for path in ["out/pwned.txt", "f.txt"] {
            for mode in [WriteMode::Replace, WriteMode::Append] {
                let refused = spaces.write(&alice(), path, b"x".to_vec(), mode).await;
                assert!(refused.is_err(), "{path} {mode:?}");
            }
        }
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }

    #[tokio::test]
    async fn the_quota_counts_what_the_folder_holds() {
        let root = tempfile::tempdir().unwrap();
        let spaces = Workspaces::new(root.path().to_path_buf(), 10);
        spaces
            .write(&alice(), "a", vec![b'x'; 6], WriteMode::Replace)
            .await
            .unwrap();
        spaces
            .write(&alice(), "a", vec![b'y'; 9], WriteMode::Replace)
            .await
            .unwrap();
        let over = spaces
            .write(&alice(), "b", vec![b'z'; 2], WriteMode::Replace)
            .await;
        assert!(over.unwrap_err().contains("quota"));
        let bob = UserName::parse("bob").unwrap();
        assert!(spaces
            .write(&bob, "b", vec![b'z'; 10], WriteMode::Append)
            .await
            .is_ok());
    }
}
