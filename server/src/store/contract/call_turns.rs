//! The store's contract for a user's turn to call the model (`agent::budget_turn`): one
//! holder per user at a time, on every instance; another user's turn is their own; a
//! turn given back, or expired, can be taken again.

use super::user;
use crate::store::Store;

/// One holder per user at a time, until given back or expired.
pub async fn a_users_turn_to_call_the_model_has_one_holder<S: Store>(store: &S) {
    let (alice, bob) = (user(store, "alice").await, user(store, "bob").await);
    assert!(store
        .take_call_turn(alice, "run_a", 1_000, 0)
        .await
        .unwrap());
    let second = store
        .take_call_turn(alice, "run_b", 1_000, 10)
        .await
        .unwrap();
    assert!(!second, "alice's turn is held");
    assert!(
        store.take_call_turn(bob, "run_c", 1_000, 10).await.unwrap(),
        "bob's is his own"
    );
    assert!(store.renew_call_turn(alice, "run_a", 2_000).await.unwrap());
    assert!(
        !store.renew_call_turn(alice, "run_b", 2_000).await.unwrap(),
        "not run_b's"
    );
    assert!(
        !store
            .take_call_turn(alice, "run_b", 3_000, 1_500)
            .await
            .unwrap(),
        "renewed until 2,000"
    );
    // A holder that died: its turn expires and another takes it.
    assert!(store
        .take_call_turn(alice, "run_b", 3_000, 2_001)
        .await
        .unwrap());
    assert!(
        !store.renew_call_turn(alice, "run_a", 4_000).await.unwrap(),
        "run_a lost it"
    );
    store.give_back_call_turn(alice, "run_a").await.unwrap();
    assert!(
        !store
            .take_call_turn(alice, "run_d", 3_000, 2_500)
            .await
            .unwrap(),
        "run_a can no longer give back run_b's turn"
    );
    store.give_back_call_turn(alice, "run_b").await.unwrap();
    assert!(store
        .take_call_turn(alice, "run_d", 3_000, 2_500)
        .await
        .unwrap());
}
