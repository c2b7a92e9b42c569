//! Tandem's own `CUSTOM` events: their names, declared once for the server and the page.
//!
//! | name | value |
//! |---|---|
//! | [`STOP_REQUESTED`] | `{runId}`: a person asked to stop the run |
//! | [`RUN_RECOVERED`] | `{runId, attempt}`: the run continues after a crash |
//! | [`TOOL_APPROVAL`] | `{interruptId, toolCallId, approved, edited, reason?, arguments?}` |
//! | [`RUN_QUEUED`] | `{runId, position}`: the run waits for a free slot |
//! | [`USAGE`] | [`crate::usage::CallUsage`]: one model call's tokens and cost |
//! | [`CONTEXT_TRIMMED`] | `{firstUserMessage, droppedMessages, budgetTokens, estimatedTokens}`: the model's view now begins at the person's n-th message (0 = the first) |
//! | [`CONTEXT_SUMMARY`] | `{firstUserMessage, summary, summarisedMessages}`: what the model is told of the turns before the person's n-th message (`--context-strategy summarise`) |
//! | [`MODEL_SELECTED`] | `{model}`: this run and the session's later ones use this model |
//! | [`MCP_SERVER_UNAVAILABLE`] | `{server, toolCallId, reason, message}`: a call found its MCP server down (failed to start, died, timed out and is being restarted) |
//! | [`ATTACHMENTS`] | `{messageId, attachments: [Attachment…], toolCallId?}`: the files and images the person's message carries, or a tool's result returned |
//! | [`MODEL_FALLBACK`] | `{from, to, code, message}`: a model call switched to the next fallback model |
//! | [`FEEDBACK`] | `{runId, rating, comment?, user}`: a person rated an answer (`up` or `down`) |
//! | [`CLIENT_TOOLS_PENDING`] | an `Interrupt` (reason `client_tools`): the run waits for the client's tool results |
//! | [`BUDGET_DECISION`] | `{interruptId, continue, pastBudget}`: a person's decision on a run that reached its budget |
//! | [`INSTRUCTIONS`] | `{scope, text}`: the person's own instructions as a run used them (`person`), or this conversation's as the person set them (`conversation`) |
//! | [`TRACE_CONTEXT`] | `{traceparent}`: the W3C trace context of the request that started the run, committed with its `RUN_STARTED`; its spans join that trace |
//! | [`CONTINUE`] | `{runId, messageId, clientMessageId?}`: this run continues the answer `messageId` of the stopped run `runId` |
//!
//! [`ALL`] lists every name, for code that must decide about each one (what a share
//! link shows of it is decided in the server's `visibility`, whose tests walk this list).

/// A persisted stop request.
pub const STOP_REQUESTED: &str = "tandem.stop_requested";
/// The marker before a recovered run's continuation.
pub const RUN_RECOVERED: &str = "tandem.run_recovered";
/// A person's decision on a tool call that needed approval.
pub const TOOL_APPROVAL: &str = "tandem.tool_approval";
/// The run waits for one of the server's run slots (`--max-concurrent-runs`); its next
/// event means it has one. `position` is 1 for the next run to start.
pub const RUN_QUEUED: &str = "tandem.run_queued";
/// One model call's token usage and cost, appended when the call ends (before its
/// `STEP_FINISHED`); the value is a [`crate::usage::CallUsage`].
pub const USAGE: &str = "tandem.usage";

/// The calls of tools an AG-UI client declared (its "frontend tools") wait for the
/// client's results. The value is the [`crate::Interrupt`] (reason `client_tools`) an
/// answer names; it is committed with the `RUN_FINISHED` whose outcome lists the calls
/// in `pendingToolCallIds`.
pub const CLIENT_TOOLS_PENDING: &str = "tandem.client_tools_pending";

/// Where the model's view of a long conversation begins: the next model calls send the
/// conversation from the person's `firstUserMessage`-th message on (0: the first; the
/// log keeps everything). Appended before a model call when that point moves.
pub const CONTEXT_TRIMMED: &str = "tandem.context_trimmed";

/// A summary of the turns that left the model's view (`--context-strategy summarise`):
/// the model calls that send the conversation from the person's `firstUserMessage`-th
/// message on send `summary` ahead of it. Made by one model call when the view moves and
/// committed with the `CONTEXT_TRIMMED` it belongs to, so replays, restarts and recovery
/// reuse it and never ask the model for it again. `summarisedMessages` is how many of the
/// conversation's messages it stands for.
pub const CONTEXT_SUMMARY: &str = "tandem.context_summary";

/// The person picked a model (one of `GET /api/models`) with their message: committed with
/// the run's `RUN_STARTED`, it holds for this run and the session's later ones.
pub const MODEL_SELECTED: &str = "tandem.model_selected";

/// A tool call of an MCP server found the server not connected: it failed to start, died
/// (before or during the call), or did not answer in time and is being restarted.
/// Recorded just before the call's error result so viewers see more than the card;
/// `message` is the sentence the page shows.
pub const MCP_SERVER_UNAVAILABLE: &str = "tandem.mcp_server_unavailable";

