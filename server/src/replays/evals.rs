//! Evals: one replay per conversation an eval names or its filter matches, each
//! conversation's last run a message of the person's started, all with the same variants,
//! shown as one table: per variant the mean pass^k over conversations, pass@1 over trials,
//! tokens, cost and latency; per conversation each variant's score. Without `expect`, a
//! judge (the server's default model) compares each trial's answer with the conversation's
//! own recorded answer.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use shared::evals::{
    Eval, EvalCell, EvalConversation, EvalFilter, EvalInput, EvalVariant, MAX_CONVERSATIONS,
};
use shared::replays::{Expect, Judge, Replay, ReplayInput, ReplayStatus};

use super::spec::{self, FieldError};
use super::{Replayer, MAX_PROMPT_BYTES};
use crate::agent::Refusal;
use crate::domain::{new_id, now_ms, SessionId, UserId};
use crate::error::ApiError;
use crate::store::{EvalRow, FeedbackFilter, SessionRow, Store};

/// What the judge is asked when the eval expects nothing of its own.
pub const COMPARE_RUBRIC: &str = "The answer does what the recorded answer did: the same \
facts, the same outcome and the same actions. Wording and length may differ.";
/// The most evals `GET /api/evals` lists.
const LIST_LIMIT: u32 = 50;

/// A conversation an eval could not replay, and why.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Skipped {
    session_id: String,
    title: String,
    reason: String,
}

impl<S: Store> Replayer<S> {
    /// Makes an eval for `owner`: a replay of each conversation it names or matches.
    pub async fn create_eval(&self, owner: UserId, input: EvalInput) -> Result<Eval, ApiError> {
        let replay = replay_of(&input, self.runner.models());
        spec::check(&replay, self.runner.models(), MAX_PROMPT_BYTES)?;
        let conversations = self.conversations(owner, &input).await?;
        let id = new_id("ev");
        let mut skipped = Vec::new();
        for session in &conversations {
            if let Err(refusal) = self
                .start_replay(owner, session, replay.clone(), Some(&id))
                .await
            {
                skipped.push(Skipped {
                    session_id: session.id.to_string(),
                    title: session.title.clone(),
                    reason: refusal.to_string(),
                });
            }
        }
        let row = EvalRow {
            id,
            owner,
            spec: serde_json::to_string(&input).expect("an eval request serialises"),
            skipped: serde_json::to_string(&skipped).expect("skipped conversations serialise"),
            created_at: now_ms(),
        };
        self.store.add_eval(&row).await?;
        Ok(self.eval_view(&row).await?)
    }

    /// `owner`'s eval `id` as the API shows it (another's is none).
    pub async fn eval(&self, owner: UserId, id: &str) -> Result<Option<Eval>, Refusal> {
        let Some(row) = self.store.eval(owner, id).await? else {
            return Ok(None);
        };
        for replay in self.store.replays_of_eval(id).await? {
            if replay.status == "running" {
                self.resume(replay.id);
            }
        }
        Ok(Some(self.eval_view(&row).await?))
    }

    /// `owner`'s evals, newest first.
    pub async fn evals(&self, owner: UserId) -> Result<Vec<Eval>, Refusal> {
        let mut evals = Vec::new();
        for row in self.store.evals_of(owner, LIST_LIMIT).await? {
            evals.push(self.eval_view(&row).await?);
        }
        Ok(evals)
    }

    /// Cancels every replay of `owner`'s eval `id`; `None` if there is no such eval.
    pub async fn cancel_eval(&self, owner: UserId, id: &str) -> Result<Option<Eval>, Refusal> {
        let Some(row) = self.store.eval(owner, id).await? else {
            return Ok(None);
        };
        for replay in self.store.replays_of_eval(id).await? {
            self.cancel(owner, &replay.id).await?;
        }
        Ok(Some(self.eval_view(&row).await?))
    }

