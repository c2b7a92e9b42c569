//! Prometheus metrics (`GET /metrics`, OpenMetrics text), with the `prometheus-client`
//! crate: every family is named `tandem_…`.
//!
//! One registry per process, as Prometheus client libraries keep it: the parts that count
//! (the writer, runs, sockets, engines) record into [`METRICS`] without a handle passed
//! around, and several apps in one test process share it (so tests of exact values run
//! the binary). What the database knows better than a process (interrupts waiting, across
//! every instance) is read from it when scraped.

use std::sync::LazyLock;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use shared::EventBody;

mod gen_ai;

pub use gen_ai::{GenAiMetrics, OperationLabels};

/// The process's metrics.
pub static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);

/// A run's end, by outcome.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabel {
    /// `success`, `interrupt`, `cancelled` or `error`.
    pub outcome: String,
}

/// A model that kept failing and the one called instead.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct FallbackLabels {
    pub from: String,
    pub to: String,
}

/// A rating of answers.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RatingLabel {
    /// `up` or `down`.
    pub rating: String,
}

/// A provider and model.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ModelLabels {
    pub provider: String,
    pub model: String,
}

/// Tokens of one kind for a provider and model.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TokenLabels {
    pub provider: String,
    pub model: String,
    /// `input`, `output`, `reasoning` or `cached_input`.
    pub kind: String,
}

/// A provider's failure, by Tandem's error code.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ErrorLabels {
    pub provider: String,
    pub code: String,
}

/// How a branch was made.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct BranchLabel {
    /// `fork`, `edit` or `regenerate`.
    pub how: String,
}

/// What a message sent while a run worked did.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WhileRunningLabel {
    /// `queue`, `interrupt` or `steer` (a refused one is not counted here).
    pub mode: String,
}

/// A provider.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ProviderLabel {
    pub provider: String,
}

/// Every family Tandem exports.
pub struct Metrics {
    registry: Registry,
    /// The GenAI conventions' histograms (not under the `tandem_` prefix).
    pub gen_ai: GenAiMetrics,
    pub runs_started: Counter,
    pub runs_finished: Family<OutcomeLabel, Counter>,
    pub events_appended: Counter,
    pub commit_seconds: Histogram,
    pub commit_batch_events: Histogram,
    pub sockets_live: Gauge,
    pub sockets_caught_up: Counter,
    pub model_call_seconds: Family<ModelLabels, Histogram>,
    pub model_tokens: Family<TokenLabels, Counter>,
    pub interrupts_waiting: Gauge,
    /// Bytes of attachments stored, on every instance (read from the database).
    pub attachment_bytes_stored: Gauge,
    /// Ratings of answers standing, by rating (read from the database).
    pub feedback: Family<RatingLabel, Gauge>,
    pub model_fallbacks: Family<FallbackLabels, Counter>,
    /// Runs stopped by their user's budget, by what they did (`paused`, `failed`).
    pub budget_stops: Family<OutcomeLabel, Counter>,
    pub answers: Family<OutcomeLabel, Counter>,
    pub provider_errors: Family<ErrorLabels, Counter>,
    pub provider_retries: Family<ProviderLabel, Counter>,
    pub webhooks: Family<OutcomeLabel, Counter>,
    pub branches: Family<BranchLabel, Counter>,
    pub while_running: Family<WhileRunningLabel, Counter>,
    pub attachments_uploaded: Counter,
    pub attachment_bytes_uploaded: Counter,
}

