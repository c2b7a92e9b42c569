//! The agent: engines, tools, and the loop that records a run into the log.
//!
//! [`Runner`] is the only way in: it starts runs for messages and answers, stops them,
//! and closes runs a crash left open. A running loop is a task owned by the runner's
//! registry; a paused session has no task at all, only rows.
//!
//! The folders show the layers: `runner/` holds the runner and its views (posting,
//! answering, stopping, continuing, the queue, feedback, recovery and expiry), each giving
//! `Runner` its accessor in its own file; `run/` holds one run, from its first model call
//! to its terminal event, and imports nothing of `runner/`. What both speak lives here:
//! why the runner refused (`refusal`), a person's message (`new_message`), the run slots
//! (`slots`), the conversation, budgets, engines and tools.

mod annotations;
pub mod attached;
pub mod branches;
pub mod budget;
pub mod budget_turn;
pub mod context;
pub mod conversation;
pub mod engines;
pub mod fallback;
pub mod instructions;
mod new_message;
pub mod progress;
pub mod prompt;
mod refusal;
mod run;
mod runner;
pub mod shared_state;
pub mod slots;
pub mod tools;

use std::sync::Arc;

pub use new_message::NewMessage;
pub use refusal::{Refusal, Settled};
pub use run::open_items::OpenItems;
pub use runner::answers::{Answers, Reply};
pub use runner::expiry::Expiry;
pub use runner::feedback::Feedback;
pub use runner::queue::Queue;
pub use runner::recovery::Recovery;
pub use runner::{RunControl, Runner};
pub use slots::RunSlots;

use crate::eventlog::Writer;

/// What every run needs, shared by all runs.
pub struct RunDeps<S> {
    pub store: Arc<S>,
    pub writer: Writer,
    pub engine: Arc<dyn engines::Engine>,
    pub tools: Arc<tools::ToolRegistry>,
    /// People's own tools (`--user-tools on`), added to their runs' tools.
    pub own_tools: Option<Arc<crate::sandbox::UserToolbox>>,
    pub limits: RunLimits,
    /// Deadline for answers to interrupts that set none, in seconds.
    pub input_timeout_secs: Option<u64>,
    /// The slots runs execute in (`--max-concurrent-runs`).
    pub slots: RunSlots,
    /// The runtime runs are spawned on (not an HTTP worker's).
    pub runtime: tokio::runtime::Handle,
    /// The system prompt every model call starts with (`None`: none).
    pub system_prompt: Option<Arc<str>>,
    /// How much of a conversation each model is sent, and what becomes of the rest.
    pub context: crate::config::context::ContextPolicy,
    /// The models a session may pick (the engine's own first).
    pub models: Vec<String>,
    /// What model calls cost (`--prices`).
    pub prices: Arc<crate::config::PriceTable>,
    /// The process's stop: runs stop at a safe point when it begins, and the background
    /// tasks (lease keeper, expiry sweeper) end with it; each is spawned through it.
    pub lifecycle: crate::lifecycle::Lifecycle,
    /// Woken when another instance hands its runs back: the lease keeper takes them over
    /// at once instead of at its next beat.
    pub released_elsewhere: Arc<tokio::sync::Notify>,
    /// What a message sent while a run works does when it does not say.
    pub while_running: shared::queue::WhileRunning,
    /// Which models take images and PDFs (`--models-without-images`).
    pub image_models: attached::ImageModels,
    /// What files a tool returns may take (the upload limits).
    pub attachment_limits: crate::attachments::UploadLimits,
    /// The models a call falls back to when its own keeps failing (`--fallback-models`).
    pub fallbacks: fallback::Fallbacks,
    /// What the shared state may hold (`--state-schema`, `--max-state-bytes`).
    pub state_rules: Arc<shared_state::StateRules>,
    /// What each user may spend, and what a run past it does (`--budget-*`).
    pub budgets: budget::BudgetRules,
    /// Where runs' spans go when they end (off unless an OTLP endpoint is set).
    pub traces: crate::traces::Traces,
}

// By hand: a derived `Clone` would ask the store type to be `Clone` too.
impl<S> Clone for RunDeps<S> {
    fn clone(&self) -> Self {
        Self {
            store: self.store.clone(),
            writer: self.writer.clone(),
            engine: self.engine.clone(),
            tools: self.tools.clone(),
            own_tools: self.own_tools.clone(),
            limits: self.limits,
            input_timeout_secs: self.input_timeout_secs,
            slots: self.slots.clone(),
            runtime: self.runtime.clone(),
            system_prompt: self.system_prompt.clone(),
            context: self.context.clone(),
            models: self.models.clone(),
            prices: self.prices.clone(),
            lifecycle: self.lifecycle.clone(),
            released_elsewhere: self.released_elsewhere.clone(),
            while_running: self.while_running,
            image_models: self.image_models.clone(),
            attachment_limits: self.attachment_limits,
            fallbacks: self.fallbacks.clone(),
            state_rules: self.state_rules.clone(),
            budgets: self.budgets,
            traces: self.traces.clone(),
        }
    }
}

impl<S: crate::store::Store> RunDeps<S> {
    /// The tools of `owner`'s runs: their own added to the server's, when people may have
    /// their own and this one has some. A failure to read them leaves the server's (and
    /// is logged).
    pub async fn tools_of(&self, owner: crate::domain::UserId) -> Arc<tools::ToolRegistry> {
        let Some(toolbox) = &self.own_tools else {
            return self.tools.clone();
        };
        match toolbox.tools_of(&*self.store, owner).await {
            Ok(own) if own.is_empty() => self.tools.clone(),
            Ok(own) => Arc::new(self.tools.with_own(own)),
            Err(error) => {
                tracing::warn!(%error, "cannot read a person's own tools; going on without them");
                self.tools.clone()
            }
        }
    }

    /// These dependencies with the tools of `owner`'s runs ([`Self::tools_of`]).
    pub async fn for_owner(&self, owner: crate::domain::UserId) -> std::borrow::Cow<'_, Self> {
        let tools = self.tools_of(owner).await;
        if Arc::ptr_eq(&tools, &self.tools) {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut deps = self.clone();
        deps.tools = tools;
        std::borrow::Cow::Owned(deps)
    }
}

/// What one run, and the input that starts it, may amount to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLimits {
    /// Model calls one run may make before it fails with `max_model_calls`.
    pub max_model_calls: u32,
    /// Events one run may append before it fails with `max_run_events`.
    pub max_run_events: u64,
    /// Longest tool result kept in the log, in bytes.
    pub max_tool_result_bytes: usize,
    /// Longest user message, in bytes.
    pub max_message_bytes: usize,
    /// Bounds of a schema a model puts in a question.
    pub schema: tools::schema::SchemaLimits,
}

impl Default for RunLimits {
    fn default() -> Self {
        Self {
            max_model_calls: 10,
            max_run_events: 100_000,
            max_tool_result_bytes: 64 * 1024,
            max_message_bytes: 32 * 1024,
            schema: Default::default(),
        }
    }
}