    /// The conversations an eval names or matches: each one's line named (or listed),
    /// at most [`MAX_CONVERSATIONS`].
    async fn conversations(
        &self,
        owner: UserId,
        input: &EvalInput,
    ) -> Result<Vec<SessionRow>, ApiError> {
        let refuse = |field: &'static str, message: String| FieldError { field, message };
        let rows = match (&input.sessions, &input.filter) {
            (Some(ids), None) => self.named(owner, ids).await?,
            (None, Some(filter)) => self.matching(owner, filter).await?,
            _ => {
                let message = "give exactly one of `sessions` and `filter`".to_string();
                return Err(refuse("sessions", message).into());
            }
        };
        if rows.is_empty() {
            return Err(refuse("filter", "no conversation of yours matches".into()).into());
        }
        if rows.len() > MAX_CONVERSATIONS {
            let message = format!(
                "{} conversations match; an eval replays at most {MAX_CONVERSATIONS}",
                rows.len()
            );
            return Err(refuse("filter", message).into());
        }
        Ok(rows)
    }

    /// The caller's sessions `ids`, each once.
    async fn named(&self, owner: UserId, ids: &[String]) -> Result<Vec<SessionRow>, ApiError> {
        if ids.is_empty() || ids.len() > MAX_CONVERSATIONS {
            let message = format!("name 1 to {MAX_CONVERSATIONS} sessions");
            return Err(FieldError {
                field: "sessions",
                message,
            }
            .into());
        }
        let mut rows: Vec<SessionRow> = Vec::new();
        for id in ids {
            let row = match SessionId::parse(id) {
                Ok(session) => self.store.session(session).await?,
                Err(_) => None,
            };
            let Some(row) = row.filter(|row| row.owner == owner) else {
                let shown: String = id.chars().take(80).collect();
                let message = format!("no session {shown} of yours");
                return Err(FieldError {
                    field: "sessions",
                    message,
                }
                .into());
            };
            if !rows.iter().any(|seen| seen.id == row.id) {
                rows.push(row);
            }
        }
        Ok(rows)
    }

    /// The caller's conversations `filter` matches, most recently updated first, each
    /// once: the rated lines for `feedback`, else each conversation's listed line.
    async fn matching(
        &self,
        owner: UserId,
        filter: &EvalFilter,
    ) -> Result<Vec<SessionRow>, ApiError> {
        let since = match filter.since.as_deref() {
            Some(text) => chrono::DateTime::parse_from_rfc3339(text)
                .map_err(|e| FieldError {
                    field: "filter.since",
                    message: format!("not an RFC 3339 instant: {e}"),
                })?
                .timestamp_millis(),
            None => 0,
        };
        let candidates = match filter.feedback {
            Some(rating) => {
                let asked = FeedbackFilter {
                    since_ms: 0,
                    rating: Some(rating),
                    limit: 1_000,
                };
                let mut rows = Vec::new();
                for rated in self.store.list_feedback(asked).await? {
                    if let Some(row) = self.store.session(rated.session).await? {
                        rows.push(row);
                    }
                }
                rows
            }
            None => self.store.list_sessions(owner).await?,
        };
        let title = filter.title_contains.as_deref().map(str::to_lowercase);
        let mut conversations = HashSet::new();
        Ok(candidates
            .into_iter()
            .filter(|row| row.owner == owner && row.updated_at >= since)
            .filter(|row| {
                title
                    .as_deref()
                    .is_none_or(|text| row.title.to_lowercase().contains(text))
            })
            .filter(|row| conversations.insert(row.conversation))
            .collect())
    }

