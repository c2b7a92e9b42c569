//! The header's optional items, each drawn one of two ways: standing in the header's row,
//! or as an entry of its "More" menu when the row has no room for it
//! ([`crate::state::header_fit`] decides which). Share, the shared state's button, Export,
//! what is left of the budget, MCP servers that are down, what the session used, the model
//! chip and what every branch used, in that order of importance. The dialogs an item opens
//! are the header's ([`HeaderDialogs`]), so moving an item never closes its dialog.

use leptos::prelude::*;
use shared::api::ServerInfo;
use shared::budget::BudgetLine;
use shared::usage::UsageTotals;

use super::budget::BudgetLeft;
use super::on_first_use::warm;
use super::share_dialog::preload_share_dialog;
use super::state_panel::{state_label, StateButton};
use crate::state::{usage, use_auth, use_layout, use_session, Auth, Session};

/// An optional item of the header, in order of importance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item {
    Share,
    State,
    Export,
    Budget,
    McpDown,
    Usage,
    Model,
    Branches,
}

impl Item {
    /// Every item, most important first: the row keeps a prefix of this list.
    pub const ALL: [Item; 8] = [
        Item::Share,
        Item::State,
        Item::Export,
        Item::Budget,
        Item::McpDown,
        Item::Usage,
        Item::Model,
        Item::Branches,
    ];
}

impl Item {
    /// The test id the item carries, in the row and in the menu.
    pub fn test_id(self) -> &'static str {
        match self {
            Item::Share => "share",
            Item::State => "state-button",
            Item::Export => "export",
            Item::Budget => "budget-left",
            Item::McpDown => "mcp-down",
            Item::Usage => "session-usage",
            Item::Model => "model-label",
            Item::Branches => "conversation-usage",
        }
    }
}

/// The dialogs the header's items open, wherever the item stands.
#[derive(Clone, Copy)]
pub struct HeaderDialogs {
    /// The share dialog is open.
    pub share: RwSignal<bool>,
    /// The dialog about the server is open.
    pub info: RwSignal<bool>,
    /// The instructions dialog is open.
    pub instructions: RwSignal<bool>,
    /// The tools dialog is open.
    pub tools: RwSignal<bool>,
    /// The schedules dialog is open.
    pub schedules: RwSignal<bool>,
    /// The evals dialog is open.
    pub evals: RwSignal<bool>,
}

/// What the header's items read besides the session: the server's details and what the
/// whole conversation used (with branches).
#[derive(Clone, Copy)]
pub struct HeaderData {
    pub info: RwSignal<Option<ServerInfo>>,
    pub conversation: RwSignal<Option<UsageTotals>>,
    pub dialogs: HeaderDialogs,
    /// The open session and who the page acts for, for reading outside the component
    /// tree (when the header measures).
    pub session: Session,
    pub auth: Auth,
}

/// Whether `item` has anything to show now. Reactive where it is read in a reactive
/// context (the menu's list of what it holds follows every item's coming and going), plain
/// where the header measures (a frame later, outside any).
pub fn present(item: Item, data: HeaderData) -> bool {
    let session = data.session;
    let open = session.id().with(Option::is_some);
    match item {
        Item::Share | Item::Export => open,
        Item::State => session
            .shared_state()
            .with(|state| !shared::state::is_empty(state)),
        Item::Budget => data.auth.budget.with(|lines| !lines.is_empty()),
        Item::McpDown => mcp_down(data.info.get()).is_some(),
        Item::Usage => session.usage().with(|totals| totals.calls > 0),
        Item::Model => data.info.with(Option::is_some),
        Item::Branches => data
            .conversation
            .with(|totals| totals.is_some_and(|t| t.calls > 0)),
    }
}

