//! `tandem schedules list|add|rm`: a user's schedules from the shell, as the API shows
//! them (one JSON object a line). A running server sees a change at once on PostgreSQL
//! (the change feed) and within a minute on SQLite.

use std::io::Write;

use shared::schedules::{ScheduleInput, ScheduledMessage};

use super::edit;
use super::shape::schedule_view;
use super::spec::Rules;
use crate::config::SchedulesCommand;
use crate::domain::{now_ms, UserId};
use crate::store::Store;

/// A `schedules` command to run on whichever store the database URL opens.
pub struct SchedulesOn {
    pub command: SchedulesCommand,
    /// `--min-schedule-interval-seconds`.
    pub min_interval_seconds: u64,
}

impl crate::store::UseStore for SchedulesOn {
    type Output = anyhow::Result<()>;

    async fn with<S: Store>(self, store: std::sync::Arc<S>) -> Self::Output {
        run_command(&*store, self, &mut std::io::stdout()).await
    }
}

/// Runs `command` on `store`, printing to `out`.
pub async fn run_command<S: Store>(
    store: &S,
    command: SchedulesOn,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    match command.command {
        SchedulesCommand::List { user } => {
            let owner = user_named(store, &user).await?;
            for row in store.schedules(owner).await? {
                let last = store.fires(&row.id, 1).await?.into_iter().next();
                writeln!(out, "{}", serde_json::to_string(&schedule_view(row, last))?)?;
            }
        }
        SchedulesCommand::Add {
            user,
            name,
            message,
            cron,
            timezone,
            at,
            every_seconds,
            session,
            model,
            misfire,
            overlap,
        } => {
            let owner = user_named(store, &user).await?;
            let input = ScheduleInput {
                name,
                message: ScheduledMessage {
                    text: message,
                    attachments: Vec::new(),
                },
                session_id: session,
                model,
                cron,
                timezone,
                at,
                every_seconds,
                misfire,
                overlap,
                ..ScheduleInput::default()
            };
            // The server's models are the engine's to say: a fire names one it lacks.
            let rules = Rules {
                min_interval_seconds: command.min_interval_seconds,
                models: Vec::new(),
            };
            let row = edit::create(input, owner, &rules, now_ms())
                .map_err(|error| anyhow::anyhow!("{error}"))?;
            if let Some(session) = &row_session(&row) {
                let found = store.session(*session).await?;
                if found.is_none_or(|found| found.owner != owner) {
                    anyhow::bail!("`sessionId`: {user} has no session {session}");
                }
            }
            store.add_schedule(&row).await?;
            writeln!(out, "{}", serde_json::to_string(&schedule_view(row, None))?)?;
        }
        SchedulesCommand::Rm { user, id } => {
            let owner = user_named(store, &user).await?;
            if !store.delete_schedule(owner, &id).await? {
                anyhow::bail!("{user} has no schedule {id}");
            }
        }
    }
    Ok(())
}

/// The session every fire of `row` sends to, if one.
fn row_session(row: &crate::store::ScheduleRow) -> Option<crate::domain::SessionId> {
    let written: ScheduleInput = serde_json::from_str(&row.spec).ok()?;
    crate::domain::SessionId::parse(written.session_id.as_deref()?).ok()
}

/// The user of this name (revoked ones too: their schedules stay, stopped).
async fn user_named<S: Store>(store: &S, name: &str) -> anyhow::Result<UserId> {
    let users = store.list_users().await?;
    users
        .into_iter()
        .find(|user| user.name.as_str() == name)
        .map(|user| user.id)
        .ok_or_else(|| anyhow::anyhow!("no user named {name}"))
}
