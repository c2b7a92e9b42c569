//! `tandem feedback [--since-hours N] [--rating up|down] [--limit N]`: an operator's list
//! of everyone's ratings of answers, from the shell, one JSON object per line (newest
//! change first), as `GET /api/feedback` gives them.

use std::io::Write;

use crate::domain::now_ms;
use crate::store::{FeedbackFilter, Store};

pub use crate::config::FeedbackCommand;

/// A `feedback` command to run on whichever store the database URL opens, printing to
/// standard output.
pub struct FeedbackOn(pub FeedbackCommand);

impl crate::store::UseStore for FeedbackOn {
    type Output = anyhow::Result<()>;

    async fn with<S: Store>(self, store: std::sync::Arc<S>) -> Self::Output {
        run(&*store, &self.0, &mut std::io::stdout()).await
    }
}

/// Lists the ratings `command` asks for to `out`, one JSON object a line.
pub async fn run<S: Store>(
    store: &S,
    command: &FeedbackCommand,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let since_ms = command.since_hours.map_or(0, |hours| {
        now_ms() - (hours as i64).saturating_mul(3_600_000)
    });
    let filter = FeedbackFilter {
        since_ms,
        rating: command.rating,
        limit: command.limit,
    };
    for stored in store.list_feedback(filter).await? {
        writeln!(out, "{}", serde_json::to_string(&stored.listed())?)?;
    }
    Ok(())
}
