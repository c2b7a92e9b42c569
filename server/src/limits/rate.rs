//! Sessions created, messages sent and AG-UI input bytes logged per user per minute.

use std::num::NonZeroU32;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::domain::UserId;
use crate::error::ApiError;

/// `--agui-input-bytes-per-minute`'s default, for limits built without it.
const DEFAULT_AGUI_BYTES_PER_MINUTE: u32 = 4 * 1024 * 1024;

/// The rate limits of every user. Each allows a burst of its per-minute figure, then
/// refills evenly over the minute.
pub struct RateLimits {
    sessions: DefaultKeyedRateLimiter<UserId>,
    messages: DefaultKeyedRateLimiter<UserId>,
    /// Bytes of AG-UI input logged (`RUN_STARTED.input`), one cell per byte.
    agui_bytes: DefaultKeyedRateLimiter<UserId>,
    /// The per-minute figure of `agui_bytes`: the most one input may ever take.
    agui_bytes_per_minute: u32,
    clock: DefaultClock,
}

impl RateLimits {
    /// Limits of `sessions` and `messages` per minute per user.
    pub fn new(sessions_per_minute: u32, messages_per_minute: u32) -> Self {
        let quota = |n: u32| Quota::per_minute(NonZeroU32::new(n.max(1)).expect("at least 1"));
        Self {
            sessions: RateLimiter::keyed(quota(sessions_per_minute)),
            messages: RateLimiter::keyed(quota(messages_per_minute)),
            agui_bytes: RateLimiter::keyed(quota(DEFAULT_AGUI_BYTES_PER_MINUTE)),
            agui_bytes_per_minute: DEFAULT_AGUI_BYTES_PER_MINUTE,
            clock: DefaultClock::default(),
        }
    }

    /// The same limits with an allowance of `bytes` of AG-UI input per minute per user.
    pub fn with_agui_input_bytes(mut self, bytes_per_minute: u32) -> Self {
        let bytes = NonZeroU32::new(bytes_per_minute.max(1)).expect("at least 1");
        self.agui_bytes = RateLimiter::keyed(Quota::per_minute(bytes));
        self.agui_bytes_per_minute = bytes.get();
        self
    }

    /// Takes one session creation from `user`'s allowance, or says when to retry.
    pub fn create_session(&self, user: UserId) -> Result<(), ApiError> {
        self.take(&self.sessions, user, "new sessions")
    }

    /// Takes one message from `user`'s allowance, or says when to retry.
    pub fn send_message(&self, user: UserId) -> Result<(), ApiError> {
        self.take(&self.messages, user, "messages")
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

    #[test]
    fn each_user_has_their_own_allowance() {
        let limits = RateLimits::new(2, 1);
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
    }

    #[test]
    fn agui_input_bytes_are_counted_per_user_and_refused_past_the_allowance() {
        let limits = RateLimits::new(1, 1).with_agui_input_bytes(1000);
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
