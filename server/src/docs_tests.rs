//! The docs name what is there: `docs/security.md` proves each row of its threat table with
//! the tests in its last column (a test renamed or removed leaves a row proved by nothing,
//! so every test path named there must name a function or a module of the repository), and
//! the crate's layout (`lib.rs`) names every module of the crate with its job.

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

#[test]
fn the_layout_names_every_module_of_the_crate() {
    let lib = std::fs::read_to_string(repository().join("server/src/lib.rs")).unwrap();
    let modules: Vec<&str> = lib
        .lines()
        .filter_map(|line| line.strip_prefix("pub mod "))
        .map(|name| name.trim_end_matches(';'))
        .collect();
    assert!(
        modules.len() > 20,
        "the crate's modules were read: {modules:?}"
    );
    let unnamed: Vec<&&str> = modules
        .iter()
        .filter(|name| !lib.contains(&format!("//! - [`{name}`]: ")))
        .collect();
    assert!(
        unnamed.is_empty(),
        "lib.rs's layout names no job for {unnamed:?}"
    );
}
