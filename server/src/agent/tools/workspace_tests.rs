//! The workspace's rules, tried on real folders: paths, links, privacy, whole-file
//! writes, the lock between writers and the quota (folders included).

use std::os::unix::fs::PermissionsExt;

use super::*;

fn alice() -> UserName {
    UserName::parse("alice").unwrap()
}

/// Workspaces in a fresh folder (kept while the first is), each user's at most `quota`.
fn workspaces(quota: u64) -> (tempfile::TempDir, Workspaces) {
    let root = tempfile::tempdir().unwrap();
    let spaces = Workspaces::new(root.path().to_path_buf(), quota);
    (root, spaces)
}

/// Writes `bytes` to alice's `path`, replacing what it held.
async fn put(spaces: &Workspaces, path: &str, bytes: Vec<u8>) -> Result<u64, String> {
    spaces
        .write(&alice(), path, bytes, WriteMode::Replace)
        .await
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

/// `write(root, n)` on `threads` threads released together, n = 0, 1, …; what each
/// returned, in order.
fn at_once<T: Send + 'static>(
    threads: usize,
    root: &std::path::Path,
    write: impl Fn(&std::path::Path, usize) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let start = std::sync::Arc::new(std::sync::Barrier::new(threads));
    let write = std::sync::Arc::new(write);
    let handles: Vec<_> = (0..threads)
        .map(|n| {
            let (root, start, write) = (root.to_path_buf(), start.clone(), write.clone());
            std::thread::spawn(move || {
                start.wait();
                write(&root, n)
            })
        })
        .collect();
    let outcomes = handles.into_iter().map(|handle| handle.join().unwrap());
    outcomes.collect()
}

#[test]
fn appends_at_the_same_moment_each_keep_their_line() {
    let root = tempfile::tempdir().unwrap();
    const WRITERS: usize = 32;
    let written = at_once(WRITERS, root.path(), |root, n| {
        let line = format!("line-{n}\n");
        let mode = WriteMode::Append;
        write_beneath(root, &alice(), "log.txt", line.as_bytes(), mode, 1 << 20)
    });
    assert!(written.iter().all(Result::is_ok), "{written:?}");
    let file = std::fs::read_to_string(root.path().join("alice/log.txt")).unwrap();
    let mut lines: Vec<&str> = file.lines().collect();
    lines.sort_unstable();
    lines.dedup();
    assert_eq!(lines.len(), WRITERS, "no append lost: {file:?}");
}

#[tokio::test]
async fn files_land_in_the_users_folder_private_to_the_owner() {
    let (root, spaces) = workspaces(1 << 20);
    put(&spaces, "n/a.txt", b"hi".to_vec()).await.unwrap();
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
    let outside = tempfile::tempdir().unwrap();
    let (root, spaces) = workspaces(1 << 20);
    put(&spaces, "seed.txt", b"x".to_vec()).await.unwrap();
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
    let outside = tempfile::tempdir().unwrap();
    let (root, spaces) = workspaces(1 << 20);
    put(&spaces, "seed.txt", b"x".to_vec()).await.unwrap();
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
    let (root, spaces) = workspaces(1 << 20);
    let file = root.path().join("alice/n/a.txt");
    let inode = |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
    put(&spaces, "n/a.txt", b"old".to_vec()).await.unwrap();
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
    let (root, spaces) = workspaces(FOLDER_BYTES + 10);
    put(&spaces, "n/seed", Vec::new()).await.unwrap();
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
    put(&spaces, "a", vec![b'y'; 7])
        .await
        .expect("the stale file is not counted");
    assert!(!stale.exists(), "the stale file is gone");
    let over = put(&spaces, "b", vec![b'z'; 1]).await;
    assert!(over.unwrap_err().contains("quota"), "a fresh one counts");
}

#[tokio::test]
async fn the_quota_counts_what_the_folder_holds() {
    let (_root, spaces) = workspaces(10);
    put(&spaces, "a", vec![b'x'; 6]).await.unwrap();
    put(&spaces, "a", vec![b'y'; 9]).await.unwrap();
    let over = put(&spaces, "b", vec![b'z'; 2]).await;
    assert!(over.unwrap_err().contains("quota"));
    let bob = UserName::parse("bob").unwrap();
    assert!(spaces
        .write(&bob, "b", vec![b'z'; 10], WriteMode::Append)
        .await
        .is_ok());
}

/// Bytes under `path` as a person would add them up: each file's length, and a block
/// for each folder (what they take on disk), at any depth.
fn on_disk(path: &Path) -> u64 {
    std::fs::read_dir(path)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            match meta.is_dir() {
                true => 4096 + on_disk(&entry.path()),
                false => meta.len(),
            }
        })
        .sum()
}

#[tokio::test]
async fn folders_count_against_the_quota_and_a_refused_write_creates_none() {
    let (root, spaces) = workspaces(3 * 4096 + 10);
    let refused = put(&spaces, "a/b/c/d/f.txt", b"x".to_vec())
        .await
        .unwrap_err();
    assert!(refused.contains("quota"), "{refused}");
    assert!(
        !root.path().join("alice/a").exists(),
        "a refused write leaves no folder behind"
    );
    put(&spaces, "a/b/c/f.txt", vec![b'x'; 10]).await.unwrap();
    let over = put(&spaces, "a/g.txt", b"y".to_vec()).await;
    assert!(over.unwrap_err().contains("quota"));
    assert_eq!(on_disk(&root.path().join("alice")), 3 * 4096 + 10);
}

#[tokio::test]
async fn files_deep_in_nested_folders_count_like_any() {
    let root = tempfile::tempdir().unwrap();
    let deep = "d/".repeat(120);
    let quota = 120 * 4096 + 100;
    let spaces = Workspaces::new(root.path().to_path_buf(), quota);
    for n in 0..2 {
        spaces
            .write(
                &alice(),
                &format!("{deep}{n}"),
                vec![b'x'; 50],
                WriteMode::Replace,
            )
            .await
            .unwrap();
    }
    let over = spaces
        .write(
            &alice(),
            &format!("{deep}2"),
            b"x".to_vec(),
            WriteMode::Replace,
        )
        .await;
    assert!(
        over.unwrap_err().contains("quota"),
        "120 folders and 100 bytes fill it"
    );
    assert_eq!(on_disk(&root.path().join("alice")), quota);
}

#[test]
fn writes_of_one_user_at_the_same_moment_never_pass_the_quota_together() {
    let root = tempfile::tempdir().unwrap();
    const WRITERS: usize = 16;
    let quota = 10 * 4096;
    // Each writes in a folder of its own, through the lock alone (no shared mutex:
    // as two processes on one workspace would).
    let outcomes = at_once(WRITERS, root.path(), move |root, n| {
        let path = format!("w{n}/f.txt");
        write_beneath(
            root,
            &alice(),
            &path,
            &[b'x'; 1000],
            WriteMode::Replace,
            quota,
        )
    });
    let written = outcomes.iter().filter(|outcome| outcome.is_ok()).count();
    assert!(written >= 1);
    let total = on_disk(&root.path().join("alice"));
    assert!(
        total <= quota,
        "{written} writes took {total} bytes of {quota}"
    );
}
