//! Driving a replay's trials from the instance that holds it: each pass renews the claim,
//! ends the trials whose runs ended (read, judged, scored, kept), starts queued ones while
//! fewer than `--replay-concurrency` run (none once `maxCostUsd` is spent), and waits for
//! one of the running trials' runs to end (their sessions' live events; a run on another
//! instance is seen at the next pass, within a third of the claim). A replay whose
//! remaining trials all wait for their person is let go (rows, not a task): a GET or an
//! instance's start takes it up again.

use std::collections::HashMap;
use std::time::Duration;

use futures_util::future::select_all;
use shared::replays::{ReplayInput, ReplayMark, TrialStatus, Verdict};
use shared::EventBody;

use super::trial::Reading;
use super::{result_json, score, shape, skipped, Record, Replayer};
use crate::agent::{NewMessage, Refusal};
use crate::domain::{now_ms, SessionId};
use crate::eventlog::Subscription;
use crate::store::{ReplayRow, Store, StoreError, TrialRow};

/// What starting a queued trial came to.
enum Started {
    /// Its run goes on; its session is watched.
    Running(SessionId, Subscription),
    /// The run queues have no room now (or it is no longer queued): it waits.
    NotNow,
    /// It could not start, and is kept as ended.
    Ended,
}

/// How long a pass that could not start a trial waits before trying again, when none
/// runs whose end would wake it.
const RETRY: Duration = Duration::from_millis(200);

/// What a pass found.
enum Pass {
    /// Trials run: wait for one to end.
    Wait,
    /// Nothing runs and a trial could not start yet: try again shortly.
    Retry,
    /// Nothing runs, but trials wait for their person: let the replay go.
    LetGo,
    /// The replay is over, or held elsewhere.
    Over,
}

impl<S: Store> Replayer<S> {
    /// Drives replay `id` until its trials have all ended, it is cancelled, only trials
    /// waiting for their person remain, or another instance holds it.
    pub(super) async fn drive(&self, id: &str) -> Result<(), Refusal> {
        let mut watching: HashMap<SessionId, Subscription> = HashMap::new();
        let halting = self.lifecycle.halting().clone();
        loop {
            if halting.is_cancelled() {
                self.store.release_replay(id, &self.instance).await?;
                return Ok(());
            }
            let now = now_ms();
            if !self
                .store
                .claim_replay(id, &self.instance, now, now + self.claim_ms)
                .await?
            {
                return Ok(());
            }
            let Some(row) = self.store.replay_by_id(id).await? else {
                return Ok(());
            };
            match self.pass(&row, &mut watching).await? {
                Pass::Over => return Ok(()),
                Pass::LetGo => {
                    self.store.release_replay(id, &self.instance).await?;
                    return Ok(());
                }
                Pass::Wait => {}
                Pass::Retry => {
                    tokio::select! {
                        () = halting.cancelled() => {}
                        () = tokio::time::sleep(RETRY) => {}
                    }
                    continue;
                }
            }
            let renew = Duration::from_millis((self.claim_ms / 3).max(1) as u64);
            tokio::select! {
                biased;
                () = halting.cancelled() => {}
                () = a_run_ends(&mut watching) => {}
                () = tokio::time::sleep(renew) => {}
            }
        }
    }

    /// One pass over a replay's trials.
    async fn pass(
        &self,
        row: &ReplayRow,
        watching: &mut HashMap<SessionId, Subscription>,
    ) -> Result<Pass, Refusal> {
        if row.status != "running" {
            return Ok(Pass::Over);
        }
        let (spec, record) = shape::stored(row)?;
        let trials = self.store.trials(&row.id).await?;
        let (mut running, mut waiting) = (0, 0);
        let mut spent = 0.0;
        for trial_row in &trials {
            match trial_row.state.as_str() {
                "started" => {
                    // Watched before it is read, so an end after the read is heard.
                    if let Some(session) = session_of(trial_row) {
                        watching
                            .entry(session)
                            .or_insert_with(|| self.hub.subscribe(session));
                    }
                    match self.settle(row, &spec, &record, trial_row).await? {
                        (TrialStatus::Running, _) => running += 1,
                        (TrialStatus::Waiting, _) => waiting += 1,
                        (_, cost) => {
                            spent += cost;
                            if let Some(session) = session_of(trial_row) {
                                watching.remove(&session);
                            }
                        }
                    }
                }
                _ => spent += kept_cost(trial_row),
            }
        }
        let mut queued: std::collections::VecDeque<&TrialRow> = trials
            .iter()
            .filter(|trial| trial.state == "queued")
            .collect();
        while running < self.concurrency {
            let Some(trial_row) = queued.pop_front() else {
                break;
            };
            if let Some(max) = spec.max_cost_usd.filter(|max| spent >= *max) {
                let why = format!("the replay's maxCostUsd of ${max} was spent");
                let skipped = skipped(trial_row.trial, &why);
                self.store
                    .end_trial(
                        &row.id,
                        number(trial_row),
                        "skipped",
                        &result_json(&skipped),
                    )
                    .await?;
                continue;
            }
            match self.start(row, &spec, &record, trial_row).await? {
                Started::Running(session, subscription) => {
                    watching.insert(session, subscription);
                    running += 1;
                }
                Started::Ended => {}
                // The next pass tries again.
                Started::NotNow => {
                    queued.push_front(trial_row);
                    break;
                }
            }
        }
        let left = queued.len();
        if running > 0 {
            return Ok(Pass::Wait);
        }
        if left > 0 && waiting == 0 {
            return Ok(Pass::Retry);
        }
        if left > 0 || waiting > 0 {
            // Queued trials wait behind trials that wait for their person, who may take
            // days: let go until one answers.
            return Ok(Pass::LetGo);
        }
        // Refused while another driver's trial is queued or started: look again.
        match self.store.finish_replay(&row.id, "done", now_ms()).await? {
            true => Ok(Pass::Over),
            false => Ok(Pass::Wait),
        }
    }

