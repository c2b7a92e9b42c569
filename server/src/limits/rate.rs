//! Sessions created, messages sent and share links created per user per minute.

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
    clock: DefaultClock,
}

/// How many of each a user may make per minute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerMinute {
    pub sessions: u32,
    pub messages: u32,
    pub shares: u32,
}

impl RateLimits {
    /// Limits of sessions, messages and share links per minute per user.
    pub fn new(per_minute: PerMinute) -> Self {
        let quota = |n: u32| Quota::per_minute(NonZeroU32::new(n.max(1)).expect("at least 1"));
        Self {
            sessions: RateLimiter::keyed(quota(per_minute.sessions)),
            messages: RateLimiter::keyed(quota(per_minute.messages)),
            shares: RateLimiter::keyed(quota(per_minute.shares)),
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

    #[test]
    fn each_user_has_their_own_allowance() {
        let limits = RateLimits::new(PerMinute {
            sessions: 2,
            messages: 1,
            shares: 1,
        });
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
}
