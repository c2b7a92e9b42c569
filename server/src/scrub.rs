//! Scrubbing text that leaves the server: a provider's error message goes into
//! `RUN_ERROR`, which every viewer of the session sees, and into the logs.
//!
//! A [`Scrubber`] replaces the configured secrets (API keys, extra header values)
//! wherever they appear, then anything shaped like a credential (`Bearer …`, `sk-…`,
//! `api_key=…`, Tandem's own `tdm_…` tokens, long opaque strings), turns control
//! characters into spaces and caps the length.
//!
//! URLs may carry secrets too (a password before `@`, a token in the path or query): the
//! domain's [`origin`](crate::domain::origin) keeps only a URL's scheme, host and port,
//! and [`hide_user_info`](crate::domain::hide_user_info) masks the user info (a password,
//! or a token as the user name) of one that has it, for what is shown or logged about
//! configured URLs.

use std::sync::LazyLock;

use regex::Regex;

use crate::domain::Secret;

/// Longest scrubbed text, in characters.
pub const MAX_CHARS: usize = 600;
/// What a removed secret becomes.
pub const REDACTED: &str = "[redacted]";

static CREDENTIAL_SHAPES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\bbearer\s+[^\s,;]+",
        r"|(?i)\b(api[_-]?key|x-api-key|access[_-]?token|token|secret|password|authorization)(\s*[=:]\s*)(?:bearer\s+)?[^\s,;&]+",
        r"|\b(sk|pk|rk)-[A-Za-z0-9_*\-]{4,}",
        r"|\btdm_[A-Za-z0-9_\-]{8,}",
        r"|[A-Za-z0-9_\-+/]{40,}={0,2}",
    ))
    .expect("the credential patterns compile")
});

/// Removes secrets from text.
#[derive(Clone, Default)]
pub struct Scrubber {
    secrets: Vec<Secret>,
}

impl std::fmt::Debug for Scrubber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Scrubber({} secrets)", self.secrets.len())
    }
}

impl Scrubber {
    /// A scrubber that also removes these exact secrets.
    pub fn new(secrets: Vec<Secret>) -> Self {
        let secrets = secrets
            .into_iter()
            .filter(|secret| secret.expose().len() >= 4)
            .collect();
        Self { secrets }
    }

    /// The text without secrets, control characters or excess length.
    pub fn clean(&self, text: &str) -> String {
        self.scrubbed(text, MAX_CHARS, false)
    }

    /// A longer text (a message) without secrets or control characters but its line
    /// breaks and tabs, cut at `max_chars` characters.
    pub fn clean_text(&self, text: &str, max_chars: usize) -> String {
        self.scrubbed(text, max_chars, true)
    }

    fn scrubbed(&self, text: &str, max_chars: usize, lines: bool) -> String {
        let mut text = text.to_string();
        for secret in &self.secrets {
            text = text.replace(secret.expose(), REDACTED);
        }
        let text = CREDENTIAL_SHAPES.replace_all(&text, |found: &regex::Captures<'_>| {
            match (found.get(1), found.get(2)) {
                (Some(name), Some(separator)) => {
                    format!("{}{}{REDACTED}", name.as_str(), separator.as_str())
                }
                _ => REDACTED.to_string(),
            }
        });
        let mut clean: String = text
            .chars()
            .map(|c| match c {
                '\n' | '\t' if lines => c,
                c if c.is_control() => ' ',
                c => c,
            })
            .take(max_chars)
            .collect();
        if text.chars().count() > max_chars {
            clean.push('…');
        }
        clean
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configured_secrets_and_credential_shapes_are_removed() {
        let scrubber = Scrubber::new(vec![Secret::from("custom-secret-value")]);
        let cases = [
            ("key custom-secret-value was refused", "custom-secret-value"),
            ("Incorrect API key provided: sk-test-***123.", "sk-test"),
            ("header Authorization: Bearer abc.def was bad", "abc.def"),
            ("see https://x/?api_key=s3cr3t&x=1", "s3cr3t"),
            ("token tdm_AAAAAAAAAAAAAAAAAAAA leaked", "tdm_AAAA"),
            (
                "blob QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2w= end",
                "QUJDREVG",
            ),
        ];
        for (text, secret) in cases {
            let clean = scrubber.clean(text);
            assert!(!clean.contains(secret), "{clean}");
            assert!(clean.contains(REDACTED), "{clean}");
        }
    }

    #[test]
    fn ordinary_messages_survive_and_length_and_controls_are_tamed() {
        let scrubber = Scrubber::default();
        let text = "Rate limit reached for gpt-4.1-mini (requests)";
        assert_eq!(scrubber.clean(text), text);
        assert_eq!(scrubber.clean("a\nb\u{1b}[31m"), "a b [31m");
        let long = "word ".repeat(500);
        assert_eq!(scrubber.clean(&long).chars().count(), MAX_CHARS + 1);
    }
}