    /// Reads a started trial; if its runs ended, scores it (asking the judge first, if the
    /// replay has one) and keeps it. Its status, and what it cost once it ended.
    async fn settle(
        &self,
        row: &ReplayRow,
        spec: &ReplayInput,
        record: &Record,
        trial_row: &TrialRow,
    ) -> Result<(TrialStatus, f64), Refusal> {
        let Some((mut reading, status)) = self.read_trial(trial_row, record.at_seq).await? else {
            let mut gone = skipped(trial_row.trial, "its branch is gone");
            gone.status = TrialStatus::Stopped;
            gone.session_id = trial_row.session_id.clone();
            let result = result_json(&gone);
            self.store
                .end_trial(&row.id, number(trial_row), "ended", &result)
                .await?;
            return Ok((TrialStatus::Stopped, 0.0));
        };
        if !matches!(
            status,
            TrialStatus::Finished | TrialStatus::Stopped | TrialStatus::Cancelled
        ) {
            return Ok((status, 0.0));
        }
        let mut scored = score::passed(&reading, spec.expect.as_ref());
        if scored.is_none() {
            // A finished trial whose judge has not spoken yet.
            if let Some(session) = session_of(trial_row) {
                self.judge(spec, record, session, &reading).await?;
                if let Some((again, _)) = self.read_trial(trial_row, record.at_seq).await? {
                    reading = again;
                }
            }
            scored = score::passed(&reading, spec.expect.as_ref());
        }
        let trial = shape::trial_of(trial_row, &reading, status, scored);
        self.store
            .end_trial(&row.id, number(trial_row), "ended", &result_json(&trial))
            .await?;
        Ok((status, trial.cost_usd.unwrap_or(0.0)))
    }

    /// Asks the replay's judge about a finished trial and records its verdict, and what
    /// the call used, in the trial's log. A judge that fails says so in its verdict.
    async fn judge(
        &self,
        spec: &ReplayInput,
        record: &Record,
        session: SessionId,
        reading: &Reading,
    ) -> Result<(), Refusal> {
        let Some(judge) = spec.expect.as_ref().and_then(|e| e.judge.as_ref()) else {
            return Ok(());
        };
        let texts = (
            record.text.as_str(),
            reading.final_text.as_str(),
            Some(record.recorded_text.as_str()).filter(|text| !text.is_empty()),
        );
        let calls = record.model_calls_before + reading.model_calls;
        let request = score::judge_request(judge, texts, calls);
        let (verdict, usage) = match self.runner.call_once(request).await {
            Ok((reply, usage)) => (score::read_verdict(&judge.model, &reply), usage),
            Err(error) => {
                let verdict = Verdict {
                    model: judge.model.clone(),
                    passed: false,
                    reason: format!("the judge could not be asked ({}): {error}", error.code),
                };
                (verdict, None)
            }
        };
        let mut events = vec![EventBody::Custom {
            name: shared::custom::REPLAY_VERDICT.into(),
            value: serde_json::to_value(&verdict).expect("a verdict serialises"),
        }];
        if let Some(usage) = usage {
            events.push(EventBody::Custom {
                name: shared::custom::USAGE.into(),
                value: serde_json::to_value(usage).expect("usage serialises"),
            });
        }
        self.runner.record_note(session, events).await
    }

