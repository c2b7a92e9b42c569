//! Which link destinations from the model may become a clickable `href`.
//!
//! Only `http:`, `https:` and `mailto:` URLs, and relative ones, are kept: `javascript:`,
//! `data:`, `vbscript:`, `file:` and any other scheme are refused. The scheme is read the
//! way a browser reads it, after dropping leading spaces and control characters and any
//! tab or newline inside (`java\tscript:` is `javascript:` to a browser).

use pulldown_cmark_escape::escape_href;

/// Schemes a link may use.
const SAFE_SCHEMES: [&str; 3] = ["http", "https", "mailto"];

/// The destination escaped for an `href` attribute, or `None` when it must not be a link.
pub fn safe_href(dest: &str) -> Option<String> {
    let cleaned: String = dest
        .trim_start_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    if cleaned.is_empty() {
        return None;
    }
    if let Some(scheme) = scheme(&cleaned) {
        if !SAFE_SCHEMES
            .iter()
            .any(|safe| safe.eq_ignore_ascii_case(scheme))
        {
            return None;
        }
    }
    let mut href = String::with_capacity(cleaned.len());
    escape_href(&mut href, &cleaned).ok()?;
    Some(href)
}

/// The URL's scheme: what comes before the first `:` if that is before any `/`, `?` or `#`
/// and looks like a scheme.
fn scheme(url: &str) -> Option<&str> {
    let end = url.find([':', '/', '?', '#'])?;
    if !url[end..].starts_with(':') {
        return None;
    }
    let scheme = &url[..end];
    let valid = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    // Something like `:foo` or `1:x` has no scheme to a browser either way, but refusing it
    // costs nothing and keeps the rule simple: a colon before the path means a scheme.
    Some(if valid { scheme } else { "invalid" })
}

#[cfg(test)]
mod tests {
    use super::safe_href;

    #[test]
    fn web_and_mail_links_are_kept_and_escaped() {
        assert_eq!(
            safe_href("https://example.com/a?b=1&c=2").as_deref(),
            Some("https://example.com/a?b=1&amp;c=2")
        );
        assert_eq!(safe_href("HTTP://x.org").as_deref(), Some("HTTP://x.org"));
        assert_eq!(safe_href("mailto:a@b.c").as_deref(), Some("mailto:a@b.c"));
        assert_eq!(
            safe_href("docs/page.md#part").as_deref(),
            Some("docs/page.md#part")
        );
        assert_eq!(safe_href("#top").as_deref(), Some("#top"));
        let quoted = safe_href(r#"https://x.org/"onmouseover="x"#).unwrap();
        assert!(!quoted.contains('"'), "{quoted}");
    }

    #[test]
    fn script_and_other_schemes_are_refused_however_disguised() {
        for dest in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            " \u{1}javascript:alert(1)",
            "java\tscript:alert(1)",
            "java\nscript:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "vbscript:msgbox",
            "file:///etc/passwd",
            "1x:foo",
            ":foo",
            "",
            "  ",
        ] {
            assert_eq!(safe_href(dest), None, "{dest:?}");
        }
    }
}
