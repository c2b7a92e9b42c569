//! The open session: its socket, its folded transcript and the signals the view reads.
//!
//! [`Session`] is provided once by the app and reached with [`use_session`]. It owns the one
//! socket of the open session (after reading the log's history over HTTP in a few large
//! pages: a browser takes about 0.1 ms per WebSocket message, so a long session's backlog
//! is far quicker as one response than as thousands of frames), feeds its frames through the [`Transcript`] fold and mirrors
//! the result into one signal per item, so a streamed token updates one message. Frames
//! are applied in batches, once per animation frame ([`inbox`](super::inbox)): a replayed
//! backlog of thousands of events is one update of the page, not thousands. It sends
//! the person's frames (messages, answers, stop) and passes the server's errors on: most
//! as the page's notice, an answer refused because its interrupt was already settled to
//! the card that sent it. With no session open the page is a new conversation: its first
//! message creates the session ([`Session::start`]). It must not render anything.

use leptos::prelude::*;
use shared::api::{PostMessage, SessionStatus, SessionSummary};
use shared::queue::QueuedMessage;
use shared::usage::UsageTotals;
use shared::{ClientFrame, ServerFrame};

use crate::api::socket::SocketHandlers;
use crate::api::{ApiError, ConnState, SessionSocket};

use super::inbox::{self, Incoming};
use super::item::{Item, RunState};
use super::refusal::Refusal;
use super::transcript::{Instructions, Transcript};

/// Events per history request (the server's largest page; `index.html`'s loader asks for as many).
const HISTORY_PAGE: u32 = 10_000;

/// One transcript row as the view sees it: a stable key and the item's own signal.
#[derive(Clone)]
pub struct Row {
    /// The item's key, for `<For key=…>`.
    pub key: String,
    /// The item, updated in place as events arrive.
    pub item: ArcRwSignal<Item>,
}

/// Whether the open session's history could be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum History {
    /// Being read.
    Loading,
    /// Read (an empty session, or no session open: a new conversation).
    Loaded,
    /// The server could not be reached; the socket keeps trying and fills it in.
    Unavailable,
}

/// The open session's state, shared through context. Cheap to copy.
#[derive(Clone, Copy)]
pub struct Session {
    /// The open session's id, if any.
    id: RwSignal<Option<String>>,
    /// The transcript rows in order.
    rows: RwSignal<Vec<Row>>,
    /// Whether a run is active or a question waits.
    run: RwSignal<RunState>,
    /// The active run's place in line while it waits for a free slot on the server.
    queued: RwSignal<Option<u64>>,
    /// The person's messages waiting for their turn (sent while a run worked).
    queued_messages: RwSignal<Vec<QueuedMessage>>,
    /// The socket's state.
    connection: RwSignal<ConnState>,
    /// The latest error to show, until dismissed.
    notice: RwSignal<Option<ApiError>>,
    /// The latest answer the server turned down because its interrupt was already settled
    /// (expired, or answered elsewhere). The card that sent it says so; the page does not.
    refusal: RwSignal<Option<Refusal>>,
    /// Usage of every model call in the session.
    usage: RwSignal<UsageTotals>,
    /// The active run's usage so far (`None` between runs).
    run_usage: RwSignal<Option<UsageTotals>>,
    /// The model the person last picked for the session (`None`: the server's default).
    model: RwSignal<Option<String>>,
    /// The instructions the model is given, as the log holds them.
    instructions: RwSignal<Instructions>,
    /// The shared state (`{}` until something sets it).
    shared_state: RwSignal<serde_json::Value>,
    /// What waits is an AG-UI client's own tool calls, not a question for the person.
    waiting_for_client: RwSignal<bool>,
    /// Bumped after every applied event; the transcript scrolls on it.
    tick: RwSignal<u64>,
    /// Whether the history could be read; the transcript says so when it could not.
    history: RwSignal<History>,
    /// Bumped when the person sends: the transcript brings the newest row into view.
    latest: RwSignal<u64>,
    /// A message the person picked (an example prompt) for the composer to send.
    picked_prompt: RwSignal<Option<String>>,
    /// Every line of the open session's conversation, oldest first (one when it has no
    /// branches).
    branches: RwSignal<Vec<SessionSummary>>,
    /// Set for a share link's viewer: nothing can be sent, cards show no controls.
    pub read_only: bool,
    transcript: StoredValue<Transcript>,
    /// What the socket reported since the last batch was applied.
    inbox: StoredValue<Vec<Incoming>>,
    /// Bumped whenever another session opens, so a history read for the previous one
    /// is dropped when it arrives.
    opened: StoredValue<u64>,
    socket: StoredValue<Option<SessionSocket>, LocalStorage>,
}

