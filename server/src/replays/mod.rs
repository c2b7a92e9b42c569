//! Replays: a recorded run of a conversation sent again, k times per variant, without
//! running its side effects again, each trial scored.
//!
//! A replay (`spec.rs` checks it) names a run a person's message started; its record is
//! that run's events and those of its runs after answers, up to the next message of the
//! person's. Each trial is a branch that parts just before the run (sharing the prefix, as
//! a fork does) and sends the same message on its variant's model, with its system prompt
//! and temperature, marked `CUSTOM tandem.replay`: from there the run meets its calls
//! and questions with the record (`agent/run/replayed.rs`). This instance's [`Replayer`]
//! drives a replay's trials (`drive.rs`): at most `--replay-concurrency` run at once; each
//! that ends is read from its log (`trial.rs`), scored (`score.rs`, a judge's verdict
//! recorded in the trial's log) and kept; `shape.rs` shows a replay as the API does.
//! A replay's row is claimed by the instance that drives it; another takes it over when
//! the claim lapses (a GET, or the start of an instance, looks for such replays). An eval
//! (`evals.rs`) is one replay per conversation it matches, shown as one table;
//! `evals_cli.rs` is `tandem eval`, a client of a running server that gates on pass^k.

mod drive;
mod evals;
pub mod evals_cli;
mod score;
mod shape;
pub mod spec;
mod trial;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use shared::attachments::Attachment;
use shared::replays::{Replay, ReplayInput, Trial, TrialStatus};
use shared::{Event, EventBody};

use crate::agent::branches;
use crate::agent::{Refusal, Runner};
use crate::domain::{new_id, now_ms, SessionId, UserId};
use crate::error::ApiError;
use crate::eventlog::Hub;
use crate::lifecycle::Lifecycle;
use crate::store::{ReplayRow, SessionRow, Store};

/// The longest system prompt a variant may give, in bytes.
const MAX_PROMPT_BYTES: usize = 32 * 1024;
/// The most replays `GET /api/sessions/{id}/replays` lists.
pub const LIST_LIMIT: u32 = 50;

/// Where a replayed run lies in its session's log, and what it said (kept with the
/// replay, so trials start without reading the log again).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    /// Where each trial's branch parts: just before the run.
    at_seq: u64,
    from_seq: u64,
    to_seq: u64,
    /// The person's message that started it, and what it carried.
    text: String,
    #[serde(default)]
    attachments: Vec<Attachment>,
    /// Its last answer.
    recorded_text: String,
    /// The model it used, if one was picked (else the server's default).
    #[serde(default)]
    model: Option<String>,
    /// The model calls of the log before the run (a scripted engine's place, for the
    /// judge's call).
    #[serde(default)]
    model_calls_before: u64,
}

/// This instance's driver of replays.
pub struct Replayer<S> {
    store: Arc<S>,
    runner: Runner<S>,
    hub: Hub,
    lifecycle: Lifecycle,
    /// This instance's name in its claims (a `std::sync::Mutex` below: held for a set's
    /// update only, never across an `.await`).
    instance: String,
    /// Trials of one replay that run at once.
    concurrency: usize,
    /// How long a claim holds (an instance's run lease).
    claim_ms: i64,
    /// The replays a task of this instance drives now (one task each).
    driving: Arc<Mutex<HashSet<String>>>,
}

impl<S> Clone for Replayer<S> {
    fn clone(&self) -> Self {
        Self {
            store: self.store.clone(),
            runner: self.runner.clone(),
            hub: self.hub.clone(),
            lifecycle: self.lifecycle.clone(),
            instance: self.instance.clone(),
            concurrency: self.concurrency,
            claim_ms: self.claim_ms,
            driving: self.driving.clone(),
        }
    }
}

impl<S: Store> Replayer<S> {
    /// A replayer of `runner`'s sessions running `concurrency` trials of a replay at
    /// once, holding what it drives for `claim_ms`.
    pub fn new(
        (store, runner, hub): (Arc<S>, Runner<S>, Hub),
        lifecycle: &Lifecycle,
        concurrency: usize,
        claim_ms: u64,
    ) -> Self {
        Self {
            store,
            runner,
            hub,
            lifecycle: lifecycle.clone(),
            instance: new_id("replayer"),
            concurrency: concurrency.max(1),
            claim_ms: claim_ms.max(1) as i64,
            driving: Arc::default(),
        }
    }

    /// Takes over the running replays no instance holds (at an instance's start).
    pub async fn resume_all(&self) -> Result<usize, Refusal> {
        let ids = self.store.unclaimed_replays(now_ms(), 1_000).await?;
        for id in &ids {
            self.resume(id.clone());
        }
        Ok(ids.len())
    }

    /// Makes a replay of `session`'s run for its owner and starts its trials.
    pub async fn create(
        &self,
        owner: UserId,
        session: &SessionRow,
        input: ReplayInput,
    ) -> Result<Replay, ApiError> {
        spec::check(&input, self.runner.models(), MAX_PROMPT_BYTES)?;
        let row = self.start_replay(owner, session, input, None).await?;
        Ok(self.view(&row).await?)
    }

