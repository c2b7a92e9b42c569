//! The person's schedules, from the page: each with when it fires next and how its last
//! fire went; pause, resume, run now, delete; its fires, each linking to its session; and
//! a new one (or one edited), "every day at 09:00" in the browser's time zone or a cron
//! pattern, with its next five times shown (as the server computes them) before it is
//! saved. Its code is
//! fetched the first time it opens ([`super::on_first_use`]).

use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::{json, Value};
use wasm_split_helpers::wasm_split;

use super::focus_return::FocusReturn;
use super::on_first_use::{on_first_use, Loaded};
use crate::api::rest;

/// The dialog while `open` is set (the "More" menu's "Schedules…" sets it).
#[component]
pub fn SchedulesDialogHost(open: RwSignal<bool>) -> impl IntoView {
    view! {
        <Show when=move || open.get()>
            {
                let back = FocusReturn::capture();
                move || on_first_use(schedules_dialog(open, back), move || open.set(false))
            }
        </Show>
    }
}

/// The dialog, from the module fetched the first time it opens.
#[wasm_split(schedules_dialog, fallible, preload(preload_schedules_dialog))]
pub(super) fn schedules_dialog(open: RwSignal<bool>, back: FocusReturn) -> Loaded {
    Ok(view! { <SchedulesDialog open back /> }.into_any())
}

/// An instant as the browser's clock reads it, in its locale (`Mon, Dec 1, 09:00`).
fn local_time(rfc3339: &str) -> String {
    let date = js_sys::Date::new(&rfc3339.into());
    let options = js_sys::Object::new();
    for (key, value) in [
        ("weekday", "short"),
        ("month", "short"),
        ("day", "numeric"),
        ("hour", "2-digit"),
        ("minute", "2-digit"),
    ] {
        let _ = js_sys::Reflect::set(&options, &key.into(), &value.into());
    }
    date.to_locale_string("default", &options).into()
}

/// The browser's IANA time zone (`Europe/Paris`), else UTC.
fn browser_zone() -> String {
    let format = js_sys::Intl::DateTimeFormat::new(&js_sys::Array::new(), &js_sys::Object::new());
    let options = format.resolved_options();
    js_sys::Reflect::get(&options, &"timeZone".into())
        .ok()
        .and_then(|zone| zone.as_string())
        .unwrap_or_else(|| "UTC".into())
}

/// When a schedule fires, in words.
fn when_of(schedule: &Value) -> String {
    if let Some(cron) = schedule["cron"].as_str() {
        let zone = schedule["timezone"].as_str().unwrap_or("UTC");
        return match daily_time(cron) {
            Some(time) => format!("Every day at {time} ({zone})"),
            None => format!("{cron} ({zone})"),
        };
    }
    if let Some(every) = schedule["everySeconds"].as_u64() {
        return match every {
            s if s % 86_400 == 0 => format!("Every {} d", s / 86_400),
            s if s % 3_600 == 0 => format!("Every {} h", s / 3_600),
            s if s % 60 == 0 => format!("Every {} min", s / 60),
            s => format!("Every {s} s"),
        };
    }
    match schedule["at"].as_str() {
        Some(at) => format!("Once, {}", local_time(at)),
        None => String::new(),
    }
}

/// `09:00` for a pattern `0 9 * * *` (a daily one), else none.
fn daily_time(cron: &str) -> Option<String> {
    let fields: Vec<&str> = cron.split_whitespace().collect();
    let [minute, hour, "*", "*", "*"] = fields.as_slice() else {
        return None;
    };
    let (minute, hour): (u32, u32) = (minute.parse().ok()?, hour.parse().ok()?);
    (minute < 60 && hour < 24).then(|| format!("{hour:02}:{minute:02}"))
}

/// The pattern of "every day at `time`" (`HH:MM`).
fn daily_cron(time: &str) -> Option<String> {
    let (hour, minute) = time.split_once(':')?;
    let (hour, minute): (u32, u32) = (hour.parse().ok()?, minute.parse().ok()?);
    (minute < 60 && hour < 24).then(|| format!("{minute} {hour} * * *"))
}

/// A fire as a line: when, and what became of it.
fn fire_line(fire: &Value) -> String {
    let when = fire["scheduledFor"]
        .as_str()
        .map(local_time)
        .unwrap_or_default();
    let what = match (fire["status"].as_str(), fire["outcome"].as_str()) {
        (Some("fired"), Some(outcome)) => outcome_words(outcome).to_string(),
        (Some("fired"), None) => "Fired".to_string(),
        (Some("missed"), _) => "Missed".to_string(),
        _ => "Skipped".to_string(),
    };
    let manual = if fire["manual"] == true {
        " (run now)"
    } else {
        ""
    };
    format!("{when}{manual}: {what}")
}

