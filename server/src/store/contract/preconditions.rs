//! The store's contract for changes computed from a read, which apply only while what was
//! read still holds: a takeover's repair after the head it read, a state change on the
//! state it was made from.

use shared::EventBody;

use super::{append, branch_of, command, user};
use crate::domain::SessionId;
use crate::store::{Applied, Guard, Rejection, StateRead, Store};

/// A takeover's repair goes in only right after the events it was computed from: at the
/// head it read (with the commands before it in its batch, and on a branch with the
/// prefix it shares), and is refused, leaving nothing, once the line grew past it.
pub async fn a_repair_goes_in_only_at_the_head_it_read<S: Store>(store: &S) {
    let owner = user(store, "ada").await;
    let root = SessionId::generate();
    store.create_session(owner, root, None, 0).await.unwrap();
    let repair = |session: SessionId, after_seq: u64| {
        let closing = EventBody::TextMessageEnd {
            message_id: "m".into(),
        };
        command(session, Guard::Repair { after_seq }, vec![closing])
    };
    // Two batches of tokens: the second takes a backend's fastest path (on PostgreSQL a
    // bare insert, after which the session row's own last seq lags).
    store.apply(&[append(root, &["a"])], 1).await.unwrap();
    store.apply(&[append(root, &["b"])], 1).await.unwrap();
    let stale = store.apply(&[repair(root, 1)], 2).await.unwrap();
    assert_eq!(
        stale,
        [Applied::Rejected(Rejection::LogMoved)],
        "computed before the last token"
    );
    let applied = store.apply(&[repair(root, 2)], 2).await.unwrap();
    assert_eq!(applied, [Applied::Committed { first_seq: 3 }]);
    let batch = [append(root, &["c"]), repair(root, 4), repair(root, 4)];
    let applied = store.apply(&batch, 3).await.unwrap();
    assert_eq!(
        applied,
        [
            Applied::Committed { first_seq: 4 },
            Applied::Committed { first_seq: 5 },
            Applied::Rejected(Rejection::LogMoved),
        ],
        "the head a repair reads includes its batch's earlier commands"
    );
    let rows = store.events_after(root, 0, 100).await.unwrap();
    assert_eq!(rows.len(), 5, "a refused repair leaves nothing");

    let branch = branch_of(store, root, 2).await;
    let applied = store
        .apply(&[repair(branch, 0), repair(branch, 2)], 5)
        .await
        .unwrap();
    assert_eq!(
        applied,
        [
            Applied::Rejected(Rejection::LogMoved),
            Applied::Committed { first_seq: 3 },
        ],
        "a branch's line ends at its fork until it has rows of its own"
    );
    let missing = store.apply(&[repair(SessionId::generate(), 0)], 6).await;
    assert_eq!(
        missing.unwrap(),
        [Applied::Rejected(Rejection::SessionMissing)]
    );
}

/// A state change applies only to the state it was made from: the second of two made
/// from the same state is refused, in one batch or two; a branch without changes of its
/// own takes one made from its prefix's; the session row keeps the seq of the last one.
pub async fn state_changes_apply_to_the_state_they_were_made_from<S: Store>(store: &S) {
    let owner = user(store, "ada").await;
    let root = SessionId::generate();
    store.create_session(owner, root, None, 0).await.unwrap();
    let change = |session: SessionId, read: Option<u64>, key: &str| {
        let delta = vec![serde_json::json!({"op": "add", "path": format!("/{key}"), "value": 1})];
        let mut command = command(
            session,
            Guard::Append,
            vec![EventBody::StateDelta { delta }],
        );
        command.state = Some(StateRead { last_seq: read });
        command
    };
    let applied = store
        .apply(&[change(root, None, "a"), change(root, None, "b")], 1)
        .await
        .unwrap();
    assert_eq!(
        applied,
        [
            Applied::Committed { first_seq: 1 },
            Applied::Rejected(Rejection::StateMoved)
        ],
        "the second was made from the state before the first"
    );
    let applied = store.apply(&[change(root, Some(1), "b")], 2).await;
    assert_eq!(applied.unwrap(), [Applied::Committed { first_seq: 2 }]);
    let stale = store.apply(&[change(root, Some(1), "c")], 3).await;
    assert_eq!(stale.unwrap(), [Applied::Rejected(Rejection::StateMoved)]);
    store.apply(&[append(root, &["x"])], 4).await.unwrap();

    // A branch parting after both: changes made from its prefix's last one apply once.
    let branch = branch_of(store, root, 3).await;
    let applied = store
        .apply(
            &[change(branch, Some(2), "c"), change(branch, Some(2), "d")],
            6,
        )
        .await
        .unwrap();
    assert_eq!(
        applied,
        [
            Applied::Committed { first_seq: 4 },
            Applied::Rejected(Rejection::StateMoved)
        ]
    );
    let applied = store.apply(&[change(branch, Some(4), "d")], 7).await;
    assert_eq!(applied.unwrap(), [Applied::Committed { first_seq: 5 }]);
    let parent = store.apply(&[change(root, Some(2), "e")], 8).await;
    assert_eq!(
        parent.unwrap(),
        [Applied::Committed { first_seq: 4 }],
        "the parent goes on from its own"
    );
}
