//! The store's contract, as one story every backend runs (each backend's tests call these
//! with a fresh store of its own): users and their secrets, owners, seqs without gaps and
//! the guards, search over streamed text, renames, share links, branches sharing a prefix;
//! queued messages (`queue.rs`), attachments (`attachments.rs`) and the turns to call
//! the model (`call_turns.rs`).

use shared::{Event, EventBody, TextRole};

mod attachments;
mod call_turns;
mod preconditions;
mod queue;

pub use attachments::attachments_are_stored_once_and_freed;
pub use call_turns::a_users_turn_to_call_the_model_has_one_holder;
pub use preconditions::{
    a_repair_goes_in_only_at_the_head_it_read, state_changes_apply_to_the_state_they_were_made_from,
};
pub use queue::queued_messages_run_once_in_order;

use super::test_support::append;
use super::{
    Applied, Command, Fork, FramePage, Guard, LogEntry, NewBranch, Rejection, ShareRow, Store,
};
use crate::domain::{SessionId, TokenHash, UserId, UserName};

/// A command of `guard` appending `bodies` to `session`.
pub(super) fn command(session: SessionId, guard: Guard, bodies: Vec<EventBody>) -> Command {
    let entries = bodies
        .into_iter()
        .map(|body| LogEntry::new(Event::at(body, 0)))
        .collect();
    Command {
        session,
        guard,
        entries,
        state: None,
    }
}

/// A new branch of `parent` parting after `at_seq`.
async fn branch_of<S: Store>(store: &S, parent: SessionId, at_seq: u64) -> SessionId {
    let branch = SessionId::generate();
    let fork = Fork { parent, at_seq };
    let row = store.fork_session(NewBranch::new(branch, fork, 0)).await;
    row.unwrap().expect("a branch of an existing session");
    branch
}

/// A new user named `name` (sessions need an owner who exists).
async fn user<S: Store>(store: &S, name: &str) -> UserId {
    let id = UserId::generate();
    let name = UserName::parse(name).unwrap();
    let token = TokenHash::of(&format!("tdm_{name}"));
    assert!(store.create_user(id, &name, token, 0).await.unwrap());
    id
}

fn run_started(session: SessionId, run: &str) -> EventBody {
    EventBody::RunStarted {
        thread_id: session.to_string(),
        run_id: run.into(),
        parent_run_id: None,
        input: None,
    }
}

fn start(session: SessionId, run: &str, client: Option<&str>) -> Command {
    let guard = Guard::StartRun {
        run_id: run.into(),
        client_message_id: client.map(str::to_string),
        title: "First words".into(),
        queued: None,
        fire: None,
    };
    command(session, guard, vec![run_started(session, run)])
}

/// Tokens and sign-ins find their user until the user is revoked.
pub async fn users_tokens_and_sign_ins<S: Store>(store: &S) {
    let alice = UserName::parse("alice").unwrap();
    let id = UserId::generate();
    let token = TokenHash::of("tdm_a");
    assert!(store.create_user(id, &alice, token, 1).await.unwrap());
    let taken = store.create_user(UserId::generate(), &alice, token, 1);
    assert!(!taken.await.unwrap(), "names are unique");
    let (user, stored) = store.user_for_token(token).await.unwrap().unwrap();
    assert_eq!((user.id, stored), (id, token));
    let unknown = store.user_for_token(TokenHash::of("x")).await.unwrap();
    assert!(unknown.is_none());

    let cookie = TokenHash::of("cookie");
    store.create_sign_in(cookie, id, 10, 20).await.unwrap();
    let signed_in = store.user_for_sign_in(cookie, 19).await.unwrap().unwrap();
    assert_eq!(
        (signed_in.user.id, signed_in.stored, signed_in.expires_at_ms),
        (id, cookie, 20)
    );
    assert!(store.user_for_sign_in(cookie, 20).await.unwrap().is_none());
    assert!(store.delete_sign_in(cookie).await.unwrap());

    store.create_sign_in(cookie, id, 10, 20).await.unwrap();
    assert!(store.revoke_user(&alice, 15).await.unwrap());
    assert!(!store.revoke_user(&alice, 15).await.unwrap());
    assert!(store.user_for_token(token).await.unwrap().is_none());
    assert!(store.user_for_sign_in(cookie, 16).await.unwrap().is_none());
    let users = store.list_users().await.unwrap();
    assert_eq!(users.len(), 2, "local and alice");
    assert_eq!(users[1].revoked_at, Some(15));
}

