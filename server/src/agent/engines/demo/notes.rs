//! The demo's note scenario: it saves a note with `write_file`, a tool that changes
//! things, so the run pauses for the person's approval (which may edit the path or text).

use serde_json::json;

use super::{turn, Situation};
use crate::agent::engines::Turn;

/// Where the demo saves notes, relative to the workspace.
pub const NOTE_PATH: &str = "notes/tandem.txt";

/// Saves a note, then reports what happened to the call.
pub(super) fn save_note(s: &Situation<'_>) -> Turn {
    if s.results.is_empty() {
        return turn(
            "The person wants a note saved. Writing a file changes their workspace, so \
             Tandem will ask them to approve the call (they can edit it) before it runs.",
            "I'll save that note in your workspace.",
            Some((
                "write_file",
                json!({"path": NOTE_PATH, "content": format!("{}\n", note_text(s.ask))}),
            )),
        );
    }
    let result = s.result(0);
    let outcome = result.get("result").unwrap_or(result);
    let text = if let Some(path) = outcome["written"].as_str() {
        let edited = if result.get("argumentsEditedByThePerson").is_some() {
            " (with your edits)"
        } else {
            ""
        };
        format!("Saved{edited}: `{path}`, {} bytes.", outcome["bytes"])
    } else if result["status"] == "rejected" {
        match result["reason"].as_str() {
            Some(reason) => format!("Okay, I didn't save it. You said: \"{reason}\"."),
            None => "Okay, I didn't save it.".to_string(),
        }
    } else {
        let error = result["error"].as_str().unwrap_or("no reason given");
        format!("I couldn't save the note: {error}")
    };
    turn(
        "The write_file call is settled; I'll tell them how it went.",
        &text,
        None,
    )
}

/// The note in a message like "save a note that the demo works".
fn note_text(ask: &str) -> String {
    // ASCII lower-casing keeps byte offsets, so `at` is valid in `ask` too.
    let lower = ask.to_ascii_lowercase();
    let after = lower
        .find("note")
        .map(|at| &ask[at + "note".len()..])
        .unwrap_or(ask);
    let trimmed = after.trim_start_matches([':', ' ']);
    let trimmed = trimmed.strip_prefix("that ").unwrap_or(trimmed).trim();
    if trimmed.is_empty() {
        "A note from Tandem's demo.".into()
    } else {
        trimmed.into()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn situation<'a>(ask: &'a str, results: Vec<(&'a str, Value)>) -> Situation<'a> {
        Situation { ask, results }
    }

    #[test]
    fn the_note_is_written_with_write_file() {
        let first = save_note(&situation("save a note that the demo works", vec![]));
        assert_eq!(first.tool_calls[0].name, "write_file");
        assert_eq!(first.tool_calls[0].arguments["content"], "the demo works\n");
    }

    #[test]
    fn the_outcome_is_reported() {
        let ask = "save a note";
        let saved = json!({"written": "notes/tandem.txt", "bytes": 5});
        let edited =
            json!({"result": {"written": "n.txt", "bytes": 2}, "argumentsEditedByThePerson": {}});
        let rejected = json!({"status": "rejected", "reason": "not now"});
        let said = |result: Value| {
            save_note(&situation(ask, vec![("write_file", result)]))
                .text
                .unwrap()
        };
        assert!(said(saved).starts_with("Saved: `notes/tandem.txt`"));
        assert!(said(edited).starts_with("Saved (with your edits): `n.txt`"));
        assert!(said(rejected).contains("not now"));
    }
}
