//! One WASI command that is every tool the sandbox's tests need, by its name (`argv[0]`,
//! which the sandbox sets to the tool's): the tests copy it as `echo.wasm`,
//! `spin.wasm`, … with a manifest beside each.
//!
//! - `echo`: stdin to stdout.
//! - `add`: `{a, b}` → `{"sum": a + b}`.
//! - `read_text`: `{path}` → `{"text": …}`, the file at `/workspace/<path>`.
//! - `write_text`: `{path, text}` → `{"written": bytes}`.
//! - `fill`: `{path, bytes}` writes `bytes` bytes to `/workspace/<path>`, a MiB at a time.
//! - `spin`: never returns; `hog`: takes memory until there is none; `recurse`: recurses
//!   without end; `flood`: prints without end.
//! - `fail`: says why on stderr and exits 3.
//! - `env`: `{"vars": …, "args": …}`, what it was given.

use std::io::{Read, Write};

fn main() {
    // `spin2` behaves as `spin`: one behaviour under several manifests.
    let called = std::env::args().next().unwrap_or_default();
    let name = called.trim_end_matches(|c: char| c.is_ascii_digit());
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).expect("stdin");
    let arguments: serde_json::Value = serde_json::from_str(&input).unwrap_or_default();
    let text = |key: &str| arguments[key].as_str().unwrap_or_default().to_string();
    // A relative path is the workspace's; an absolute one is tried as it is.
    let workspace = |path: String| match path.starts_with('/') {
        true => path,
        false => format!("/workspace/{path}"),
    };
    match name {
        "echo" => print!("{input}"),
        "add" => {
            let sum =
                arguments["a"].as_f64().unwrap_or(0.0) + arguments["b"].as_f64().unwrap_or(0.0);
            print!("{}", serde_json::json!({"sum": sum}));
        }
        "read_text" => match std::fs::read_to_string(workspace(text("path"))) {
            Ok(read) => print!("{}", serde_json::json!({"text": read})),
            Err(error) => fail(&format!("cannot read {}: {error}", text("path"))),
        },
        "write_text" => match std::fs::write(workspace(text("path")), text("text")) {
            Ok(()) => print!("{}", serde_json::json!({"written": text("text").len()})),
            Err(error) => fail(&format!("cannot write {}: {error}", text("path"))),
        },
        "fill" => {
            let mut file = std::fs::File::create(workspace(text("path"))).expect("create");
            let block = vec![b'x'; 1 << 20];
            let mut left = arguments["bytes"].as_u64().unwrap_or(0) as usize;
            while left > 0 {
                let now = left.min(block.len());
                file.write_all(&block[..now]).expect("write");
                left -= now;
            }
            print!("{}", serde_json::json!({"filled": true}));
        }
        "spin" => {
            let mut n: u64 = 0;
            loop {
                n = std::hint::black_box(n.wrapping_add(1));
            }
        }
        "hog" => {
            let mut held: Vec<Vec<u8>> = Vec::new();
            loop {
                held.push(vec![1; 1 << 20]);
                std::hint::black_box(&held);
            }
        }
        "recurse" => print!("{}", recurse(std::hint::black_box(1))),
        "flood" => loop {
            println!("{}", "flood ".repeat(100));
        },
        "env" => {
            let vars: Vec<String> = std::env::vars().map(|(key, _)| key).collect();
            let args: Vec<String> = std::env::args().collect();
            print!("{}", serde_json::json!({"vars": vars, "args": args}));
        }
        "fail" => fail("bad input"),
        _ => fail("no such tool"),
    }
}

#[allow(unconditional_recursion)]
fn recurse(depth: u64) -> u64 {
    let deeper = recurse(std::hint::black_box(depth + 1));
    std::hint::black_box(deeper + depth)
}

fn fail(why: &str) -> ! {
    eprintln!("{why}");
    std::process::exit(3)
}
