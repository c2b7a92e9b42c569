//! [`Owned`]: the caller's session that a route's `{id}` names, as a handler argument, so
//! a handler of a route naming a session starts from it instead of repeating the steps.
//!
//! It only puts [`crate::access::owned_session`] where actix extracts arguments: the
//! caller first (401), then their session (400 for a bad id, 404 for another user's or
//! none), before the handler reads a body or anything else.

use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;

use crate::access::owned_session;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::{SessionRow, Store};

/// The caller, their session the path's `{id}` names, and the app state it was read from.
pub struct Owned<S: Store> {
    pub state: web::Data<AppState<S>>,
    pub caller: Caller,
    pub row: SessionRow,
}

impl<S: Store> FromRequest for Owned<S> {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let state = request.app_data::<web::Data<AppState<S>>>().cloned();
        let caller = Caller::from_request(request, payload);
        let id = request
            .match_info()
            .get("id")
            .unwrap_or_default()
            .to_owned();
        Box::pin(async move {
            let caller = caller.await?;
            // Startup gives every route the app state; without it, what `web::Data` says.
            let state = state.ok_or(ApiError::Internal)?;
            let row = owned_session(&state, &caller, &id).await?;
            Ok(Self { state, caller, row })
        })
    }
}
