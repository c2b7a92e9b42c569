//! Every record job's SQL implemented for one backend's store in one expansion: users,
//! share links, interrupts and queued messages as read, the webhook outbox, attachments,
//! feedback, budgets, instructions, a person's own tools, schedules and replays (each job's macro is in its own module here).

/// Implements every record job's trait for a backend's store (the arguments [`super`]
/// describes, then the backend's own parts, each named: `pool`, its pool type;
/// `announce`, how it tells other processes of a credential that ended (see `users_on`);
/// `wrote`, what the keeper does after each attachment write; `hold_user`, its statement
/// that makes a transaction the only one of a user; `skip_locked`, what ends the webhook
/// claim's row selection so that concurrent claims skip each other's rows).
macro_rules! records_on {
    (
        [$($generics:tt)*] $store:ty,
        $keeper:path,
        $writes:ident,
        $reads:ident,
        pool: $pool:ty,
        announce: $announce:path,
        wrote: $wrote:expr,
        hold_user: $hold_user:expr,
        skip_locked: $skip_locked:literal $(,)?
    ) => {
        crate::store::sql::users::users_on!(
            [$($generics)*] $store, $keeper, $writes, $reads, $announce
        );
        crate::store::sql::shares::shares_on!(
            [$($generics)*] $store, $keeper, $writes, $reads, $announce
        );
        crate::store::sql::interrupt_reads::interrupt_reads_on!(
            [$($generics)*] $store, $keeper, $reads
        );
        crate::store::sql::queue_reads::queue_reads_on!([$($generics)*] $store, $keeper, $reads);
        crate::store::sql::webhook_sources::webhook_sources_on!($pool);
        crate::store::sql::webhooks::webhooks_on!(
            [$($generics)*] $store, $keeper, $pool, $writes, $reads, $skip_locked
        );
        crate::store::sql::attachments::attachments_on!(
            [$($generics)*] $store, $keeper, $pool, $writes, $reads, $wrote, $hold_user
        );
        crate::store::sql::feedback::feedback_on!([$($generics)*] $store, $keeper, $reads);
        crate::store::sql::budgets::budgets_on!([$($generics)*] $store, $keeper, $writes, $reads);
        crate::store::sql::instructions::instructions_on!(
            [$($generics)*] $store, $keeper, $writes, $reads
        );
        crate::store::sql::user_tools::user_tools_on!(
            [$($generics)*] $store, $keeper, $writes, $reads
        );
        crate::store::sql::schedules::schedules_on!(
            [$($generics)*] $store, $keeper, $writes, $reads, $announce, $skip_locked
        );
        crate::store::sql::replays::replays_on!([$($generics)*] $store, $keeper, $writes, $reads);
    };
}

pub(crate) use records_on;
