//! Starting the real binary with settings that cannot work: it stops at once with a
//! message that says what to set.

use std::process::Command;

fn start_with(args: &[&str]) -> (bool, String) {
    let (_dir, url) = crate::helpers::fresh_database();
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

#[test]
fn serving_without_authentication_off_loopback_is_refused() {
    let (ok, text) = start_with(&["--bind", "0.0.0.0:0"]);
    assert!(!ok);
    assert!(
        text.contains("TANDEM_AUTH=token") && text.contains("tandem users add"),
        "{text}"
    );
    let (ok, text) = start_with(&["--auth", "token", "--bind", "0.0.0.0:0", "--engine", "nope"]);
    assert!(!ok, "{text}");
    assert!(
        !text.contains("TANDEM_AUTH=token"),
        "token mode may bind anywhere: {text}"
    );
}

#[test]
fn api_keys_are_refused_as_flags_without_echoing_them() {
    let (ok, text) = start_with(&[
        "--engine",
        "anthropic",
        "--anthropic-api-key",
        "sk-ant-visible",
    ]);
    assert!(!ok);
    assert!(
        text.contains("process list") && text.contains("ANTHROPIC_API_KEY"),
        "{text}"
    );
    assert!(!text.contains("sk-ant-visible"), "{text}");
}

#[test]
fn users_are_managed_from_the_shell_and_tokens_shown_once() {
    let (dir, url) = crate::helpers::fresh_database();
    let users = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .args(["--database-url", &url, "users"])
            .args(args)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        (output.status.success(), text)
    };
    let (ok, added) = users(&["add", "alice"]);
    assert!(ok, "{added}");
    let token = added
        .lines()
        .find(|l| l.starts_with("tdm_"))
        .expect("the token is printed");
    let (ok, again) = users(&["add", "alice"]);
    assert!(!ok && again.contains("already exists"), "{again}");
    let (ok, bad) = users(&["add", "Not A Name"]);
    assert!(!ok && bad.contains("not a valid user name"), "{bad}");
    let (ok, listed) = users(&["list"]);
    assert!(
        ok && listed.contains("alice") && !listed.contains(token),
        "{listed}"
    );
    let (ok, revoked) = users(&["revoke", "alice"]);
    assert!(ok, "{revoked}");
    let (_, listed) = users(&["list"]);
    assert!(listed.contains("revoked"), "{listed}");
    // A SQLite file is readable by its owner only; PostgreSQL keeps its own files.
    if let Some(file) = dir.sqlite_file() {
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(file).unwrap().permissions(),
        );
        assert_eq!(
            mode & 0o777,
            0o600,
            "the database is readable by its owner only"
        );
    }
}

#[test]
fn a_config_file_sets_defaults_that_the_environment_and_flags_override() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tandem.toml");
    std::fs::write(
        &file,
        "temperature = 0.9\nmax-tokens = 1000\nengine = \"openai\"\n\
         extra-header = [\"Authorization: Bearer sk-in-a-header\"]\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args([
            "--config",
            file.to_str().unwrap(),
            "--print-config",
            "--engine",
            "demo",
        ])
        .env("TANDEM_TEMPERATURE", "0.3")
        .env_remove("TANDEM_ENGINE")
        .env_remove("TANDEM_MAX_TOKENS")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let printed = String::from_utf8(output.stdout).unwrap();
    for line in [
        "engine = \"demo\"  # flag",
        "temperature = \"0.3\"  # env",
        "max-tokens = \"1000\"  # file",
        "bind = \"127.0.0.1:8080\"  # default",
        "extra-header = \"Authorization: ***\"  # file",
    ] {
        assert!(
            printed.lines().any(|l| l == line),
            "no `{line}` in:\n{printed}"
        );
    }
    assert!(!printed.contains("sk-in-a-header"));

    let output = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args([
            "--print-config",
            "--openai-base-url",
            "http://proxy:px-pw@127.0.0.1:9/v1",
        ])
        .env(
            "TANDEM_DATABASE_URL",
            "postgres://tandem:pg-pw-42@db.example:5432/tandem",
        )
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let printed = String::from_utf8(output.stdout).unwrap();
    assert!(
        printed
            .lines()
            .any(|l| l == "database-url = \"postgres://***@db.example:5432/tandem\"  # env"),
        "{printed}"
    );
    assert!(printed.contains("http://***@127.0.0.1:9/v1"), "{printed}");
    assert!(
        !printed.contains("pg-pw-42") && !printed.contains("px-pw"),
        "{printed}"
    );

    std::fs::write(&file, "max-tokenz = 1\n").unwrap();
    let (ok, text) = start_with(&["--config", file.to_str().unwrap()]);
    assert!(!ok);
    assert!(text.contains("`max-tokenz` is not a setting"), "{text}");
}