    /// Keeps a checked replay of `session`'s run (one conversation of eval `eval_id`, if
    /// given) and starts driving its trials.
    async fn start_replay(
        &self,
        owner: UserId,
        session: &SessionRow,
        input: ReplayInput,
        eval_id: Option<&str>,
    ) -> Result<ReplayRow, Refusal> {
        let recorded =
            branches::recorded_run(&*self.store, session, input.run_id.as_deref()).await?;
        let rows = self.store.events_after(session.id, 0, u32::MAX).await?;
        let events: Vec<(u64, Event)> = rows
            .iter()
            .filter(|row| row.seq <= recorded.to_seq)
            .filter_map(|row| Some((row.seq, serde_json::from_str(&row.json).ok()?)))
            .collect();
        let said = trial::read(&events, recorded.from_seq - 1);
        let model = events
            .iter()
            .rev()
            .find_map(|(_, event)| match &event.body {
                EventBody::Custom { name, value } if name == shared::custom::MODEL_SELECTED => {
                    value["model"].as_str().map(str::to_string)
                }
                _ => None,
            });
        let record = Record {
            at_seq: recorded.redo.at_seq(),
            from_seq: recorded.from_seq,
            to_seq: recorded.to_seq,
            text: recorded.redo.text.clone(),
            attachments: recorded.redo.attachments.clone(),
            recorded_text: said.final_text,
            model: model.filter(|m| self.runner.models().contains(m)),
            model_calls_before: events
                .iter()
                .filter(|(seq, event)| {
                    *seq < recorded.from_seq
                        && matches!(&event.body, EventBody::StepStarted { step_name }
                            if step_name == crate::agent::conversation::MODEL_CALL_STEP)
                })
                .count() as u64,
        };
        let row = ReplayRow {
            id: new_id("rp"),
            owner,
            session_id: session.id.to_string(),
            run_id: recorded.run_id,
            eval_id: eval_id.map(str::to_string),
            spec: serde_json::to_string(&input).expect("a replay request serialises"),
            record: serde_json::to_string(&record).expect("a record serialises"),
            status: "running".into(),
            created_at: now_ms(),
            finished_at: None,
        };
        let variants = input.variants.len() as u32;
        self.store.add_replay(&row, variants, input.k).await?;
        self.resume(row.id.clone());
        Ok(row)
    }

    /// `owner`'s replay `id` as the API shows it (another's is none).
    pub async fn get(&self, owner: UserId, id: &str) -> Result<Option<Replay>, Refusal> {
        let Some(row) = self.store.replay(owner, id).await? else {
            return Ok(None);
        };
        if row.status == "running" {
            // Driven here unless another instance holds it.
            self.resume(row.id.clone());
        }
        Ok(Some(self.view(&row).await?))
    }

    /// `owner`'s replays of `session`, newest first.
    pub async fn list(&self, owner: UserId, session: SessionId) -> Result<Vec<Replay>, Refusal> {
        let rows = self
            .store
            .replays_of(owner, &session.to_string(), LIST_LIMIT)
            .await?;
        let mut replays = Vec::with_capacity(rows.len());
        for row in &rows {
            replays.push(self.view(row).await?);
        }
        Ok(replays)
    }

    /// Cancels `owner`'s replay `id`: no more trials start, and those that run stop.
    /// `None` if there is no such replay of theirs.
    pub async fn cancel(&self, owner: UserId, id: &str) -> Result<Option<Replay>, Refusal> {
        let Some(row) = self.store.replay(owner, id).await? else {
            return Ok(None);
        };
        if self.store.finish_replay(id, "cancelled", now_ms()).await? {
            for trial in self.store.trials(id).await? {
                let number = (trial.variant, trial.trial);
                match (trial.state.as_str(), trial.session_id.as_deref()) {
                    ("queued", _) => {
                        let skipped = skipped(trial.trial, "the replay was cancelled");
                        self.store
                            .end_trial(id, number, "skipped", &result_json(&skipped))
                            .await?;
                    }
                    ("started", Some(session)) => {
                        let Ok(session) = SessionId::parse(session) else {
                            continue;
                        };
                        match self.runner.cancel(session).await {
                            Ok(()) | Err(Refusal::Idle | Refusal::SessionNotFound(_)) => {}
                            Err(error) => return Err(error),
                        }
                        let mut stopped = self.live_trial(&row, &trial).await?;
                        stopped.status = TrialStatus::Cancelled;
                        stopped.passed = None;
                        stopped.reason = Some("the replay was cancelled".into());
                        self.store
                            .end_trial(id, number, "ended", &result_json(&stopped))
                            .await?;
                    }
                    _ => {}
                }
            }
        }
        let row = self.store.replay(owner, id).await?.unwrap_or(row);
        Ok(Some(self.view(&row).await?))
    }

    /// Drives replay `id` from this instance, in a task of its own, unless a task here
    /// drives it already or another instance holds it (the task sees that and ends).
    fn resume(&self, id: String) {
        let mut driving = self.driving.lock().expect("the replays driven lock");
        if !driving.insert(id.clone()) {
            return;
        }
        let replayer = self.clone();
        self.lifecycle.spawn(async move {
            if let Err(error) = replayer.drive(&id).await {
                tracing::warn!(%error, replay = id, "a replay's trials wait for a retry");
                let _ = replayer.store.release_replay(&id, &replayer.instance).await;
            }
            let mut driving = replayer.driving.lock().expect("the replays driven lock");
            driving.remove(&id);
        });
    }
}

/// A trial that never ran, and why.
fn skipped(number: u32, why: &str) -> Trial {
    Trial {
        trial: number,
        session_id: None,
        status: TrialStatus::Skipped,
        passed: None,
        reason: Some(why.into()),
        diverged_at_seq: None,
        final_text: String::new(),
        usage: Default::default(),
        cost_usd: None,
        latency_ms: None,
        first_token_ms: None,
        verdict: None,
    }
}

/// A trial as its row keeps it.
fn result_json(trial: &Trial) -> String {
    serde_json::to_string(trial).expect("a trial serialises")
}