/// A session belongs to its owner; nobody else lists it.
pub async fn sessions_belong_to_their_owner<S: Store>(store: &S) {
    let (a, b) = (user(store, "ada").await, user(store, "bob").await);
    let session = SessionId::generate();
    store.create_session(a, session, None, 0).await.unwrap();
    assert_eq!(store.list_sessions(a).await.unwrap().len(), 1);
    assert!(store.list_sessions(b).await.unwrap().is_empty());
    assert_eq!(store.session(session).await.unwrap().unwrap().owner, a);
}

/// Seqs run 1, 2, 3… without gaps; each guard refuses what it must and changes nothing
/// when it does.
pub async fn seqs_have_no_gaps_and_guards_hold<S: Store>(store: &S) {
    let session = SessionId::generate();
    store
        .create_session(UserId::LOCAL, session, None, 0)
        .await
        .unwrap();
    let first = start(session, "r1", Some("c1"));
    assert_eq!(
        store.apply(std::slice::from_ref(&first), 1).await.unwrap(),
        [Applied::Committed { first_seq: 1 }]
    );
    let row = store.session(session).await.unwrap().unwrap();
    assert_eq!(row.title, "First words", "the first message names it");
    let refused = store
        .apply(&[first, start(session, "r2", None)], 2)
        .await
        .unwrap();
    assert_eq!(
        refused,
        [
            Applied::Rejected(Rejection::DuplicateMessage {
                run_id: "r1".into()
            }),
            Applied::Rejected(Rejection::Busy(shared::api::SessionStatus::Running)),
        ]
    );
    let stop = command(
        session,
        Guard::InRun {
            run_id: "r0".into(),
        },
        vec![EventBody::TextMessageEnd {
            message_id: "m".into(),
        }],
    );
    let applied = store
        .apply(&[append(session, &["a", "b"]), stop], 3)
        .await
        .unwrap();
    assert_eq!(
        applied,
        [
            Applied::Committed { first_seq: 2 },
            Applied::Rejected(Rejection::RunEnded)
        ]
    );
    let seqs: Vec<u64> = store
        .events_after(session, 0, 100)
        .await
        .unwrap()
        .iter()
        .map(|row| row.seq)
        .collect();
    assert_eq!(seqs, [1, 2, 3]);
    assert_eq!(store.session(session).await.unwrap().unwrap().last_seq, 3);
}

/// Search matches a message's whole text, however it was streamed, in the owner's
/// sessions only; a rename replaces the title.
pub async fn search_and_rename<S: Store>(store: &S) {
    let (owner, other) = (user(store, "ada").await, user(store, "bob").await);
    let session = SessionId::generate();
    store.create_session(owner, session, None, 0).await.unwrap();
    let opened = command(
        session,
        Guard::Append,
        vec![EventBody::TextMessageStart {
            message_id: "m".into(),
            role: Some(TextRole::Assistant),
            name: None,
        }],
    );
    store.apply(&[opened], 1).await.unwrap();
    store
        .apply(&[append(session, &["Paris is", " LOVE", "ly"])], 2)
        .await
        .unwrap();
    let found = store.search_sessions(owner, "is lovely").await.unwrap();
    assert_eq!(found.len(), 1, "across the pieces, in any case");
    assert_eq!(
        found[0].message.as_deref(),
        Some("Paris is LOVEly"),
        "with the message that matched, whole"
    );
    assert!(store
        .search_sessions(owner, "100%")
        .await
        .unwrap()
        .is_empty());
    assert!(store
        .search_sessions(other, "Paris")
        .await
        .unwrap()
        .is_empty());
    assert!(store.rename_session(session, "Trip", 3).await.unwrap());
    let found = store.search_sessions(owner, "trip").await.unwrap();
    assert_eq!(found[0].session.title, "Trip");
    assert_eq!(found[0].message, None, "only the title matched");
    let gone = SessionId::generate();
    assert!(!store.rename_session(gone, "x", 3).await.unwrap());
}