/// The open session from context. Panics outside [`provide_session`]'s subtree.
pub fn use_session() -> Session {
    expect_context::<Session>()
}

/// Creates the session state and provides it to the subtree.
pub fn provide_session() -> Session {
    provide(false)
}

/// Creates the state of a share link's read-only view and provides it to the subtree.
pub fn provide_shared_session() -> Session {
    provide(true)
}

fn provide(read_only: bool) -> Session {
    let session = Session {
        id: RwSignal::new(None),
        rows: RwSignal::new(Vec::new()),
        run: RwSignal::new(RunState::Idle),
        queued: RwSignal::new(None),
        queued_messages: RwSignal::new(Vec::new()),
        connection: RwSignal::new(ConnState::Connecting),
        notice: RwSignal::new(None),
        refusal: RwSignal::new(None),
        usage: RwSignal::new(UsageTotals::default()),
        run_usage: RwSignal::new(None),
        model: RwSignal::new(None),
        instructions: RwSignal::new(Instructions::default()),
        shared_state: RwSignal::new(shared::state::empty()),
        waiting_for_client: RwSignal::new(false),
        tick: RwSignal::new(0),
        history: RwSignal::new(History::Loaded),
        latest: RwSignal::new(0),
        picked_prompt: RwSignal::new(None),
        branches: RwSignal::new(Vec::new()),
        read_only,
        transcript: StoredValue::new(Transcript::default()),
        inbox: StoredValue::new(Vec::new()),
        opened: StoredValue::new(0),
        socket: StoredValue::new_local(None),
    };
    provide_context(session);
    session
}

impl Session {
    // What components read: each of the session's signals, read-only. Changes go
    // through the methods below.

    /// The open session's id, if any.
    pub fn id(&self) -> ReadSignal<Option<String>> {
        self.id.read_only()
    }

    /// The transcript rows in order.
    pub fn rows(&self) -> ReadSignal<Vec<Row>> {
        self.rows.read_only()
    }

    /// Whether a run is active or a question waits.
    pub fn run(&self) -> ReadSignal<RunState> {
        self.run.read_only()
    }

    /// The active run's place in line while it waits for a free slot on the server.
    pub fn queued(&self) -> ReadSignal<Option<u64>> {
        self.queued.read_only()
    }

    /// The person's messages waiting for their turn, in the order they run.
    pub fn queued_messages(&self) -> ReadSignal<Vec<QueuedMessage>> {
        self.queued_messages.read_only()
    }

    /// The socket's state.
    pub fn connection(&self) -> ReadSignal<ConnState> {
        self.connection.read_only()
    }

    /// The latest error to show, until dismissed.
    pub fn notice(&self) -> ReadSignal<Option<ApiError>> {
        self.notice.read_only()
    }

    /// The latest answer the server turned down because its interrupt was already settled.
    pub fn refusal(&self) -> ReadSignal<Option<Refusal>> {
        self.refusal.read_only()
    }

    /// Usage of every model call in the session.
    pub fn usage(&self) -> ReadSignal<UsageTotals> {
        self.usage.read_only()
    }

    /// The shared state (`{}` until something sets it).
    pub fn shared_state(&self) -> ReadSignal<serde_json::Value> {
        self.shared_state.read_only()
    }

    /// The active run's usage so far (`None` between runs).
    pub fn run_usage(&self) -> ReadSignal<Option<UsageTotals>> {
        self.run_usage.read_only()
    }

    /// The model the person last picked for the session (`None`: the server's default).
    pub fn model(&self) -> ReadSignal<Option<String>> {
        self.model.read_only()
    }

    /// The instructions the model is given (the person's own as recorded, and the
    /// conversation's), as the log holds them.
    pub fn instructions(&self) -> ReadSignal<Instructions> {
        self.instructions.read_only()
    }

