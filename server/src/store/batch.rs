//! A batch of commands as a backend applies it: the one transaction's input.

use super::leases::LeaseTerms;
use super::Command;

/// A batch of commands as a backend applies it in one transaction: the commands, the run
/// lease its instance holds (which fences them) and the time they are written at.
#[derive(Clone, Copy)]
pub(crate) struct Batch<'a> {
    pub commands: &'a [Command],
    pub lease: &'a LeaseTerms,
    pub now_ms: i64,
}
