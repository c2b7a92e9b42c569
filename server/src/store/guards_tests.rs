//! The guards' decisions, one story each.

use serde_json::json;

use super::*;
use crate::domain::SessionId;

fn command(guard: Guard) -> Command {
    Command {
        session: SessionId::generate(),
        guard,
        entries: Vec::new(),
        state: None,
    }
}

fn session(status: SessionStatus, run: Option<&str>) -> Facts {
    Facts {
        session: Some(SessionFacts {
            status,
            active_run_id: run.map(str::to_string),
        }),
        ..Facts::default()
    }
}

fn start(client: Option<&str>) -> Command {
    command(Guard::StartRun {
        run_id: "r2".into(),
        client_message_id: client.map(str::to_string),
        title: "Hello".into(),
        queued: None,
        fire: None,
    })
}

#[test]
fn a_scheduled_time_fires_once_and_its_fire_is_written_with_the_run() {
    let claim = FireClaim {
        schedule_id: "s1".into(),
        scheduled_for: 60_000,
        fired_at: 60_100,
        manual: false,
    };
    let fire = command(Guard::StartRun {
        run_id: "r2".into(),
        client_message_id: None,
        title: String::new(),
        queued: None,
        fire: Some(Box::new(claim.clone())),
    });
    let mut idle = session(SessionStatus::Idle, None);
    let Verdict::Proceed(writes) = decide(&fire, &idle) else {
        panic!("the first fire starts its run")
    };
    assert_eq!(
        writes.last(),
        Some(&GuardWrite::RecordFire {
            claim,
            run_id: "r2".into()
        })
    );
    idle.fire_taken = true;
    assert_eq!(
        decide(&fire, &idle),
        Verdict::Refuse(Rejection::AlreadyFired)
    );
    let mut busy = session(SessionStatus::Running, Some("r1"));
    busy.fire_taken = true;
    assert_eq!(
        decide(&fire, &busy),
        Verdict::Refuse(Rejection::AlreadyFired),
        "a time that fired is said to have fired, whatever the session does now"
    );
}

#[test]
fn every_guard_needs_the_session() {
    let append = command(Guard::Append);
    assert_eq!(
        decide(&append, &Facts::default()),
        Verdict::Refuse(Rejection::SessionMissing)
    );
    let idle = session(SessionStatus::Idle, None);
    assert_eq!(decide(&append, &idle), Verdict::Proceed(Vec::new()));
}

#[test]
fn a_repair_needs_the_lease_and_the_head_it_read() {
    let repair = command(Guard::Repair { after_seq: 7 });
    let mut running = session(SessionStatus::Running, Some("r1"));
    running.head = 7;
    assert_eq!(decide(&repair, &running), Verdict::Proceed(Vec::new()));
    running.head = 8;
    assert_eq!(
        decide(&repair, &running),
        Verdict::Refuse(Rejection::LogMoved),
        "an append landed after the repair's read"
    );
    running.lease = LeaseHolder::Other;
    assert_eq!(
        decide(&repair, &running),
        Verdict::Refuse(Rejection::LeaseLost),
        "another instance took the run over again"
    );
    assert_eq!(
        decide(&repair, &Facts::default()),
        Verdict::Refuse(Rejection::SessionMissing)
    );
}

#[test]
fn only_the_lease_holder_appends() {
    let append = command(Guard::Append);
    let mut running = session(SessionStatus::Running, Some("r1"));
    for (holder, allowed) in [
        (LeaseHolder::Nobody, true),
        (LeaseHolder::Us, true),
        (LeaseHolder::Other, false),
    ] {
        running.lease = holder;
        let verdict = decide(&append, &running);
        match allowed {
            true => assert_eq!(verdict, Verdict::Proceed(Vec::new()), "{holder:?}"),
            false => assert_eq!(verdict, Verdict::Refuse(Rejection::LeaseLost)),
        }
    }
}

#[test]
fn a_run_starts_only_on_an_idle_session_and_a_repeat_gets_its_run() {
    let idle = session(SessionStatus::Idle, None);
    assert_eq!(
        decide(&start(Some("c1")), &idle),
        Verdict::Proceed(vec![
            GuardWrite::RecordClientMessage {
                client_message_id: "c1".into(),
                run_id: "r2".into()
            },
            GuardWrite::NameSession {
                title: "Hello".into()
            },
            GuardWrite::TakeLease {
                run_id: "r2".into()
            },
        ])
    );
    let busy = session(SessionStatus::AwaitingInput, None);
    assert_eq!(
        decide(&start(None), &busy),
        Verdict::Refuse(Rejection::Busy(SessionStatus::AwaitingInput))
    );
    let repeat = Facts {
        earlier_run: Some("r1".into()),
        ..session(SessionStatus::Running, Some("r1"))
    };
    assert_eq!(
        decide(&start(Some("c1")), &repeat),
        Verdict::Refuse(Rejection::DuplicateMessage {
            run_id: "r1".into()
        })
    );
}

#[test]
fn events_about_a_run_land_only_while_it_is_the_active_one() {
    let stop = command(Guard::InRun {
        run_id: "r1".into(),
    });
    let running = session(SessionStatus::Running, Some("r1"));
    assert_eq!(decide(&stop, &running), Verdict::Proceed(Vec::new()));
    let other = session(SessionStatus::Running, Some("r2"));
    assert_eq!(decide(&stop, &other), Verdict::Refuse(Rejection::RunEnded));
    let idle = session(SessionStatus::Idle, None);
    assert_eq!(decide(&stop, &idle), Verdict::Refuse(Rejection::RunEnded));
}

#[test]
fn an_interrupt_is_answered_once() {
    let answer = json!({"status": "resolved", "payload": {"text": "Ada"}});
    let resume = command(Guard::Resume {
        interrupt_id: "i".into(),
        response: answer.clone(),
        run_id: "r2".into(),
    });
    assert_eq!(
        decide(&resume, &Facts::default()),
        Verdict::Refuse(Rejection::InterruptMissing),
        "a deleted session's interrupt is missing too"
    );
    let mut facts = session(SessionStatus::AwaitingInput, None);
    assert_eq!(
        decide(&resume, &facts),
        Verdict::Refuse(Rejection::InterruptMissing)
    );
    facts.interrupt = Some(InterruptFacts {
        state: InterruptState::Pending,
        response: None,
        resumed_run_id: None,
    });
    assert_eq!(
        decide(&resume, &facts),
        Verdict::Proceed(vec![
            GuardWrite::AnswerInterrupt {
                interrupt_id: "i".into(),
                state: InterruptState::Resolved,
                response: answer.clone(),
                run_id: "r2".into(),
            },
            GuardWrite::TakeLease {
                run_id: "r2".into()
            },
        ])
    );
    facts.interrupt = Some(InterruptFacts {
        state: InterruptState::Resolved,
        response: Some(answer.clone()),
        resumed_run_id: Some("r2".into()),
    });
    let Verdict::Refuse(Rejection::InterruptAnswered { same, run_id, .. }) =
        decide(&resume, &facts)
    else {
        panic!("answered twice")
    };
    assert!(same, "the same answer again");
    assert_eq!(run_id.as_deref(), Some("r2"));
}
