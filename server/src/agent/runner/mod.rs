//! Starting, answering, stopping and deleting: the operations REST and sockets share.
//!
//! The database guard decides whether a run may start (the session must be idle, the
//! interrupt pending), atomically with the events that start it. The registry only holds
//! cancellation tokens of runs in this process, keyed by session and run id.

pub(super) mod answers;
pub(super) mod continuing;
pub(super) mod expiry;
pub(super) mod feedback;
pub(super) mod judging;
pub(super) mod posting;
pub(super) mod queue;
pub(super) mod recovery;
pub(super) mod stopping;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use shared::api::{RunAccepted, SessionStatus};
use shared::queue::WhileRunning;
use shared::{Event, EventBody};
use tokio_util::sync::CancellationToken;

use super::new_message::NewMessage;
use super::refusal::{Refusal, Settled};
use super::run::recorder::Recorder;
use super::run::run_loop;
use super::slots::NoRoom;
use super::RunDeps;
use crate::domain::{now_ms, SessionId, UserId};
use crate::eventlog::{SessionDone, SessionOp};
use crate::store::{
    Applied, Command, Guard, InterruptState, LogEntry, QueuedRow, Rejection, SessionRow, Store,
};

/// What other instances ask of this instance's runs, through the relay
/// ([`crate::relay`]): it stands above the agent and calls this.
pub trait RunControl: Send + Sync + 'static {
    /// Cancels `run` of `session` (every run of it if `None`) if it executes here.
    fn stop_here(&self, session: SessionId, run: Option<&str>);

    /// Another instance handed its runs back (it stopped cleanly): take them over now.
    fn take_over_released(&self);
}

/// Runs in this process, by session. A `std::sync::Mutex`: held only for map updates,
/// never across an `.await`.
type Registry = Arc<Mutex<HashMap<SessionId, Vec<(String, CancellationToken)>>>>;

/// Starts and stops runs.
pub struct Runner<S> {
    pub(super) deps: Arc<RunDeps<S>>,
    active: Registry,
}

impl<S> Clone for Runner<S> {
    fn clone(&self) -> Self {
        Self {
            deps: self.deps.clone(),
            active: self.active.clone(),
        }
    }
}

impl<S: Store> Runner<S> {
    /// A runner with no runs.
    pub fn new(deps: RunDeps<S>) -> Self {
        Self {
            deps: Arc::new(deps),
            active: Default::default(),
        }
    }

    /// The engine runs use.
    pub fn engine(&self) -> &dyn super::engines::Engine {
        &*self.deps.engine
    }

    /// Starts the run of a queued message (which must be first in its session's queue).
    pub(super) async fn start_queued(
        &self,
        session: SessionId,
        owner: UserId,
        queued: QueuedRow,
    ) -> Result<RunAccepted, Refusal> {
        let message = NewMessage {
            text: queued.text,
            client_message_id: queued.client_message_id,
            input: queued.extra.input,
            model: queued.extra.model,
            while_running: None,
            message_id: Some(queued.id.clone()),
            attachments: queued.extra.attachments,
            // Its fire was recorded when it was queued.
            fire: None,
            replay: None,
        };
        self.start_message(session, owner, &message, &queued.run_id, Some(queued.id))
            .await
    }

    /// Commits the start of `message`'s run (`queued`: the queued message it is).
    pub(super) async fn start_message(
        &self,
        session: SessionId,
        owner: UserId,
        message: &NewMessage,
        run_id: &str,
        queued: Option<String>,
    ) -> Result<RunAccepted, Refusal> {
        let started = self.run_started_with(session, run_id, message.input.clone());
        let guard = Guard::StartRun {
            run_id: run_id.to_string(),
            client_message_id: message.client_message_id.clone(),
            title: message.title(),
            queued,
            fire: message.fire.clone().map(Box::new),
        };
        let events = message.clone().start_events(started);
        self.start(session, owner, run_id.to_string(), guard, events)
            .await
    }

    /// Whether `model` takes images and PDFs (`--models-without-images`).
    pub fn takes_images(&self, model: &str) -> bool {
        self.deps.image_models.takes_images(model)
    }

    /// The attachments `ids` name for a message to `session`: each uploaded to it or to a
    /// line it branched from, at most [`shared::attachments::MAX_PER_MESSAGE`], none twice.
    pub async fn attachments(
        &self,
        session: SessionId,
        ids: &[String],
    ) -> Result<Vec<shared::attachments::Attachment>, Refusal> {
        super::attached::resolve(&*self.deps.store, session, ids).await
    }

    /// The checks [`Self::post_message`] makes before it writes anything: the message's
    /// text and model, and room in the queue (in `owner`'s line and in all).
    pub fn check_message(&self, message: &NewMessage, owner: UserId) -> Result<(), Refusal> {
        message.check(&self.deps.models, self.deps.limits.max_message_bytes)?;
        self.check_room(owner)
    }

