//! A person's instructions to the model (what ChatGPT calls custom instructions): their
//! own, for all their conversations, and each conversation's own. Both are sent with every
//! model call after the server's system prompt, and both are in the log
//! (`CUSTOM tandem.instructions`), so a branch keeps them and a replay reads them.

use serde::{Deserialize, Serialize};

/// The most characters one set of instructions may hold.
pub const MAX_CHARS: usize = 8_000;

/// `GET`/`PUT /api/instructions` and `/api/sessions/{id}/instructions`: the text (empty:
/// none).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Instructions {
    /// At most [`MAX_CHARS`] characters; no control characters but line breaks and tabs.
    #[cfg_attr(feature = "openapi", schema(max_length = 8000))]
    pub text: String,
}

/// Whose instructions a `CUSTOM tandem.instructions` records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Scope {
    /// The person's own, for all their conversations, as a run used them.
    Person,
    /// This conversation's, as the person set them.
    Conversation,
}

impl Scope {
    /// The name in the event's value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Person => "person",
            Self::Conversation => "conversation",
        }
    }
}

/// `text` as it is kept (trimmed at both ends), or why it is refused.
pub fn check(text: &str) -> Result<String, String> {
    let text = text.trim();
    let count = text.chars().count();
    if count > MAX_CHARS {
        return Err(format!(
            "instructions may be at most {MAX_CHARS} characters; these are {count}"
        ));
    }
    if let Some(bad) = text
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r'))
    {
        return Err(format!(
            "instructions may hold no control character (U+{:04X}) but line breaks and tabs",
            u32::from(bad)
        ));
    }
    Ok(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_are_trimmed_and_refused_past_the_limit_or_with_control_characters() {
        assert_eq!(
            check("  Be brief.\n\tAlways.  ").unwrap(),
            "Be brief.\n\tAlways."
        );
        assert_eq!(check("").unwrap(), "");
        let long = "é".repeat(MAX_CHARS);
        assert_eq!(check(&long).unwrap(), long, "characters, not bytes");
        let refused = check(&format!("{long}x")).unwrap_err();
        assert!(
            refused.contains("at most 8000 characters; these are 8001"),
            "{refused}"
        );
        let refused = check("a\u{0}b").unwrap_err();
        assert!(refused.contains("U+0000"), "{refused}");
        assert!(check("a\u{202E}b").is_ok(), "a format character is text");
    }
}
