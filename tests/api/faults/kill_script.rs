//! The script the kill harness replays: turns alternate between one that reasons,
//! writes and calls `calculator`, `clock` and `append_file` (in a rotating order), and
//! one that reasons and answers in text, which ends the run. Each turn streams dozens of
//! words so a random kill lands mid-stream, mid-tool or between runs.
//!
//! The script engine picks a turn by the session's count of model calls, so every
//! session walks the same turns; `append_file` writes `turn-<i>` to `appends.log`.

use serde_json::{json, Value};

/// The file `append_file` calls write, relative to the workspace.
pub const APPEND_FILE: &str = "appends.log";

const WORDS: [&str; 12] = [
    "the", "log", "keeps", "every", "event", "before", "a", "viewer", "sees", "it", "so", "nothing",
];

/// `count` turns, tool turns at even positions.
pub fn turns(count: usize) -> Value {
    Value::Array((0..count).map(turn).collect())
}

fn turn(index: usize) -> Value {
    let reasoning = format!("Turn {index}: {}", sentence(index, 14));
    let text = format!("Answer {index}: {}", sentence(index + 5, 30));
    if index % 2 == 1 {
        return json!({"reasoning": reasoning, "text": text});
    }
    let mut calls = vec![
        json!({"name": "calculator", "arguments": {"expression": format!("{index}*7+1")}}),
        json!({"name": "clock", "arguments": {}}),
        json!({"name": "append_file", "arguments": {"path": APPEND_FILE, "line": line(index)}}),
    ];
    calls.rotate_left(index / 2 % 3);
    json!({"reasoning": reasoning, "text": text, "toolCalls": calls})
}

/// The line turn `index` appends.
pub fn line(index: usize) -> String {
    format!("turn-{index}")
}

/// `count` words from a fixed list, starting at `seed`.
fn sentence(seed: usize, count: usize) -> String {
    let words: Vec<&str> = (0..count)
        .map(|i| WORDS[(seed * 7 + i) % WORDS.len()])
        .collect();
    words.join(" ") + "."
}
