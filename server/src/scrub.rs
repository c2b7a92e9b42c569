//! Scrubbing text that leaves the server: a provider's error message goes into
//! `RUN_ERROR`, which every viewer of the session sees, and into the logs.
//!
//! A [`Scrubber`] replaces the configured secrets (API keys, extra header values)
//! wherever they appear, then anything shaped like a credential (`Bearer …`, `sk-…`,
//! `api_key=…`, Tandem's own `tdm_…` tokens, long opaque strings), turns control
//! characters into spaces and caps the length.
//!
//! URLs may carry secrets too (a password before `@`, a token in the path or query):
//! [`origin`] keeps only a URL's scheme, host and port, and [`hide_user_info`] masks the
//! user info (a password, or a token as the user name) of one that has it, for what is
//! shown or logged about configured URLs.

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
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(MAX_CHARS)
            .collect();
        if text.chars().count() > MAX_CHARS {
            clean.push('…');
        }
        clean
    }
}

/// The parts of a URL: scheme (with `://`), user info (without `@`), host and port, rest.
fn url_parts(url: &str) -> Option<(&str, Option<&str>, &str, &str)> {
    let at = url.find("://")? + 3;
    let (scheme, after) = url.split_at(at);
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (authority, rest) = after.split_at(end);
    Some(match authority.rsplit_once('@') {
        Some((user, host)) => (scheme, Some(user), host, rest),
        None => (scheme, None, authority, rest),
    })
}

/// `scheme://host[:port]` of a URL, without user, password, path or query (what may be
/// shown of a URL that could hold a secret); `***` for what is not a URL.
pub fn origin(url: &str) -> String {
    match url_parts(url) {
        Some((scheme, _, host, _)) => format!("{scheme}{host}"),
        None => "***".into(),
    }
}

/// The URL with its user info masked (`postgres://***@db/tandem`): a password, or a
/// token given as the user name; unchanged without user info.
pub fn hide_user_info(url: &str) -> String {
    match url_parts(url) {
        Some((scheme, Some(_), host, rest)) => format!("{scheme}***@{host}{rest}"),
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_keep_their_origin_and_lose_their_secrets() {
        let url = "https://hooks:pw@example.com:8443/t/s3cr3t?sig=abc#x";
        assert_eq!(origin(url), "https://example.com:8443");
        assert_eq!(origin("http://127.0.0.1:9"), "http://127.0.0.1:9");
        assert_eq!(origin("not a url"), "***");
        let hidden = [
            (
                "postgres://tandem:pa@ss@db:5432/tandem",
                "postgres://***@db:5432/tandem",
            ),
            (
                "postgres://postgres@127.0.0.1/t?sslmode=require",
                "postgres://***@127.0.0.1/t?sslmode=require",
            ),
            ("https://token@example.com", "https://***@example.com"),
            ("https://example.com/a@b", "https://example.com/a@b"),
            ("sqlite://data/tandem.db", "sqlite://data/tandem.db"),
            ("ada@example.com", "ada@example.com"),
        ];
        for (url, shown) in hidden {
            assert_eq!(hide_user_info(url), shown, "{url}");
        }
    }

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