/// A share link opens its session until it is deleted, or its session is.
pub async fn share_links_open_their_session_until_deleted<S: Store>(store: &S) {
    let session = SessionId::generate();
    store
        .create_session(UserId::LOCAL, session, None, 0)
        .await
        .unwrap();
    let share = ShareRow {
        id: "shr_1".into(),
        session,
        hide_reasoning: true,
        hide_tool_arguments: false,
        hide_attachments: true,
        hide_state: true,
        show_instructions: true,
        created_at: 5,
    };
    let token = TokenHash::of("tds_secret");
    store.create_share(&share, token).await.unwrap();
    let (found, stored) = store.share_for_token(token).await.unwrap().unwrap();
    assert_eq!((found, stored), (share.clone(), token));
    assert_eq!(store.shares(session).await.unwrap(), [share]);
    assert!(store.delete_share(session, "shr_1").await.unwrap());
    assert!(store.share_for_token(token).await.unwrap().is_none());

    let again = ShareRow {
        id: "shr_2".into(),
        session,
        hide_reasoning: false,
        hide_tool_arguments: true,
        hide_attachments: false,
        hide_state: false,
        show_instructions: false,
        created_at: 6,
    };
    store.create_share(&again, token).await.unwrap();
    assert!(store.delete_session(session).await.unwrap());
    assert!(
        store.share_for_token(token).await.unwrap().is_none(),
        "the session's links go with it"
    );
}

/// Replay pages the database builds are byte for byte the frames Rust builds.
pub async fn frames_built_by_the_database_are_the_frames_built_in_rust<S: Store>(store: &S) {
    let id = SessionId::parse("0193a1f2-0000-7000-8000-000000000001").unwrap();
    store
        .create_session(UserId::LOCAL, id, None, 0)
        .await
        .unwrap();
    let deltas = [
        "plain",
        "quotes \" and \\ and \u{1e} and \n",
        "ünïcødé 🚲",
        "}{,",
    ];
    store.apply(&[append(id, &deltas)], 0).await.unwrap();
    // As written, and once the backend's upkeep has moved the rows where it keeps them.
    for settled in [false, true] {
        if settled {
            store.settle_log().await.unwrap();
        }
        for (after, limit) in [(0, 10), (1, 2), (4, 10)] {
            let page = store.frames_after(id, after, limit).await.unwrap();
            let rows = store.events_after(id, after, limit).await.unwrap();
            let expected: Vec<_> = rows
                .iter()
                .map(|r| FramePage::frame(r.seq, &r.json))
                .collect();
            assert_eq!(page.frames, expected, "after {after}, limit {limit}");
            assert_eq!(page.last_seq, rows.last().map_or(after, |r| r.seq));
            let mut handed = Vec::new();
            let mut sink = |seq: u64, json: &str| handed.push(FramePage::frame(seq, json));
            let replayed = store
                .replay_after(id, after, limit, &mut sink)
                .await
                .unwrap();
            assert_eq!(handed, expected, "replayed after {after}, limit {limit}");
            assert_eq!(replayed.count as usize, rows.len());
            assert_eq!(replayed.last_seq, page.last_seq);
        }
    }
}