fn outcome_words(outcome: &str) -> &'static str {
    match outcome {
        "running" => "Running",
        "waiting" => "Waiting for you",
        "answered" => "Answered",
        "succeeded" => "Done",
        "failed" => "Failed",
        "cancelled" => "Cancelled",
        "expired" => "Question expired",
        _ => "Fired",
    }
}

#[component]
fn SchedulesDialog(open: RwSignal<bool>, back: FocusReturn) -> impl IntoView {
    let close = move || {
        open.set(false);
        back.restore();
    };
    let schedules = RwSignal::new(None::<Vec<Value>>);
    // The schedule the form changes, if one.
    let editing = RwSignal::new(None::<Value>);
    let error = RwSignal::new(None::<String>);
    let status = RwSignal::new(None::<String>);
    let reload = move || {
        spawn_local(async move {
            match rest::get_json("/api/schedules").await {
                Ok(list) => schedules.set(Some(
                    list["schedules"].as_array().cloned().unwrap_or_default(),
                )),
                Err(why) => error.set(Some(why.message)),
            }
        });
    };
    reload();
    let act = move |done: String, request: rest::Pending| {
        error.set(None);
        spawn_local(async move {
            match request.await {
                Ok(_) => {
                    status.set(Some(done));
                    reload();
                }
                Err(why) => error.set(Some(why.message)),
            }
        });
    };
    let rows = move || {
        let all = schedules.get()?;
        if all.is_empty() {
            return Some(view! { <p class="dialog-help">"No schedules yet."</p> }.into_any());
        }
        let rows = all
            .into_iter()
            .map(|schedule| view! { <ScheduleRow schedule act open editing /> })
            .collect_view();
        Some(view! { <ul class="schedule-list">{rows}</ul> }.into_any())
    };
    view! {
        <div class="dialog-backdrop" on:click=move |_| close()>
            <div
                class="dialog dialog-wide schedules-dialog"
                role="dialog"
                aria-modal="true"
                aria-labelledby="schedules-title"
                data-testid="schedules-dialog"
                on:click=|ev| ev.stop_propagation()
                on:keydown=move |ev| if ev.key() == "Escape" { close() }
            >
                <h2 id="schedules-title">"Schedules"</h2>
                <p class="dialog-help">"Messages the agent gets at set times, each in a conversation of its own. A scheduled run can ask you and wait."</p>
                {move || schedules.with(Option::is_none).then(|| view! { <p class="dialog-help" role="status">"Loading…"</p> })}
                {rows}
                <ScheduleForm editing error status reload />
                <p class="tools-status" role="status">{move || status.get()}</p>
                {move || error.get().map(|why| view! { <p class="form-error" role="alert">{why}</p> })}
                <button class="btn" on:click=move |_| close()>"Close"</button>
            </div>
        </div>
    }
}

