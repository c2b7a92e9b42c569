//! A WebAssembly tool's manifest and name (an operator's folder, later a user's upload):
//! parsing never panics, and a manifest that parses has a schema that compiles.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(manifest) = tandem::sandbox::Manifest::parse(data) {
        assert!(jsonschema::validator_for(&manifest.parameters).is_ok());
    }
    if let Ok(name) = std::str::from_utf8(data) {
        let _ = tandem::sandbox::manifest::check_name(name);
    }
});
