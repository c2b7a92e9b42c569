//! Which session a client's `threadId` names for the caller, and making it.
//!
//! A thread whose id is a session the caller owns (one made over REST, or a thread
//! from before threads had sessions of their own) is that session. Any other thread is
//! the caller's own session of it, [`SessionId::of_thread`]: two users' threads of one
//! id are two sessions, so another user's thread answers exactly like an unknown one.
//! Both lookups are made whatever the first finds (unless it is the caller's), so the two
//! cost the same. A thread's session is created only when its first input starts a run,
//! after every check: a refused input leaves nothing behind.

use crate::access::caller_session;
use crate::agent::Refusal;
use crate::auth::Caller;
use crate::domain::SessionId;
use crate::error::ApiError;
use crate::eventlog::WriteError;
use crate::state::AppState;
use crate::store::Store;

/// The caller's session of a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadSession {
    /// It exists.
    Existing(SessionId),
    /// It does not exist yet: the thread's first run creates it with this id.
    New(SessionId),
}

impl ThreadSession {
    /// The session's id.
    pub fn id(self) -> SessionId {
        match self {
            Self::Existing(id) | Self::New(id) => id,
        }
    }
}

/// The caller's session of the thread `thread_id`.
pub async fn find<S: Store>(
    state: &AppState<S>,
    caller: &Caller,
    thread_id: &str,
) -> Result<ThreadSession, ApiError> {
    let thread = SessionId::parse(thread_id).map_err(|_| {
        ApiError::BadRequest("threadId must be a UUID (AG-UI clients generate one)".into())
    })?;
    if caller_session(state, caller, thread).await?.is_some() {
        return Ok(ThreadSession::Existing(thread));
    }
    let own = SessionId::of_thread(thread, caller.user);
    match state.store.session(own).await? {
        None => Ok(ThreadSession::New(own)),
        Some(row) if row.owner == caller.user => Ok(ThreadSession::Existing(own)),
        // Only a thread of another user made before threads had sessions of their own
        // could hold this id, and only if its id was chosen to be this one.
        Some(_) => Err(ApiError::BadRequest(
            "this threadId cannot be used; start the thread with a fresh id".into(),
        )),
    }
}

/// Creates the caller's session `id` of a new thread; true if this call made it, false
/// if a first input of the same thread that raced this one did.
pub async fn create<S: Store>(
    state: &AppState<S>,
    caller: &Caller,
    id: SessionId,
) -> Result<bool, ApiError> {
    match state.runner.create_thread(caller.user, id).await {
        Ok(_) => Ok(true),
        Err(error) => match state.store.session(id).await? {
            Some(row) if row.owner == caller.user => Ok(false),
            // Refused by the database (not unavailable), with no session to show: the
            // thread's session was deleted while branches still read its history (it is
            // kept, hidden, under this id).
            _ if refused_by_the_database(&error) => Err(ApiError::BadRequest(
                "this thread was deleted; start a new thread with a fresh threadId".into(),
            )),
            _ => Err(error.into()),
        },
    }
}

/// Whether creating a session failed because the database refused the row (its id is
/// taken), not because it could not be reached.
fn refused_by_the_database(error: &Refusal) -> bool {
    let store = match error {
        Refusal::Store(store) => store,
        Refusal::Write(WriteError::Store(store)) => store,
        _ => return false,
    };
    !store.is_transient()
}

/// Deletes a session made for a run that could not start after all (the queue filled
/// between the check and the start), unless its log holds something by now: then an
/// input of the same thread that raced this one started a run in it.
pub async fn discard<S: Store>(state: &AppState<S>, id: SessionId) {
    let empty = match state.store.session(id).await {
        Ok(row) => row.is_some_and(|row| row.last_seq == 0),
        Err(error) => {
            tracing::warn!(%error, session = %id, "cannot read a thread's new session to discard it");
            return;
        }
    };
    if empty {
        if let Err(error) = state.runner.delete(id).await {
            tracing::warn!(%error, session = %id, "cannot discard a thread's new session");
        }
    }
}