/// The files and images a person's message carries, in the order given: the value is
/// `{messageId, attachments}`, each a [`crate::attachments::Attachment`]. Committed right
/// after the message's `TEXT_MESSAGE_END` (or, for an AG-UI client's message, after its
/// run's `RUN_STARTED`), in the same commit. With `toolCallId`: the files an MCP tool's
/// result returned, right after that `TOOL_CALL_RESULT` (whose `messageId` it names).
pub const ATTACHMENTS: &str = "tandem.attachments";

/// A model call switched to the next model of `--fallback-models`: the value is
/// `{from, to, code, message}`, the model that kept failing before its first token, the
/// one called instead, and the failure. Appended before the call it announces.
pub const MODEL_FALLBACK: &str = "tandem.model_fallback";

/// A person's rating of an answer (the run that made it): the value is a
/// [`crate::feedback::FeedbackEvent`], `{runId, rating, comment?, user}`. The latest one
/// of a user for a run stands. Recorded like a person's change of the shared state: in the
/// active run, else as a short run of its own.
pub const FEEDBACK: &str = "tandem.feedback";

/// A person's decision on a run that reached its budget (an interrupt of reason `budget`):
/// the value is `{interruptId, continue, pastBudget}`. With `continue` the run it resumes
/// goes on (once the budget has room again, or past it for the rest of that run when
/// `pastBudget`, which `--budget-overrun allow` permits); otherwise the run ends there.
pub const BUDGET_DECISION: &str = "tandem.budget_decision";

/// The run continues an answer its run was stopped in (the person pressed Continue): the
/// value is `{runId, messageId, clientMessageId?}`, the stopped run, its last answer and
/// the request's id (a repeat of it gets this run). Committed with the
/// run's `RUN_STARTED`, in place of a message of the person's. The model is told to go on
/// from where the answer stopped, and the run's first answer joins that one: the page
/// shows one answer.
pub const CONTINUE: &str = "tandem.continue";

/// Instructions sent with every model call after the server's system prompt (see
/// [`crate::instructions`]): the value is `{scope, text}`. `scope` `conversation`: the
/// person set this conversation's (a note, like a change of the shared state); `person`:
/// a run recorded the person's own instructions before its first model call, because they
/// differ from the last ones recorded on its line. The latest of each scope stands; empty
/// text is none.
pub const INSTRUCTIONS: &str = "tandem.instructions";

/// The W3C trace context (`traceparent`) of the request that started a run, when tracing
/// is on and a context came with it (or the server's own request span made one):
/// committed with the run's `RUN_STARTED`, so the run's spans join that trace live and
/// when exported later from the log. A share viewer never gets it.
pub const TRACE_CONTEXT: &str = "tandem.trace_context";

/// A replay's trial starts (committed with its `RUN_STARTED`): the value is a
/// [`crate::replays::ReplayMark`] (which replay, variant and trial, where its record is,
/// the system prompt and temperature it runs with). Its tool calls and questions are
/// served from the record from here on.
pub const REPLAY: &str = "tandem.replay";

/// A replay's trial made a call or asked a question that differs from the record at its
/// place (a [`crate::replays::Diverged`]), right after that call's events.
pub const REPLAY_DIVERGED: &str = "tandem.replay_diverged";

/// A judge's verdict on a replay's trial (a [`crate::replays::Verdict`]), a note after
/// the trial's last run, followed by the judge call's `tandem.usage`.
pub const REPLAY_VERDICT: &str = "tandem.replay_verdict";

/// Every name above, once. A name added to this file belongs here too (a test counts
/// them), so that whatever must decide about each name (a share link's filter) meets it.
pub const ALL: &[&str] = &[
    STOP_REQUESTED,
    RUN_RECOVERED,
    TOOL_APPROVAL,
    RUN_QUEUED,
    USAGE,
    CLIENT_TOOLS_PENDING,
    CONTEXT_TRIMMED,
    CONTEXT_SUMMARY,
    MODEL_SELECTED,
    MCP_SERVER_UNAVAILABLE,
    ATTACHMENTS,
    FEEDBACK,
    MODEL_FALLBACK,
    BUDGET_DECISION,
    CONTINUE,
    INSTRUCTIONS,
    TRACE_CONTEXT,
    REPLAY,
    REPLAY_DIVERGED,
    REPLAY_VERDICT,
];

#[cfg(test)]
mod tests {
    use super::ALL;

    #[test]
    fn every_name_declared_here_is_listed_once_in_all() {
        let source = include_str!("custom.rs");
        let declared: Vec<&str> = source
            .lines()
            .filter(|line| line.starts_with("pub const ") && line.contains(": &str = \""))
            .filter_map(|line| line.split('"').nth(1))
            .collect();
        assert_eq!(declared.len(), ALL.len(), "{declared:?}");
        for name in &declared {
            assert_eq!(
                ALL.iter().filter(|listed| *listed == name).count(),
                1,
                "{name}"
            );
        }
    }
}
