//! Replaying an answer's run, from the page: pick the variants (a model each, "as
//! recorded" by default, and a system prompt of its own if wanted) and k, then watch the comparison fill in: the recorded answer,
//! then each variant side by side (stacked on a phone) with its pass^k and pass@1 and each
//! trial's answer, its words added to and left out of the recorded answer highlighted,
//! where it first differed from the record, whether it passed, its tokens and cost, and a
//! link to its branch. Its code is fetched the first time it opens
//! ([`super::on_first_use`]).

use leptos::portal::Portal;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::{json, Value};
use wasm_split_helpers::wasm_split;

use super::focus_return::FocusReturn;
use super::on_first_use::{on_first_use, Loaded};
use crate::api::rest;
use crate::state::answer_diff::{word_diff, Part};
use crate::state::scores::{dollars, score};
use crate::state::use_models;

/// The most variants a replay takes.
const MAX_VARIANTS: usize = 5;
/// How often a running replay is read again (ms).
const POLL_MS: u32 = 700;

/// The dialog for run `run` of `session` while `open` is set (an answer's "Replay…").
#[component]
pub fn ReplayDialogHost(open: RwSignal<bool>, session: String, run: String) -> impl IntoView {
    let target = StoredValue::new((session, run));
    // In the body: an answer's actions sit inside the transcript's scrolling layer.
    view! {
        <Show when=move || open.get()>
            <Portal>
                {
                    let back = FocusReturn::capture();
                    let (session, run) = target.get_value();
                    move || on_first_use(replay_dialog(open, back, session.clone(), run.clone()), move || open.set(false))
                }
            </Portal>
        </Show>
    }
}

/// The dialog, from the module fetched the first time it opens.
#[wasm_split(replay_dialog, fallible, preload(preload_replay_dialog))]
pub(super) fn replay_dialog(
    open: RwSignal<bool>,
    back: FocusReturn,
    session: String,
    run: String,
) -> Loaded {
    Ok(view! { <ReplayDialog open back session run /> }.into_any())
}

/// One variant as the form holds it.
#[derive(Clone, Debug, PartialEq)]
struct Draft {
    label: String,
    /// Empty: the model the run used.
    model: String,
    /// Empty: the server's system prompt.
    prompt: String,
}

