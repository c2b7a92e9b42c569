//! The docs name tests: `docs/security.md` proves each row of its threat table with the
//! tests in its last column. A test renamed or removed leaves a row proved by nothing, so
//! every test path named there must name a function or a module of the repository.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The repository's root (this crate is `server/`).
fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The function names (`fn name`) and module names (files, folders, `mod name`) of the
/// Rust sources under `folder`.
fn names_under(folder: &Path, names: &mut BTreeSet<String>) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        if path.is_dir() {
            names.insert(stem.to_string());
            names_under(&path, names);
        } else if path.extension().is_some_and(|e| e == "rs") {
            names.insert(stem.to_string());
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            for word in ["fn ", "mod "] {
                for (at, _) in text.match_indices(word) {
                    let rest = &text[at + word.len()..];
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    names.insert(name);
                }
            }
        }
    }
}

/// The Rust test paths (`a::b::c`, in backticks) of the last column of each table row.
fn named_tests(security: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    for row in security.lines().filter(|line| line.starts_with("| ")) {
        let Some(tests) = row.trim_end_matches(" |").rsplit(" | ").next() else {
            continue;
        };
        for (n, quoted) in tests.split('`').enumerate() {
            let path_like = quoted.contains("::")
                && quoted
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':' || c == '*');
            if n % 2 == 1 && path_like {
                named.insert(quoted.to_string());
            }
        }
    }
    named
}

#[test]
fn every_test_the_threat_table_names_exists() {
    let root = repository();
    let security = std::fs::read_to_string(root.join("docs/security.md")).unwrap();
    let mut names = BTreeSet::new();
    for folder in [
        "server/src",
        "tests/api",
        "shared/src",
        "web/src",
        "markdown/src",
        "fuzz",
    ] {
        names_under(&root.join(folder), &mut names);
    }
    let named = named_tests(&security);
    assert!(named.len() > 100, "{} test paths read", named.len());
    let missing: Vec<&String> = named
        .iter()
        .filter(|path| {
            let last = path.rsplit("::").next().unwrap_or_default();
            last != "*" && !names.contains(last)
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs/security.md names tests that do not exist: {missing:?}"
    );
}
