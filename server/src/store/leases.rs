//! Run leases, the same on every backend: which instance executes a session's run.
//!
//! Starting or resuming a run takes the session's lease for the instance that starts it
//! (a new epoch), in the transaction that starts the run. The holder renews its leases
//! by heartbeat; a running session whose lease lapsed (its instance died or froze) is
//! taken over by another instance with a new epoch, under the session's row lock, and
//! continued like crash continuation. `Append`s are accepted only from the holder, so an
//! instance that lost a lease can no longer write a single event of that run.

use std::time::Duration;

use super::guards::LeaseHolder;

/// This instance's side of its leases.
#[derive(Debug, Clone)]
pub(crate) struct LeaseTerms {
    /// This instance's name in lease rows: unique per process (`[<name>/]<pid>-<random>`).
    pub owner: String,
    /// `<name>/` when the instance has a name it keeps across restarts: leases whose owner
    /// starts with it belong to an earlier life of this instance.
    pub lineage: Option<String>,
    /// How long a lease lasts without renewal, in ms.
    pub ttl_ms: i64,
}

impl LeaseTerms {
    /// Terms for a new instance whose leases last `ttl`, named `name` if it has a name.
    pub fn new(ttl: Duration, name: Option<&str>) -> Self {
        let random = uuid::Uuid::new_v4().simple().to_string();
        let life = format!("{}-{}", std::process::id(), &random[..12]);
        let lineage = name.map(|name| format!("{name}/"));
        Self {
            owner: format!("{}{life}", lineage.as_deref().unwrap_or_default()),
            lineage,
            ttl_ms: ttl.as_millis().clamp(1, i64::MAX as u128) as i64,
        }
    }

    /// When a lease taken or renewed at `now_ms` lapses.
    pub fn expires_at(&self, now_ms: i64) -> i64 {
        now_ms.saturating_add(self.ttl_ms)
    }

    /// Who holds a lease whose row names `owner` (`None`: no row).
    pub fn holder(&self, owner: Option<&str>) -> LeaseHolder {
        match owner {
            None => LeaseHolder::Nobody,
            Some(owner) if owner == self.owner => LeaseHolder::Us,
            Some(_) => LeaseHolder::Other,
        }
    }
}
