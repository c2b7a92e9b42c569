//! Client mistakes (a malformed request, a slow or vanished client, a bad WebSocket frame)
//! are not server errors: they are logged as warnings, at most
//! [`WARNINGS_PER_MINUTE`] a minute, each saying how many were left out before it, so
//! nobody can flood the log by sending garbage. What is left out is still logged at
//! `debug`.
//!
//! actix-http logs some of them at ERROR itself, with no way to change the level: the
//! `stream error` of a connection that ends in a parse error or a timeout, and a
//! WebSocket frame fragmented where it may not be. Those lines are dropped
//! ([`logged_by_tandem_instead`]): each of them comes with an error that actix-http hands
//! back to Tandem, which logs it at the level it deserves (crate::serve for connections,
//! the socket's close for frames).

use std::fmt::Display;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use tracing::{Level, Metadata};

/// Warnings about client mistakes logged per minute, at most.
pub const WARNINGS_PER_MINUTE: u32 = 10;

/// The targets whose ERROR lines Tandem logs itself, from the errors actix-http returns.
const ACTIX_CLIENT_ERROR_TARGETS: [&str; 2] =
    ["actix_http::h1::dispatcher", "actix_http::ws::codec"];

/// How many warnings may be logged, and how many were left out since the last one.
struct Allowance {
    limiter: DefaultDirectRateLimiter,
    left_out: AtomicU64,
}

impl Allowance {
    fn new(per_minute: u32) -> Self {
        Self {
            limiter: RateLimiter::direct(Quota::per_minute(
                NonZeroU32::new(per_minute.max(1)).expect("at least 1"),
            )),
            left_out: AtomicU64::new(0),
        }
    }

    /// How many were left out before this one, if a warning may be logged now; else one
    /// more is left out.
    fn take(&self) -> Option<u64> {
        match self.limiter.check() {
            Ok(()) => Some(self.left_out.swap(0, Ordering::Relaxed)),
            Err(_) => {
                self.left_out.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }
}

/// Logs a client's mistake: a warning while the process's allowance lasts, else a debug
/// line.
pub fn client_mistake(what: &str, error: &dyn Display) {
    static ALLOWANCE: OnceLock<Allowance> = OnceLock::new();
    let allowance = ALLOWANCE.get_or_init(|| Allowance::new(WARNINGS_PER_MINUTE));
    match allowance.take() {
        Some(left_out) => tracing::warn!(%error, left_out, "a client's mistake: {what}"),
        None => tracing::debug!(%error, "a client's mistake: {what}"),
    }
}

/// Whether an event is one of actix-http's ERROR lines that Tandem logs itself.
pub fn logged_by_tandem_instead(metadata: &Metadata<'_>) -> bool {
    *metadata.level() == Level::ERROR && ACTIX_CLIENT_ERROR_TARGETS.contains(&metadata.target())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allowance_warns_so_many_times_then_counts_what_it_leaves_out() {
        let allowance = Allowance::new(3);
        for _ in 0..3 {
            assert_eq!(allowance.take(), Some(0));
        }
        assert_eq!(allowance.take(), None);
        assert_eq!(allowance.take(), None);
        assert_eq!(allowance.left_out.load(Ordering::Relaxed), 2);
    }
}
