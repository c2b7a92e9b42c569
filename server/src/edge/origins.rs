//! Which browser origins may change things or open sockets.
//!
//! An origin is scheme, host and port, all three: the server's own is the request's
//! scheme (`https` when a TLS proxy in front says so with `X-Forwarded-Proto` or
//! `Forwarded`, as for the sign-in cookie's `Secure`) and its `Host`, so a page served
//! over another scheme on the same host and port is another origin. Origins are compared
//! in one canonical form ([`canonical_origin`]): lowercase, the scheme's default port
//! (80, 443) left out.

pub use crate::domain::canonical_origin;

/// The server's own origin for a request that came over `scheme` with the (already
/// checked) `Host` header `host`.
pub fn own_origin(scheme: &str, host: &str) -> Option<String> {
    canonical_origin(&format!("{scheme}://{host}"))
}

/// Whether `origin` is one of the `listed` origins (each already canonical).
pub fn is_listed(listed: &[String], origin: &str) -> bool {
    canonical_origin(origin).is_some_and(|origin| listed.contains(&origin))
}

/// Whether a request that changes something may go on. `own` is the server's origin for
/// this request ([`own_origin`]); `origin` and `fetch_site` are the browser's `Origin`
/// and `Sec-Fetch-Site`. Clients that are not browsers send neither and pass: they
/// cannot be tricked into sending someone else's cookie.
pub fn allowed(
    listed: &[String],
    own: Option<&str>,
    origin: Option<&str>,
    fetch_site: Option<&str>,
) -> bool {
    match origin {
        Some(origin) => {
            let canonical = canonical_origin(origin);
            (canonical.is_some() && canonical.as_deref() == own) || is_listed(listed, origin)
        }
        // A browser that names no origin must at least say the request is its own.
        None => matches!(fetch_site, None | Some("same-origin") | Some("none")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_take_one_canonical_form() {
        let canonical = |o: &str| canonical_origin(o);
        assert_eq!(
            canonical("http://localhost:8080").as_deref(),
            Some("http://localhost:8080")
        );
        assert_eq!(
            canonical("HTTPS://A.example:443/").as_deref(),
            Some("https://a.example")
        );
        assert_eq!(
            canonical("http://a.example:80").as_deref(),
            Some("http://a.example")
        );
        assert_eq!(
            canonical("http://a.example:443").as_deref(),
            Some("http://a.example:443"),
            "443 is not http's default"
        );
        assert_eq!(canonical("null"), None);
        assert_eq!(canonical("file://x"), None);
        assert_eq!(canonical("https://a.example/path"), None);
        assert_eq!(
            own_origin("https", "Tandem.example.com:443").as_deref(),
            Some("https://tandem.example.com")
        );
    }

    #[test]
    fn own_and_listed_origins_pass_others_do_not() {
        let listed = vec!["https://app.example.com".to_string()];
        let own = own_origin("http", "127.0.0.1:8080");
        let own = own.as_deref();
        let pass = |origin: Option<&str>, site: Option<&str>| allowed(&listed, own, origin, site);
        assert!(pass(Some("http://127.0.0.1:8080"), Some("same-origin")));
        assert!(pass(Some("https://app.example.com"), Some("cross-site")));
        assert!(pass(Some("https://app.example.com:443"), None));
        assert!(pass(None, None), "a non-browser client");
        assert!(!pass(Some("https://evil.example"), Some("cross-site")));
        assert!(!pass(Some("http://127.0.0.1:9999"), None));
        assert!(!pass(Some("null"), None));
        assert!(!pass(None, Some("cross-site")));
        let behind_tls = own_origin("https", "tandem.example.com");
        assert!(allowed(
            &[],
            behind_tls.as_deref(),
            Some("https://tandem.example.com"),
            None
        ));
    }

    #[test]
    fn the_scheme_is_part_of_the_origin() {
        let listed = vec!["https://app.example.com".to_string()];
        let plain = own_origin("http", "127.0.0.1:8080");
        let tls = own_origin("https", "tandem.example.com");
        for (own, other_scheme) in [
            (&plain, "https://127.0.0.1:8080"),
            (&tls, "http://tandem.example.com"),
        ] {
            let sent = Some(other_scheme);
            assert!(
                !allowed(&listed, own.as_deref(), sent, None),
                "{other_scheme}"
            );
        }
        assert!(!allowed(
            &listed,
            plain.as_deref(),
            Some("http://app.example.com"),
            None
        ));
        assert!(
            !allowed(
                &listed,
                plain.as_deref(),
                Some("https://app.example.com:8443"),
                None
            ),
            "another port of a listed host"
        );
    }
}
