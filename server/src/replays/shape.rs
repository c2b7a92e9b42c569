//! A replay as the API shows it: each variant's trials (an ended one as kept, a running
//! one read from its log now, a queued one as such) and its scores.

use shared::replays::{
    scores, Replay, ReplayInput, ReplayStatus, Trial, TrialStatus, VariantResult,
};
use shared::Event;

use super::trial::{self, Reading};
use super::{score, Record, Replayer};
use crate::agent::Refusal;
use crate::domain::SessionId;
use crate::store::{ReplayRow, Store, StoreError, TrialRow};

impl<S: Store> Replayer<S> {
    /// `row` as the API shows it.
    pub(super) async fn view(&self, row: &ReplayRow) -> Result<Replay, Refusal> {
        let (spec, record) = stored(row)?;
        let rows = self.store.trials(&row.id).await?;
        let default_model = self.runner.models().first().cloned().unwrap_or_default();
        let mut variants = Vec::with_capacity(spec.variants.len());
        for (at, variant) in spec.variants.iter().enumerate() {
            let mut trials = Vec::new();
            for trial_row in rows.iter().filter(|t| t.variant as usize == at) {
                trials.push(match trial_row.state.as_str() {
                    "started" => self.live_trial(row, trial_row).await?,
                    _ => kept(trial_row),
                });
            }
            let passed: Vec<Option<bool>> = trials.iter().map(|t| t.passed).collect();
            let (passes, pass_at1, pass_hat_k) = scores(&passed, spec.k);
            let model = variant
                .model
                .clone()
                .or_else(|| record.model.clone())
                .unwrap_or_else(|| default_model.clone());
            variants.push(VariantResult {
                label: variant.label.clone(),
                model,
                trials,
                passes,
                pass_at1,
                pass_hat_k,
            });
        }
        Ok(Replay {
            id: row.id.clone(),
            session_id: row.session_id.clone(),
            run_id: row.run_id.clone(),
            status: match row.status.as_str() {
                "running" => ReplayStatus::Running,
                "cancelled" => ReplayStatus::Cancelled,
                _ => ReplayStatus::Done,
            },
            recorded_text: record.recorded_text,
            variants,
            created_at: crate::domain::rfc3339(row.created_at),
        })
    }

    /// A started trial as its log says now (scored once it ended).
    pub(super) async fn live_trial(
        &self,
        row: &ReplayRow,
        trial_row: &TrialRow,
    ) -> Result<Trial, Refusal> {
        let (spec, record) = stored(row)?;
        let Some((reading, status)) = self.read_trial(trial_row, record.at_seq).await? else {
            let mut gone = super::skipped(trial_row.trial, "its branch is gone");
            gone.status = TrialStatus::Stopped;
            gone.session_id = trial_row.session_id.clone();
            return Ok(gone);
        };
        let scored = match status {
            TrialStatus::Finished | TrialStatus::Stopped | TrialStatus::Cancelled => {
                score::passed(&reading, spec.expect.as_ref())
            }
            _ => None,
        };
        Ok(trial_of(trial_row, &reading, status, scored))
    }

    /// A started trial's reading and status; `None` if its branch is gone.
    pub(super) async fn read_trial(
        &self,
        trial_row: &TrialRow,
        at_seq: u64,
    ) -> Result<Option<(Reading, TrialStatus)>, StoreError> {
        let Some(session) = trial_row
            .session_id
            .as_deref()
            .and_then(|id| SessionId::parse(id).ok())
        else {
            return Ok(None);
        };
        let Some(session_row) = self.store.session(session).await? else {
            return Ok(None);
        };
        // The branch's own events: what it shares with its conversation is not read.
        let rows = self.store.events_after(session, at_seq, u32::MAX).await?;
        let events: Vec<(u64, Event)> = rows
            .iter()
            .filter_map(|row| Some((row.seq, serde_json::from_str(&row.json).ok()?)))
            .collect();
        let reading = trial::read(&events, at_seq);
        let status = reading.status(session_row.status);
        Ok(Some((reading, status)))
    }
}

/// A replay's request and record as kept.
pub(super) fn stored(row: &ReplayRow) -> Result<(ReplayInput, Record), Refusal> {
    let spec = serde_json::from_str(&row.spec);
    let record = serde_json::from_str(&row.record);
    match (spec, record) {
        (Ok(spec), Ok(record)) => Ok((spec, record)),
        _ => Err(Refusal::Internal("a stored replay no longer reads")),
    }
}

/// A trial whose row holds its result (or a queued one).
fn kept(trial_row: &TrialRow) -> Trial {
    let read = trial_row
        .result
        .as_deref()
        .and_then(|json| serde_json::from_str::<Trial>(json).ok());
    read.unwrap_or_else(|| {
        let mut queued = super::skipped(trial_row.trial, "");
        queued.status = TrialStatus::Queued;
        queued.reason = None;
        queued
    })
}

/// A trial from its reading, status and score.
pub(super) fn trial_of(
    trial_row: &TrialRow,
    reading: &Reading,
    status: TrialStatus,
    scored: Option<(bool, Option<String>)>,
) -> Trial {
    let (passed, reason) = match scored {
        Some((passed, reason)) => (Some(passed), reason),
        None => (None, None),
    };
    Trial {
        trial: trial_row.trial,
        session_id: trial_row.session_id.clone(),
        status,
        passed,
        reason,
        diverged_at_seq: reading.diverged_at_seq,
        final_text: reading.final_text.clone(),
        usage: reading.usage,
        cost_usd: reading.cost_usd,
        latency_ms: reading.latency_ms,
        first_token_ms: reading.first_token_ms,
        verdict: reading.verdict.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queued_trial_is_shown_as_queued() {
        let row = TrialRow {
            replay_id: "rp".into(),
            variant: 0,
            trial: 2,
            session_id: None,
            state: "queued".into(),
            result: None,
        };
        let trial = kept(&row);
        assert_eq!((trial.trial, trial.status), (2, TrialStatus::Queued));
    }
}
