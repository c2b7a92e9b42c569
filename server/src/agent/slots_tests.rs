use tokio::sync::oneshot::Receiver;

use super::*;

const ROOMY: QueueBounds = QueueBounds {
    total: 100,
    per_user: 100,
};

fn slot(admission: Admission) -> RunSlot {
    match admission {
        Admission::Now(slot) => slot,
        Admission::Queued { .. } => panic!("expected a free slot"),
    }
}

/// The place and the receiver of a run that had to wait.
fn waiting(admission: Admission) -> (usize, Receiver<RunSlot>) {
    match admission {
        Admission::Now(_) => panic!("expected to wait"),
        Admission::Queued { position, ready } => (position, ready),
    }
}

/// The slot handed to this waiter, if it was handed one.
fn handed(ready: &mut Receiver<RunSlot>) -> Option<RunSlot> {
    ready.try_recv().ok()
}

#[tokio::test]
async fn runs_beyond_the_limit_wait_in_order_and_stopped_waiters_are_skipped() {
    let alice = UserId::generate();
    let slots = RunSlots::new(1, ROOMY);
    let first = slot(slots.admit(alice));
    let (1, stopped) = waiting(slots.admit(alice)) else {
        panic!("queued first");
    };
    let (2, second) = waiting(slots.admit(alice)) else {
        panic!("queued second");
    };
    drop(stopped);
    drop(first);
    let second = second.await.expect("the slot is handed over");
    assert_eq!(slots.queued(), 0);
    drop(second);
    let _again = slot(slots.admit(alice));
}

#[test]
fn the_queue_has_a_bound_and_stopped_waiters_leave_it() {
    let local = UserId::LOCAL;
    let slots = RunSlots::new(
        1,
        QueueBounds {
            total: 1,
            per_user: 10,
        },
    );
    let _running = slot(slots.admit(local));
    assert_eq!(slots.room_for(local), Ok(()));
    let waiting_run = slots.admit(local);
    assert_eq!(slots.room_for(local), Err(NoRoom::Saturated));
    drop(waiting_run);
    assert_eq!(slots.room_for(local), Ok(()));
    let (1, _) = waiting(slots.admit(local)) else {
        panic!("first in line again");
    };
}

#[test]
fn freed_slots_go_to_the_users_in_turn_and_each_users_runs_in_order() {
    let (alice, bob, carol) = (UserId::generate(), UserId::generate(), UserId::generate());
    let slots = RunSlots::new(1, ROOMY);
    let mut running = slot(slots.admit(alice));
    let (_, a1) = waiting(slots.admit(alice));
    let (_, a2) = waiting(slots.admit(alice));
    let (_, b1) = waiting(slots.admit(bob));
    let (_, b2) = waiting(slots.admit(bob));
    let (_, c1) = waiting(slots.admit(carol));
    // Alice was served last (her running run), so the others go first, in the order
    // they joined; then the users take turns, each user's runs oldest first.
    let mut expected = vec![("b1", b1), ("c1", c1), ("a1", a1), ("b2", b2), ("a2", a2)];
    let mut order = Vec::new();
    while !expected.is_empty() {
        drop(running);
        let next = expected
            .iter_mut()
            .position(|(_, ready)| !ready.is_empty())
            .expect("a waiter got the freed slot");
        let (name, mut ready) = expected.remove(next);
        order.push(name);
        running = handed(&mut ready).expect("its slot");
        assert!(
            expected.iter().all(|(_, ready)| ready.is_empty()),
            "one slot, one run"
        );
    }
    assert_eq!(order, ["b1", "c1", "a1", "b2", "a2"]);
}

#[test]
fn a_flood_of_one_user_holds_another_users_run_back_for_one_freed_slot_only() {
    let (alice, bob) = (UserId::generate(), UserId::generate());
    let slots = RunSlots::new(2, ROOMY);
    let mut alice_running = vec![slot(slots.admit(alice)), slot(slots.admit(alice))];
    let mut alice_waiting: Vec<_> = (0..10).map(|_| waiting(slots.admit(alice)).1).collect();
    let (position, mut bob_ready) = waiting(slots.admit(bob));
    assert_eq!(position, 1, "bob's run takes the next slot that frees");

    drop(alice_running.pop());
    let bob_running = handed(&mut bob_ready).expect("bob's run starts on the first free slot");
    assert!(alice_waiting.iter().all(|ready| ready.is_empty()));

    drop(alice_running.pop());
    assert!(
        handed(&mut alice_waiting[0]).is_some(),
        "then alice's oldest"
    );
    drop(bob_running);
    assert!(handed(&mut alice_waiting[1]).is_some(), "and her next");
}

#[test]
fn each_user_may_queue_only_their_share_while_others_still_queue() {
    let (alice, bob, carol) = (UserId::generate(), UserId::generate(), UserId::generate());
    let bounds = QueueBounds {
        total: 3,
        per_user: 2,
    };
    let slots = RunSlots::new(1, bounds);
    assert_eq!(slots.room_for(alice), Ok(()));
    let _running = slot(slots.admit(alice));
    let _a = [slots.admit(alice), slots.admit(alice)];
    assert_eq!(slots.room_for(alice), Err(NoRoom::UserShareFull(2)));
    assert_eq!(slots.room_for(bob), Ok(()));
    let _b = slots.admit(bob);
    assert_eq!(slots.room_for(carol), Err(NoRoom::Saturated));
    assert_eq!(
        slots.room_for(alice),
        Err(NoRoom::UserShareFull(2)),
        "a user past their share hears about their share"
    );
}

#[test]
fn a_stopped_waiter_leaves_its_line_and_the_turn_passes_on() {
    let (alice, bob, carol) = (UserId::generate(), UserId::generate(), UserId::generate());
    let slots = RunSlots::new(1, ROOMY);
    let running = slot(slots.admit(alice));
    let (_, bob_stopped) = waiting(slots.admit(bob));
    let (_, mut bob_next) = waiting(slots.admit(bob));
    let (_, carol_ready) = waiting(slots.admit(carol));
    drop(bob_stopped);
    assert_eq!(slots.queued(), 2);

    drop(running);
    let bob_running = handed(&mut bob_next).expect("bob keeps his turn with his next run");
    assert!(carol_ready.is_empty());
    drop(carol_ready);
    drop(bob_running);
    assert_eq!(slots.queued(), 0);
    let _free_again = slot(slots.admit(alice));
}

#[test]
fn a_queued_runs_position_counts_the_runs_ahead_of_it_across_users() {
    let (alice, bob) = (UserId::generate(), UserId::generate());
    let slots = RunSlots::new(1, ROOMY);
    let _running = slot(slots.admit(alice));
    // Kept, so that none of them counts as stopped.
    let waiters: Vec<_> = [alice, alice, alice, bob, bob]
        .into_iter()
        .map(|user| waiting(slots.admit(user)))
        .collect();
    let positions: Vec<usize> = waiters.iter().map(|(position, _)| *position).collect();
    // The turn is bob, alice: bob's first starts next, alice's first after it, ...
    assert_eq!(positions, [1, 2, 3, 1, 3]);
    let (carol_position, _carol) = waiting(slots.admit(UserId::generate()));
    assert_eq!(carol_position, 2, "after bob's first, before alice's first");
}