impl Metrics {
    fn new() -> Self {
        let model_call_seconds = Family::<ModelLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.05, 2.0, 12))
        });
        let mut metrics = Self {
            registry: Registry::with_prefix("tandem"),
            gen_ai: GenAiMetrics::new(),
            runs_started: Counter::default(),
            runs_finished: Family::default(),
            events_appended: Counter::default(),
            commit_seconds: Histogram::new(exponential_buckets(0.0001, 2.0, 16)),
            commit_batch_events: Histogram::new(exponential_buckets(1.0, 2.0, 14)),
            sockets_live: Gauge::default(),
            sockets_caught_up: Counter::default(),
            model_call_seconds,
            model_tokens: Family::default(),
            interrupts_waiting: Gauge::default(),
            attachment_bytes_stored: Gauge::default(),
            feedback: Family::default(),
            model_fallbacks: Family::default(),
            budget_stops: Family::default(),
            answers: Family::default(),
            provider_errors: Family::default(),
            provider_retries: Family::default(),
            webhooks: Family::default(),
            branches: Family::default(),
            while_running: Family::default(),
            attachments_uploaded: Counter::default(),
            attachment_bytes_uploaded: Counter::default(),
        };
        metrics.register();
        metrics
    }

    fn register(&mut self) {
        let r = &mut self.registry;
        r.register(
            "branches",
            "Branches made, by how (fork, edit, regenerate)",
            self.branches.clone(),
        );
        r.register(
            "attachments_uploaded",
            "Attachments stored (each upload, stored once or not)",
            self.attachments_uploaded.clone(),
        );
        r.register(
            "attachment_bytes_uploaded",
            "Bytes of the attachments uploaded",
            self.attachment_bytes_uploaded.clone(),
        );
        r.register(
            "messages_while_running",
            "Messages sent while a run worked that waited for it, by mode (queue, interrupt, steer)",
            self.while_running.clone(),
        );
        r.register(
            "runs_started",
            "Runs started (messages and answers)",
            self.runs_started.clone(),
        );
        r.register(
            "runs_finished",
            "Runs ended, by outcome (success, interrupt, cancelled, error)",
            self.runs_finished.clone(),
        );
        r.register(
            "events_appended",
            "Events committed to the log",
            self.events_appended.clone(),
        );
        r.register(
            "commit_duration_seconds",
            "Time one batch took to commit",
            self.commit_seconds.clone(),
        );
        r.register(
            "commit_batch_events",
            "Events per committed batch",
            self.commit_batch_events.clone(),
        );
        r.register(
            "sockets_live",
            "Session sockets open now",
            self.sockets_live.clone(),
        );
        r.register(
            "sockets_caught_up_from_log",
            "Times a socket that fell behind the live feed read what it missed from the log",
            self.sockets_caught_up.clone(),
        );
        r.register(
            "model_call_duration_seconds",
            "Model calls from request to last token, by provider and model",
            self.model_call_seconds.clone(),
        );
        r.register(
            "model_tokens",
            "Tokens models reported, by provider, model and kind",
            self.model_tokens.clone(),
        );
        r.register(
            "interrupts_waiting",
            "Interrupts waiting for a person's answer, on every instance (an AG-UI client's own tools are no person; read from the database when scraped)",
            self.interrupts_waiting.clone(),
        );
        r.register(
            "attachment_bytes_stored",
            "Bytes the attachments of every user take in the database, each content once per user (read from the database when scraped)",
            self.attachment_bytes_stored.clone(),
        );
        r.register(
            "model_fallbacks",
            "Model calls that moved on to the next of --fallback-models, by the model that kept failing and the one called instead",
            self.model_fallbacks.clone(),
        );
        r.register(
            "budget_stops",
            "Runs that reached their user's budget, by what they did: paused for the person or failed",
            self.budget_stops.clone(),
        );
        r.register(
            "feedback",
            "Ratings of answers standing, by rating (up, down), every user's, each user's latest per answer (read from the database when scraped)",
            self.feedback.clone(),
        );
        r.register(
            "answers",
            "Answers to interrupts, by outcome: resolved, cancelled, expired (the deadline passed), repeated (the same answer again), too_late (after expiry), refused (409/404/422)",
            self.answers.clone(),
        );
        r.register(
            "provider_errors",
            "Model calls that failed, by provider and error code",
            self.provider_errors.clone(),
        );
        r.register(
            "webhook_attempts",
            "Webhook delivery attempts, by outcome (delivered, retry, failed)",
            self.webhooks.clone(),
        );
        r.register(
            "provider_retries",
            "Model call attempts retried, by provider",
            self.provider_retries.clone(),
        );
    }

    /// The OpenMetrics text of every family.
    pub fn encode(&self) -> String {
        use prometheus_client::encoding::text::{encode_eof, encode_registry};
        let mut text = String::new();
        encode_registry(&mut text, &self.registry)
            .and_then(|()| encode_registry(&mut text, &self.gen_ai.registry))
            .and_then(|()| encode_eof(&mut text))
            .expect("writing to a String cannot fail");
        text
    }

    /// Counts a committed batch and the runs its events start and end.
    pub fn committed<'a>(&self, took: Duration, bodies: impl Iterator<Item = &'a EventBody>) {
        self.commit_seconds.observe(took.as_secs_f64());
        let mut events = 0u64;
        for body in bodies {
            events += 1;
            if matches!(body, EventBody::RunStarted { .. }) {
                self.runs_started.inc();
            } else if let Some(outcome) = crate::store::run_outcome(body) {
                self.finished(outcome);
            }
        }
        self.events_appended.inc_by(events);
        self.commit_batch_events.observe(events as f64);
    }

    fn finished(&self, outcome: &str) {
        let label = OutcomeLabel {
            outcome: outcome.into(),
        };
        self.runs_finished.get_or_create(&label).inc();
    }

    /// Counts an answer to an interrupt by what became of it.
    pub fn answered(&self, outcome: &str) {
        let label = OutcomeLabel {
            outcome: outcome.into(),
        };
        self.answers.get_or_create(&label).inc();
    }

    /// Records one model call's duration and the tokens its provider reported.
    pub fn model_call(
        &self,
        labels: ModelLabels,
        took: Duration,
        usage: Option<&shared::usage::CallUsage>,
        error: Option<&str>,
    ) {
        self.model_call_seconds
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
        let operation = OperationLabels {
            gen_ai_operation_name: "chat".into(),
            gen_ai_provider_name: labels.provider.clone(),
            gen_ai_request_model: labels.model.clone(),
            error_type: error.unwrap_or_default().into(),
        };
        let tokens = usage.map(|usage| (usage.input_tokens, usage.output_tokens));
        self.gen_ai.chat(operation, took.as_secs_f64(), tokens);
        let Some(usage) = usage else { return };
        for (kind, tokens) in [
            ("input", usage.input_tokens),
            ("output", usage.output_tokens),
            ("reasoning", usage.reasoning_tokens),
            ("cached_input", usage.cached_input_tokens),
        ] {
            let labels = TokenLabels {
                provider: labels.provider.clone(),
                model: labels.model.clone(),
                kind: kind.into(),
            };
            self.model_tokens.get_or_create(&labels).inc_by(tokens);
        }
    }

    /// Counts a failed model call.
    pub fn provider_error(&self, provider: &str, code: &str) {
        let labels = ErrorLabels {
            provider: provider.into(),
            code: code.into(),
        };
        self.provider_errors.get_or_create(&labels).inc();
    }

    /// Counts a model call that moved on from `from` to `to` (`--fallback-models`).
    pub fn model_fallback(&self, from: &str, to: &str) {
        let labels = FallbackLabels {
            from: from.into(),
            to: to.into(),
        };
        self.model_fallbacks.get_or_create(&labels).inc();
    }

    /// Counts a run that reached its user's budget: paused for its person, or failed.
    pub fn budget_stop(&self, paused: bool) {
        let outcome = match paused {
            true => "paused",
            false => "failed",
        };
        let label = OutcomeLabel {
            outcome: outcome.into(),
        };
        self.budget_stops.get_or_create(&label).inc();
    }

    /// Counts a branch made `how` (`fork`, `edit`, `regenerate`).
    pub fn branched(&self, how: &str) {
        let label = BranchLabel { how: how.into() };
        self.branches.get_or_create(&label).inc();
    }

    /// Counts a message that waited for a run, by its `whileRunning` mode.
    pub fn queued_message(&self, mode: &str) {
        let label = WhileRunningLabel { mode: mode.into() };
        self.while_running.get_or_create(&label).inc();
    }

    /// Counts an attachment stored, and its bytes.
    pub fn attachment_uploaded(&self, bytes: u64) {
        self.attachments_uploaded.inc();
        self.attachment_bytes_uploaded.inc_by(bytes);
    }

    /// Counts a webhook delivery attempt by what came of it.
    pub fn webhook(&self, outcome: &str) {
        let label = OutcomeLabel {
            outcome: outcome.into(),
        };
        self.webhooks.get_or_create(&label).inc();
    }

    /// Counts a retried model call attempt.
    pub fn provider_retry(&self, provider: &str) {
        let label = ProviderLabel {
            provider: provider.into(),
        };
        self.provider_retries.get_or_create(&label).inc();
    }
}