/// One schedule: when, next, last, and what can be done with it.
#[component]
fn ScheduleRow(
    schedule: Value,
    act: impl Fn(String, rest::Pending) + Copy + 'static,
    /// The dialog's: a fire's link closes it as it opens the fire's session.
    open: RwSignal<bool>,
    /// The form's: Edit puts this schedule in it.
    editing: RwSignal<Option<Value>>,
) -> impl IntoView {
    let id = schedule["id"].as_str().unwrap_or_default().to_string();
    let name = schedule["name"].as_str().unwrap_or_default().to_string();
    let enabled = schedule["enabled"] != false;
    let next = match (enabled, schedule["nextFireAt"].as_str()) {
        (false, _) => "Paused".to_string(),
        (true, Some(at)) => format!("Next: {}", local_time(at)),
        (true, None) => "No time left".to_string(),
    };
    let last = schedule["lastFire"]
        .is_object()
        .then(|| format!("Last: {}", fire_line(&schedule["lastFire"])));
    let path = format!("/api/schedules/{id}");
    let fires = RwSignal::new(None::<Vec<Value>>);
    let (toggle_path, run_path, delete_path, fires_path) = (
        path.clone(),
        format!("{path}/run"),
        path.clone(),
        format!("{path}/fires?limit=20"),
    );
    let (paused_name, run_name, deleted_name) = (name.clone(), name.clone(), name.clone());
    let edited = schedule.clone();
    let load_fires = move |ev: web_sys::Event| {
        let opened = event_target::<web_sys::HtmlDetailsElement>(&ev).open();
        if !opened || fires.with_untracked(Option::is_some) {
            return;
        }
        let url = fires_path.clone();
        spawn_local(async move {
            if let Ok(list) = rest::get_json(&url).await {
                fires.set(Some(list["fires"].as_array().cloned().unwrap_or_default()));
            }
        });
    };
    let fire_items = move || {
        let list = fires.get()?;
        if list.is_empty() {
            return Some(view! { <p class="dialog-help">"It has not fired yet."</p> }.into_any());
        }
        let items = list
            .into_iter()
            .map(|fire| {
                let line = fire_line(&fire);
                let reason = fire["reason"].as_str().map(str::to_string);
                match fire["sessionId"].as_str() {
                    Some(session) => {
                        let href = crate::state::route::hash_for(session);
                        view! { <li><a href=href on:click=move |_| open.set(false)>{line}</a></li> }
                            .into_any()
                    }
                    None => view! {
                        <li>{line}{reason.map(|why| view! { <span class="schedule-reason">{format!(" — {why}")}</span> })}</li>
                    }
                    .into_any(),
                }
            })
            .collect_view();
        Some(view! { <ul class="schedule-fires">{items}</ul> }.into_any())
    };
    view! {
        <li class="schedule-row" data-testid="schedule-row">
            <div class="schedule-head">
                <strong class="schedule-name">{name.clone()}</strong>
                <span class="schedule-when">{when_of(&schedule)}</span>
            </div>
            <p class="schedule-times">
                <span>{next}</span>
                {last.map(|last| view! { <span>{last}</span> })}
            </p>
            <div class="tool-row-actions">
                <button class="btn btn-quiet" aria-label=format!("{} {name}", if enabled { "Pause" } else { "Resume" })
                    on:click=move |_| {
                        let body = json!({"enabled": !enabled});
                        let done = format!("{} {paused_name}.", if enabled { "Paused" } else { "Resumed" });
                        act(done, rest::patch_json(toggle_path.clone(), body));
                    }>
                    {if enabled { "Pause" } else { "Resume" }}
                </button>
                <button class="btn btn-quiet" aria-label=format!("Edit {name}")
                    on:click=move |_| editing.set(Some(edited.clone()))>
                    "Edit"
                </button>
                <button class="btn btn-quiet" aria-label=format!("Run now: {name}")
                    on:click=move |_| act(format!("Ran {run_name}."), rest::post_json(run_path.clone(), json!({})))>
                    "Run now"
                </button>
                <button class="btn btn-quiet tool-delete" aria-label=format!("Delete {name}")
                    on:click=move |_| act(format!("Deleted {deleted_name}."), rest::delete_path(delete_path.clone()))>
                    "Delete"
                </button>
            </div>
            <details class="schedule-fires-box" on:toggle=load_fires>
                <summary>"Fires"</summary>
                {fire_items}
            </details>
        </li>
    }
}