    /// Starts the run of the session's first queued message if the session is idle; does
    /// nothing otherwise. One that another instance started first, or that was withdrawn
    /// meanwhile, is passed over for the next.
    pub async fn start_next_queued(&self, session: SessionId) -> Result<(), Refusal> {
        let store = &self.deps.store;
        for _ in 0..=crate::store::MAX_QUEUED {
            let Some(row) = store.session(session).await? else {
                return Ok(());
            };
            if row.status != SessionStatus::Idle {
                return Ok(());
            }
            let Some(first) = store.queued_messages(session).await?.into_iter().next() else {
                return Ok(());
            };
            match self.start_queued(session, row.owner, first).await {
                Ok(_) | Err(Refusal::Busy(_)) => return Ok(()),
                Err(Refusal::NotFound(_)) => continue,
                Err(other) => return Err(other),
            }
        }
        Ok(())
    }

    /// Starts the queues nothing takes: idle sessions that hold queued messages.
    pub async fn start_waiting_queues(&self) -> Result<usize, Refusal> {
        let waiting = self.deps.store.idle_with_queue().await?;
        for &session in &waiting {
            tracing::warn!(%session, "starting queued messages nothing took");
            self.start_next_queued(session).await?;
        }
        Ok(waiting.len())
    }

    /// Continues a run recovered after a crash: a fresh loop from the log, in the line
    /// of the session's `owner`.
    pub(super) fn continue_run(&self, session: SessionId, owner: UserId, run_id: String) {
        let cancel = self.register(session, &run_id);
        self.spawn(session, owner, run_id, cancel);
    }

    /// The caps that apply to `user` and what is left of each (`--budget-*`, their own).
    pub async fn budget(
        &self,
        user: UserId,
    ) -> Result<Vec<shared::budget::BudgetLine>, crate::store::StoreError> {
        let store = &*self.deps.store;
        self.deps
            .budgets
            .lines(store, user, crate::domain::now_ms())
            .await
    }

    /// What a shared state may hold.
    pub fn state_rules(&self) -> &super::shared_state::StateRules {
        &self.deps.state_rules
    }

    /// What a message sent while a run works does when it does not say.
    pub fn while_running(&self) -> WhileRunning {
        self.deps.while_running
    }

    /// The models a session may pick, the default first.
    pub fn models(&self) -> &[String] {
        &self.deps.models
    }

    /// Each MCP server's name and whether it is connected (its tool count) or why not.
    pub fn mcp_statuses(&self) -> Vec<(String, Result<usize, String>)> {
        self.deps.tools.mcp().statuses()
    }

    /// The tools of `owner`'s runs: the server's, and their own.
    pub async fn tools_of(&self, owner: UserId) -> Arc<super::tools::ToolRegistry> {
        self.deps.tools_of(owner).await
    }

    /// The server's own tools (built in, the operator's, MCP servers'), no person's.
    pub fn server_tools(&self) -> &super::tools::ToolRegistry {
        &self.deps.tools
    }

    /// People's own tools, unless `--user-tools off`.
    pub fn own_tools(&self) -> Option<&Arc<crate::sandbox::UserToolbox>> {
        self.deps.own_tools.as_ref()
    }

    /// Whether the model has a server tool (or `request_input`, `update_state`) of this
    /// name.
    pub fn is_server_tool(&self, name: &str) -> bool {
        name == super::tools::request_input::NAME
            || name == super::tools::update_state::NAME
            || self.deps.tools.spec(name).is_some()
    }

    /// Creates a session of `owner` (through the log writer, like every write).
    pub async fn create_session(
        &self,
        owner: UserId,
        title: Option<&str>,
    ) -> Result<SessionRow, Refusal> {
        self.create(owner, SessionId::generate(), title).await
    }

    /// Creates the session of `owner`'s AG-UI thread, with the id `agui` gives it.
    pub async fn create_thread(&self, owner: UserId, id: SessionId) -> Result<SessionRow, Refusal> {
        self.create(owner, id, None).await
    }

    /// Creates `owner`'s session `id` titled `title`, or finds it if it exists (a
    /// schedule's fire names its session, so a fire made again names the same one).
    pub async fn create_or_find(
        &self,
        owner: UserId,
        id: SessionId,
        title: &str,
    ) -> Result<SessionRow, Refusal> {
        if let Some(row) = self.deps.store.session(id).await? {
            return match row.owner == owner {
                true => Ok(row),
                false => Err(Refusal::SessionNotFound(id)),
            };
        }
        match self.create(owner, id, Some(title)).await {
            Ok(row) => Ok(row),
            // Another instance made it first.
            Err(error) => match self.deps.store.session(id).await? {
                Some(row) if row.owner == owner => Ok(row),
                _ => Err(error),
            },
        }
    }