/// Counts a socket as live while it exists.
pub struct LiveSocket;

impl LiveSocket {
    /// A socket opened.
    pub fn opened() -> Self {
        METRICS.sockets_live.inc();
        LiveSocket
    }
}

impl Drop for LiveSocket {
    fn drop(&mut self) {
        METRICS.sockets_live.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_is_tandems_and_counters_end_in_total() {
        METRICS.provider_retry("openai");
        METRICS.provider_error("openai", "provider_unavailable");
        METRICS.answered("resolved");
        METRICS.webhook("delivered");
        METRICS.finished("success");
        let tokens = TokenLabels {
            provider: "openai".into(),
            model: "m".into(),
            kind: "input".into(),
        };
        METRICS.model_tokens.get_or_create(&tokens).inc();
        let text = METRICS.encode();
        let mut counters = Vec::new();
        for line in text.lines().filter(|l| l.starts_with("# TYPE")) {
            let mut words = line.split_whitespace().skip(2);
            let (name, kind) = (words.next().unwrap(), words.next().unwrap());
            assert!(name.starts_with("tandem_"), "{line}");
            assert!(
                !name.ends_with("_total"),
                "the suffix is the sample's: {line}"
            );
            if kind == "counter" {
                counters.push(name);
            }
        }
        assert!(counters.len() >= 9, "{counters:?}");
        for counter in &counters {
            let samples: Vec<&str> = text
                .lines()
                .filter(|l| !l.starts_with('#'))
                .map(|l| l.split(['{', ' ']).next().unwrap())
                .filter(|name| *name == *counter || name.starts_with(&format!("{counter}_")))
                .collect();
            assert!(!samples.is_empty(), "{counter} has a sample");
            let total = format!("{counter}_total");
            assert!(
                samples.iter().all(|s| *s == total),
                "{counter}: {samples:?}"
            );
        }
        assert!(
            text.contains("tandem_provider_retries_total{provider=\"openai\"}"),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"));
    }
}
