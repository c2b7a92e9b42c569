//! The demo's plan scenario: it keeps a three-step plan in the shared state with
//! `update_state` and ticks the steps off one model call at a time, so the page's plan
//! panel fills and updates live. A step the person ticked or renamed in the meantime stays
//! as they left it; a step they removed ends the scenario with what the patch said.

use serde_json::{json, Value};

use super::{turn, Situation};
use crate::agent::engines::Turn;

/// The plan's steps.
const STEPS: [&str; 3] = ["Gather what is needed", "Do the work", "Check the result"];

/// Plays the next step of the plan.
pub(super) fn make_plan(s: &Situation<'_>) -> Turn {
    let done = s.results.len();
    if let Some(error) = s
        .results
        .last()
        .and_then(|(_, result)| result["error"].as_str())
    {
        return turn(
            "The plan changed under me in a way my patch did not expect; I'll stop here.",
            &format!("I could not update the plan: {error}"),
            None,
        );
    }
    match done {
        0 => turn(
            "The person wants a plan. I'll put it in the shared state as a checklist they can \
             see and edit, then work through it step by step.",
            "Here is the plan. I'll tick each step off as I go.",
            Some(("update_state", json!({"patch": [{"op": "add", "path": "/plan", "value":
                STEPS.iter().enumerate().map(|(i, step)| json!({"step": step,
                    "status": if i == 0 { "in_progress" } else { "pending" }}))
                    .collect::<Vec<Value>>()}]}))),
        ),
        1..=3 => {
            let finished = done - 1;
            let mut patch = vec![json!({"op": "replace",
                "path": format!("/plan/{finished}/status"), "value": "done"})];
            if finished + 1 < STEPS.len() {
                patch.push(json!({"op": "replace",
                    "path": format!("/plan/{}/status", finished + 1), "value": "in_progress"}));
            }
            turn(
                &format!("Step {} is done; I'll mark it and move on.", finished + 1),
                &format!("Done: {}.", STEPS[finished].to_lowercase()),
                Some(("update_state", json!({ "patch": patch }))),
            )
        }
        _ => turn(
            "Every step of the plan is done.",
            "All three steps are done. The checklist beside the conversation shows them ticked off.",
            None,
        ),
    }
}