    /// What waits is an AG-UI client's own tool calls, not a question for the person.
    pub fn waiting_for_client(&self) -> ReadSignal<bool> {
        self.waiting_for_client.read_only()
    }

    /// Bumped after every applied event; the transcript scrolls on it.
    pub fn tick(&self) -> ReadSignal<u64> {
        self.tick.read_only()
    }

    /// Whether the history could be read.
    pub fn history(&self) -> ReadSignal<History> {
        self.history.read_only()
    }

    /// Bumped when the person sends: the transcript brings the newest row into view.
    pub fn latest(&self) -> ReadSignal<u64> {
        self.latest.read_only()
    }

    /// A message the person picked (an example prompt) for the composer to send.
    pub fn picked_prompt(&self) -> ReadSignal<Option<String>> {
        self.picked_prompt.read_only()
    }

    /// Shows `error` in the session's notice, as a failed send would.
    pub fn report(&self, error: ApiError) {
        self.notice.set(Some(error));
    }

    /// Dismisses the notice (and the card's refusal) once the person acts again.
    pub fn dismiss_notice(&self) {
        self.notice.set(None);
        self.refusal.set(None);
    }

    /// Picks an example prompt for the composer to send.
    pub fn pick_prompt(&self, prompt: String) {
        self.picked_prompt.set(Some(prompt));
    }

    /// The picked prompt, once: the composer takes it to send.
    pub fn take_picked_prompt(&self) -> Option<String> {
        let prompt = self.picked_prompt.get();
        if prompt.is_some() {
            self.picked_prompt.set(None);
        }
        prompt
    }

    /// Every line of the open session's conversation, oldest first.
    pub fn branches(&self) -> ReadSignal<Vec<SessionSummary>> {
        self.branches.read_only()
    }

    /// The open session's conversation (its first line's id), once its lines are known.
    /// Reactive.
    pub fn conversation(self) -> Option<String> {
        self.branches
            .with(|lines| lines.first().map(|line| line.conversation_id.clone()))
    }

    /// The key of the row where the open line parts from the others of its conversation
    /// (the first row after its fork point; for the first line, after the earliest point
    /// a branch parts from it), when it has other lines and that row exists. Reactive.
    pub fn part_key(self) -> Option<String> {
        let open = self.id.get()?;
        let at = self.branches.with(|lines| {
            if lines.len() < 2 {
                return None;
            }
            let line = lines.iter().find(|line| line.id == open)?;
            line.fork_seq.or_else(|| {
                lines
                    .iter()
                    .filter(|other| other.parent_id.as_deref() == Some(open.as_str()))
                    .filter_map(|other| other.fork_seq)
                    .min()
            })
        })?;
        self.rows.track();
        self.transcript
            .with_value(|t| t.first_key_after(at).map(str::to_string))
    }

    /// Where a run's time went, as the events applied so far say.
    pub fn run_timeline(self, run_id: &str) -> Option<shared::timeline::RunTimeline> {
        self.transcript.with_value(|t| t.run_timeline(run_id))
    }

    /// The run an answer (by its row's key) belongs to.
    pub fn run_of(self, key: &str) -> Option<String> {
        self.transcript
            .with_value(|t| t.run_of(key).map(str::to_string))
    }

    /// Edits the person's message (by its row's key): a branch that parts before it, with
    /// `text` sent in its place, which then opens. A refusal becomes the notice.
    pub fn edit(self, key: &str, text: String) {
        let Some(message_id) = key.strip_prefix("msg:").map(str::to_string) else {
            return;
        };
        self.branch_from(move |id| async move {
            crate::api::rest::edit_message(&id, &message_id, &text).await
        });
    }

    /// Runs an answer's run again (on `model`, if given) in a branch that parts before it,
    /// which then opens.
    pub fn regenerate(self, run_id: String, model: Option<String>) {
        self.branch_from(move |id| async move {
            crate::api::rest::regenerate(&id, &run_id, model).await
        });
    }

    /// Continues the answer the last run was stopped in: a run of its own whose answer
    /// writes on in that one. A refusal becomes the notice.
    pub fn continue_stopped(self) {
        let Some(run) = self
            .transcript
            .with_value(|t| t.stopped_run().map(str::to_string))
        else {
            return;
        };
        self.on_queue(move |id| async move {
            let asked = shared::api::ContinueRun {
                client_message_id: Some(crate::api::client_message_id()),
            };
            crate::api::rest::continue_run(&id, &run, &asked)
                .await
                .map(drop)
        });
    }

