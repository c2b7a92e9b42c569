//! The GenAI semantic conventions' client metrics (1.42.0), in Prometheus naming:
//! `gen_ai.client.token.usage` as `gen_ai_client_token_usage` and
//! `gen_ai.client.operation.duration` as `gen_ai_client_operation_duration_seconds`, with
//! the conventions' attributes as labels and their advised bucket boundaries. Not under
//! the `tandem_` prefix: dashboards made for the conventions find them by these names.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

/// The conventions' advised boundaries of `gen_ai.client.token.usage`.
const TOKEN_BUCKETS: [f64; 14] = [
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0, 67108864.0,
];
/// The conventions' advised boundaries of `gen_ai.client.operation.duration`, in seconds.
const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/// One model call's labels, as the conventions name its attributes.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OperationLabels {
    pub gen_ai_operation_name: String,
    pub gen_ai_provider_name: String,
    pub gen_ai_request_model: String,
    /// The call's error code (empty when it succeeded; Prometheus reads an empty label
    /// as absent).
    pub error_type: String,
}

/// Tokens of one type (`input` or `output`) of one model call.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TokenLabels {
    pub gen_ai_operation_name: String,
    pub gen_ai_provider_name: String,
    pub gen_ai_request_model: String,
    pub gen_ai_token_type: String,
}

/// The two histograms, in a registry of their own (no prefix).
pub struct GenAiMetrics {
    pub(super) registry: Registry,
    token_usage: Family<TokenLabels, Histogram>,
    operation_duration: Family<OperationLabels, Histogram>,
}

impl GenAiMetrics {
    pub(super) fn new() -> Self {
        let token_usage = Family::<TokenLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(TOKEN_BUCKETS)
        });
        let operation_duration = Family::<OperationLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(DURATION_BUCKETS)
        });
        let mut registry = Registry::default();
        registry.register(
            "gen_ai_client_token_usage",
            "Number of input and output tokens used (gen_ai.client.token.usage)",
            token_usage.clone(),
        );
        registry.register_with_unit(
            "gen_ai_client_operation_duration",
            "GenAI operation duration (gen_ai.client.operation.duration)",
            Unit::Seconds,
            operation_duration.clone(),
        );
        Self {
            registry,
            token_usage,
            operation_duration,
        }
    }

    /// Records one `chat` call: its duration, and its tokens when the provider reported
    /// them.
    pub fn chat(&self, labels: OperationLabels, seconds: f64, tokens: Option<(u64, u64)>) {
        if let Some((input, output)) = tokens {
            for (kind, count) in [("input", input), ("output", output)] {
                let token_labels = TokenLabels {
                    gen_ai_operation_name: labels.gen_ai_operation_name.clone(),
                    gen_ai_provider_name: labels.gen_ai_provider_name.clone(),
                    gen_ai_request_model: labels.gen_ai_request_model.clone(),
                    gen_ai_token_type: kind.into(),
                };
                self.token_usage
                    .get_or_create(&token_labels)
                    .observe(count as f64);
            }
        }
        self.operation_duration
            .get_or_create(&labels)
            .observe(seconds);
    }
}