/// One batch of appends to several sessions keeps each session's order and refuses
/// appends to a session that does not exist without failing the others.
pub async fn one_batch_of_appends_keeps_each_sessions_order<S: Store>(store: &S) {
    let a = SessionId::parse("0193a1f2-0000-7000-8000-00000000000a").unwrap();
    let b = SessionId::parse("0193a1f2-0000-7000-8000-00000000000b").unwrap();
    let missing = SessionId::parse("0193a1f2-0000-7000-8000-00000000000c").unwrap();
    for id in [a, b] {
        store
            .create_session(UserId::LOCAL, id, None, 0)
            .await
            .unwrap();
    }
    store.apply(&[append(a, &["a0"])], 0).await.unwrap();
    let batch = [
        append(a, &["a1", "a2"]),
        append(b, &["b1"]),
        append(missing, &["x"]),
        append(a, &["a3"]),
    ];
    let applied = store.apply(&batch, 0).await.unwrap();
    assert_eq!(
        applied,
        [
            Applied::Committed { first_seq: 2 },
            Applied::Committed { first_seq: 1 },
            Applied::Rejected(Rejection::SessionMissing),
            Applied::Committed { first_seq: 4 },
        ]
    );
    let texts: Vec<String> = store
        .events_after(a, 0, 10)
        .await
        .unwrap()
        .iter()
        .map(|row| row.json.clone())
        .collect();
    for (at, text) in texts.iter().enumerate() {
        assert!(text.contains(&format!("\"a{at}\"")), "{text}");
    }
    assert_eq!(store.session(a).await.unwrap().unwrap().last_seq, 4);
}

/// The text deltas of `session`'s history after `after`, with their seqs.
async fn history<S: Store>(store: &S, session: SessionId, after: u64) -> Vec<(u64, String)> {
    let rows = store.events_after(session, after, 1_000).await.unwrap();
    rows.iter()
        .map(|row| {
            let event: Event = serde_json::from_str(&row.json).unwrap();
            match event.body {
                EventBody::TextMessageContent { delta, .. } => (row.seq, delta),
                other => panic!("unexpected {other:?}"),
            }
        })
        .collect()
}

fn texts(pairs: &[(u64, &str)]) -> Vec<(u64, String)> {
    pairs.iter().map(|(seq, t)| (*seq, t.to_string())).collect()
}

