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
//! may hold.

use std::path::{Component, Path, PathBuf};

use cap_std::fs::{Dir, DirBuilder, DirBuilderExt};

use super::replace_file::{existing_size, is_stale_temp, replace, Content, ReplaceError};
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

/// Takes the exclusive advisory lock of a workspace folder (`flock`, on a descriptor of
/// its own: the folder's handle may not take locks), held until the returned file closes.
fn lock(dir: &Dir) -> std::io::Result<cap_std::fs::File> {
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true);
    let folder = dir.open_with(".", &options)?;
    rustix::fs::flock(&folder, rustix::fs::FlockOperation::LockExclusive)?;
    Ok(folder)
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
    // One write at a time per workspace, across runs and processes sharing it: an append
    // reads the file and renames a longer copy over it, and the quota check reads the
    // workspace's size; two at once would lose a line or pass the quota together. The lock
    // goes with the folder's descriptor at the end of this function.
    let _locked = lock(&dir).map_err(|e| failed("lock the workspace for", e))?;
    let relative = Path::new(path);
    let folder = match relative.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => {
            dir.create_dir_with(parent, &private_dirs())
                .map_err(|e| failed("create the folder for", e))?;
            dir.open_dir(parent)
        }
        None => dir.try_clone(),
    }
    .map_err(|e| failed("open the folder of", e))?;
    let name = Path::new(relative.file_name().unwrap_or_default());
    let refused = |e: ReplaceError| format!("cannot write `{path}`: {e}");
    let used = usage(&dir, 0).map_err(|e| failed("measure the workspace for", e))?;
    let existing = existing_size(&folder, name).map_err(refused)?;
    let replaced = match mode {
        WriteMode::Replace => existing.unwrap_or(0),
        WriteMode::Append => 0,
    };
    let after = used - replaced.min(used) + content.len() as u64;
    if after > quota {
        return Err(format!(
            "writing `{path}` would exceed your workspace quota of {quota} bytes ({used} used)"
        ));
    }
    let written = content.len() as u64;
    let content = match mode {
        WriteMode::Replace => Content::Replace(content),
        WriteMode::Append => Content::Append(content),
    };
    replace(&folder, name, content).map_err(refused)?;
    Ok(written)
}

/// Bytes held by regular files under `dir` (links are not followed). Temporary files a
/// crash left behind ([`is_stale_temp`]) are removed on the way instead of counted.
fn usage(dir: &Dir, depth: usize) -> std::io::Result<u64> {
    let mut total = 0;
    for entry in dir.entries()? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() && depth < MAX_WALK_DEPTH {
            total += usage(&entry.open_dir()?, depth + 1)?;
        } else if kind.is_file() {
            let meta = entry.metadata()?;
            if is_stale_temp(&entry.file_name(), &meta) {
                dir.remove_file(entry.file_name())?;
            } else {
                total += meta.len();
            }
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

    #[test]
    fn appends_at_the_same_moment_each_keep_their_line() {
        let root = tempfile::tempdir().unwrap();
        const WRITERS: usize = 32;
        let start = std::sync::Arc::new(std::sync::Barrier::new(WRITERS));
        let writers: Vec<_> = (0..WRITERS)
            .map(|n| {
                let (root, start) = (root.path().to_path_buf(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    let line = format!("line-{n}\n");
                    let mode = WriteMode::Append;
                    write_beneath(&root, &alice(), "log.txt", line.as_bytes(), mode, 1 << 20)
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap().unwrap();
        }
        let file = std::fs::read_to_string(root.path().join("alice/log.txt")).unwrap();
        let mut lines: Vec<&str> = file.lines().collect();
        lines.sort_unstable();
        lines.dedup();
        assert_eq!(lines.len(), WRITERS, "no append lost: {file:?}");
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
    async fn hard_links_to_files_outside_are_refused_and_the_outside_file_is_unchanged() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let spaces = Workspaces::new(root.path().to_path_buf(), 1 << 20);
        spaces
            .write(&alice(), "seed.txt", b"x".to_vec(), WriteMode::Replace)
            .await
            .unwrap();
        let target = outside.path().join("passwd");
        std::fs::write(&target, "root:x:0:0\n").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::hard_link(&target, root.path().join("alice/linked.txt")).unwrap();
        for mode in [WriteMode::Replace, WriteMode::Append] {
            let refused = spaces
                .write(&alice(), "linked.txt", b"pwned".to_vec(), mode)
                .await
                .unwrap_err();
            assert!(refused.contains("hard links"), "{mode:?}: {refused}");
        }
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "root:x:0:0\n");
        let meta = std::fs::metadata(&target).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o644);
        assert_eq!(std::os::unix::fs::MetadataExt::nlink(&meta), 2);
    }

    #[tokio::test]
    async fn writes_replace_the_file_whole_by_rename_and_keep_it_private() {
        let root = tempfile::tempdir().unwrap();
        let spaces = Workspaces::new(root.path().to_path_buf(), 1 << 20);
        let file = root.path().join("alice/n/a.txt");
        let inode = |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
        spaces
            .write(&alice(), "n/a.txt", b"old".to_vec(), WriteMode::Replace)
            .await
            .unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        for (mode, expected) in [(WriteMode::Replace, "new"), (WriteMode::Append, "new!")] {
            let before = inode(&file);
            let mut reader = std::fs::File::open(&file).unwrap();
            let bytes = if mode == WriteMode::Replace {
                "new"
            } else {
                "!"
            };
            spaces
                .write(&alice(), "n/a.txt", bytes.into(), mode)
                .await
                .unwrap();
            assert_ne!(
                inode(&file),
                before,
                "{mode:?}: a new file, not the old one rewritten"
            );
            let mut seen = String::new();
            std::io::Read::read_to_string(&mut reader, &mut seen).unwrap();
            assert!(
                ["old", "new"].contains(&seen.as_str()),
                "a reader saw {seen:?}"
            );
            assert_eq!(std::fs::read_to_string(&file).unwrap(), expected);
            let mode_bits = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode_bits, 0o600, "{mode:?}");
        }
        let names: Vec<_> = std::fs::read_dir(root.path().join("alice/n"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            vec![std::ffi::OsString::from("a.txt")],
            "no temporary file stays"
        );
    }

    #[tokio::test]
    async fn temporary_files_a_crash_left_are_swept_once_stale_and_counted_until_then() {
        let root = tempfile::tempdir().unwrap();
        let spaces = Workspaces::new(root.path().to_path_buf(), 10);
        spaces
            .write(&alice(), "n/seed", Vec::new(), WriteMode::Replace)
            .await
            .unwrap();
        let folder = root.path().join("alice/n");
        let stale = folder.join(format!(
            "{}crashed",
            super::super::replace_file::TEMP_PREFIX
        ));
        std::fs::write(&stale, [b'x'; 8]).unwrap();
        let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&stale)
            .unwrap()
            .set_modified(an_hour_ago)
            .unwrap();
        let fresh = folder.join(format!(
            "{}writing",
            super::super::replace_file::TEMP_PREFIX
        ));
        std::fs::write(&fresh, [b'x'; 3]).unwrap();
        spaces
            .write(&alice(), "a", vec![b'y'; 7], WriteMode::Replace)
            .await
            .expect("the stale file is not counted");
        assert!(!stale.exists(), "the stale file is gone");
        let over = spaces
            .write(&alice(), "b", vec![b'z'; 1], WriteMode::Replace)
            .await;
        assert!(over.unwrap_err().contains("quota"), "a fresh one counts");
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
