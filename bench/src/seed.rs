//! Event logs written straight into a [`Store`], the way Tandem's writer would leave
//! them: a long finished run (a backlog to replay) and sessions paused on a question.
//!
//! Seeding bypasses the writer (nothing is published) and must run before anyone
//! watches the sessions it writes.

use shared::{Event, EventBody, InputKind, InputRequest, Outcome, TextRole};
use tandem::agent::tools::request_input;
use tandem::domain::{new_id, now_ms, SessionId, UserId};
use tandem::store::{Applied, Command, Guard, LogEntry, Store};

/// Commands applied per transaction while seeding.
const COMMANDS_PER_BATCH: usize = 500;
/// Events per command in a backlog.
const EVENTS_PER_COMMAND: usize = 1000;

/// Creates a session holding one finished run of exactly `events` events (≥ 5), mostly
/// answer tokens like the ones a model streams.
pub async fn backlog<S: Store>(store: &S, events: usize) -> anyhow::Result<SessionId> {
    anyhow::ensure!(events >= 5, "a backlog needs at least 5 events");
    let id = SessionId::generate();
    store
        .create_session(UserId::LOCAL, id, Some("backlog"), now_ms())
        .await?;
    let (run, message) = (new_id("run"), new_id("msg"));
    let mut bodies = vec![
        run_started(id, &run),
        text_start(&message, TextRole::Assistant),
    ];
    let words = [
        "Sure", " here", " is", " a", " longer", " answer", " with", " words",
    ];
    bodies.extend((0..events - 4).map(|i| EventBody::TextMessageContent {
        message_id: message.clone(),
        delta: format!("{} {i}", words[i % words.len()]),
    }));
    bodies.push(EventBody::TextMessageEnd {
        message_id: message,
    });
    bodies.push(run_finished(id, &run, success()));
    let commands: Vec<Command> = bodies
        .chunks(EVENTS_PER_COMMAND)
        .map(|chunk| command(id, chunk.to_vec()))
        .collect();
    apply_all(store, commands).await?;
    Ok(id)
}

/// Appends one finished run of exactly `events` events (≥ 5) to an existing session
/// (a branch, say), as [`backlog`] writes them.
pub async fn extend<S: Store>(store: &S, id: SessionId, events: usize) -> anyhow::Result<()> {
    anyhow::ensure!(events >= 5, "a run needs at least 5 events");
    let (run, message) = (new_id("run"), new_id("msg"));
    let mut bodies = vec![
        run_started(id, &run),
        text_start(&message, TextRole::Assistant),
    ];
    bodies.extend((0..events - 4).map(|i| EventBody::TextMessageContent {
        message_id: message.clone(),
        delta: format!("More {i}"),
    }));
    bodies.push(EventBody::TextMessageEnd {
        message_id: message,
    });
    bodies.push(run_finished(id, &run, success()));
    let commands: Vec<Command> = bodies
        .chunks(EVENTS_PER_COMMAND)
        .map(|chunk| command(id, chunk.to_vec()))
        .collect();
    apply_all(store, commands).await
}

/// Creates `count` sessions, each paused on a `request_input` text question, exactly as
/// a run that asked would leave them. Returns (session, interrupt id) pairs.
pub async fn paused<S: Store>(store: &S, count: usize) -> anyhow::Result<Vec<(SessionId, String)>> {
    let mut created = Vec::with_capacity(count);
    let mut commands = Vec::with_capacity(count);
    for _ in 0..count {
        let id = SessionId::generate();
        store
            .create_session(UserId::LOCAL, id, Some("paused"), now_ms())
            .await?;
        let (bodies, interrupt) = paused_run(id);
        commands.push(command(id, bodies));
        created.push((id, interrupt));
    }
    apply_all(store, commands).await?;
    Ok(created)
}

/// The events of a run that asked a question and paused: user message, a model call
/// with the `request_input` call, and `RUN_FINISHED` with the interrupt.
fn paused_run(id: SessionId) -> (Vec<EventBody>, String) {
    let (run, user, call) = (new_id("run"), new_id("msg"), new_id("call"));
    let arguments = r#"{"prompt":"What is your name?","kind":"text"}"#;
    let request = InputRequest {
        prompt: "What is your name?".into(),
        kind: InputKind::Text,
        choices: None,
        schema: None,
        timeout_seconds: None,
    };
    let interrupt = request_input::interrupt(&request, &call, None);
    let interrupt_id = interrupt.id.clone();
    let step = || "model_call".to_string();
    let bodies = vec![
        run_started(id, &run),
        text_start(&user, TextRole::User),
        EventBody::TextMessageContent {
            message_id: user.clone(),
            delta: "Ask me my name".into(),
        },
        EventBody::TextMessageEnd { message_id: user },
        EventBody::StepStarted { step_name: step() },
        EventBody::ToolCallStart {
            tool_call_id: call.clone(),
            tool_call_name: request_input::NAME.into(),
            parent_message_id: Some(new_id("msg")),
        },
        EventBody::ToolCallArgs {
            tool_call_id: call.clone(),
            delta: arguments.into(),
        },
        EventBody::ToolCallEnd { tool_call_id: call },
        EventBody::StepFinished { step_name: step() },
        run_finished(
            id,
            &run,
            Outcome::Interrupt {
                interrupts: vec![interrupt],
            },
        ),
    ];
    (bodies, interrupt_id)
}

async fn apply_all<S: Store>(store: &S, commands: Vec<Command>) -> anyhow::Result<()> {
    for batch in commands.chunks(COMMANDS_PER_BATCH) {
        for applied in store.apply(batch, now_ms()).await? {
            anyhow::ensure!(
                matches!(applied, Applied::Committed { .. }),
                "seeding was refused: {applied:?}"
            );
        }
    }
    // Where the writer's upkeep would leave them in time (on SQLite: out of the tail).
    store.settle_log().await?;
    Ok(())
}

fn command(session: SessionId, bodies: Vec<EventBody>) -> Command {
    let now = now_ms();
    Command {
        session,
        guard: Guard::Append,
        entries: bodies
            .into_iter()
            .map(|body| LogEntry::new(Event::at(body, now)))
            .collect(),
        state: None,
    }
}

fn run_started(id: SessionId, run: &str) -> EventBody {
    EventBody::RunStarted {
        thread_id: id.to_string(),
        run_id: run.into(),
        parent_run_id: None,
        input: None,
    }
}

fn run_finished(id: SessionId, run: &str, outcome: Outcome) -> EventBody {
    EventBody::RunFinished {
        thread_id: id.to_string(),
        run_id: run.into(),
        result: None,
        outcome: Some(outcome),
        usage: None,
    }
}

fn success() -> Outcome {
    Outcome::Success {
        pending_tool_call_ids: None,
    }
}

fn text_start(message: &str, role: TextRole) -> EventBody {
    EventBody::TextMessageStart {
        message_id: message.into(),
        role: Some(role),
        name: None,
    }
}