    async fn create(
        &self,
        owner: UserId,
        id: SessionId,
        title: Option<&str>,
    ) -> Result<SessionRow, Refusal> {
        let op = SessionOp::Create {
            owner,
            id,
            title: title.map(str::to_string),
        };
        match self.deps.writer.session(op).await? {
            SessionDone::Created(row) => Ok(row),
            SessionDone::Deleted(_) => Err(Refusal::Internal(
                "the writer answered a create with a delete",
            )),
        }
    }

    /// Deletes a session, stopping its run first.
    pub async fn delete(&self, session: SessionId) -> Result<(), Refusal> {
        self.cancel_local(session);
        match self
            .deps
            .writer
            .session(SessionOp::Delete { id: session })
            .await?
        {
            SessionDone::Deleted(true) => Ok(()),
            _ => Err(Refusal::SessionNotFound(session)),
        }
    }

    /// Refuses new work of `owner` while they have their share of the queue of runs
    /// waiting for a slot, or the whole queue is full.
    pub(super) fn check_room(&self, owner: UserId) -> Result<(), Refusal> {
        self.deps
            .slots
            .room_for(owner)
            .map_err(|refusal| match refusal {
                NoRoom::Saturated => Refusal::Saturated,
                NoRoom::UserShareFull(queued) => Refusal::TooManyQueuedRuns(queued),
            })
    }

    pub(super) fn run_started(&self, session: SessionId, run_id: &str) -> EventBody {
        self.run_started_with(session, run_id, None)
    }

    /// A `RUN_STARTED` recording the AG-UI input that started the run, if any.
    pub(super) fn run_started_with(
        &self,
        session: SessionId,
        run_id: &str,
        input: Option<serde_json::Value>,
    ) -> EventBody {
        EventBody::RunStarted {
            thread_id: session.to_string(),
            run_id: run_id.into(),
            parent_run_id: None,
            input,
        }
    }

    /// Commits the events that start a run and spawns its loop (in `owner`'s line).
    pub(super) async fn start(
        &self,
        session: SessionId,
        owner: UserId,
        run_id: String,
        guard: Guard,
        events: Vec<EventBody>,
    ) -> Result<RunAccepted, Refusal> {
        // Registered before the commit so a stop that races the start still finds it.
        let cancel = self.register(session, &run_id);
        let events: Vec<EventBody> = events.into_iter().chain(trace_context()).collect();
        match self.submit(session, guard, events).await {
            Ok(Applied::Committed { .. }) => {
                self.spawn(session, owner, run_id.clone(), cancel);
                Ok(RunAccepted::started(run_id, false))
            }
            Ok(Applied::Rejected(rejection)) => {
                self.unregister(session, &run_id);
                rejected(session, rejection)
            }
            Err(error) => {
                self.unregister(session, &run_id);
                Err(error)
            }
        }
    }

    pub(super) async fn submit(
        &self,
        session: SessionId,
        guard: Guard,
        events: Vec<EventBody>,
    ) -> Result<Applied, Refusal> {
        let now = now_ms();
        let entries = events
            .into_iter()
            .map(|b| LogEntry::new(Event::at(b, now)))
            .collect();
        Ok(self
            .deps
            .writer
            .submit(Command {
                session,
                guard,
                entries,
                state: None,
            })
            .await?)
    }

    /// Starts a run's loop. Its place in its owner's line for a slot is taken here,
    /// before the task exists, so each user's runs start in the order they were spawned.
    fn spawn(&self, session: SessionId, owner: UserId, run_id: String, cancel: CancellationToken) {
        if self.deps.lifecycle.is_halting() {
            // Its start is committed and its lease is handed back with the others: it
            // begins at the next start, or on another instance.
            tracing::info!(%session, run = run_id, "the process is stopping; the run starts elsewhere");
            self.unregister(session, &run_id);
            return;
        }
        let admission = self.deps.slots.admit(owner);
        let recorder = Recorder::new(
            self.deps.writer.clone(),
            session,
            run_id.clone(),
            self.deps.limits.max_run_events,
        );
        let (deps, runner) = (self.deps.clone(), self.clone());
        // At ERROR level so that no filter (`RUST_LOG=warn`) drops the ids from the lines
        // logged inside the run.
        let span = tracing::error_span!("run", session = %session, run = %run_id);
        let drive = async move {
            tracing::info!("run started");
            let started = std::time::Instant::now();
            run_loop::drive(deps, recorder, cancel, admission).await;
            runner.unregister(session, &run_id);
            runner.deps.traces.run_ended(session, &run_id);
            // The messages that waited for this run's end take their turn.
            if let Err(error) = runner.start_next_queued(session).await {
                tracing::warn!(%error, "could not start the next queued message");
            }
            tracing::info!(seconds = started.elapsed().as_secs_f64(), "run ended");
        };
        self.deps.lifecycle.spawn_on(
            tracing::Instrument::instrument(drive, span),
            &self.deps.runtime,
        );
    }

