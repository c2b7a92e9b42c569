//! The page's sign-in cookie: `HttpOnly`, `SameSite=Strict`, `Secure` when the request
//! came over HTTPS, and backed by a server-side row (its hash) that expires and that
//! signing out deletes.

use std::time::Duration;

use actix_web::cookie::{Cookie, SameSite};
use actix_web::HttpRequest;

/// The cookie's name.
pub const COOKIE_NAME: &str = "tandem_session";

/// The cookie's value, if the request carries a plausible one.
pub fn cookie_value(request: &HttpRequest) -> Option<String> {
    let cookie = request.cookie(COOKIE_NAME)?;
    let value = cookie.value();
    (!value.is_empty() && value.len() <= 128).then(|| value.to_string())
}

/// How many sign-in cookies the request carries, in all its `Cookie` headers.
pub fn cookie_count(request: &HttpRequest) -> usize {
    request.cookies().map_or(0, |cookies| {
        cookies
            .iter()
            .filter(|cookie| cookie.name() == COOKIE_NAME)
            .count()
    })
}

/// The `Set-Cookie` that signs the browser in for `ttl`.
pub fn issue(value: &str, ttl: Duration, request: &HttpRequest) -> Cookie<'static> {
    base(value.to_string(), request)
        .max_age(actix_web::cookie::time::Duration::seconds(
            i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX),
        ))
        .finish()
}

/// The `Set-Cookie` that removes it.
pub fn clear(request: &HttpRequest) -> Cookie<'static> {
    let mut cookie = base(String::new(), request).finish();
    cookie.make_removal();
    cookie
}

fn base(value: String, request: &HttpRequest) -> actix_web::cookie::CookieBuilder<'static> {
    let https = request.connection_info().scheme() == "https";
    Cookie::build(COOKIE_NAME, value)
        .path("/")
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(https)
}
