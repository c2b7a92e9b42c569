//! WebAssembly tools in the sandbox, against real modules: a Rust program built for
//! `wasm32-wasip1` (`tests/wasm-tools`, every test tool by its name) and WAT for what no
//! compiler writes (a forbidden import). Results, each limit, the workspace and its
//! defences, a crash during a call, and a module that cannot be a tool.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{json, Value};
use shared::EventBody;

use crate::helpers::child::Tandem;
use crate::helpers::{
    fresh_database, spawn_app_with, streamed_text, tool_call, tool_results, write_script, TestApp,
};

/// The toolbox module, built for `wasm32-wasip1` once per test process (the test command
/// builds it before the tests; this builds it only if that did not).
pub fn toolbox() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target"));
        let built = target.join("wasm32-wasip1/release/tandem-wasm-tools.wasm");
        if !built.is_file() {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let status = Command::new(cargo)
                .current_dir(&root)
                .args(["build", "--release", "--target", "wasm32-wasip1"])
                .args(["-p", "tandem-wasm-tools"])
                .env_remove("RUSTC_WORKSPACE_WRAPPER")
                .status()
                .expect("cargo runs");
            assert!(
                status.success(),
                "building tests/wasm-tools for wasm32-wasip1 failed"
            );
        }
        std::fs::read(&built).expect("the toolbox module")
    })
}

/// A folder of tools: each `(name, manifest fields)` is the toolbox under that name.
fn tool_folder(tools: &[(&str, Value)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, fields) in tools {
        let mut manifest = json!({
            "description": format!("The test tool {name}."),
            "parameters": {"type": "object"},
        });
        for (key, value) in fields.as_object().unwrap() {
            manifest[key] = value.clone();
        }
        std::fs::write(dir.path().join(format!("{name}.wasm")), toolbox()).unwrap();
        std::fs::write(
            dir.path().join(format!("{name}.json")),
            manifest.to_string(),
        )
        .unwrap();
    }
    dir
}

/// Fuel no test call burns in its time: the spinning tools end by their time limit.
const UNLIMITED_FUEL: &[&str] = &["--wasm-fuel", "1000000000000000"];

