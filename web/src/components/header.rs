//! The header of the main area, always one row: the drawer button (small screens), the
//! open session's title (renamed in place, never squeezed below a readable width), the
//! connection indicator, then the optional items ([`super::header_items`]: Share, the
//! shared state, Export, the budget, MCP servers down, usage, the model chip) as many as
//! fit, and the "More" menu ([`super::more_menu`]) with the rest, the colour theme, the
//! keyboard shortcuts and who is signed in.
//!
//! Which items fit is measured, not guessed: after every change of what the header shows
//! and every resize, the next frame measures the row and [`header_fit`] decides; an item
//! keeps the width it last had in the row while it waits in the menu.

use leptos::html;
use leptos::prelude::*;
use leptos::task::spawn_local;
use shared::api::ServerInfo;
use shared::usage::UsageTotals;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::HtmlElement;

use super::evals_dialog::EvalsDialogHost;
use super::header_items::{self, HeaderData, HeaderDialogs, Item};
use super::info_dialog::InfoDialogHost;
use super::instructions_dialog::InstructionsDialogHost;
use super::more_menu::MoreMenu;
use super::schedules_dialog::SchedulesDialogHost;
use super::session_title::SessionTitle;
use super::share_dialog::ShareDialogHost;
use super::tools_dialog::ToolsDialogHost;
use crate::api::{rest, ConnState};
use crate::state::header_fit::{self, Room};
use crate::state::{use_auth, use_layout, use_session, use_sessions, RunState};

/// The bar above the transcript.
#[component]
pub fn Header() -> impl IntoView {
    let session = use_session();
    let layout = use_layout();
    super::theme_picker::follow_other_tabs();
    let info = RwSignal::new(None::<ServerInfo>);
    spawn_local(async move {
        match rest::server_info().await {
            Ok(found) => info.set(Some(found)),
            Err(error) => leptos::logging::warn!("GET /api/info failed: {error}"),
        }
    });
    let data = HeaderData {
        info,
        conversation: conversation_usage(),
        dialogs: HeaderDialogs {
            share: RwSignal::new(false),
            info: RwSignal::new(false),
            instructions: RwSignal::new(false),
            tools: RwSignal::new(false),
            schedules: RwSignal::new(false),
            evals: RwSignal::new(false),
        },
        session,
        auth: use_auth(),
    };
    let row = NodeRef::<html::Div>::new();
    let inline = fit_items(row, data);
    let items = Item::ALL
        .into_iter()
        .enumerate()
        .map(|(at, item)| {
            view! {
                <Show when=move || at < inline.get()>
                    <div class="header-item" data-item=at>{header_items::inline(item, data)}</div>
                </Show>
            }
        })
        .collect_view();
    view! {
        <header class="header">
            <div class="header-row" node_ref=row>
                <button
                    class="menu-button"
                    data-testid="menu"
                    aria-label="Sessions"
                    aria-expanded=move || layout.drawer_open.get().to_string()
                    on:click=move |_| layout.drawer_open.update(|open| *open = !*open)
                >
                    "☰"
                </button>
                <div class="header-title-group">
                    <SessionTitle />
                </div>
                <Show when=move || session.id().with(Option::is_some)>
                    <Connection />
                </Show>
                {items}
                <MoreMenu data inline />
            </div>
        </header>
        <ShareDialogHost open=data.dialogs.share />
        <InstructionsDialogHost open=data.dialogs.instructions />
        <ToolsDialogHost open=data.dialogs.tools />
        <SchedulesDialogHost open=data.dialogs.schedules />
        <EvalsDialogHost open=data.dialogs.evals />
        {move || info.get().map(|info| view! { <InfoDialogHost info open=data.dialogs.info /> })}
    }
}

/// With branches, what the whole conversation cost (each shared call once), read again
/// whenever a run of the open line ends.
fn conversation_usage() -> RwSignal<Option<UsageTotals>> {
    let session = use_session();
    let conversation = RwSignal::new(None::<UsageTotals>);
    Effect::new(move |_| {
        let lines = session.branches().with(Vec::len);
        let idle = session.run().get() == RunState::Idle;
        session.usage().track();
        let id = session.id().get();
        match id {
            Some(id) if lines > 1 && idle => spawn_local(async move {
                if let Ok(found) = rest::session_usage(&id).await {
                    if session.id().get_untracked().as_deref() == Some(id.as_str()) {
                        conversation.set(Some(found));
                    }
                }
            }),
            _ if lines < 2 => conversation.set(None),
            _ => {}
        }
    });
    conversation
}

