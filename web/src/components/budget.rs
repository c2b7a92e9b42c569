//! Budgets on the page: the control of a run paused at its user's budget (Stop here, and
//! Continue; the card's prompt says what was spent), and the header's chip with what is left (from `GET
//! /api/auth/me`, read again whenever a run ends).

use leptos::prelude::*;
use serde_json::json;
use shared::budget::BudgetLine;

use super::responder::Responder;
use crate::state::{use_auth, use_session, RunState};

/// Stop a run that reached its budget, or let it go on. Without `may_overrun` the server
/// takes Continue only once the budget has room again, and says so under the buttons.
#[component]
pub fn BudgetControl(may_overrun: bool, responder: Responder) -> impl IntoView {
    let go_on = match may_overrun {
        true => "Continue past the budget",
        false => "Continue",
    };
    view! {
        {move || responder.refused.get().map(|message| view! {
            <p class="form-error" data-testid="budget-refused" role="alert">{message}</p>
        })}
        <div class="choices">
            <button
                class="btn btn-primary"
                data-testid="budget-stop"
                disabled=move || responder.locked()
                on:click=move |_| responder.resolve(json!({"continue": false}))
            >
                "Stop here"
            </button>
            <button
                class="btn"
                data-testid="budget-continue"
                disabled=move || responder.locked()
                on:click=move |_| responder.resolve(json!({"continue": true}))
            >
                {go_on}
            </button>
        </div>
    }
}

/// What is left of the tightest of the caller's budgets (`$3.80 left today`), all of them
/// in its tooltip; nothing when no cap applies.
#[component]
pub fn BudgetLeft() -> impl IntoView {
    let auth = use_auth();
    let session = use_session();
    // Read again when a run ends or pauses (what it spent is logged by then).
    Effect::new(move |previous: Option<RunState>| {
        let now = session.run().get();
        if previous == Some(RunState::Running) && now != RunState::Running {
            auth.refresh_budget();
        }
        now
    });
    move || {
        let lines = auth.budget.get();
        let tightest = lines
            .iter()
            .min_by(|a, b| share_left(a).total_cmp(&share_left(b)))?;
        let all: Vec<String> = lines.iter().map(BudgetLine::describe_left).collect();
        Some(view! {
            <span
                class="budget-left"
                class:spent=tightest.is_spent()
                data-testid="budget-left"
                title=format!("Your budget (UTC): {}", all.join("; "))
            >
                {tightest.short_left()}
            </span>
        })
    }
}

/// How much of a cap is left, from 0 to 1.
fn share_left(line: &BudgetLine) -> f64 {
    match line.limit > 0.0 {
        true => line.left / line.limit,
        false => 0.0,
    }
}