    fn register(&self, session: SessionId, run_id: &str) -> CancellationToken {
        let token = CancellationToken::new();
        let mut active = self.active.lock().expect("registry lock poisoned");
        active
            .entry(session)
            .or_default()
            .push((run_id.to_string(), token.clone()));
        token
    }

    fn unregister(&self, session: SessionId, run_id: &str) {
        let mut active = self.active.lock().expect("registry lock poisoned");
        if let Some(runs) = active.get_mut(&session) {
            runs.retain(|(id, _)| id != run_id);
            if runs.is_empty() {
                active.remove(&session);
            }
        }
    }

    /// Cancels this process's runs of `session`; false if it has none.
    /// Whether a run of `session` executes in this process.
    pub(super) fn runs_here(&self, session: SessionId) -> bool {
        let active = self.active.lock().expect("registry lock poisoned");
        active.get(&session).is_some_and(|runs| !runs.is_empty())
    }

    pub(super) fn cancel_local(&self, session: SessionId) -> bool {
        let active = self.active.lock().expect("registry lock poisoned");
        let Some(runs) = active.get(&session) else {
            return false;
        };
        runs.iter().for_each(|(_, token)| token.cancel());
        true
    }
}

pub(super) fn rejected(session: SessionId, rejection: Rejection) -> Result<RunAccepted, Refusal> {
    Err(match rejection {
        Rejection::SessionMissing => Refusal::SessionNotFound(session),
        Rejection::Busy(status) => Refusal::Busy(status),
        Rejection::DuplicateMessage { run_id } => return Ok(RunAccepted::started(run_id, true)),
        // The queue's own code acts on it; elsewhere it means the run ended meanwhile.
        Rejection::NothingToWaitFor => Refusal::Idle,
        Rejection::QueueFull => Refusal::QueueFull(crate::store::MAX_QUEUED),
        // Idle, but the messages queued before this one run first.
        Rejection::QueueWaiting => Refusal::Busy(SessionStatus::Running),
        Rejection::QueuedMissing => {
            Refusal::NotFound("the queued message is no longer in the queue".into())
        }
        Rejection::QueuedStarted { run_id } => Refusal::QueuedStarted { run_id },
        Rejection::InterruptMissing => Refusal::InterruptNotFound(String::new()),
        Rejection::RunEnded => Refusal::Idle,
        Rejection::AlreadyFired => Refusal::AlreadyFired,
        // Only run appends carry this guard; a person's command never meets it.
        Rejection::LeaseLost => Refusal::Internal("a person's command met a run lease"),
        // Only state changes carry a state read, and they make theirs again.
        Rejection::StateMoved => Refusal::Internal("a run's start met a state check"),
        // Only a takeover's repair carries an expected head, and it repairs again.
        Rejection::LogMoved => Refusal::Internal("a person's command met a repair's check"),
        Rejection::InterruptAnswered {
            interrupt_id,
            state,
            response,
            ..
        } if state == InterruptState::Expired.as_str() => Refusal::InterruptExpired(Settled {
            interrupt_id,
            state,
            response,
        }),
        Rejection::InterruptAnswered {
            same: true, run_id, ..
        } => return Ok(RunAccepted::started(run_id.unwrap_or_default(), true)),
        Rejection::InterruptAnswered {
            interrupt_id,
            state,
            response,
            ..
        } => Refusal::InterruptAnswered(Settled {
            interrupt_id,
            state,
            response,
        }),
    })
}

impl<S: Store> RunControl for Runner<S> {
    fn stop_here(&self, session: SessionId, run: Option<&str>) {
        let active = self.active.lock().expect("registry lock poisoned");
        let runs = active.get(&session).into_iter().flatten();
        for (_, token) in runs.filter(|(id, _)| run.is_none_or(|run| run == id)) {
            token.cancel();
        }
    }

    fn take_over_released(&self) {
        self.deps.released_elsewhere.notify_one();
    }
}

/// The trace context of the request (or socket) that starts a run, when it came with one
/// (`CUSTOM tandem.trace_context`, committed with the run's start): the run's spans join
/// that trace, live and when exported later.
pub(super) fn trace_context() -> Option<EventBody> {
    let parent = crate::traces::request_parent()?;
    Some(EventBody::Custom {
        name: shared::custom::TRACE_CONTEXT.into(),
        value: serde_json::json!({"traceparent": crate::traces::traceparent(&parent)}),
    })
}