async fn app_with_tools(turns: Value, folder: &Path, extra: &[&str]) -> TestApp {
    let flags = [&["--wasm-tools", folder.to_str().unwrap()], extra].concat();
    spawn_app_with(turns, &flags).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandboxed_tools_answer_and_each_limit_ends_a_call_as_an_error_the_run_goes_past() {
    let folder = tool_folder(&[
        ("echo", json!({})),
        (
            "add",
            json!({"parameters": {"type": "object", "required": ["a", "b"]}}),
        ),
        ("env", json!({})),
        ("fail", json!({})),
        ("spin", json!({"limits": {"timeoutMs": 300}})),
        ("spin2", json!({"limits": {"fuel": 50_000_000}})),
        ("hog", json!({"limits": {"memoryMiB": 16}})),
        ("recurse", json!({})),
        ("flood", json!({})),
    ]);
    let turns = json!([
        {"toolCalls": [
            tool_call("echo", json!({"say": "hé"})),
            tool_call("add", json!({"a": 2, "b": 3})),
            tool_call("env", json!({})),
            tool_call("fail", json!({})),
            tool_call("spin", json!({})),
            tool_call("spin2", json!({})),
            tool_call("hog", json!({})),
            tool_call("recurse", json!({})),
            tool_call("flood", json!({})),
        ]},
        {"text": "Done."},
    ]);
    let app = app_with_tools(turns, folder.path(), UNLIMITED_FUEL).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "go").await;
    let events = socket.until_run_end().await;
    let results = tool_results(&events);
    assert_eq!(results.len(), 9, "{results:?}");
    assert_eq!(results[0], json!({"say": "hé"}));
    assert_eq!(results[1], json!({"sum": 5.0}));
    assert_eq!(
        results[2],
        json!({"vars": [], "args": ["env"]}),
        "no environment, argv = [name]"
    );
    assert_eq!(results[3]["error"], "the tool exited with 3");
    assert_eq!(results[3]["stderr"], "bad input\n");
    let limits: Vec<&str> = results[4..]
        .iter()
        .map(|result| result["limit"].as_str().unwrap_or("none"))
        .collect();
    assert_eq!(
        limits,
        ["time", "fuel", "memory", "stack", "output"],
        "{results:?}"
    );
    assert!(results[4..]
        .iter()
        .all(|result| result["error"].is_string()));
    let last = events.last().map(|(_, event)| &event.body);
    assert!(
        matches!(last, Some(EventBody::RunFinished { .. })),
        "{last:?}"
    );
    let log = app.log(&session).await;
    assert!(
        streamed_text(&log).contains("Done."),
        "the run went on after the errors"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spinning_tool_does_not_stop_the_server_streaming_to_another_session() {
    let folder = tool_folder(&[("spin", json!({"limits": {"timeoutMs": 5000}}))]);
    let turns = json!([
        {"text": "Hello."},
        {"toolCalls": [tool_call("spin", json!({}))]},
        {"text": "Done."},
    ]);
    let app = app_with_tools(turns, folder.path(), UNLIMITED_FUEL).await;
    let (spinning, mut spinning_socket) = app.open_session().await;
    app.say(&spinning, "hi").await;
    spinning_socket.until_run_end().await;
    app.say(&spinning, "spin").await;
    spinning_socket
        .until(|event| matches!(event.body, EventBody::ToolCallEnd { .. }))
        .await;
    let (other, mut other_socket) = app.open_session().await;
    app.say(&other, "hi").await;
    let answered = other_socket.until_run_end().await;
    assert!(matches!(
        answered.last().map(|(_, e)| &e.body),
        Some(EventBody::RunFinished { .. })
    ));
    let spun = tool_results(&app.log(&spinning).await);
    assert!(
        spun.is_empty(),
        "the other session finished while the tool still ran: {spun:?}"
    );
    let events = spinning_socket.until_run_end().await;
    assert_eq!(tool_results(&events)[0]["limit"], "time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_sees_only_its_users_workspace_and_none_of_its_ways_out() {
    let folder = tool_folder(&[
        ("read_text", json!({"files": "read"})),
        ("read_text2", json!({})),
        ("write_text", json!({"files": "write"})),
        ("write_text2", json!({"files": "read"})),
        ("fill", json!({"files": "write"})),
    ]);
    let (dir, url) = fresh_database();
    let turns = json!([
        {"toolCalls": [
            tool_call("read_text", json!({"path": "in.txt"})),
            tool_call("read_text", json!({"path": "../secret.txt"})),
            tool_call("read_text", json!({"path": "/etc/hostname"})),
            tool_call("read_text", json!({"path": "out.txt"})),
            tool_call("read_text2", json!({"path": "in.txt"})),
            tool_call("write_text", json!({"path": "made.txt", "text": "written inside"})),
            tool_call("write_text2", json!({"path": "nope.txt", "text": "x"})),
            tool_call("fill", json!({"path": "big.bin", "bytes": 3 << 20})),
        ]},
        {"text": "Done."},
        {"toolCalls": [tool_call("read_text", json!({"path": "in.txt"}))]},
        {"text": "Done again."},
    ]);
    let script = write_script(dir.path(), turns);
    let (workspace, outside) = crate::helpers::planted_workspace(dir.path(), &script);
    let flags = [
        "--wasm-tools",
        folder.path().to_str().unwrap(),
        "--workspace-quota-bytes",
        "1048576",
    ];
    let app = crate::helpers::start(crate::helpers::test_config(&url, &script, &flags)).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "go").await;
    let got = tool_results(&socket.until_run_end().await);
    assert_eq!(got[0], json!({"text": "inside"}));
    for (refused, what) in got[1..4]
        .iter()
        .zip(["..", "an absolute path", "a symbolic link"])
    {
        assert_eq!(
            refused["error"], "the tool exited with 3",
            "{what}: {refused}"
        );
        assert!(
            !refused.to_string().contains("outside\""),
            "{what} read outside: {refused}"
        );
    }
    assert_eq!(
        got[4]["error"], "the tool exited with 3",
        "no files without `files`"
    );
    assert_eq!(got[5], json!({"written": 14}));
    assert_eq!(
        std::fs::read_to_string(workspace.join("made.txt")).unwrap(),
        "written inside"
    );
    assert_eq!(
        got[6]["error"], "the tool exited with 3",
        "a read-only workspace: {}",
        got[6]
    );
    assert!(!workspace.join("nope.txt").exists());
    assert_eq!(got[7]["limit"], "quota", "{}", got[7]);

    std::fs::remove_file(workspace.join("big.bin")).unwrap();
    std::fs::hard_link(&outside, workspace.join("linked.txt")).unwrap();
    app.say(&session, "again").await;
    let got = tool_results(&socket.until_run_end().await);
    let refused = got[0]["error"].as_str().unwrap();
    assert!(refused.contains("hard link"), "{refused}");
    drop(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_a_crash_cut_short_runs_again_only_if_its_tool_is_idempotent() {
    let folder = tool_folder(&[
        (
            "spin",
            json!({"idempotent": true, "limits": {"timeoutMs": 4000}}),
        ),
        ("spin2", json!({"limits": {"timeoutMs": 4000}})),
    ]);
    for (tool, runs_again) in [("spin", true), ("spin2", false)] {
        let (dir, url) = fresh_database();
        let turns = json!([{"toolCalls": [tool_call(tool, json!({}))]}, {"text": "Done."}]);
        let script = write_script(dir.path(), turns);
        let flags = [
            &["--wasm-tools", folder.path().to_str().unwrap()],
            UNLIMITED_FUEL,
        ]
        .concat();
        let mut server = Tandem::spawn_with(&url, &script, &flags);
        let app = server.client();
        let (session, mut socket) = app.open_session().await;
        app.say(&session, "go").await;
        // The model call's end is committed before its calls run: from then on the log
        // says the call may be running.
        socket
            .until(|event| matches!(event.body, EventBody::StepFinished { .. }))
            .await;
        server.kill();
        let server = Tandem::spawn_with(&url, &script, &flags);
        let app = server.client();
        let mut socket = app.socket(&session, 0).await;
        let events = socket.until_run_end().await;
        let result = &tool_results(&events)[0];
        if runs_again {
            assert_eq!(result["limit"], "time", "{tool}: {result}");
        } else {
            let error = result["error"].as_str().unwrap();
            assert!(error.contains("not run again"), "{tool}: {error}");
        }
        drop(dir);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_whose_manifest_asks_for_approval_waits_for_a_person_like_write_file() {
    let folder = tool_folder(&[(
        "write_text",
        json!({"files": "write", "approval": "always"}),
    )]);
    let turns = json!([
        {"toolCalls": [tool_call("write_text", json!({"path": "note.txt", "text": "approved"}))]},
        {"text": "Done."},
    ]);
    let (dir, url) = fresh_database();
    let script = write_script(dir.path(), turns);
    let flags = ["--wasm-tools", folder.path().to_str().unwrap()];
    let app = crate::helpers::start(crate::helpers::test_config(&url, &script, &flags)).await;
    let workspace = script.with_extension("workspace").join("local");
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "write it").await;
    let events = socket.until_run_end().await;
    let interrupt = match &events.last().unwrap().1.body {
        EventBody::RunFinished {
            outcome: Some(shared::Outcome::Interrupt { interrupts }),
            ..
        } => interrupts[0].clone(),
        other => panic!("expected an approval interrupt, got {other:?}"),
    };
    assert_eq!(interrupt.reason, "tool_approval");
    assert!(
        !workspace.join("note.txt").exists(),
        "nothing ran before the approval"
    );
    let path = format!("/api/sessions/{session}/interrupts/{}", interrupt.id);
    let (status, _) = app
        .post(
            &path,
            json!({"status": "resolved", "payload": {"approved": true}}),
        )
        .await;
    assert_eq!(status, 202);
    let events = socket.until_run_end().await;
    assert_eq!(tool_results(&events)[0], json!({"written": 8}));
    assert_eq!(
        std::fs::read_to_string(workspace.join("note.txt")).unwrap(),
        "approved"
    );
    drop(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_passes_its_arguments_after_the_name_and_keeps_what_a_failing_module_wrote() {
    use tandem::sandbox::call::{Call, Outcome};
    use tandem::sandbox::{Limits, Sandbox};
    let limits = Limits {
        fuel: 10_000_000_000,
        memory_bytes: 64 << 20,
        timeout: std::time::Duration::from_secs(10),
    };
    let sandbox = Sandbox::new(limits, None).unwrap();
    let program = sandbox.prepare(toolbox()).unwrap();
    let call = |name: &str, args: &[&str]| Call {
        name: name.into(),
        args: args.iter().map(|arg| arg.to_string()).collect(),
        stdin: b"{}".to_vec(),
        limits,
        files: None,
    };
    let Outcome::Exited {
        code: 0, stdout, ..
    } = sandbox.call(&program, call("env", &["-c", "x"])).await
    else {
        panic!("env did not exit 0");
    };
    let printed: Value = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(printed["args"], json!(["env", "-c", "x"]));
    let failed = sandbox.call(&program, call("fail", &[])).await;
    assert_eq!(
        failed,
        Outcome::Exited {
            code: 3,
            stdout: Vec::new(),
            stderr: b"bad input\n".to_vec()
        }
    );
}

/// A module that imports from outside WASI, as WAT.
pub const FORBIDDEN_IMPORT: &str = r#"(module
  (import "env" "now" (func (result i64)))
  (memory (export "memory") 1)
  (func (export "_start")))"#;

/// A module that is no WASI command: no `_start`.
const NO_START: &str = r#"(module (memory (export "memory") 1) (func (export "main")))"#;

#[test]
fn a_module_that_cannot_be_a_tool_stops_the_start_naming_its_file_and_why() {
    let cases = [
        ("now", Some(FORBIDDEN_IMPORT), "env.now"),
        ("lib", Some(NO_START), "_start"),
        ("lonely", None, "no manifest"),
        (
            "calculator",
            Some(r#"(module (memory (export "memory") 1) (func (export "_start")))"#),
            "built-in",
        ),
    ];
    for (name, wat, says) in cases {
        let folder = tempfile::tempdir().unwrap();
        let bytes = match wat {
            Some(wat) => wat::parse_str(wat).unwrap(),
            None => toolbox().to_vec(),
        };
        std::fs::write(folder.path().join(format!("{name}.wasm")), bytes).unwrap();
        if wat.is_some() {
            let manifest = json!({"description": "x", "parameters": {"type": "object"}});
            std::fs::write(
                folder.path().join(format!("{name}.json")),
                manifest.to_string(),
            )
            .unwrap();
        }
        let (_dir, url) = fresh_database();
        let cache = folder.path().join("cache");
        let output = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .args(["--bind", "127.0.0.1:0", "--database-url", &url])
            .args(["--wasm-tools", folder.path().to_str().unwrap()])
            .args(["--wasm-cache-dir", cache.to_str().unwrap()])
            .env_remove("TANDEM_ENGINE")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{name}: {text}");
        assert!(text.contains(&format!("{name}.wasm")), "{name}: {text}");
        assert!(text.contains(says), "{name}: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_reads_compiled_modules_back_from_the_cache() {
    let folder = tool_folder(&[("echo", json!({}))]);
    let cache = tempfile::tempdir().unwrap();
    let turns = json!([{"toolCalls": [tool_call("echo", json!({"n": 1}))]}, {"text": "Done."}]);
    let flags = ["--wasm-cache-dir", cache.path().to_str().unwrap()];
    let app = app_with_tools(turns.clone(), folder.path(), &flags).await;
    let cached: Vec<PathBuf> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "cwasm"))
        .collect();
    assert_eq!(cached.len(), 1, "{cached:?}");
    let modified = std::fs::metadata(&cached[0]).unwrap().modified().unwrap();
    app.stop().await;
    let app = app_with_tools(turns, folder.path(), &flags).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "go").await;
    assert_eq!(
        tool_results(&socket.until_run_end().await)[0],
        json!({"n": 1})
    );
    let again = std::fs::metadata(&cached[0]).unwrap().modified().unwrap();
    assert_eq!(
        modified, again,
        "the second start read the cache, not compiled again"
    );
}
