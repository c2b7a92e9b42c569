//! The relay: brings this instance what other instances commit to a shared database. It
//! stands above what it feeds (the event log's hub, the runs, the credentials' endings, the
//! session lists, the scheduler), and none of them knows it.
//!
//! It reads the store's change feed ([`EventLog::changes`]). For a session watched here it
//! reads the announced events from the log (once for all of this instance's viewers)
//! and publishes them to the [`Hub`], which drops whatever this instance's own writer
//! already published. A stop or a delete is handed to the runs ([`RunControl`], the
//! agent's word for what may be asked of them), which cancel a run this instance executes. When the feed reports that changes may have been missed,
//! every watched session is read again from its last published seq, so a lost
//! notification never loses an event (and a socket that still sees a gap reads it from
//! the log itself). A credential that ended (a revoked user, a sign-out or a deleted share
//! link on any instance) is announced to this instance's [`Endings`], which closes what
//! relied on it; after missed changes every connection checks its credential again.
//! A session whose listed row changed (or that was deleted) is told to the session lists
//! open here ([`ListWatchers`]), after the events of the round.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedReceiver;

use crate::agent::RunControl;
use crate::auth::Endings;
use crate::domain::SessionId;
use crate::eventlog::{Hub, Published};
use crate::lifecycle::Lifecycle;
use crate::session_list::ListWatchers;
use crate::store::{Change, Store};

/// Changes handled per round at most (the rest wait for the next round).
const ROUND: usize = 1024;
/// Events read from the log per query.
const PAGE: u32 = 1000;

/// Where the relay hands what it reads.
pub struct Targets {
    pub hub: Hub,
    pub runs: Arc<dyn RunControl>,
    pub endings: Endings,
    pub lists: ListWatchers,
    /// This instance's scheduler, told when a schedule changed anywhere.
    pub schedules: crate::schedules::Wake,
}

/// What one round of changes asks for.
#[derive(Default)]
struct Round {
    /// Per watched session, the seqs to read.
    wanted: HashMap<SessionId, (u64, u64)>,
    /// Sessions whose listed row changed.
    listed: HashSet<SessionId>,
}

/// Starts relaying `changes` to `targets`; ends when the feed does or the process stops.
pub fn spawn<S: Store>(
    store: Arc<S>,
    targets: Targets,
    mut changes: UnboundedReceiver<Change>,
    lifecycle: &Lifecycle,
) {
    let shutdown = lifecycle.halting().clone();
    lifecycle.spawn(async move {
        let mut round = Vec::with_capacity(ROUND);
        loop {
            let received = tokio::select! {
                _ = shutdown.cancelled() => return,
                received = changes.recv_many(&mut round, ROUND) => received,
            };
            if received == 0 {
                return;
            }
            let sorted = sort(&targets, round.drain(..));
            for (session, (first, last)) in sorted.wanted {
                relay(&*store, &targets.hub, session, first, last).await;
            }
            tell_lists(&*store, &targets.lists, sorted.listed).await;
        }
    });
}

/// Acts on stops, deletes and endings, and gathers, per watched session, the seqs to read
/// and the sessions whose listed row changed.
fn sort(targets: &Targets, round: impl Iterator<Item = Change>) -> Round {
    let Targets {
        hub,
        runs,
        endings,
        lists,
        schedules,
    } = targets;
    let mut sorted = Round::default();
    let Round { wanted, listed } = &mut sorted;
    for change in round {
        match change {
            Change::Appended {
                session,
                first_seq,
                last_seq,
                stop_run,
            } => {
                if let Some(run) = stop_run {
                    runs.stop_here(session, Some(&run));
                }
                let span = wanted.entry(session).or_insert((first_seq, last_seq));
                *span = (span.0.min(first_seq), span.1.max(last_seq));
            }
            Change::Deleted { session } => {
                runs.stop_here(session, None);
                hub.close(session);
                wanted.remove(&session);
                listed.remove(&session);
                lists.removed(session);
            }
            Change::Listed { session } => {
                listed.insert(session);
            }
            Change::Queued { session } => hub.queue_changed(session),
            Change::Ended(ending) => endings.announce(ending),
            Change::LeasesReleased => runs.take_over_released(),
            Change::Schedules => schedules.wake(),
            Change::Missed => {
                runs.take_over_released();
                schedules.wake();
                endings.recheck_all();
                lists.reload_all();
                for (session, last) in hub.watched() {
                    wanted.insert(session, (last + 1, u64::MAX));
                    hub.queue_changed(session);
                }
            }
        }
    }
    sorted
}

/// Tells the lists open here of each changed session (read for its owner, and only if
/// any list is open); a session gone meanwhile is told as removed.
async fn tell_lists<S: Store>(store: &S, lists: &ListWatchers, listed: HashSet<SessionId>) {
    for session in listed {
        if !lists.any() {
            return;
        }
        match store.session(session).await {
            Ok(Some(row)) => lists.changed(row.owner, session),
            Ok(None) => lists.removed(session),
            Err(error) => {
                tracing::warn!(%error, %session, "the relay cannot read a changed session; lists read again");
                lists.reload_all();
                return;
            }
        }
    }
}

/// Publishes events `first..=last` of a session watched here, from where its channel is.
async fn relay<S: Store>(store: &S, hub: &Hub, session: SessionId, first: u64, last: u64) {
    let Some(published) = hub.last_published(session) else {
        return;
    };
    // Before `first`, the channel's viewers read the log themselves (a new channel starts
    // at 0; its sockets caught up from the log when they subscribed).
    let mut after = published.max(first.saturating_sub(1));
    while after < last {
        let page = match store.frames_after(session, after, PAGE).await {
            Ok(page) => page,
            Err(error) => {
                // The sockets' seq check reads the gap from the log at the next event.
                tracing::warn!(%error, %session, "the relay cannot read the log");
                return;
            }
        };
        let full = page.frames.len() == PAGE as usize;
        let first_seq = after + 1;
        hub.publish(
            session,
            page.frames
                .into_iter()
                .enumerate()
                .map(|(offset, frame)| Published {
                    seq: first_seq + offset as u64,
                    frame,
                }),
        );
        after = page.last_seq;
        if !full {
            return;
        }
    }
}
