//! Which browser origins may change things or open sockets.

/// The `host[:port]` of an origin (`scheme://host[:port]`), lowercase, without the
/// scheme's default port; `None` if it is not an http(s) origin.
pub fn origin_authority(origin: &str) -> Option<String> {
    let origin = origin.trim().to_ascii_lowercase();
    let (scheme, rest) = origin.split_once("://")?;
    let default_port = match scheme {
        "http" => ":80",
        "https" => ":443",
        _ => return None,
    };
    if rest.is_empty() || rest.contains(['/', '?', '#', '@']) {
        return None;
    }
    Some(rest.strip_suffix(default_port).unwrap_or(rest).to_string())
}

/// Whether a request that changes something may go on. `host` is the (already checked)
/// `Host` header; `origin` and `fetch_site` are the browser's `Origin` and
/// `Sec-Fetch-Site`. Clients that are not browsers send neither and pass: they cannot be
/// tricked into sending someone else's cookie.
pub fn allowed(
    extra: &[String],
    host: &str,
    origin: Option<&str>,
    fetch_site: Option<&str>,
) -> bool {
    match origin {
        Some(origin) => {
            let own = origin_authority(origin)
                .is_some_and(|authority| authority == strip_default(&host.to_ascii_lowercase()));
            own || extra.iter().any(|allowed| {
                origin
                    .trim()
                    .trim_end_matches('/')
                    .eq_ignore_ascii_case(allowed)
            })
        }
        // A browser that names no origin must at least say the request is its own.
        None => matches!(fetch_site, None | Some("same-origin") | Some("none")),
    }
}

/// A `Host` header without `:80`/`:443` (browsers omit default ports from `Origin`).
fn strip_default(host: &str) -> String {
    host.strip_suffix(":80")
        .or_else(|| host.strip_suffix(":443"))
        .unwrap_or(host)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_parse_to_their_authority() {
        assert_eq!(
            origin_authority("http://localhost:8080").as_deref(),
            Some("localhost:8080")
        );
        assert_eq!(
            origin_authority("https://A.example:443").as_deref(),
            Some("a.example")
        );
        assert_eq!(origin_authority("null"), None);
        assert_eq!(origin_authority("file://x"), None);
        assert_eq!(origin_authority("https://a.example/path"), None);
    }

    #[test]
    fn own_and_listed_origins_pass_others_do_not() {
        let extra = vec!["https://app.example.com".to_string()];
        let host = "127.0.0.1:8080";
        assert!(allowed(
            &extra,
            host,
            Some("http://127.0.0.1:8080"),
            Some("same-origin")
        ));
        assert!(allowed(
            &extra,
            host,
            Some("https://app.example.com"),
            Some("cross-site")
        ));
        assert!(allowed(&extra, host, None, None), "a non-browser client");
        assert!(!allowed(
            &extra,
            host,
            Some("https://evil.example"),
            Some("cross-site")
        ));
        assert!(!allowed(&extra, host, Some("http://127.0.0.1:9999"), None));
        assert!(!allowed(&extra, host, Some("null"), None));
        assert!(!allowed(&extra, host, None, Some("cross-site")));
        assert!(allowed(
            &[],
            "tandem.example.com",
            Some("https://tandem.example.com"),
            None
        ));
    }
}
