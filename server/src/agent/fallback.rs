//! `--fallback-models`: when the model called keeps failing before its first token (429,
//! or 5xx, after the provider client's own retries), the next model of the list takes the
//! call. Each switch is recorded before the next call as `CUSTOM tandem.model_fallback`
//! `{from, to, code, message}` (the page shows it), counted in
//! `tandem_model_fallbacks_total{from,to}`; the answering call's usage names its model as
//! every call's does. A failure after output began is the call's failure, as without a
//! list: what the person saw stays, and another model would not continue it.

use serde_json::json;
use shared::EventBody;

use super::engines::EngineError;

/// The errors another model may succeed at: the provider refused for load (429) or failed
/// (5xx) every retry.
const FALLS_BACK: &[&str] = &["rate_limited", "provider_unavailable"];

/// The models a call may fall back to, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fallbacks(Vec<String>);

impl Fallbacks {
    /// The list, as `--fallback-models` gives it (blank names and repeats left out).
    pub fn configured(models: &[String]) -> Self {
        let mut list: Vec<String> = Vec::new();
        for model in models.iter().map(|m| m.trim()).filter(|m| !m.is_empty()) {
            if !list.iter().any(|known| known == model) {
                list.push(model.to_string());
            }
        }
        Self(list)
    }

    /// Whether any model is listed (without one, a call is never made again).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The model to call after `failed` failed with `error` before any output, among those
    /// not `tried` yet; `None` when the failure is the call's to report.
    pub fn next(&self, failed: &EngineError, tried: &[String]) -> Option<&str> {
        if !FALLS_BACK.contains(&failed.code) {
            return None;
        }
        self.0
            .iter()
            .find(|model| !tried.contains(model))
            .map(String::as_str)
    }
}

/// The event that records a switch from `from` to `to` after `error`.
pub fn switched(from: &str, to: &str, error: &EngineError) -> EventBody {
    EventBody::Custom {
        name: shared::custom::MODEL_FALLBACK.into(),
        value: json!({"from": from, "to": to, "code": error.code, "message": error.message}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_load_and_server_failures_fall_back_each_model_once() {
        let list = Fallbacks::configured(&[" b ".into(), "c".into(), "b".into(), "".into()]);
        let busy = EngineError {
            code: "rate_limited",
            message: "429".into(),
        };
        assert_eq!(list.next(&busy, &["a".into()]), Some("b"));
        assert_eq!(list.next(&busy, &["a".into(), "b".into()]), Some("c"));
        assert_eq!(
            list.next(&busy, &["a".into(), "b".into(), "c".into()]),
            None
        );
        let refused = EngineError {
            code: "provider_rejected",
            message: "400".into(),
        };
        assert_eq!(
            list.next(&refused, &["a".into()]),
            None,
            "the request itself is wrong"
        );
    }
}