/// Making a schedule (or changing one, `editing`): its name and message, and when (every
/// day at a time, or a cron pattern, in the browser's zone or the edited schedule's own),
/// with its next five times before it is saved. A schedule of an interval or an instant
/// keeps its times when edited here: only its name and message change.
#[component]
fn ScheduleForm(
    editing: RwSignal<Option<Value>>,
    error: RwSignal<Option<String>>,
    status: RwSignal<Option<String>>,
    reload: impl Fn() + Copy + 'static,
) -> impl IntoView {
    // The browser's zone, for the form's note (a `StoredValue`: the note is made anew).
    let browser = StoredValue::new(browser_zone());
    let zone = RwSignal::new(browser.get_value());
    let name = RwSignal::new(String::new());
    let message = RwSignal::new(String::new());
    let daily = RwSignal::new(true);
    let time = RwSignal::new("09:00".to_string());
    let cron = RwSignal::new("0 9 * * 1-5".to_string());
    // Whether the form says when it fires (not for an interval's or an instant's edit).
    let timed = RwSignal::new(true);
    let times = RwSignal::new(Vec::<String>::new());
    let preview_error = RwSignal::new(None::<String>);
    // Editing fills the form with the schedule as it is; done, it empties again.
    Effect::new(move |_| match editing.get() {
        Some(schedule) => {
            name.set(schedule["name"].as_str().unwrap_or_default().to_string());
            message.set(
                schedule["message"]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            );
            let pattern = schedule["cron"].as_str().map(str::to_string);
            timed.set(pattern.is_some());
            if let Some(pattern) = pattern {
                zone.set(schedule["timezone"].as_str().unwrap_or("UTC").to_string());
                match daily_time(&pattern) {
                    Some(at) => {
                        daily.set(true);
                        time.set(at);
                    }
                    None => {
                        daily.set(false);
                        cron.set(pattern);
                    }
                }
            }
        }
        None => {
            name.set(String::new());
            message.set(String::new());
            timed.set(true);
        }
    });
    let pattern = move || match daily.get() {
        true => daily_cron(&time.get()),
        false => Some(cron.get().trim().to_string()),
    };
    Effect::new(move |_| {
        let Some(pattern) = pattern().filter(|_| timed.get()) else {
            times.set(Vec::new());
            return;
        };
        let url = format!(
            "/api/schedules/preview?cron={}&timezone={}&count=5",
            String::from(js_sys::encode_uri_component(&pattern)),
            String::from(js_sys::encode_uri_component(&zone.get())),
        );
        spawn_local(async move {
            match rest::get_json(&url).await {
                Ok(found) => {
                    let list = found["times"].as_array().into_iter().flatten();
                    times.set(list.filter_map(Value::as_str).map(local_time).collect());
                    preview_error.set(None);
                }
                Err(why) => {
                    times.set(Vec::new());
                    preview_error.set(Some(why.message));
                }
            }
        });
    });
    let save = move || {
        let mut body = json!({
            "name": name.get_untracked().trim(),
            "message": {"text": message.get_untracked()},
        });
        if timed.get_untracked() {
            let Some(pattern) = pattern() else {
                error.set(Some("Give a time like 09:00.".into()));
                return;
            };
            body["cron"] = json!(pattern);
            body["timezone"] = json!(zone.get_untracked());
        }
        let edited = editing.get_untracked();
        let request = match &edited {
            Some(schedule) => {
                let id = schedule["id"].as_str().unwrap_or_default();
                rest::patch_json(format!("/api/schedules/{id}"), body)
            }
            None => rest::post_json("/api/schedules".to_string(), body),
        };
        error.set(None);
        spawn_local(async move {
            match request.await {
                Ok(saved) => {
                    status.set(Some(format!(
                        "Saved {}.",
                        saved["name"].as_str().unwrap_or("the schedule")
                    )));
                    editing.set(None);
                    zone.set(browser_zone());
                    reload();
                }
                Err(why) => error.set(Some(why.message)),
            }
        });
    };
    let heading = move || match editing.with(Option::is_some) {
        true => "Edit schedule",
        false => "New schedule",
    };
    view! {
        <section class="tool-upload" aria-labelledby="schedule-form-title">
            <h3 class="dialog-subtitle" id="schedule-form-title">{heading}</h3>
            <label class="field">
                <span>"Name"</span>
                <input class="input" type="text" placeholder="Morning summary" autocomplete="off"
                    prop:value=move || name.get() on:input=move |ev| name.set(event_target_value(&ev)) />
            </label>
            <label class="field">
                <span>"Message"</span>
                <textarea class="input" rows="3" placeholder="Summarise what changed since yesterday."
                    prop:value=move || message.get() on:input=move |ev| message.set(event_target_value(&ev)) />
            </label>
            <Show when=move || timed.get()>
                <fieldset class="schedule-kind">
                    <legend>"When"</legend>
                    <label class="choice">
                        <input type="radio" name="schedule-kind" prop:checked=move || daily.get()
                            on:change=move |_| daily.set(true) />
                        <span>"Every day at"</span>
                    </label>
                    <label class="choice">
                        <input type="radio" name="schedule-kind" prop:checked=move || !daily.get()
                            on:change=move |_| daily.set(false) />
                        <span>"A cron pattern"</span>
                    </label>
                </fieldset>
                <Show when=move || daily.get() fallback=move || view! {
                    <label class="field">
                        <span>"Cron pattern (minute hour day month weekday)"</span>
                        <input class="input" type="text" autocomplete="off" spellcheck="false"
                            prop:value=move || cron.get() on:input=move |ev| cron.set(event_target_value(&ev)) />
                    </label>
                }>
                    <label class="field">
                        <span>"Time"</span>
                        <input class="input" type="time" prop:value=move || time.get()
                            on:input=move |ev| time.set(event_target_value(&ev)) />
                    </label>
                </Show>
                <p class="dialog-help">{move || match browser.with_value(|home| zone.get() == *home) {
                    true => format!("In your time zone, {}.", zone.get()),
                    false => format!("In {}, the schedule's time zone.", zone.get()),
                }}</p>
                <div class="schedule-preview" aria-live="polite">
                    <h4 class="dialog-subtitle">"Next five times"</h4>
                    {move || preview_error.get().map(|why| view! { <p class="form-error">{why}</p> })}
                    <ol class="schedule-preview-list">
                        {move || times.get().into_iter().map(|time| view! { <li>{time}</li> }).collect_view()}
                    </ol>
                </div>
            </Show>
            <div class="tool-row-actions">
                <button class="btn btn-primary" on:click=move |_| save()>"Save schedule"</button>
                <Show when=move || editing.with(Option::is_some)>
                    <button class="btn" on:click=move |_| editing.set(None)>"Cancel editing"</button>
                </Show>
            </div>
        </section>
    }
}