    /// Changes the text of a queued message before its turn (the server's `queue` frame
    /// then shows it); a refusal becomes the notice.
    pub fn edit_queued(self, queued: String, text: String) {
        self.on_queue(move |id| async move {
            crate::api::rest::edit_queued(&id, &queued, &text)
                .await
                .map(drop)
        });
    }

    /// Withdraws a queued message: it will not run.
    pub fn withdraw_queued(self, queued: String) {
        self.on_queue(
            move |id| async move { crate::api::rest::withdraw_queued(&id, &queued).await },
        );
    }

    fn on_queue<F, Fut>(self, change: F)
    where
        F: FnOnce(String) -> Fut + 'static,
        Fut: std::future::Future<Output = Result<(), ApiError>> + 'static,
    {
        let Some(id) = self.id.get_untracked() else {
            return;
        };
        leptos::task::spawn_local(async move {
            if let Err(error) = change(id).await {
                self.notice.set(Some(error));
            }
        });
    }

    fn branch_from<F, Fut>(self, make: F)
    where
        F: FnOnce(String) -> Fut + 'static,
        Fut: std::future::Future<Output = Result<shared::api::BranchStarted, ApiError>> + 'static,
    {
        let Some(id) = self.id.get_untracked() else {
            return;
        };
        leptos::task::spawn_local(async move {
            match make(id).await {
                Ok(started) => {
                    self.show_latest();
                    super::route::navigate(Some(&started.session.id));
                }
                Err(error) => self.notice.set(Some(error)),
            }
        });
    }

    /// Opens a session (closing the previous one's socket), or closes it with `None`.
    pub fn open(self, id: Option<String>) {
        if self.id.get_untracked() != id {
            self.load(id);
        }
    }

    /// Opens the open session again from scratch (the person asked to retry).
    pub fn reopen(self) {
        self.load(self.id.get_untracked());
    }

    fn load(self, id: Option<String>) {
        self.reset(id.clone());
        let Some(id) = id else { return };
        let opened = self.opened.get_value();
        if !self.read_only {
            let of = id.clone();
            leptos::task::spawn_local(async move {
                if let Ok(lines) = crate::api::rest::branches(&of).await {
                    if self.still_open(opened) {
                        self.branches.set(lines);
                    }
                }
            });
        }
        self.connection.set(ConnState::Connecting);
        self.history.set(History::Loading);
        leptos::task::spawn_local(async move {
            let after = self.read_history(&id, opened).await;
            if !self.still_open(opened) {
                return;
            }
            let socket = SessionSocket::open(&id, after, self.socket_handlers());
            self.socket.set_value(Some(socket));
        });
    }

    /// Starts a new conversation with its first message: creates the session, uploads the
    /// files attached in `tray` and sends the message with them (over REST: the session
    /// has no socket yet); gives the session's id, to open, where the run is already under
    /// way. A message the server refuses, or a file it will not take, leaves no session
    /// behind; the error is the page's notice and is returned.
    pub async fn start(
        self,
        mut message: PostMessage,
        tray: super::attachments::Tray,
    ) -> Result<String, ApiError> {
        let result = async {
            let created = crate::api::rest::create_session().await?;
            let sent = async {
                // The files attached before there was a session go up first.
                message.attachments = tray.upload_waiting(&created.id).await?;
                crate::api::rest::post_message(&created.id, &message).await
            };
            if let Err(refused) = sent.await {
                let _ = crate::api::rest::delete_session(&created.id).await;
                return Err(refused);
            }
            Ok(created.id)
        };
        match result.await {
            Ok(id) => {
                self.show_latest();
                Ok(id)
            }
            Err(error) => {
                self.notice.set(Some(error.clone()));
                Err(error)
            }
        }
    }

    /// Where the page reads an attachment of this session: a share link's viewer through
    /// the link, the owner directly.
    pub fn attachment_url(self, attachment: &str) -> String {
        let id = self.id.get_untracked().unwrap_or_default();
        match id.strip_prefix("shared:") {
            Some(token) => format!("/api/shared/{token}/attachments/{attachment}"),
            None => format!("/api/attachments/{attachment}"),
        }
    }

