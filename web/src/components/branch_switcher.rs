//! The branch switcher: when the open conversation has more than one line (an edit or a
//! regeneration made a branch), `‹ 2 / 3 ›` steps between its lines, oldest first,
//! opening each in place (no reload). It stands where the open line parts from the others
//! (above the first row after its fork point, `Session::part_key`), or above the
//! transcript when that row does not exist yet.

use leptos::prelude::*;

use crate::state::route::navigate;
use crate::state::use_session;

/// `‹ n / m ›` over the open conversation's lines; nothing when it has one.
#[component]
pub fn BranchSwitcher() -> impl IntoView {
    let session = use_session();
    // The open line's place among the conversation's, and how many there are.
    let place = Memo::new(move |_| {
        let open = session.id().get()?;
        session.branches().with(|lines| {
            let at = lines.iter().position(|line| line.id == open)?;
            (lines.len() > 1).then_some((at, lines.len()))
        })
    });
    let go = move |step: isize| {
        let Some((at, count)) = place.get_untracked() else {
            return;
        };
        let to = at as isize + step;
        if to < 0 || to >= count as isize {
            return;
        }
        let id = session
            .branches()
            .with_untracked(|lines| lines[to as usize].id.clone());
        navigate(Some(&id));
    };
    view! {
        {move || place.get().map(|(at, count)| view! {
            <nav class="branch-switcher" aria-label="Branches of this conversation" data-testid="branch-switcher">
                <button
                    type="button"
                    class="btn btn-quiet branch-step"
                    aria-label="Previous branch"
                    disabled=at == 0
                    on:click=move |_| go(-1)
                >"‹"</button>
                <span class="branch-place" data-testid="branch-place">
                    {format!("Branch {} / {}", at + 1, count)}
                </span>
                <button
                    type="button"
                    class="btn btn-quiet branch-step"
                    aria-label="Next branch"
                    disabled=at + 1 == count
                    on:click=move |_| go(1)
                >"›"</button>
            </nav>
        })}
    }
}