    /// An eval as the API shows it.
    async fn eval_view(&self, row: &EvalRow) -> Result<Eval, Refusal> {
        let input: EvalInput = serde_json::from_str(&row.spec)
            .map_err(|_| Refusal::Internal("a stored eval no longer reads"))?;
        let skipped: Vec<Skipped> = serde_json::from_str(&row.skipped).unwrap_or_default();
        let mut replays: Vec<Replay> = Vec::new();
        for replay in self.store.replays_of_eval(&row.id).await? {
            replays.push(self.view(&replay).await?);
        }
        let mut conversations = Vec::new();
        for replay in &replays {
            let title = match SessionId::parse(&replay.session_id) {
                Ok(id) => self.store.session(id).await?.map(|s| s.title),
                Err(_) => None,
            };
            conversations.push(EvalConversation {
                session_id: replay.session_id.clone(),
                title: title.unwrap_or_default(),
                replay_id: Some(replay.id.clone()),
                skipped: None,
                variants: replay
                    .variants
                    .iter()
                    .map(|v| EvalCell {
                        label: v.label.clone(),
                        passes: v.passes,
                        pass_at1: v.pass_at1,
                        pass_hat_k: v.pass_hat_k,
                    })
                    .collect(),
            });
        }
        conversations.extend(skipped.into_iter().map(|s| EvalConversation {
            session_id: s.session_id,
            title: s.title,
            replay_id: None,
            skipped: Some(s.reason),
            variants: Vec::new(),
        }));
        let variants = (0..input.variants.len())
            .map(|at| summarise(&replays, at, &input.variants[at].label))
            .collect();
        let status = if replays.iter().any(|r| r.status == ReplayStatus::Running) {
            ReplayStatus::Running
        } else if replays.iter().any(|r| r.status == ReplayStatus::Cancelled) {
            ReplayStatus::Cancelled
        } else {
            ReplayStatus::Done
        };
        Ok(Eval {
            id: row.id.clone(),
            status,
            k: input.k,
            variants,
            conversations,
            created_at: crate::domain::rfc3339(row.created_at),
        })
    }
}

/// The replay every conversation of an eval gets.
fn replay_of(input: &EvalInput, models: &[String]) -> ReplayInput {
    let expect = input.expect.clone().unwrap_or_else(|| Expect {
        judge: Some(Judge {
            model: models.first().cloned().unwrap_or_default(),
            rubric: COMPARE_RUBRIC.into(),
        }),
        ..Expect::default()
    });
    ReplayInput {
        run_id: None,
        variants: input.variants.clone(),
        k: input.k,
        tools: input.tools,
        answers: input.answers,
        expect: Some(expect),
        max_cost_usd: input.max_cost_usd,
    }
}

/// Variant `at` over every replay of an eval.
fn summarise(replays: &[Replay], at: usize, label: &str) -> EvalVariant {
    let results: Vec<_> = replays.iter().filter_map(|r| r.variants.get(at)).collect();
    let known: Vec<f64> = results.iter().filter_map(|v| v.pass_hat_k).collect();
    let trials: Vec<_> = results.iter().flat_map(|v| v.trials.iter()).collect();
    let scored = trials.iter().filter(|t| t.passed.is_some()).count();
    let passes = trials.iter().filter(|t| t.passed == Some(true)).count();
    let costs: Vec<f64> = trials.iter().filter_map(|t| t.cost_usd).collect();
    let mut latencies: Vec<u64> = trials.iter().filter_map(|t| t.latency_ms).collect();
    latencies.sort_unstable();
    EvalVariant {
        label: label.to_string(),
        model: results.first().map(|v| v.model.clone()).unwrap_or_default(),
        conversations: known.len() as u32,
        pass_hat_k: (!known.is_empty()).then(|| known.iter().sum::<f64>() / known.len() as f64),
        pass_at1: (scored > 0).then(|| passes as f64 / scored as f64),
        input_tokens: trials.iter().map(|t| t.usage.input_tokens).sum(),
        output_tokens: trials.iter().map(|t| t.usage.output_tokens).sum(),
        cost_usd: (!costs.is_empty()).then(|| costs.iter().sum()),
        latency_ms_p50: latencies.get(latencies.len() / 2).copied(),
    }
}
