//! Run leases, the same on every backend: which instance executes a session's run.
//!
//! Starting or resuming a run takes the session's lease for the instance that starts it
//! (a new epoch), in the transaction that starts the run. The holder renews its leases
//! by heartbeat; a running session whose lease lapsed (its instance died or froze) is
//! taken over by another instance with a new epoch, under the session's row lock, and
//! continued like crash continuation. `Append`s are accepted only from the holder, so an
//! instance that lost a lease can no longer write a single event of that run.

use std::future::Future;
use std::time::Duration;

use super::guards::LeaseHolder;
use super::StoreError;
use crate::domain::SessionId;

/// The run leases this instance holds, on its backend: taken over, renewed, handed back.
/// Each backend implements it once, by [`crate::store::sql::leases`]'s macro.
pub trait RunLeases: Send + Sync + 'static {
    /// This instance's name in run leases.
    fn instance(&self) -> &str;

    /// Renews the leases this instance holds on running sessions; returns those sessions.
    fn renew_leases(
        &self,
        now_ms: i64,
    ) -> impl Future<Output = Result<Vec<SessionId>, StoreError>> + Send;

    /// Takes over, for this instance and with a new epoch, the runs nobody executes any
    /// more: running sessions whose lease lapsed or that have none (and, when `starting`
    /// on a backend only one process uses, any another process held). Returns those
    /// sessions; the caller repairs and continues their runs.
    fn take_over_runs(
        &self,
        now_ms: i64,
        starting: bool,
    ) -> impl Future<Output = Result<Vec<SessionId>, StoreError>> + Send;

    /// Hands back the run leases this instance holds (at a clean stop, once its runs have
    /// stopped): they lapse at once, so another instance (or the next start) continues
    /// those runs without waiting for them to expire, and the other instances sharing
    /// the database are told ([`super::Change::LeasesReleased`]). Returns how many.
    fn release_leases(&self) -> impl Future<Output = Result<u64, StoreError>> + Send;
}

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
