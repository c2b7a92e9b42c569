//! Answers the server turned down because the interrupt was already settled.
//!
//! It owns telling those refusals — `interrupt_expired` (HTTP 410) and
//! `interrupt_already_answered` (HTTP 409) — apart from every other error, and what the card
//! that sent the answer says about them. Such a refusal is not the page's problem: the card
//! becomes read-only and settles from the events that follow, so it must not become the
//! page-wide notice. Pure Rust, no signals or DOM.

/// The error code of an answer sent after the interrupt's deadline.
pub const INTERRUPT_EXPIRED: &str = "interrupt_expired";

/// The error code of an answer that lost to a different one (e.g. from another tab).
pub const INTERRUPT_ALREADY_ANSWERED: &str = "interrupt_already_answered";

/// Why the server would not take a card's answer, when it was already settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The deadline passed before the answer arrived.
    Expired,
    /// A different answer got there first.
    AnsweredElsewhere,
}

impl Refusal {
    /// The refusal an error code means, or `None` for an error that is not one.
    pub fn from_code(code: &str) -> Option<Self> {
        match code {
            INTERRUPT_EXPIRED => Some(Self::Expired),
            INTERRUPT_ALREADY_ANSWERED => Some(Self::AnsweredElsewhere),
            _ => None,
        }
    }

    /// What the card says.
    pub fn message(self) -> &'static str {
        match self {
            Self::Expired => "This question expired before your answer arrived",
            Self::AnsweredElsewhere => "Already answered in another tab",
        }
    }

    /// The spelling used in the card's `data-refusal`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Expired => "expired",
            Self::AnsweredElsewhere => "answered_elsewhere",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settled_interrupt_codes_are_refusals() {
        assert_eq!(
            Refusal::from_code("interrupt_expired"),
            Some(Refusal::Expired)
        );
        assert_eq!(
            Refusal::from_code("interrupt_already_answered"),
            Some(Refusal::AnsweredElsewhere)
        );
    }

    #[test]
    fn other_errors_are_not() {
        for code in [
            "invalid_payload",
            "interrupt_not_found",
            "not_connected",
            "",
        ] {
            assert_eq!(Refusal::from_code(code), None, "{code}");
        }
    }

    #[test]
    fn refusals_say_what_happened() {
        assert_eq!(
            Refusal::Expired.message(),
            "This question expired before your answer arrived"
        );
        assert_eq!(
            Refusal::AnsweredElsewhere.message(),
            "Already answered in another tab"
        );
        assert_eq!(Refusal::AnsweredElsewhere.as_str(), "answered_elsewhere");
    }
}
