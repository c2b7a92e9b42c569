//! A person's tool upload as the server checks it (`PUT /api/tools/{name}`): its name, its
//! manifest and its module, taken from the input (a byte of name length, two of manifest
//! length, then the three). Checking never panics, and an upload that passes has a name
//! the rules allow and a manifest that parses on its own.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use tandem::sandbox::{Limits, Sandbox, UserToolbox};

fn toolbox() -> &'static UserToolbox {
    static TOOLBOX: OnceLock<UserToolbox> = OnceLock::new();
    TOOLBOX.get_or_init(|| {
        let limits = Limits {
            fuel: 1_000_000,
            memory_bytes: 1 << 20,
            timeout: std::time::Duration::from_millis(100),
        };
        let sandbox = Sandbox::new(limits, None).expect("a sandbox");
        let root = std::env::temp_dir().join("tandem-fuzz-workspaces");
        let workspaces = Arc::new(tandem::agent::tools::Workspaces::new(root, 1 << 20));
        UserToolbox::new(sandbox, workspaces, 1 << 20)
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&name_length, rest)) = data.split_first() else {
        return;
    };
    let (name, rest) = rest.split_at(usize::from(name_length).min(rest.len()));
    let Some((length, rest)) = rest.split_first_chunk::<2>() else {
        return;
    };
    let (manifest, module) =
        rest.split_at(usize::from(u16::from_le_bytes(*length)).min(rest.len()));
    let Ok(name) = std::str::from_utf8(name) else {
        return;
    };
    if let Ok(checked) = toolbox().check(name, manifest, module, |taken| taken == "calculator") {
        assert!(tandem::sandbox::manifest::check_name(name).is_ok());
        assert_ne!(name, "calculator");
        let again = tandem::sandbox::Manifest::parse(manifest).expect("it parsed once");
        assert_eq!(again, checked.manifest);
    }
});
