//! What Tandem gives and takes of an MCP server's process: a stdio server's environment
//! (a safe set, never Tandem's secrets), a reference server killed from outside during a
//! call (over stdio and streamable HTTP), and approval settings that name its tools.

use serde_json::{json, Value};
use shared::{EventBody, Outcome};

use super::{mcp_servers, notices, DEADLINE};
use crate::helpers::child::Tandem;
use crate::helpers::mcp::{config_file, everything_stdio, notes, HttpEverything};
use crate::helpers::{assert_valid_session, fresh_database, write_script};
use crate::helpers::{tool_call, tool_results};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_sees_a_safe_environment_and_its_own_env_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut entry = everything_stdio();
    entry["env"] = json!({"EVERYTHING_NOTE": "from the config"});
    let config = config_file(dir.path(), json!({"everything": entry}));
    let (db_dir, url) = fresh_database();
    let turns =
        json!([{"toolCalls": [tool_call("everything__get-env", json!({}))]}, {"text": "Seen."}]);
    let script = write_script(db_dir.path(), turns);
    let tandem = Tandem::spawn_with_env(
        &url,
        &script,
        &["--mcp-config", config.to_str().unwrap()],
        &[("OPENAI_API_KEY", "sk-must-not-leak"), ("LANG", "C.UTF-8")],
    );
    let app = tandem.client();
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "show me your environment").await;
    let run = socket.until_run_end().await;
    let result = &tool_results(&run)[0];
    let env: Value = serde_json::from_str(result["text"].as_str().unwrap()).unwrap();
    assert_eq!(env["EVERYTHING_NOTE"], "from the config", "{env}");
    assert_eq!(env["LANG"], "C.UTF-8", "the safe set is inherited: {env}");
    assert!(env["PATH"].is_string(), "{env}");
    for secret in ["OPENAI_API_KEY", "TANDEM_DATABASE_URL", "RUST_LOG"] {
        assert!(env.get(secret).is_none(), "{secret} leaked: {env}");
    }
    assert!(!result.to_string().contains("sk-must-not-leak"));
}

/// The reference server, killed from outside during a long-running call, over stdio and
/// over streamable HTTP: the call gets an error result and the run a notice, and Tandem
/// connects to it again (the stdio one it starts itself; the HTTP one once it is back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reference_server_killed_during_a_call_is_a_result_a_notice_and_comes_back() {
    let mut http = HttpEverything::start();
    let port = http.port();
    let dir = tempfile::tempdir().unwrap();
    let mut remote = json!({"url": http.url});
    remote["timeoutSecs"] = json!(10);
    let config = config_file(
        dir.path(),
        json!({"everything": everything_stdio(), "remote": remote}),
    );
    let long = json!({"duration": 60, "steps": 60});
    let turns = json!([
        {"toolCalls": [tool_call("everything__trigger-long-running-operation", long.clone())]},
        {"text": "Killed."},
        {"toolCalls": [tool_call("remote__trigger-long-running-operation", long)]},
        {"text": "Killed too."},
        {"toolCalls": [
            tool_call("everything__get-sum", json!({"a": 1, "b": 2})),
            tool_call("remote__get-sum", json!({"a": 3, "b": 4})),
        ]},
        {"text": "Both back."},
    ]);
    let (db_dir, url) = fresh_database();
    let script = write_script(db_dir.path(), turns);
    let tandem = Tandem::spawn_with(&url, &script, &["--mcp-config", config.to_str().unwrap()]);
    let app = tandem.client();
    let (session, mut socket) = app.open_session().await;

    app.say(&session, "run long over stdio").await;
    assert!(tandem.logged("MCP tool call sent", DEADLINE).await);
    let stdio = crate::helpers::mcp::children_of(tandem.pid(), "server-everything");
    assert_eq!(stdio.len(), 1, "one stdio server: {stdio:?}");
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &stdio[0].to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let run = socket.until_run_end().await;
    let error = tool_results(&run)[0]["error"].as_str().unwrap().to_string();
    assert!(error.contains("`everything`"), "{error}");
    let seen = notices(&run);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["server"], "everything");
    assert!(
        tandem
            .logged_times("MCP server connected", 3, DEADLINE)
            .await,
        "the stdio server was started again"
    );

    app.say(&session, "run long over http").await;
    assert!(tandem.logged_times("MCP tool call sent", 2, DEADLINE).await);
    http.kill();
    let run = socket.until_run_end().await;
    let error = tool_results(&run)[0]["error"].as_str().unwrap().to_string();
    assert!(error.contains("`remote`"), "{error}");
    assert_eq!(notices(&run)[0]["server"], "remote", "{run:?}");
    let _http = HttpEverything::start_on(port);
    assert!(
        tandem
            .logged_times("MCP server connected", 4, DEADLINE)
            .await,
        "the HTTP server was connected to again"
    );

    app.say(&session, "both back?").await;
    let back = tool_results(&socket.until_run_end().await);
    assert_eq!(back[0]["text"], "The sum of 1 and 2 is 3.");
    assert_eq!(back[1]["text"], "The sum of 3 and 4 is 7.");
    let servers = mcp_servers(&app).await;
    assert!(
        servers.iter().all(|s| s["connected"] == true),
        "{servers:?}"
    );
    assert_valid_session(&app.log(&session).await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_settings_may_name_mcp_tools() {
    let dir = tempfile::tempdir().unwrap();
    let mcp = config_file(dir.path(), json!({"notes": notes(json!({}))}));
    let toml = dir.path().join("tandem.toml");
    std::fs::write(
        &toml,
        format!(
            "mcp-config = {:?}\nrequire-approval = [\"notes__count_notes\", \"write_file\"]\n\
             skip-approval = [\"notes__delete_notes\"]\n",
            mcp.to_str().unwrap()
        ),
    )
    .unwrap();
    let turns = json!([
        {"toolCalls": [tool_call("notes__delete_notes", json!({})), tool_call("notes__count_notes", json!({}))]},
        {"text": "Done."},
    ]);
    let (db_dir, url) = fresh_database();
    let script = write_script(db_dir.path(), turns);
    let tandem = Tandem::spawn_with(&url, &script, &["--config", toml.to_str().unwrap()]);
    let app = tandem.client();
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "clear and count").await;
    let paused = socket.until_run_end().await;
    assert_eq!(
        tool_results(&paused)[0]["text"],
        "deleted every note",
        "--skip-approval lets a destructive MCP tool run at once"
    );
    match &paused.last().unwrap().1.body {
        EventBody::RunFinished {
            outcome: Some(Outcome::Interrupt { interrupts }),
            ..
        } => assert_eq!(
            interrupts[0].metadata.as_ref().unwrap()["toolName"],
            "notes__count_notes",
            "--require-approval gates a read-only one"
        ),
        other => panic!("count_notes should wait for approval: {other:?}"),
    }

    let (_db, url) = fresh_database();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(["--bind", "127.0.0.1:0", "--database-url", &url])
        .args(["--require-approval", "nosuch__tool"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(
        text.contains("`nosuch__tool` names no configured MCP server"),
        "{text}"
    );
}
