//! Every record job ([`crate::store::sql::records`]) on PostgreSQL: users, API tokens and
//! browser sign-ins, share links, what waits in sessions (interrupts for their answer,
//! queued messages for their turn) as read, the webhook outbox, attachments, feedback,
//! budgets and a person's own instructions, all through the one pool. A credential that
//! ends is announced to the other instances in its transaction; instances claim due
//! webhook deliveries with `FOR UPDATE SKIP LOCKED`, so two never claim the same row.

crate::store::sql::records::records_on!(
    [] super::PostgresStore,
    std::convert::identity,
    pool,
    pool,
    pool: sqlx::PgPool,
    announce: super::feed::announce,
    wrote: |_| (),
    hold_user: super::HOLD_USER,
    skip_locked: "FOR UPDATE SKIP LOCKED",
);
