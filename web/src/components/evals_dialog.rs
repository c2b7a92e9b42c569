//! The person's evals, from the page: each run of an eval with when it was made and how far
//! it is, each variant's mean pass^k, pass@1, tokens and cost, and, opened, each
//! conversation's score linking to it, read again while one runs. Evals are made over the
//! API or with `tandem eval`.
//! Its code is fetched the first time it opens ([`super::on_first_use`]).

use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::Value;
use wasm_split_helpers::wasm_split;

use super::focus_return::FocusReturn;
use super::on_first_use::{on_first_use, Loaded};
use crate::api::rest;
use crate::state::scores::{dollars, score};

/// How often the list is read again while an eval runs (ms).
const POLL_MS: u32 = 1_000;

/// The dialog while `open` is set (the "More" menu's "Evals…" sets it).
#[component]
pub fn EvalsDialogHost(open: RwSignal<bool>) -> impl IntoView {
    view! {
        <Show when=move || open.get()>
            {
                let back = FocusReturn::capture();
                move || on_first_use(evals_dialog(open, back), move || open.set(false))
            }
        </Show>
    }
}

/// The dialog, from the module fetched the first time it opens.
#[wasm_split(evals_dialog, fallible, preload(preload_evals_dialog))]
pub(super) fn evals_dialog(open: RwSignal<bool>, back: FocusReturn) -> Loaded {
    Ok(view! { <EvalsDialog open back /> }.into_any())
}

#[component]
fn EvalsDialog(open: RwSignal<bool>, back: FocusReturn) -> impl IntoView {
    let close = move || {
        open.set(false);
        back.restore();
    };
    let evals = RwSignal::new(None::<Vec<Value>>);
    let error = RwSignal::new(None::<String>);
    // Read again while an eval runs, until none does or the dialog closes.
    spawn_local(async move {
        loop {
            match rest::get_json("/api/evals").await {
                Ok(list) => {
                    let all = list["evals"].as_array().cloned().unwrap_or_default();
                    let running = all.iter().any(|eval| eval["status"] == "running");
                    evals.set(Some(all));
                    if !running {
                        return;
                    }
                }
                Err(why) => return error.set(Some(why.message)),
            }
            crate::api::pause(POLL_MS).await;
            if !open.get_untracked() {
                return;
            }
        }
    });
    let rows = move || {
        let all = evals.get()?;
        if all.is_empty() {
            return Some(
                view! { <p class="dialog-help">"No evals yet. Make one with POST /api/evals or tandem eval."</p> }
                    .into_any(),
            );
        }
        let rows = all
            .into_iter()
            .map(|eval| view! { <EvalRow eval open /> })
            .collect_view();
        Some(view! { <ul class="eval-list">{rows}</ul> }.into_any())
    };
    view! {
        <div class="dialog-backdrop" on:click=move |_| close()>
            <div
                class="dialog dialog-wide evals-dialog"
                role="dialog"
                aria-modal="true"
                aria-labelledby="evals-title"
                data-testid="evals-dialog"
                on:click=|ev| ev.stop_propagation()
                on:keydown=move |ev| if ev.key() == "Escape" { close() }
            >
                <h2 id="evals-title">"Evals"</h2>
                <p class="dialog-help">"Recorded conversations replayed on other models or prompts, k times each: pass^k is the share of conversations where every trial passed."</p>
                {move || evals.with(Option::is_none).then(|| view! { <p class="dialog-help" role="status">"Loading…"</p> })}
                {rows}
                {move || error.get().map(|why| view! { <p class="form-error" role="alert">{why}</p> })}
                <button class="btn" on:click=move |_| close()>"Close"</button>
            </div>
        </div>
    }
}

/// One eval: when, how far, each variant's scores, and its conversations.
#[component]
fn EvalRow(eval: Value, open: RwSignal<bool>) -> impl IntoView {
    let created = eval["createdAt"]
        .as_str()
        .unwrap_or_default()
        .replace('T', " ");
    let created: String = created.chars().take(16).collect();
    let status = match eval["status"].as_str() {
        Some("running") => "Running",
        Some("cancelled") => "Cancelled",
        _ => "Done",
    };
    let conversations = eval["conversations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let count = match conversations.len() {
        1 => "1 conversation".to_string(),
        n => format!("{n} conversations"),
    };
    let heading = format!(
        "{created} UTC · k = {} · {count} · {status}",
        eval["k"].as_u64().unwrap_or(0)
    );
    let variants = eval["variants"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|variant| {
            let line = format!(
                "{} ({}): pass^k {} · pass@1 {} · {} in / {} out tokens{}",
                variant["label"].as_str().unwrap_or_default(),
                variant["model"].as_str().unwrap_or_default(),
                score(variant["passHatK"].as_f64()),
                score(variant["passAt1"].as_f64()),
                variant["inputTokens"].as_u64().unwrap_or(0),
                variant["outputTokens"].as_u64().unwrap_or(0),
                variant["costUsd"]
                    .as_f64()
                    .map(dollars)
                    .map(|c| format!(" · {c}"))
                    .unwrap_or_default(),
            );
            view! { <li>{line}</li> }
        })
        .collect_view();
    let rows = conversations
        .into_iter()
        .map(|row| {
            let title = row["title"].as_str().unwrap_or_default().to_string();
            let cells = match row["skipped"].as_str() {
                Some(why) => format!("skipped: {why}"),
                None => row["variants"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|cell| {
                        format!(
                            "{} {}",
                            cell["label"].as_str().unwrap_or_default(),
                            score(cell["passHatK"].as_f64())
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(" · "),
            };
            let href = crate::state::route::hash_for(row["sessionId"].as_str().unwrap_or_default());
            view! {
                <li>
                    <a href=href on:click=move |_| open.set(false)>{title}</a>
                    <span class="eval-cells">{format!(" — {cells}")}</span>
                </li>
            }
        })
        .collect_view();
    view! {
        <li class="eval-row" data-testid="eval-row">
            <p class="eval-heading"><strong>{heading}</strong></p>
            <ul class="eval-variants">{variants}</ul>
            <details class="eval-conversations">
                <summary>"Conversations"</summary>
                <ul>{rows}</ul>
            </details>
        </li>
    }
}
