//! Sessions created, messages sent, share links created, tools uploaded and AG-UI input
//! bytes logged per user per minute.

use std::num::NonZeroU32;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::domain::UserId;
use crate::error::ApiError;

/// The rate limits of every user. Each allows a burst of its per-minute figure, then
/// refills evenly over the minute.
pub struct RateLimits {
    sessions: DefaultKeyedRateLimiter<UserId>,
    messages: DefaultKeyedRateLimiter<UserId>,
    shares: DefaultKeyedRateLimiter<UserId>,
    tool_uploads: DefaultKeyedRateLimiter<UserId>,
    /// Bytes of AG-UI input logged (`RUN_STARTED.input`), one cell per byte.
    agui_bytes: DefaultKeyedRateLimiter<UserId>,
    /// The per-minute figure of `agui_bytes`: the most one input may ever take.
    agui_bytes_per_minute: u32,
    clock: DefaultClock,
}

/// How much of each a user may make per minute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerMinute {
    pub sessions: u32,
    pub messages: u32,
    pub shares: u32,
    pub tool_uploads: u32,
    /// Bytes of AG-UI input logged.
    pub agui_input_bytes: u32,
}

impl RateLimits {
    /// Limits of sessions, messages, share links and AG-UI input per minute per user.
    pub fn new(per_minute: PerMinute) -> Self {
        let quota = |n: u32| Quota::per_minute(NonZeroU32::new(n.max(1)).expect("at least 1"));
        Self {
            sessions: RateLimiter::keyed(quota(per_minute.sessions)),
            messages: RateLimiter::keyed(quota(per_minute.messages)),
            shares: RateLimiter::keyed(quota(per_minute.shares)),
            tool_uploads: RateLimiter::keyed(quota(per_minute.tool_uploads)),
            agui_bytes: RateLimiter::keyed(quota(per_minute.agui_input_bytes)),
            agui_bytes_per_minute: per_minute.agui_input_bytes.max(1),
            clock: DefaultClock::default(),
        }
    }

    /// Takes one session creation from `user`'s allowance, or says when to retry.
    pub fn create_session(&self, user: UserId) -> Result<(), ApiError> {
        self.take(&self.sessions, user, "new sessions")
    }

    /// Takes one message from `user`'s allowance, or says when to retry.
    pub fn send_message(&self, user: UserId) -> Result<(), ApiError> {
        self.take(&self.messages, user, "messages")
    }

    /// Takes one share link's creation from `user`'s allowance, or says when to retry.
    pub fn create_share(&self, user: UserId) -> Result<(), ApiError> {
        self.take(&self.shares, user, "new share links")
    }

    /// Takes one tool upload from `user`'s allowance, or says when to retry.
    pub fn upload_tool(&self, user: UserId) -> Result<(), ApiError> {
        self.take(&self.tool_uploads, user, "tool uploads")
    }

    /// Takes `bytes` of AG-UI input from `user`'s allowance, or says when to retry. An
    /// input larger than a whole minute's allowance could never pass: it is refused as
    /// too large (422), not told to wait.
    pub fn log_agui_input(&self, user: UserId, bytes: usize) -> Result<(), ApiError> {
        let Some(cells) = u32::try_from(bytes).ok().and_then(NonZeroU32::new) else {
            return match bytes {
                0 => Ok(()),
                _ => Err(self.agui_input_too_large(bytes)),
            };
        };
        match self.agui_bytes.check_key_n(&user, cells) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(not_until)) => Err(ApiError::RateLimited {
                what: "bytes of AG-UI input",
                retry_after_secs: not_until.wait_time_from(self.clock.now()).as_secs() + 1,
            }),
            Err(_insufficient) => Err(self.agui_input_too_large(bytes)),
        }
    }

    fn agui_input_too_large(&self, bytes: usize) -> ApiError {
        ApiError::InvalidMessage(format!(
            "this input would log {bytes} bytes, more than a whole minute's allowance of {} \
             (--agui-input-bytes-per-minute)",
            self.agui_bytes_per_minute
        ))
    }

    fn take(
        &self,
        limiter: &DefaultKeyedRateLimiter<UserId>,
        user: UserId,
        what: &'static str,
    ) -> Result<(), ApiError> {
        limiter.check_key(&user).map_err(|not_until| {
            let wait = not_until.wait_time_from(self.clock.now());
            ApiError::RateLimited {
                what,
                retry_after_secs: wait.as_secs() + 1,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn per_minute(sessions: u32, messages: u32, shares: u32, agui_input_bytes: u32) -> PerMinute {
        PerMinute {
            sessions,
            messages,
            shares,
            tool_uploads: 1,
            agui_input_bytes,
        }
    }

    #[test]
    fn each_user_has_their_own_allowance() {
        let limits = RateLimits::new(per_minute(2, 1, 1, 1000));
        let (a, b) = (UserId::generate(), UserId::generate());
        assert!(limits.create_session(a).is_ok());
        assert!(limits.create_session(a).is_ok());
        let refused = limits.create_session(a).unwrap_err();
        assert!(matches!(
            refused,
            ApiError::RateLimited {
                retry_after_secs: 1..=31,
                ..
            }
        ));
        assert!(
            limits.create_session(b).is_ok(),
            "another user is not affected"
        );
        assert!(
            limits.send_message(a).is_ok(),
            "messages have their own allowance"
        );
        assert!(limits.send_message(a).is_err());
        assert!(limits.create_share(a).is_ok());
        assert!(limits.create_share(a).is_err());
        assert!(limits.create_share(b).is_ok());
    }

    #[test]
    fn agui_input_bytes_are_counted_per_user_and_refused_past_the_allowance() {
        let limits = RateLimits::new(per_minute(1, 1, 1, 1000));
        let (a, b) = (UserId::generate(), UserId::generate());
        assert!(limits.log_agui_input(a, 600).is_ok());
        let refused = limits.log_agui_input(a, 600).unwrap_err();
        assert!(
            matches!(refused, ApiError::RateLimited { .. }),
            "{refused:?}"
        );
        assert!(limits.log_agui_input(a, 300).is_ok(), "what is left fits");
        assert!(limits.log_agui_input(b, 1000).is_ok(), "b has their own");
        let never = limits.log_agui_input(b, 1001).unwrap_err();
        assert!(
            matches!(&never, ApiError::InvalidMessage(m) if m.contains("--agui-input-bytes-per-minute")),
            "{never:?}"
        );
    }
}
