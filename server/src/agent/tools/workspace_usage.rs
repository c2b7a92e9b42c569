//! What a user's workspace takes against their quota: every regular file its bytes, and
//! every folder [`FOLDER_BYTES`], what an empty folder takes on disk on the common
//! filesystems (one block), so a workspace of nested empty folders is not free. It
//! measures and nothing else: where paths may lead is `workspace`'s business, writing
//! `replace_file`'s.

use std::io;
use std::path::{Component, Path};

use cap_std::fs::Dir;

use super::replace_file::is_stale_temp;
use super::workspace::MAX_PATH_BYTES;

/// What one folder counts for against the quota, in bytes.
pub const FOLDER_BYTES: u64 = 4096;
/// The deepest a tool can nest folders: every component of a path takes at least a
/// name byte and a `/`. A workspace nested deeper (made by something else) is refused,
/// not measured in part.
const MAX_DEPTH: usize = MAX_PATH_BYTES / 2 + 1;

/// Bytes the workspace `dir` takes: its files' bytes and [`FOLDER_BYTES`] for each folder
/// inside it (links are not followed). Temporary files a crash left behind
/// ([`is_stale_temp`]) are removed on the way instead of counted.
pub fn usage(dir: &Dir) -> io::Result<u64> {
    usage_at(dir, 0)
}

fn usage_at(dir: &Dir, depth: usize) -> io::Result<u64> {
    let mut total = 0;
    for entry in dir.entries()? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if depth >= MAX_DEPTH {
                return Err(io::Error::other(format!(
                    "the workspace nests folders deeper than {MAX_DEPTH}"
                )));
            }
            total += FOLDER_BYTES + usage_at(&entry.open_dir()?, depth + 1)?;
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

/// How many folders writing a file at `relative` in `dir` would create: those of its
/// parent path that do not exist yet.
pub fn folders_to_create(dir: &Dir, relative: &Path) -> io::Result<u64> {
    let Some(parent) = relative.parent() else {
        return Ok(0);
    };
    let mut prefix = std::path::PathBuf::new();
    let mut missing = 0;
    for component in parent.components() {
        let Component::Normal(name) = component else {
            continue;
        };
        prefix.push(name);
        if missing > 0 {
            missing += 1;
            continue;
        }
        match dir.symlink_metadata(&prefix) {
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => missing = 1,
            Err(error) => return Err(error),
        }
    }
    Ok(missing)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opened(root: &Path) -> Dir {
        Dir::open_ambient_dir(root, cap_std::ambient_authority()).unwrap()
    }

    #[test]
    fn files_count_their_bytes_and_folders_a_block_at_any_depth() {
        let root = tempfile::tempdir().unwrap();
        let deep: std::path::PathBuf = std::iter::repeat_n("d", 100).collect();
        std::fs::create_dir_all(root.path().join(&deep)).unwrap();
        std::fs::write(root.path().join(&deep).join("f"), [0u8; 10]).unwrap();
        std::fs::write(root.path().join("top"), [0u8; 3]).unwrap();
        assert_eq!(
            usage(&opened(root.path())).unwrap(),
            100 * FOLDER_BYTES + 13
        );
    }

    #[test]
    fn a_write_creates_the_folders_of_its_path_that_are_missing() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("a/b")).unwrap();
        let dir = opened(root.path());
        let count = |path: &str| folders_to_create(&dir, Path::new(path)).unwrap();
        assert_eq!(count("f"), 0);
        assert_eq!(count("a/b/f"), 0);
        assert_eq!(count("a/b/c/d/f"), 2);
        assert_eq!(count("x/y/f"), 2);
    }
}