/// How many of [`Item::ALL`] stand in the row, kept in step with the row's width and what
/// it shows.
fn fit_items(row: NodeRef<html::Div>, data: HeaderData) -> RwSignal<usize> {
    let inline = RwSignal::new(Item::ALL.len());
    let widths = StoredValue::new([None::<f64>; Item::ALL.len()]);
    let session = use_session();
    let sessions = use_sessions();
    let auth = use_auth();
    // It runs a frame later, or when the row resizes: by then a sign-out may have torn
    // the header down, and then it has nothing to measure.
    let measure = move || {
        let (Some(Some(row)), Some(shown)) = (row.try_get_untracked(), inline.try_get_untracked())
        else {
            return;
        };
        let measured = widths
            .try_update_value(|widths| {
                for (at, item) in Item::ALL.into_iter().enumerate() {
                    if !header_items::present(item, data) {
                        widths[at] = Some(0.0);
                    } else if at < shown {
                        widths[at] = item_width(&row, at).or(widths[at]);
                    } else if widths[at] == Some(0.0) {
                        // It had nothing to show when it went to the menu: try it again.
                        widths[at] = None;
                    }
                }
                *widths
            })
            .unwrap_or_default();
        let count = header_fit::inline_count(room(&row), &measured);
        // Settled once a measure changes nothing, at the width it measured (tests wait for
        // both before they look: right after a resize, the last measure was at the old
        // width until the row's resize is observed).
        let _ = row.set_attribute("data-fitted", &(count == shown).to_string());
        let _ = row.set_attribute("data-fitted-width", &row.client_width().to_string());
        if count != shown {
            inline.set(count);
        }
    };
    // Whatever changes what the row shows is measured once the page has drawn it.
    Effect::new(move |_| {
        session.id().track();
        session.connection().track();
        session.shared_state().track();
        session.usage().track();
        session.branches().track();
        sessions.sessions.track();
        auth.budget.track();
        data.info.track();
        data.conversation.track();
        inline.track();
        if let Some(row) = row.get_untracked() {
            let _ = row.set_attribute("data-fitted", "false");
        }
        request_animation_frame(measure);
    });
    // And so does a change of the row's width.
    let observer = StoredValue::new_local(None::<(web_sys::ResizeObserver, Closure<dyn FnMut()>)>);
    Effect::new(move |_| {
        let Some(element) = row.get() else {
            return;
        };
        let callback = Closure::<dyn FnMut()>::new(measure);
        if let Ok(watcher) = web_sys::ResizeObserver::new(callback.as_ref().unchecked_ref()) {
            watcher.observe(&element);
            observer.set_value(Some((watcher, callback)));
        }
    });
    on_cleanup(move || {
        observer.try_with_value(|watching| {
            if let Some((watcher, _)) = watching {
                watcher.disconnect();
            }
        });
    });
    inline
}

/// The width of the item standing at `at` in the row, if it stands there.
fn item_width(row: &HtmlElement, at: usize) -> Option<f64> {
    let selector = format!(":scope > .header-item[data-item=\"{at}\"]");
    let element = row.query_selector(&selector).ok().flatten()?;
    let element = element.dyn_into::<HtmlElement>().ok()?;
    Some(f64::from(element.offset_width()))
}

/// What the row has room for, besides its optional items.
fn room(row: &HtmlElement) -> Room {
    let width_of = |selector: &str| {
        row.query_selector(selector)
            .ok()
            .flatten()
            .and_then(|element| element.dyn_into::<HtmlElement>().ok())
            .map_or(0.0, |element| f64::from(element.offset_width()))
    };
    let gap = style_px(row, "column-gap");
    let parts = [
        ":scope > .menu-button",
        ":scope > .header-title-group .icon-button",
        ":scope > .connection",
        ":scope > .header-more",
    ];
    let shown: Vec<f64> = parts
        .iter()
        .map(|part| width_of(part))
        .filter(|width| *width > 0.0)
        .collect();
    // Each fixed part stands after a gap (the title is the first or second thing).
    let fixed = shown.iter().sum::<f64>() + gap * shown.len() as f64;
    Room {
        width: f64::from(row.client_width()),
        fixed,
        title: row
            .query_selector(".header-title")
            .ok()
            .flatten()
            .map_or(0.0, |title| f64::from(title.scroll_width())),
        gap,
    }
}

/// A length of `element`'s computed style, in whole pixels (0 when it is not one). Read
/// as an integer: the page carries no float parser (docs/benchmarks.md, figure 8).
fn style_px(element: &HtmlElement, property: &str) -> f64 {
    let value = window()
        .get_computed_style(element)
        .ok()
        .flatten()
        .and_then(|style| style.get_property_value(property).ok())
        .unwrap_or_default();
    let whole = value
        .trim_end_matches("px")
        .split('.')
        .next()
        .unwrap_or("0");
    f64::from(whole.parse::<u32>().unwrap_or(0))
}

/// How long "Caught up" shows after a reconnect before it reads "Live" again.
const CAUGHT_UP_FOR: std::time::Duration = std::time::Duration::from_secs(4);

/// The socket's state: connecting, live or reconnecting, and "caught up" for a moment
/// once a reconnect has replayed what was missed. On a phone only its dot shows; its
/// words are still read out.
#[component]
pub fn Connection() -> impl IntoView {
    let session = use_session();
    let caught_up = RwSignal::new(false);
    Effect::new(move |previous: Option<ConnState>| {
        let now = session.connection().get();
        if previous == Some(ConnState::Reconnecting) && now == ConnState::Live {
            caught_up.set(true);
            set_timeout(move || caught_up.set(false), CAUGHT_UP_FOR);
        }
        now
    });
    let state = move || session.connection().get();
    let label = move || match state() {
        ConnState::Live if caught_up.get() => "Caught up",
        ConnState::Live => "Live",
        ConnState::Reconnecting => "Reconnecting…",
        ConnState::Connecting => "Connecting…",
    };
    view! {
        <span
            class="connection"
            data-testid="connection"
            role="status"
            title=label
            data-state=move || state().as_str()
            class:caught-up=move || caught_up.get()
        >
            <span class="connection-dot"></span>
            <span class="connection-label">{label}</span>
        </span>
    }
}
