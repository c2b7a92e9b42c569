//! The share-link rows every backend returns.

use crate::domain::SessionId;

/// A read-only link to one session, and what it hides from whoever opens it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareRow {
    /// The link's id (a UUID; not the secret in its URL).
    pub id: String,
    pub session: SessionId,
    /// The viewer sees no reasoning.
    pub hide_reasoning: bool,
    /// The viewer sees tool names and results, but not the arguments of the calls.
    pub hide_tool_arguments: bool,
    /// The viewer sees no files or images attached (neither their names nor their bytes).
    pub hide_attachments: bool,
    /// The viewer sees no shared state.
    pub hide_state: bool,
    /// The viewer sees the instructions the model was given.
    pub show_instructions: bool,
    pub created_at: i64,
}

/// `text` with a LIKE pattern's wildcards (and the escape character) taken literally.
pub(crate) fn escape_like(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}
