//! Tandem's wire protocol, compiled by both the server and the page.
//!
//! It owns the shapes that cross the network and nothing else: the AG-UI 1.0 events
//! ([`agui`]), Tandem's WebSocket envelope around them ([`envelope`]), the REST bodies
//! ([`api`], [`sharing`]), the human-input request vocabulary ([`input`]), the messages
//! an AG-UI client's input brought to a run ([`run_input`]) and model-call usage
//! ([`usage`]), the shared state's fold ([`state`]), where a run's time went ([`timeline`]), the one limit on how deep JSON
//! that is logged may nest ([`nesting`]) and the one rule for names and titles people
//! read ([`text`]). It must stay free of
//! runtime dependencies (no tokio, no sqlx) because it compiles to wasm32.

pub mod agui;
pub mod api;
pub mod attachments;
pub mod budget;
pub mod custom;
pub mod decimal;
pub mod envelope;
pub mod evals;
pub mod feedback;
mod fields;
pub mod input;
pub mod instructions;
pub mod nesting;
pub mod queue;
pub mod replays;
pub mod run_input;
pub mod schedules;
pub mod search;
pub mod sharing;
pub mod state;
pub mod text;
pub mod timeline;
pub mod tools;
pub mod usage;

pub use agui::{
    EncryptedSubtype, Event, EventBody, Interrupt, Outcome, ReasoningRole, TextRole, TokenUsage,
    ToolRole,
};
pub use envelope::{ClientFrame, ResumeStatus, ServerFrame};
pub use input::{InputKind, InputRequest};