    /// Brings the newest row into view and keeps following the stream.
    pub fn show_latest(self) {
        self.latest.update(|latest| *latest += 1);
    }

    /// Whether the session opened as `opened` is still the open one, and the page still
    /// shows it: what an awaited request or a deferred batch finds may come after a sign-out
    /// tore the state down, and then it is dropped (reading torn-down state would panic).
    fn still_open(self, opened: u64) -> bool {
        self.opened.try_get_value() == Some(opened)
    }

    /// Reads the session's log over HTTP and queues it for the fold; returns the last seq
    /// read, where the socket takes over. Stops at the first failure (the socket then
    /// replays the rest) or when another session was opened meanwhile.
    async fn read_history(self, id: &str, opened: u64) -> u64 {
        let mut after = 0;
        loop {
            let Ok(page) = crate::api::rest::events(id, after, HISTORY_PAGE).await else {
                if after == 0 && self.still_open(opened) {
                    self.history.set(History::Unavailable);
                }
                return after;
            };
            if !self.still_open(opened) {
                return after;
            }
            if after == 0 {
                self.history.set(History::Loaded);
            }
            let full = page.events.len() == HISTORY_PAGE as usize;
            for logged in page.events {
                after = logged.seq;
                self.receive(Incoming::Frame(ServerFrame::Event {
                    seq: logged.seq,
                    event: logged.event,
                }));
            }
            if !full {
                return after;
            }
        }
    }

    /// Opens the session a share link shows, read-only.
    pub fn open_shared(self, token: &str) {
        self.reset(Some(format!("shared:{token}")));
        let socket = SessionSocket::open_shared(token, 0, self.socket_handlers());
        self.socket.set_value(Some(socket));
    }

    /// What the open socket reports to: the inbox, in order.
    fn socket_handlers(self) -> SocketHandlers {
        SocketHandlers {
            on_frame: Box::new(move |frame| self.receive(Incoming::Frame(frame))),
            on_state: Box::new(move |state| self.receive(Incoming::State(state))),
        }
    }

    /// Forgets the open session's state and socket; `id` is what opens next.
    fn reset(self, id: Option<String>) {
        self.socket.set_value(None);
        self.opened.update_value(|opened| *opened += 1);
        self.inbox.set_value(Vec::new());
        self.transcript.set_value(Transcript::default());
        self.rows.set(Vec::new());
        self.queued_messages.set(Vec::new());
        self.run.set(RunState::Idle);
        self.queued.set(None);
        self.usage.set(UsageTotals::default());
        self.run_usage.set(None);
        self.model.set(None);
        self.instructions.set(Instructions::default());
        self.shared_state.set(shared::state::empty());
        self.waiting_for_client.set(false);
        self.notice.set(None);
        self.refusal.set(None);
        self.history.set(History::Loaded);
        self.branches.set(Vec::new());
        self.id.set(id);
    }

    /// When the socket drops, checks the session still exists; a deleted (or unknown)
    /// session is closed with a notice instead of being retried forever.
    fn forget_if_deleted(self) {
        let Some(id) = self.id.get_untracked() else {
            return;
        };
        leptos::task::spawn_local(async move {
            let Err(error) = crate::api::rest::get_session(&id).await else {
                return;
            };
            let still = self.id.try_get_untracked().flatten();
            if error.code == "session_not_found" && still.as_deref() == Some(&id) {
                self.notice.set(Some(ApiError::new(
                    "session_not_found",
                    "That session no longer exists (it was deleted).",
                )));
                super::route::navigate(None);
            }
        });
    }

    /// A listed session's status, taken from the open session's own socket when it is the
    /// open one and live (which knows sooner than the list's stream). Reactive.
    pub fn status_of(self, id: &str, listed: SessionStatus) -> SessionStatus {
        let open = self.id.with(|open| open.as_deref() == Some(id));
        if !open || self.connection.get() != ConnState::Live {
            return listed;
        }
        match self.run.get() {
            RunState::Idle => SessionStatus::Idle,
            RunState::Running => SessionStatus::Running,
            RunState::Awaiting => SessionStatus::AwaitingInput,
        }
    }

