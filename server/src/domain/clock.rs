//! The scheduler's clock: the server's UTC, or (in tests) a clock that moves only when
//! told, so a test can let a day pass without sleeping one.

use std::fmt;
use std::sync::Arc;

use tokio::sync::watch;

/// Milliseconds since the Unix epoch, from the system or from a hand that sets them.
#[derive(Clone, Default)]
pub struct Clock {
    /// `None`: the system's clock. `Some`: a clock moved by [`Clock::advance`], its time
    /// in the channel so that a sleeper wakes when it moves.
    manual: Option<Arc<watch::Sender<i64>>>,
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.manual {
            None => f.write_str("Clock(system)"),
            Some(now) => write!(f, "Clock(manual at {})", *now.borrow()),
        }
    }
}

impl Clock {
    /// The system's clock.
    pub fn system() -> Self {
        Self::default()
    }

    /// A clock that reads `start_ms` until it is moved.
    pub fn manual(start_ms: i64) -> Self {
        let (now, _) = watch::channel(start_ms);
        Self {
            manual: Some(Arc::new(now)),
        }
    }

    /// Whether this clock only moves when told.
    pub fn is_manual(&self) -> bool {
        self.manual.is_some()
    }

    /// Now, in milliseconds since the epoch.
    pub fn now_ms(&self) -> i64 {
        match &self.manual {
            None => super::now_ms(),
            Some(now) => *now.borrow(),
        }
    }

    /// Moves a manual clock on by `ms` (a system clock moves by itself: nothing happens).
    pub fn advance(&self, ms: i64) {
        if let Some(now) = &self.manual {
            now.send_modify(|now| *now += ms.max(0));
        }
    }

    /// Sets a manual clock to `at_ms` if that is later than it reads.
    pub fn set(&self, at_ms: i64) {
        if let Some(now) = &self.manual {
            now.send_modify(|now| *now = (*now).max(at_ms));
        }
    }

    /// Returns once the clock reads `at_ms` or later.
    pub async fn sleep_until(&self, at_ms: i64) {
        match &self.manual {
            None => {
                let wait = at_ms.saturating_sub(super::now_ms()).max(0) as u64;
                tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
            }
            Some(now) => {
                let mut moved = now.subscribe();
                // The sender lives as long as this clock: `wait_for` ends only by its test.
                let _ = moved.wait_for(|now| *now >= at_ms).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_manual_clock_wakes_its_sleeper_when_moved_past_the_time() {
        let clock = Clock::manual(1_000);
        let sleeper = tokio::spawn({
            let clock = clock.clone();
            async move { clock.sleep_until(5_000).await }
        });
        clock.advance(3_000);
        tokio::task::yield_now().await;
        assert!(!sleeper.is_finished(), "4,000 is before 5,000");
        clock.set(2_000);
        assert_eq!(clock.now_ms(), 4_000, "a clock never goes back");
        clock.advance(1_000);
        tokio::time::timeout(std::time::Duration::from_secs(5), sleeper)
            .await
            .expect("woken at 5,000")
            .unwrap();
    }
}