/// A branch's history is its parent's events up to where it parts, then its own, read
/// whole, from any seq, in pages and as frames; the parent goes on untouched; a branch
/// asked to part inside its parent's shared prefix parts from the ancestor that holds it;
/// a seq past the end or a missing parent makes nothing.
pub async fn branches_share_a_prefix_and_append_their_own<S: Store>(store: &S) {
    let owner = user(store, "ada").await;
    let root = SessionId::generate();
    store
        .create_session(owner, root, Some("Trip"), 0)
        .await
        .unwrap();
    let applied = store.apply(&[append(root, &["a", "b", "c", "d"])], 1).await;
    assert_eq!(applied.unwrap(), [Applied::Committed { first_seq: 1 }]);

    let branch = SessionId::generate();
    let at_two = Fork {
        parent: root,
        at_seq: 2,
    };
    let row = store
        .fork_session(NewBranch::new(branch, at_two, 5))
        .await
        .unwrap();
    let row = row.expect("a branch of an existing session");
    assert_eq!(
        (row.owner, row.last_seq, row.fork, row.title.as_str()),
        (owner, 2, Some(at_two), "Trip")
    );
    assert_eq!(store.session(branch).await.unwrap().unwrap(), row);
    let applied = store.apply(&[append(branch, &["x", "y"])], 6).await;
    assert_eq!(applied.unwrap(), [Applied::Committed { first_seq: 3 }]);
    let whole = texts(&[(1, "a"), (2, "b"), (3, "x"), (4, "y")]);
    for after in 0..=4 {
        assert_eq!(
            history(store, branch, after).await,
            whole[after as usize..].to_vec(),
            "the branch after {after}"
        );
    }
    let parent = texts(&[(1, "a"), (2, "b"), (3, "c"), (4, "d")]);
    assert_eq!(
        history(store, root, 0).await,
        parent,
        "the parent is untouched"
    );
    let page: Vec<u64> = store
        .events_after(branch, 1, 2)
        .await
        .unwrap()
        .iter()
        .map(|r| r.seq)
        .collect();
    assert_eq!(page, [2, 3], "a page crosses where the branch parts");
    let frames = store.frames_after(branch, 0, 100).await.unwrap();
    let rows = store.events_after(branch, 0, 100).await.unwrap();
    let built: Vec<_> = rows
        .iter()
        .map(|r| FramePage::frame(r.seq, &r.json))
        .collect();
    assert_eq!(frames.frames, built, "frames of a branch are its history's");
    assert_eq!(frames.last_seq, 4);

    // A branch of the branch at its own event, and one inside its shared prefix.
    let deeper = SessionId::generate();
    let at_three = Fork {
        parent: branch,
        at_seq: 3,
    };
    let named = store.fork_session(NewBranch {
        title: Some("Deeper"),
        ..NewBranch::new(deeper, at_three, 7)
    });
    let named = named.await.unwrap().unwrap();
    assert_eq!(
        (named.fork, named.title.as_str()),
        (Some(at_three), "Deeper")
    );
    store.apply(&[append(deeper, &["z"])], 8).await.unwrap();
    assert_eq!(
        history(store, deeper, 0).await,
        texts(&[(1, "a"), (2, "b"), (3, "x"), (4, "z")])
    );
    let inside = SessionId::generate();
    let asked = Fork {
        parent: deeper,
        at_seq: 1,
    };
    let parted = store
        .fork_session(NewBranch::new(inside, asked, 9))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        parted.fork,
        Some(Fork {
            parent: root,
            at_seq: 1
        }),
        "a seq in the shared prefix parts from the ancestor that holds it"
    );
    assert_eq!(history(store, inside, 0).await, texts(&[(1, "a")]));

    let past = Fork {
        parent: branch,
        at_seq: 5,
    };
    let refused = store.fork_session(NewBranch::new(SessionId::generate(), past, 9));
    assert_eq!(refused.await.unwrap(), None, "past the end");
    let missing = Fork {
        parent: SessionId::generate(),
        at_seq: 0,
    };
    let refused = store.fork_session(NewBranch::new(SessionId::generate(), missing, 9));
    assert_eq!(refused.await.unwrap(), None, "no such parent");

    // Deleting a session branches read from hides it and keeps its rows; its last
    // branch's deletion takes it (and its rows) too.
    assert!(store.delete_session(root).await.unwrap());
    assert_eq!(store.session(root).await.unwrap(), None, "hidden");
    assert!(!store.delete_session(root).await.unwrap(), "deleted once");
    assert_eq!(
        history(store, branch, 0).await,
        whole,
        "the shared prefix stays"
    );
    for line in [deeper, inside, branch] {
        assert!(store.delete_session(line).await.unwrap());
    }
    assert!(
        store.events_after(root, 0, 100).await.unwrap().is_empty(),
        "purged"
    );
    assert!(
        store.events_after(branch, 0, 100).await.unwrap().is_empty(),
        "purged"
    );
    assert!(store.list_sessions(owner).await.unwrap().is_empty());

    // Retention takes a branch past its age, and with it the hidden parent it freed.
    let (first, second) = (SessionId::generate(), SessionId::generate());
    store.create_session(owner, first, None, 10).await.unwrap();
    let at_zero = Fork {
        parent: first,
        at_seq: 0,
    };
    store
        .fork_session(NewBranch::new(second, at_zero, 11))
        .await
        .unwrap()
        .unwrap();
    assert!(store.delete_session(first).await.unwrap());
    let swept = store.delete_idle_before(i64::MAX, 100).await.unwrap();
    assert_eq!(swept, [second]);
    let gone = store
        .fork_session(NewBranch::new(SessionId::generate(), at_zero, 12))
        .await
        .unwrap();
    assert_eq!(
        gone, None,
        "the hidden parent was purged with its last branch"
    );
}