/// `item` as it stands in the row (nothing, when it has nothing to show).
pub fn inline(item: Item, data: HeaderData) -> AnyView {
    let session = use_session();
    match item {
        Item::Share => view! {
            <Show when=move || session.id().with(Option::is_some)>
                <button
                    class="btn btn-quiet"
                    data-testid="share"
                    on:click=move |_| data.dialogs.share.set(true)
                    on:pointerenter=move |_| warm(preload_share_dialog)
                    on:focus=move |_| warm(preload_share_dialog)
                >
                    "Share"
                </button>
            </Show>
        }
        .into_any(),
        Item::State => view! { <StateButton /> }.into_any(),
        Item::Export => view! {
            <Show when=move || session.id().with(Option::is_some)>
                <ExportMenu />
            </Show>
        }
        .into_any(),
        Item::Budget => view! { <BudgetLeft /> }.into_any(),
        Item::McpDown => (move || mcp_down(data.info.get()).map(|(label, why)| view! {
            <span class="mcp-down" data-testid="mcp-down" role="status" title=why>{label}</span>
        }))
        .into_any(),
        Item::Usage => (move || {
            let totals = session.usage().get();
            (totals.calls > 0).then(|| view! {
                <span class="session-usage" data-testid="session-usage" title=usage::details(&totals)>
                    {usage::summary(&totals)}
                </span>
            })
        })
        .into_any(),
        Item::Model => (move || data.info.get().map(|info| view! {
            <button
                class="model-label"
                data-testid="model-label"
                aria-haspopup="dialog"
                title=format!("{}: about this server", model_label(&info))
                on:click=move |_| data.dialogs.info.set(true)
                on:pointerenter=move |_| warm(super::info_dialog::preload_info_dialog)
                on:focus=move |_| warm(super::info_dialog::preload_info_dialog)
            >
                {model_label(&info)}
            </button>
        }))
        .into_any(),
        Item::Branches => (move || data.conversation.get().filter(|t| t.calls > 0).map(|totals| view! {
            <span
                class="session-usage"
                data-testid="conversation-usage"
                title=format!("Every branch of this conversation, each shared call once — {}", usage::details(&totals))
            >
                {format!("all branches: {}", usage::summary(&totals))}
            </span>
        }))
        .into_any(),
    }
}

/// `item` as an entry of the "More" menu (nothing, when it has nothing to show); `close`
/// closes the menu once an entry that acts is used.
pub fn in_menu(
    item: Item,
    data: HeaderData,
    close: impl Fn() + Copy + Send + Sync + 'static,
) -> AnyView {
    let session = use_session();
    let open = move || session.id().with(Option::is_some);
    match item {
        Item::Share => view! {
            <Show when=open>
                <button
                    type="button"
                    class="more-item"
                    data-testid="share"
                    on:click=move |_| {
                        close();
                        data.dialogs.share.set(true);
                    }
                >
                    "Share…"
                </button>
            </Show>
        }
        .into_any(),
        Item::State => {
            let layout = use_layout();
            let filled = move || session.shared_state().with(|s| !shared::state::is_empty(s));
            view! {
                <Show when=filled>
                    <button
                        type="button"
                        class="more-item"
                        data-testid="state-button"
                        aria-controls="state-panel"
                        aria-expanded=move || layout.state_open.get().to_string()
                        on:click=move |_| {
                            close();
                            layout.state_open.update(|open| *open = !*open);
                        }
                    >
                        {move || session.shared_state().with(state_label)}
                    </button>
                </Show>
            }
            .into_any()
        }
        Item::Export => view! {
            <Show when=open>
                <ExportLinks close />
            </Show>
        }
        .into_any(),
        Item::Budget => {
            let auth = use_auth();
            (move || {
                let lines = auth.budget.get();
                (!lines.is_empty()).then(|| {
                    let all: Vec<String> = lines.iter().map(BudgetLine::describe_left).collect();
                    view! {
                        <p class="more-note" data-testid="budget-left">
                            {format!("Your budget (UTC): {}", all.join("; "))}
                        </p>
                    }
                })
            })
            .into_any()
        }
        Item::McpDown => (move || mcp_down(data.info.get()).map(|(label, why)| view! {
            <p class="more-note more-warning" data-testid="mcp-down" role="status" title=why>{label}</p>
        }))
        .into_any(),
        Item::Usage => (move || {
            let totals = session.usage().get();
            (totals.calls > 0).then(|| view! {
                <p class="more-note" data-testid="session-usage" title=usage::details(&totals)>
                    {format!("This session: {}", usage::summary(&totals))}
                </p>
            })
        })
        .into_any(),
        Item::Model => (move || data.info.get().map(|info| view! {
            <button
                type="button"
                class="more-item"
                data-testid="model-label"
                aria-haspopup="dialog"
                on:click=move |_| {
                    close();
                    data.dialogs.info.set(true);
                }
            >
                {format!("About this server ({})", model_label(&info))}
            </button>
        }))
        .into_any(),
        Item::Branches => (move || data.conversation.get().filter(|t| t.calls > 0).map(|totals| view! {
            <p class="more-note" data-testid="conversation-usage" title=usage::details(&totals)>
                {format!("All branches: {}", usage::summary(&totals))}
            </p>
        }))
        .into_any(),
    }
}