    /// Sends a frame on the open session's socket; a failure becomes the notice.
    pub fn send(self, frame: ClientFrame) -> bool {
        if self.read_only {
            return false;
        }
        let sent = self.socket.with_value(|socket| match socket {
            Some(socket) => socket.send(&frame),
            None => Err(ApiError::new("no_session", "No session is open.")),
        });
        match sent {
            Ok(()) => true,
            Err(error) => {
                self.notice.set(Some(error));
                false
            }
        }
    }

    /// Queues what the socket reported; the first report after a batch schedules the next.
    fn receive(self, incoming: Incoming) {
        let first = self
            .inbox
            .try_update_value(|inbox| {
                inbox.push(incoming);
                inbox.len() == 1
            })
            .unwrap_or(false);
        if first {
            inbox::before_next_paint(move || self.apply_batch());
        }
    }

    /// Applies everything queued, in order, then updates each touched row once.
    fn apply_batch(self) {
        // Scheduled before the next paint, it may run after a sign-out tore the state down.
        if self.inbox.is_disposed() {
            return;
        }
        let batch = self
            .inbox
            .try_update_value(std::mem::take)
            .unwrap_or_default();
        let mut touched = Vec::new();
        let mut folded = false;
        for incoming in batch {
            match incoming {
                Incoming::Frame(ServerFrame::Event { seq, event }) => {
                    let changed = self.transcript.try_update_value(|t| t.apply(seq, &event));
                    touched.extend(changed.unwrap_or_default());
                    folded = true;
                }
                Incoming::Frame(ServerFrame::CaughtUp { queued, .. }) => {
                    set_if_changed(self.history, History::Loaded);
                    set_if_changed(self.queued_messages, queued);
                }
                Incoming::Frame(ServerFrame::Queue { queued }) => {
                    set_if_changed(self.queued_messages, queued);
                }
                Incoming::Frame(ServerFrame::Error { code, message }) => {
                    match Refusal::from_code(&code) {
                        Some(refusal) => self.refusal.set(Some(refusal)),
                        None => self.notice.set(Some(ApiError::new(code, message))),
                    }
                }
                Incoming::State(state) => {
                    self.connection.set(state);
                    if state == ConnState::Reconnecting && !self.read_only {
                        self.forget_if_deleted();
                    }
                }
            }
        }
        if folded {
            self.show(touched);
        }
    }

    /// Mirrors the fold into the signals: each touched item once, then the run's state.
    fn show(self, mut touched: Vec<usize>) {
        touched.sort_unstable();
        touched.dedup();
        let (model, client, state, instructions) = self.transcript.with_value(|t| {
            let state = t.shared_state().clone();
            let instructions = t.instructions().clone();
            let model = t.model().map(str::to_string);
            (model, t.waiting_for_client(), state, instructions)
        });
        set_if_changed(self.model, model);
        set_if_changed(self.instructions, instructions);
        set_if_changed(self.shared_state, state);
        set_if_changed(self.waiting_for_client, client);
        let (items, state, queued, usage, run_usage) = self.transcript.with_value(|t| {
            let items: Vec<(usize, Item)> = touched
                .iter()
                .map(|&at| (at, t.items()[at].clone()))
                .collect();
            (items, t.run_state(), t.queued(), t.usage(), t.run_usage())
        });
        self.mirror(items);
        set_if_changed(self.run, state);
        set_if_changed(self.queued, queued);
        set_if_changed(self.usage, usage);
        set_if_changed(self.run_usage, run_usage);
        self.tick.update(|tick| *tick += 1);
    }

    /// Copies changed items into their row signals and appends rows for new items;
    /// `touched` is in index order, without repeats.
    fn mirror(self, touched: Vec<(usize, Item)>) {
        let known = self.rows.with_untracked(Vec::len);
        let mut appended = Vec::new();
        for (at, item) in touched {
            if at < known {
                let signal = self.rows.with_untracked(|rows| rows[at].item.clone());
                signal.set(item);
            } else {
                appended.push(Row {
                    key: item.key.clone(),
                    item: ArcRwSignal::new(item),
                });
            }
        }
        if !appended.is_empty() {
            self.rows.update(|rows| rows.extend(appended));
        }
    }
}

/// Sets a signal only when the value differs, so its readers re-run only on a change.
fn set_if_changed<T: PartialEq + Send + Sync + 'static>(signal: RwSignal<T>, value: T) {
    if signal.with_untracked(|current| *current != value) {
        signal.set(value);
    }
}