#[component]
fn ReplayDialog(
    open: RwSignal<bool>,
    back: FocusReturn,
    session: String,
    run: String,
) -> impl IntoView {
    let close = move || {
        open.set(false);
        back.restore();
    };
    let drafts = RwSignal::new(vec![Draft {
        label: "again".into(),
        model: String::new(),
        prompt: String::new(),
    }]);
    let k = RwSignal::new("3".to_string());
    let contains = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let replay = RwSignal::new(None::<Value>);
    let models = use_models()
        .and_then(|models| models.get())
        .map(|list| list.models)
        .unwrap_or_default();
    let models = StoredValue::new(models);
    let session = StoredValue::new(session);
    let run = StoredValue::new(run);

    // Reads the replay again while it runs (the dialog closed: stops).
    let follow = move |id: String| {
        spawn_local(async move {
            loop {
                match rest::get_json(&format!("/api/replays/{id}")).await {
                    Ok(read) => {
                        let running = read["status"] == "running";
                        replay.set(Some(read));
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
    };
    let start = move |_| {
        error.set(None);
        let variants: Vec<Value> = drafts
            .get_untracked()
            .into_iter()
            .map(|draft| {
                let mut variant = json!({"label": draft.label.trim()});
                if !draft.model.is_empty() {
                    variant["model"] = json!(draft.model);
                }
                if !draft.prompt.trim().is_empty() {
                    variant["systemPrompt"] = json!(draft.prompt);
                }
                variant
            })
            .collect();
        let mut body = json!({
            "runId": run.get_value(),
            "variants": variants,
            "k": k.get_untracked().trim().parse::<u32>().unwrap_or(0),
        });
        let texts: Vec<String> = contains
            .get_untracked()
            .split(',')
            .map(|text| text.trim().to_string())
            .filter(|text| !text.is_empty())
            .collect();
        if !texts.is_empty() {
            body["expect"] = json!({"contains": texts});
        }
        let url = format!("/api/sessions/{}/replays", session.get_value());
        spawn_local(async move {
            match rest::post_json(url, body).await {
                Ok(started) => {
                    let id = started["id"].as_str().unwrap_or_default().to_string();
                    replay.set(Some(started));
                    follow(id);
                }
                Err(why) => error.set(Some(why.message)),
            }
        });
    };
    let cancel = move |_| {
        let Some(id) = replay.with_untracked(|r| {
            r.as_ref()
                .and_then(|r| r["id"].as_str().map(str::to_string))
        }) else {
            return;
        };
        spawn_local(async move {
            match rest::delete_path(format!("/api/replays/{id}")).await {
                Ok(_) => {
                    if let Ok(read) = rest::get_json(&format!("/api/replays/{id}")).await {
                        replay.set(Some(read));
                    }
                }
                Err(why) => error.set(Some(why.message)),
            }
        });
    };
    let form = move || {
        replay.with(Option::is_none).then(|| {
            let rows = move || {
                drafts
                    .get()
                    .into_iter()
                    .enumerate()
                    .map(|(at, draft)| view! { <VariantRow at draft drafts models /> })
                    .collect_view()
            };
            view! {
                <div class="replay-form">
                    <p class="dialog-help">"Each trial sends this answer's message again in a branch of its own. Tool results and your answers are served from the record: nothing with a side effect runs again."</p>
                    <ul class="replay-variants">{rows}</ul>
                    <Show when=move || drafts.with(|d| d.len() < MAX_VARIANTS)>
                        <button class="btn btn-quiet" on:click=move |_| drafts.update(|d| {
                            let label = format!("variant {}", d.len() + 1);
                            d.push(Draft { label, model: String::new(), prompt: String::new() });
                        })>"Add a variant"</button>
                    </Show>
                    <label class="field">
                        <span>"Trials per variant (k)"</span>
                        <input class="input" type="number" min="1" max="10" prop:value=move || k.get()
                            on:input=move |ev| k.set(event_target_value(&ev)) />
                    </label>
                    <label class="field">
                        <span>"A passing answer contains (comma-separated, optional)"</span>
                        <input class="input" type="text" placeholder="42, Paris" autocomplete="off" prop:value=move || contains.get()
                            on:input=move |ev| contains.set(event_target_value(&ev)) />
                    </label>
                    <button class="btn btn-primary" on:click=start>"Start replay"</button>
                </div>
            }
        })
    };
    let comparison = move || {
        replay
            .get()
            .map(|read| view! { <Comparison replay=read open /> })
    };
    let running = move || replay.with(|r| r.as_ref().is_some_and(|r| r["status"] == "running"));
    view! {
        <div class="dialog-backdrop" on:click=move |_| close()>
            <div
                class="dialog dialog-wide replay-dialog"
                role="dialog"
                aria-modal="true"
                aria-labelledby="replay-title"
                data-testid="replay-dialog"
                on:click=|ev| ev.stop_propagation()
                on:keydown=move |ev| if ev.key() == "Escape" { close() }
            >
                <h2 id="replay-title">"Replay this answer"</h2>
                {form}
                {comparison}
                {move || error.get().map(|why| view! { <p class="form-error" role="alert">{why}</p> })}
                <div class="replay-buttons">
                    <Show when=running>
                        <button class="btn" on:click=cancel>"Cancel replay"</button>
                    </Show>
                    <button class="btn" on:click=move |_| close()>"Close"</button>
                </div>
            </div>
        </div>
    }
}

/// One variant of the form: its label and model.
#[component]
fn VariantRow(
    at: usize,
    draft: Draft,
    drafts: RwSignal<Vec<Draft>>,
    models: StoredValue<Vec<String>>,
) -> impl IntoView {
    let options = models
        .get_value()
        .into_iter()
        .map(|model| {
            let selected = model == draft.model;
            view! { <option value=model.clone() selected=selected>{model.clone()}</option> }
        })
        .collect_view();
    let number = at + 1;
    view! {
        <li class="replay-variant">
            <label class="field">
                <span>{format!("Variant {number}")}</span>
                <input class="input" type="text" autocomplete="off" prop:value=draft.label.clone()
                    on:input=move |ev| drafts.update(|d| d[at].label = event_target_value(&ev)) />
            </label>
            <label class="field">
                <span>{format!("Model of variant {number}")}</span>
                <select class="input" on:change=move |ev| drafts.update(|d| d[at].model = event_target_value(&ev))>
                    <option value="" selected=draft.model.is_empty()>"As recorded"</option>
                    {options}
                </select>
            </label>
            <label class="field replay-prompt">
                <span>{format!("System prompt of variant {number} (empty: the server's)")}</span>
                <textarea class="input" rows="2" prop:value=draft.prompt.clone()
                    on:input=move |ev| drafts.update(|d| d[at].prompt = event_target_value(&ev)) />
            </label>
        </li>
    }
}

/// The replay's comparison: the recorded answer, then each variant's column.
#[component]
fn Comparison(replay: Value, open: RwSignal<bool>) -> impl IntoView {
    let recorded = replay["recordedText"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let status = match replay["status"].as_str() {
        Some("running") => "Running…",
        Some("cancelled") => "Cancelled",
        _ => "Done",
    };
    let columns = replay["variants"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|variant| {
            let recorded = recorded.clone();
            view! { <VariantColumn variant recorded open /> }
        })
        .collect_view();
    view! {
        <section class="replay-comparison" aria-label="Comparison">
            <p class="replay-status" role="status">{status}</p>
            <details class="replay-recorded">
                <summary>"Recorded answer"</summary>
                <p>{recorded.clone()}</p>
            </details>
            <div class="replay-columns">{columns}</div>
        </section>
    }
}

/// A variant: its scores, then its trials.
#[component]
fn VariantColumn(variant: Value, recorded: String, open: RwSignal<bool>) -> impl IntoView {
    let label = variant["label"].as_str().unwrap_or_default().to_string();
    let model = variant["model"].as_str().unwrap_or_default().to_string();
    let trials = variant["trials"].as_array().cloned().unwrap_or_default();
    let scores = format!(
        "pass^k {} · pass@1 {} · {} of {} passed",
        score(variant["passHatK"].as_f64()),
        score(variant["passAt1"].as_f64()),
        variant["passes"].as_u64().unwrap_or(0),
        trials.len()
    );
    let cards = trials
        .into_iter()
        .map(|trial| {
            let recorded = recorded.clone();
            view! { <TrialCard trial recorded open /> }
        })
        .collect_view();
    view! {
        <section class="replay-column" aria-label=format!("Variant {label}")>
            <h3>{label.clone()}</h3>
            <p class="replay-model">{model}</p>
            <p class="replay-scores">{scores}</p>
            <ol class="replay-trials">{cards}</ol>
        </section>
    }
}

/// One trial: how it went, and its answer against the recorded one.
#[component]
fn TrialCard(trial: Value, recorded: String, open: RwSignal<bool>) -> impl IntoView {
    let number = trial["trial"].as_u64().unwrap_or(0);
    let (badge, class) = match (trial["status"].as_str(), trial["passed"].as_bool()) {
        (_, Some(true)) => ("Passed", "trial-badge trial-passed"),
        (_, Some(false)) => ("Failed", "trial-badge trial-failed"),
        (Some("queued"), _) => ("Queued", "trial-badge"),
        (Some("waiting"), _) => ("Waiting for you", "trial-badge"),
        (Some("skipped"), _) => ("Skipped", "trial-badge"),
        (Some("cancelled"), _) => ("Cancelled", "trial-badge"),
        _ => ("Running", "trial-badge"),
    };
    let text = trial["finalText"].as_str().unwrap_or_default().to_string();
    let parts = (!text.is_empty()).then(|| {
        word_diff(&recorded, &text)
            .into_iter()
            .map(|part| match part {
                Part::Same(run) => view! { <span>{run}</span> }.into_any(),
                Part::Added(run) => view! { <ins class="diff-added">{run}</ins> }.into_any(),
                Part::Removed(run) => view! { <del class="diff-removed">{run}</del> }.into_any(),
            })
            .collect_view()
    });
    let diverged = trial["divergedAtSeq"]
        .as_u64()
        .map(|seq| view! { <p class="trial-diverged">{format!("Differed from the record at event {seq}")}</p> });
    let reason = trial["reason"]
        .as_str()
        .map(|why| view! { <p class="trial-reason">{why.to_string()}</p> });
    let usage = &trial["usage"];
    let mut figures = format!(
        "{} in · {} out",
        usage["inputTokens"].as_u64().unwrap_or(0),
        usage["outputTokens"].as_u64().unwrap_or(0)
    );
    if let Some(cost) = trial["costUsd"].as_f64() {
        figures.push_str(&format!(" · {}", dollars(cost)));
    }
    if let Some(ms) = trial["latencyMs"].as_u64() {
        figures.push_str(&format!(" · {ms} ms"));
    }
    let link = trial["sessionId"].as_str().map(|session| {
        let href = crate::state::route::hash_for(session);
        view! { <a href=href on:click=move |_| open.set(false)>{format!("Open trial {number}")}</a> }
    });
    view! {
        <li class="replay-trial" data-testid="replay-trial">
            <div class="trial-head">
                <strong>{format!("Trial {number}")}</strong>
                <span class=class>{badge}</span>
            </div>
            {diverged}
            {reason}
            <p class="trial-answer">{parts}</p>
            <p class="trial-figures">{figures}</p>
            {link}
        </li>
    }
}