/// The model chip's label: the model's name, or "Demo model".
pub fn model_label(info: &ServerInfo) -> String {
    if info.engine == "demo" {
        "Demo model".into()
    } else {
        info.model.clone()
    }
}

/// The MCP servers that were down when the page loaded, if any: a label and each one's
/// reason (a call that finds one down later says so in the transcript).
fn mcp_down(info: Option<ServerInfo>) -> Option<(String, String)> {
    let down: Vec<_> = info?
        .mcp_servers
        .into_iter()
        .filter(|s| !s.connected)
        .collect();
    let names: Vec<&str> = down.iter().map(|s| s.name.as_str()).collect();
    let label = match names.as_slice() {
        [] => return None,
        [one] => format!("MCP server {one} is down"),
        _ => format!("MCP servers {} are down", names.join(", ")),
    };
    let why: Vec<String> = down
        .iter()
        .map(|s| {
            let error = s.error.as_deref().unwrap_or("not connected");
            format!("{}: {error}", s.name)
        })
        .collect();
    Some((label, why.join("\n")))
}

/// Where the open session downloads as `format`.
fn export_link(format: &str) -> String {
    let id = use_session().id().get().unwrap_or_default();
    format!("/api/sessions/{id}/export?format={format}")
}

/// The export formats, as the menu names them.
const FORMATS: [(&str, &str, &str); 3] = [
    ("markdown", "Markdown", "export-markdown"),
    ("json", "JSON (AG-UI events)", "export-json"),
    ("zip", "Zip (both, with the files)", "export-zip"),
];

/// Download links of the open session in the row: Markdown, JSON (its AG-UI events), and
/// a zip of both with the files its messages carry. The menu closes once a format is
/// picked, on Escape, and when focus leaves it.
#[component]
fn ExportMenu() -> impl IntoView {
    let menu = NodeRef::<leptos::html::Details>::new();
    let close = move || super::menu::close(menu);
    view! {
        <details
            class="menu"
            data-testid="export"
            node_ref=menu
            on:keydown=move |ev| if ev.key() == "Escape" { close() }
            on:focusout=move |ev| super::menu::close_when_focus_leaves(menu, &ev)
        >
            <summary class="btn btn-quiet">"Export"</summary>
            <div class="menu-items">
                {FORMATS
                    .into_iter()
                    .map(|(format, label, test_id)| view! {
                        <a href=move || export_link(format) download data-testid=test_id on:click=move |_| close()>
                            {label}
                        </a>
                    })
                    .collect_view()}
            </div>
        </details>
    }
}

/// The export formats as entries of the "More" menu.
#[component]
fn ExportLinks(close: impl Fn() + Copy + Send + Sync + 'static) -> impl IntoView {
    view! {
        <div class="more-group" data-testid="export" role="group" aria-label="Export">
            {FORMATS
                .into_iter()
                .map(|(format, label, test_id)| view! {
                    <a
                        class="more-item"
                        href=move || export_link(format)
                        download
                        data-testid=test_id
                        on:click=move |_| close()
                    >
                        {format!("Export as {label}")}
                    </a>
                })
                .collect_view()}
        </div>
    }
}
