//! CORS for the browser origins `--allowed-origins` lists, so an AG-UI client on a page
//! of such an origin (an `HttpAgent`) can call the API: a preflight (`OPTIONS` with
//! `Access-Control-Request-Method`) from a listed origin is answered here with what it
//! may send, and every response to a listed origin carries `Access-Control-Allow-Origin`
//! for it. A preflight from any other origin gets 403 and no CORS header, so the browser
//! keeps the page out. The server's own origin needs none of this.
//!
//! It decides nothing about who the caller is: the request still needs its credentials.

use actix_web::http::header::{self, HeaderMap, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::HttpResponse;

/// What a listed origin may send.
const METHODS: &str = "GET, POST, PUT, PATCH, DELETE, OPTIONS";
const HEADERS: &str = "authorization, content-type, accept, last-event-id";
/// What a listed origin's script may read besides the simple response headers
/// (`tandem-session-id` names the session of an AG-UI thread, see `routes::agui`).
const EXPOSED: &str = "retry-after, x-request-id, tandem-session-id";
/// How long a browser may reuse a preflight's answer, in seconds.
const MAX_AGE: &str = "600";

/// The request's `Origin` when `--allowed-origins` lists it (compared as `origins` does).
pub fn listed<'a>(allowed: &[String], origin: Option<&'a str>) -> Option<&'a str> {
    let origin = origin?;
    super::origins::is_listed(allowed, origin).then_some(origin)
}

/// Whether a request is a CORS preflight.
pub fn is_preflight(method: &Method, headers: &HeaderMap) -> bool {
    method == Method::OPTIONS
        && headers.contains_key(header::ORIGIN)
        && headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
}

/// The answer to a preflight: what the listed `origin` may send, or 403 without any CORS
/// header for an origin that is not listed.
pub fn preflight(origin: Option<&str>) -> HttpResponse {
    let Some(origin) = origin else {
        return HttpResponse::build(StatusCode::FORBIDDEN).json(serde_json::json!({
            "error": {"code": "origin_not_allowed",
                      "message": "this origin is not in --allowed-origins"}
        }));
    };
    let mut response = HttpResponse::NoContent().finish();
    let headers = response.headers_mut();
    allow(headers, origin);
    for (name, value) in [
        (header::ACCESS_CONTROL_ALLOW_METHODS, METHODS),
        (header::ACCESS_CONTROL_ALLOW_HEADERS, HEADERS),
        (header::ACCESS_CONTROL_MAX_AGE, MAX_AGE),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// Lets the listed `origin`'s page read a response.
pub fn allow(headers: &mut HeaderMap, origin: &str) {
    if let Ok(value) = HeaderValue::from_str(origin) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, value);
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
            HeaderValue::from_static("true"),
        );
        headers.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static(EXPOSED),
        );
        headers.append(header::VARY, HeaderValue::from_static("Origin"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listed_origins_are_let_in() {
        let allowed = vec!["https://app.example.com".to_string()];
        assert_eq!(
            listed(&allowed, Some("https://APP.example.com")),
            Some("https://APP.example.com")
        );
        assert_eq!(listed(&allowed, Some("https://evil.example")), None);
        assert_eq!(
            listed(&allowed, Some("http://app.example.com")),
            None,
            "another scheme"
        );
        assert_eq!(listed(&allowed, None), None);
        let answer = preflight(Some("https://app.example.com"));
        assert_eq!(answer.status(), StatusCode::NO_CONTENT);
        let headers = answer.headers();
        assert_eq!(
            headers.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).unwrap(),
            "https://app.example.com"
        );
        assert!(headers
            .get(header::ACCESS_CONTROL_ALLOW_HEADERS)
            .unwrap()
            .to_str()
            .unwrap()
            .contains("content-type"));
        let mut response = HeaderMap::new();
        allow(&mut response, "https://app.example.com");
        let exposed = response.get(header::ACCESS_CONTROL_EXPOSE_HEADERS).unwrap();
        let exposed = exposed.to_str().unwrap();
        assert!(exposed.contains("tandem-session-id"), "{exposed}");
        let refused = preflight(None);
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        assert!(!refused
            .headers()
            .contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN));
    }
}
