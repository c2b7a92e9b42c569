//! Starting the real binary with settings that cannot work: it stops at once with a
//! message that says what to set.

use std::process::Command;

fn start_with(args: &[&str]) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let output = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(["--bind", "127.0.0.1:0", "--database-url", &url])
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("TANDEM_ENGINE")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stderr).into_owned()
        + &String::from_utf8_lossy(&output.stdout);
    (output.status.success(), text)
}

#[test]
fn a_chosen_provider_without_its_key_fails_at_start_saying_what_to_set() {
    let (ok, text) = start_with(&["--engine", "anthropic"]);
    assert!(!ok);
    assert!(text.contains("ANTHROPIC_API_KEY"), "{text}");
    let (ok, text) = start_with(&["--engine", "openai"]);
    assert!(!ok);
    assert!(text.contains("OPENAI_API_KEY"), "{text}");
}

#[test]
fn bad_provider_settings_are_refused_before_anything_runs() {
    let (ok, text) = start_with(&[
        "--engine",
        "openai",
        "--openai-base-url",
        "http://127.0.0.1:9/v1",
        "--extra-header",
        "no colon here",
    ]);
    assert!(!ok);
    assert!(text.contains("--extra-header"), "{text}");
    let (ok, text) = start_with(&["--skip-approval", "teleport"]);
    assert!(!ok);
    assert!(text.contains("teleport"), "{text}");
}
