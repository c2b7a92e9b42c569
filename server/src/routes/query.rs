//! Query parameters a route does not take are refused (400 `bad_request`, naming the
//! parameter) before its handler runs, so a typo such as `?afer=3` cannot be silently
//! ignored. Which parameters a route takes is part of its [`super::Endpoint`] entry;
//! routes that take some still parse them with `deny_unknown_fields`.
//!
//! It only reads the query string's names; values are the handler's to check.

use actix_web::body::BoxBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::{from_fn, Next};
use actix_web::{web, ResponseError};

use crate::error::ApiError;

/// `route`, refusing any query parameter but those of `allowed` (none for most routes).
pub fn taking_only(route: actix_web::Route, allowed: &'static [&'static str]) -> actix_web::Route {
    route.wrap(from_fn(
        move |request: ServiceRequest, next: Next<BoxBody>| refuse_unknown(allowed, request, next),
    ))
}

async fn refuse_unknown(
    allowed: &'static [&'static str],
    request: ServiceRequest,
    next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    match unknown_parameter(allowed, request.query_string()) {
        None => next.call(request).await,
        Some(error) => Ok(request.into_response(error.error_response())),
    }
}

/// The refusal of the first parameter of `query` that `allowed` does not list, if any.
fn unknown_parameter(allowed: &[&str], query: &str) -> Option<ApiError> {
    if query.is_empty() {
        return None;
    }
    let pairs = match web::Query::<Vec<(String, String)>>::from_query(query) {
        Ok(pairs) => pairs.into_inner(),
        Err(error) => return Some(ApiError::BadRequest(format!("invalid query: {error}"))),
    };
    let (name, _) = pairs
        .into_iter()
        .find(|(name, _)| !allowed.contains(&name.as_str()))?;
    let name: String = name.chars().take(64).collect();
    let takes = match allowed {
        [] => "this endpoint takes no query parameters".to_string(),
        names => format!(
            "this endpoint takes only {}",
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Some(ApiError::BadRequest(format!(
        "unknown query parameter `{name}`: {takes}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(allowed: &[&str], query: &str) -> Option<String> {
        unknown_parameter(allowed, query).map(|error| error.to_string())
    }

    #[test]
    fn parameters_a_route_does_not_take_are_named_in_the_refusal() {
        assert_eq!(refusal(&[], ""), None);
        assert_eq!(refusal(&["after", "limit"], "after=3&limit=2"), None);
        let none = refusal(&[], "foo=1").unwrap();
        assert!(
            none.contains("`foo`") && none.contains("takes no query"),
            "{none}"
        );
        let typo = refusal(&["after", "limit"], "after=1&afer=3").unwrap();
        assert!(
            typo.contains("`afer`") && typo.contains("`after`, `limit`"),
            "{typo}"
        );
        assert!(refusal(&[], "flag").unwrap().contains("`flag`"));
        assert!(refusal(&[], "%E2%9C%93=1").unwrap().contains("`✓`"));
    }
}
