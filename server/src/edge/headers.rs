//! Security headers on every response, and the page's Content-Security-Policy.

use actix_web::http::header::{self, HeaderMap, HeaderValue};

/// The page's policy: only its own script (the inline loader Trunk writes, by hash), its
/// WASM, its stylesheet and its own server; no framing, no plugins, no other origins.
pub fn content_security_policy(inline_script_hashes: &[String]) -> String {
    let hashes: String = inline_script_hashes
        .iter()
        .map(|hash| format!(" 'sha256-{hash}'"))
        .collect();
    format!(
        "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'{hashes}; style-src 'self'; \
         img-src 'self' data:; connect-src 'self'; font-src 'self'; manifest-src 'self'; \
         base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"
    )
}

/// Adds the security headers a response lacks; API responses are never cached.
pub fn secure(headers: &mut HeaderMap, csp: &str, api: bool) {
    let csp = HeaderValue::from_str(csp).unwrap_or(HeaderValue::from_static("default-src 'none'"));
    let fixed = [
        (header::CONTENT_SECURITY_POLICY, csp),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
        (
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ),
        (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
        (
            header::HeaderName::from_static("cross-origin-opener-policy"),
            HeaderValue::from_static("same-origin"),
        ),
        (
            header::HeaderName::from_static("cross-origin-resource-policy"),
            HeaderValue::from_static("same-origin"),
        ),
    ];
    for (name, value) in fixed {
        if !headers.contains_key(&name) {
            headers.insert(name, value);
        }
    }
    if api {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
}

/// The security headers as header lines (`name: value\r\n`…), for the responses the app
/// does not write ([`super::heads`]): `csp`'s policy, and never cached.
pub fn security_header_lines(csp: &str) -> Vec<u8> {
    let mut headers = HeaderMap::new();
    secure(&mut headers, csp, true);
    let mut lines = Vec::new();
    for (name, value) in &headers {
        lines.extend_from_slice(name.as_str().as_bytes());
        lines.extend_from_slice(b": ");
        lines.extend_from_slice(value.as_bytes());
        lines.extend_from_slice(b"\r\n");
    }
    lines
}
