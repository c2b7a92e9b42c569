//! Placeholder: the Anthropic engine (being written).

use super::{Engine, EngineError, EngineInfo, EngineStream, ModelRequest};
use crate::config::ProviderSettings;

/// The Anthropic Messages engine.
pub struct AnthropicEngine {
    settings: ProviderSettings,
}

impl AnthropicEngine {
    /// An engine for these settings.
    pub fn new(settings: ProviderSettings) -> Result<Self, reqwest::Error> {
        Ok(Self { settings })
    }
}

impl Engine for AnthropicEngine {
    fn info(&self) -> EngineInfo {
        EngineInfo {
            kind: "anthropic".into(),
            model: self.settings.model.clone(),
        }
    }

    fn stream(&self, _request: ModelRequest) -> EngineStream {
        let error = EngineError {
            code: "not_implemented",
            message: "not yet".into(),
        };
        Box::pin(futures_util::stream::once(async move { Err(error) }))
    }
}