    /// Starts a queued trial: its branch, then its message.
    async fn start(
        &self,
        row: &ReplayRow,
        spec: &ReplayInput,
        record: &Record,
        trial_row: &TrialRow,
    ) -> Result<Started, Refusal> {
        let Some(variant) = spec.variants.get(trial_row.variant as usize) else {
            return Err(Refusal::Internal("a trial of a variant its replay lacks"));
        };
        let mark = ReplayMark {
            replay_id: row.id.clone(),
            variant: variant.label.clone(),
            trial: trial_row.trial,
            source_session_id: row.session_id.clone(),
            from_seq: record.from_seq,
            to_seq: record.to_seq,
            tools: spec.tools,
            answers: spec.answers,
            system_prompt: variant.system_prompt.clone(),
            temperature: variant.temperature,
        };
        let message = NewMessage {
            model: variant.model.clone().or_else(|| record.model.clone()),
            attachments: record.attachments.clone(),
            replay: Some(mark),
            ..NewMessage::typed(record.text.clone(), None)
        };
        match self.runner.check_message(&message, row.owner) {
            Err(Refusal::Saturated | Refusal::TooManyQueuedRuns(_)) => return Ok(Started::NotNow),
            other => other?,
        }
        let parent = SessionId::parse(&row.session_id)
            .ok()
            .map(|id| self.store.session(id));
        let parent = match parent {
            Some(read) => read.await?,
            None => None,
        };
        let Some(parent) = parent.filter(|p| p.owner == row.owner) else {
            let gone = skipped(trial_row.trial, "the conversation replayed is gone");
            let result = result_json(&gone);
            self.store
                .end_trial(&row.id, number(trial_row), "skipped", &result)
                .await?;
            return Ok(Started::Ended);
        };
        let session = SessionId::generate();
        let id = session.to_string();
        if !self
            .store
            .start_trial(&row.id, number(trial_row), &id)
            .await?
        {
            return Ok(Started::NotNow);
        }
        let subscription = self.hub.subscribe(session);
        let title = title(&variant.label, trial_row.trial, spec.k, &parent.title);
        let redo = crate::agent::branches::Redo::for_replay(
            record.at_seq,
            record.text.clone(),
            record.attachments.clone(),
        );
        let started = async {
            redo.branch_as(&*self.store, &parent, session, &title)
                .await?;
            self.runner.post_message(session, row.owner, message).await
        };
        match started.await {
            Ok(_) => {}
            // For a while: the database busy or full, the run queues full. The trial goes
            // back in the queue (its branch, if made, away) and starts at a later pass.
            Err(
                Refusal::Store(StoreError::Unavailable(_) | StoreError::Full(_))
                | Refusal::Saturated
                | Refusal::TooManyQueuedRuns(_),
            ) => {
                tracing::info!(replay = row.id, "a trial could not start yet; it waits");
                if let Err(error) = self.runner.delete(session).await {
                    tracing::debug!(%error, "no branch to take away");
                }
                self.store
                    .requeue_trial(&row.id, number(trial_row), &id)
                    .await?;
                return Ok(Started::NotNow);
            }
            Err(refusal) => {
                let mut failed =
                    skipped(trial_row.trial, &format!("it could not start: {refusal}"));
                failed.status = TrialStatus::Stopped;
                failed.passed = Some(false);
                let result = result_json(&failed);
                self.store
                    .end_trial(&row.id, number(trial_row), "ended", &result)
                    .await?;
                return Ok(Started::Ended);
            }
        }
        Ok(Started::Running(session, subscription))
    }
}

/// A trial's branch, once it has one.
fn session_of(trial_row: &TrialRow) -> Option<SessionId> {
    trial_row
        .session_id
        .as_deref()
        .and_then(|id| SessionId::parse(id).ok())
}

/// A trial's variant and number, as its row is named.
fn number(trial_row: &TrialRow) -> (u32, u32) {
    (trial_row.variant, trial_row.trial)
}

/// What an ended trial cost, as kept.
fn kept_cost(trial_row: &TrialRow) -> f64 {
    trial_row
        .result
        .as_deref()
        .and_then(|json| serde_json::from_str::<shared::replays::Trial>(json).ok())
        .and_then(|trial| trial.cost_usd)
        .unwrap_or(0.0)
}

/// A trial branch's title: the variant, the trial and the conversation's title.
fn title(label: &str, trial: u32, k: u32, parent: &str) -> String {
    let title = format!("Replay {label} {trial}/{k} · {parent}");
    title.chars().take(200).collect()
}

/// Resolves when one of the watched sessions' runs ends (or its feed lags or closes: it
/// is read again). Never, when none is watched.
async fn a_run_ends(watching: &mut HashMap<SessionId, Subscription>) {
    if watching.is_empty() {
        return std::future::pending().await;
    }
    let waits = watching.values_mut().map(|subscription| {
        Box::pin(async move {
            loop {
                match subscription.recv().await {
                    Ok(published)
                        if published.frame.contains("\"RUN_FINISHED\"")
                            || published.frame.contains("\"RUN_ERROR\"") =>
                    {
                        return
                    }
                    Ok(_) => continue,
                    Err(_) => return,
                }
            }
        })
    });
    select_all(waits).await;
}

#[cfg(test)]
mod tests {
    use super::title;

    #[test]
    fn a_trials_title_names_its_variant_and_number() {
        assert_eq!(title("fast", 2, 3, "Plan"), "Replay fast 2/3 · Plan");
        assert_eq!(title("a", 1, 1, &"x".repeat(300)).chars().count(), 200);
    }
}
