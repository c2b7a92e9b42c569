//! `run_python` against the real interpreter: RustPython built for `wasm32-wasip1` by
//! `scripts/setup.sh` into the tools cache, compiled once into a module cache every test
//! process shares. What a program prints, how it fails, each limit, what it sees of the
//! workspace, and the demo model's Python scenario.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::helpers::{fresh_database, spawn_app_with, tool_call, tool_results, write_script};

/// Where `scripts/setup.sh` puts the interpreter it built.
fn interpreter() -> PathBuf {
    let tools = std::env::var_os("TANDEM_TOOLS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/tandem-tools")
        });
    let path = tools.join("rustpython.wasm");
    assert!(
        path.is_file(),
        "no Python interpreter at {}: scripts/setup.sh builds it",
        path.display()
    );
    path
}

/// The flags of a server with `run_python`: the interpreter, and a module cache in the
/// build folder that every test process shares (the first compiles, the rest read it).
fn python_flags() -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    vec![
        "--python-wasm".into(),
        interpreter().display().to_string(),
        "--wasm-cache-dir".into(),
        target.join("python-wasm-cache").display().to_string(),
    ]
}

fn python(code: &str) -> Value {
    tool_call("run_python", json!({"code": code}))
}

async fn results_of(calls: Vec<Value>, extra: &[&str]) -> Vec<Value> {
    let turns = json!([{"toolCalls": calls}, {"text": "Done."}]);
    let flags = python_flags();
    let flags: Vec<&str> = flags
        .iter()
        .map(String::as_str)
        .chain(extra.iter().copied())
        .collect();
    let app = spawn_app_with(turns, &flags).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "go").await;
    tool_results(&socket.until_run_end().await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_prints_reads_stdin_uses_the_standard_library_and_fails_with_its_traceback() {
    let got = results_of(
        vec![
            python("print(sum(range(10)))"),
            tool_call(
                "run_python",
                json!({"code": "import sys\nprint(sys.stdin.read().upper(), end='')", "stdin": "hé there"}),
            ),
            python(
                "import json, math, re, itertools, collections, datetime, random, statistics\n\
                 print(json.dumps({'pi': round(math.pi, 3), 'words': re.findall(r'\\w+', 'a b'), \
                 'mean': statistics.mean([1, 2, 3])}))",
            ),
            python("1 / 0"),
            python("import sys\nprint('partial')\nsys.exit(3)"),
            python(
                "import os\ntry:\n    os.listdir('/')\n    seen = 'files'\nexcept OSError:\n    \
                 seen = 'no files'\nprint(sorted(os.environ), seen)",
            ),
            python("import socket\nsocket.create_connection(('127.0.0.1', 5432))"),
        ],
        &[],
    )
    .await;
    assert_eq!(
        got[0],
        json!({"stdout": "45\n", "stderr": "", "exitCode": 0})
    );
    assert_eq!(got[1]["stdout"], "HÉ THERE");
    assert_eq!(
        got[2]["stdout"], "{\"pi\": 3.142, \"words\": [\"a\", \"b\"], \"mean\": 2}\n",
        "{}",
        got[2]
    );
    assert_eq!(got[3]["exitCode"], 1);
    assert_eq!(got[3]["error"], "the program exited with 1");
    let traceback = got[3]["stderr"].as_str().unwrap();
    assert!(traceback.contains("ZeroDivisionError"), "{traceback}");
    assert_eq!(got[4]["exitCode"], 3);
    assert_eq!(got[4]["stdout"], "partial\n");
    assert_eq!(
        got[5]["stdout"], "[] no files\n",
        "no environment and no files: {}",
        got[5]
    );
    assert_eq!(got[6]["exitCode"], 1, "no network: {}", got[6]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_loop_a_hog_and_a_flood_each_end_as_an_error_naming_the_limit() {
    let got = results_of(
        vec![
            python("while True:\n    pass"),
            python("blocks = []\nwhile True:\n    blocks.append(bytearray(1 << 20))"),
            python("while True:\n    print('x' * 1000)"),
        ],
        &["--wasm-timeout-ms", "3000", "--wasm-memory-mib", "64"],
    )
    .await;
    let limits: Vec<&str> = got
        .iter()
        .map(|r| r["limit"].as_str().unwrap_or("none"))
        .collect();
    assert_eq!(limits, ["time", "memory", "output"], "{got:?}");
    assert!(got
        .iter()
        .all(|r| r["error"].is_string() && r.get("exitCode").is_none()));
    assert!(
        got[2]["stdoutBytes"].as_u64().unwrap() > 32 * 1024,
        "{}",
        got[2]
    );

    let fuel = results_of(
        vec![python("while True:\n    pass")],
        &["--wasm-fuel", "3000000000"],
    )
    .await;
    assert_eq!(fuel[0]["limit"], "fuel", "{}", fuel[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_python_files_read_a_program_reads_the_workspace_and_nothing_outside() {
    let (dir, url) = fresh_database();
    let read = |path: &str| python(&format!("print(open({path:?}).read())"));
    let turns = json!([
        {"toolCalls": [
            read("/workspace/in.txt"),
            read("/workspace/../secret.txt"),
            read("/workspace/out.txt"),
            python("open('/workspace/made.txt', 'w').write('x')"),
        ]},
        {"text": "Done."},
    ]);
    let script = write_script(dir.path(), turns);
    let (workspace, _) = crate::helpers::planted_workspace(dir.path(), &script);
    let flags = python_flags();
    let flags: Vec<&str> = flags
        .iter()
        .map(String::as_str)
        .chain(["--python-files", "read"])
        .collect();
    let app = crate::helpers::start(crate::helpers::test_config(&url, &script, &flags)).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "go").await;
    let got = tool_results(&socket.until_run_end().await);
    assert_eq!(got[0]["stdout"], "inside\n", "{}", got[0]);
    for (refused, what) in got[1..3].iter().zip(["..", "a symbolic link"]) {
        assert_eq!(refused["exitCode"], 1, "{what}: {refused}");
        assert!(
            !refused["stdout"].as_str().unwrap().contains("outside"),
            "{what}: {refused}"
        );
    }
    assert_eq!(got[3]["exitCode"], 1, "read-only: {}", got[3]);
    assert!(!workspace.join("made.txt").exists());
    drop(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_model_computes_with_python_and_reports_what_it_printed() {
    let (dir, url) = fresh_database();
    let script = write_script(dir.path(), json!([]));
    let flags = python_flags();
    let flags: Vec<&str> = flags
        .iter()
        .map(String::as_str)
        .chain(["--engine", "demo"])
        .collect();
    let app = crate::helpers::start(crate::helpers::test_config(&url, &script, &flags)).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "compute 2^100 with python").await;
    let events = socket.until_run_end().await;
    assert_eq!(
        tool_results(&events)[0]["stdout"],
        "1267650600228229401496703205376\n"
    );
    let answer = crate::helpers::streamed_text(&events);
    assert!(
        answer.contains("1267650600228229401496703205376"),
        "{answer}"
    );
    drop(dir);
}
