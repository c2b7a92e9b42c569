//! A run's Timeline, under its usage line: a waterfall of its model calls, tool calls and
//! waits for the person, each bar on the run's own scale with what it took, drawn from the
//! events the page holds (a share link's viewer gets it from what the link shows). Closed
//! until asked for; open, it follows the run as events arrive.

use leptos::prelude::*;
use shared::decimal::fixed;

use crate::state::timeline::{rows, RowKind};
use crate::state::use_session;

/// The Timeline button of `run_id` and, when open, its waterfall.
#[component]
pub fn RunTimeline(run_id: String) -> impl IntoView {
    let session = use_session();
    let open = RwSignal::new(false);
    let panel = format!("timeline-{run_id}");
    let drawn = move || {
        // Redrawn on every applied event while open: a wait's bar grows until its answer.
        session.tick().track();
        let run = session.run_timeline(&run_id)?;
        let now = js_sys::Date::now() as i64;
        Some(rows(&run, now))
    };
    view! {
        <button
            type="button"
            class="timeline-toggle"
            aria-expanded=move || open.get().to_string()
            aria-controls=panel.clone()
            on:click=move |_| open.update(|open| *open = !*open)
        >
            {move || if open.get() { "Hide timeline" } else { "Timeline" }}
        </button>
        <Show when=move || open.get()>
            <div class="run-timeline" id=panel.clone() data-testid="run-timeline">
                {
                    let drawn = drawn.clone();
                    move || drawn().map(|(rows, total)| view! {
                        <ol class="timeline-rows" aria-label="Where this run’s time went">
                            {rows.into_iter().map(|row| {
                                let kind = match row.kind {
                                    RowKind::Model => "timeline-model",
                                    RowKind::Tool => "timeline-tool",
                                    RowKind::Wait => "timeline-wait",
                                };
                                // Set through the CSSOM (`style:`): the page's policy refuses
                                // `style` attributes.
                                let left = row.left.min(99.5);
                                // `fixed`, not `{:.2}`: float formatting would add its
                                // code to the page.
                                let width = row.width.min(100.0 - left);
                                let (left, width) = (format!("{}%", fixed(left, 2)), format!("{}%", fixed(width, 2)));
                                view! {
                                    <li class=format!("timeline-row {kind}") class:timeline-failed=row.failed>
                                        <span class="timeline-label">{row.label}</span>
                                        <span class="timeline-detail">{row.detail}</span>
                                        <span class="timeline-track" aria-hidden="true">
                                            <span class="timeline-bar" style:margin-left=left style:width=width></span>
                                        </span>
                                    </li>
                                }
                            }).collect_view()}
                        </ol>
                        <p class="timeline-total">{total}</p>
                    })
                }
            </div>
        </Show>
    }
}
