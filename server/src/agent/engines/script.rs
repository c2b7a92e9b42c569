//! The `script` engine: replays a JSON file of model turns, one per model call.
//!
//! Format: `{"turns":[{"reasoning":"…","text":"…","toolCalls":[{"name":"…","arguments":{…}}],
//! "usage":{"model":"…","inputTokens":…}}]}` (every part optional; `usage` is reported as
//! the call's token counts).
//! The turn taken is the session's count of model calls so far, so the position survives
//! restarts; a turn's `byModel` holds the turn a call naming one of those models gets
//! instead. Past the last turn the call fails with `script_exhausted`.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use crate::agent::context::summary::SummaryRequest;

use super::{stream_turn, Engine, EngineError, EngineInfo, EngineStream, ModelRequest, Turn};

/// Why a script could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("cannot read script {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("script {path} is not a valid Tandem script: {source}")]
    Parse {
        path: String,
        source: serde_json::Error,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Script {
    turns: Vec<Turn>,
}

/// Replays scripted turns.
pub struct ScriptEngine {
    turns: Vec<Turn>,
    delay: Duration,
}

impl ScriptEngine {
    /// Loads a script file.
    pub fn load(path: &Path, delay: Duration) -> Result<Self, ScriptError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read {
            path: shown.clone(),
            source,
        })?;
        let script: Script = serde_json::from_str(&text).map_err(|source| ScriptError::Parse {
            path: shown,
            source,
        })?;
        Ok(Self::from_turns(script.turns, delay))
    }

    /// An engine over in-memory turns.
    pub fn from_turns(turns: Vec<Turn>, delay: Duration) -> Self {
        Self { turns, delay }
    }
}

impl Engine for ScriptEngine {
    fn info(&self) -> EngineInfo {
        EngineInfo {
            kind: "script".into(),
            model: format!("script ({} turns)", self.turns.len()),
        }
    }

    fn stream(&self, request: ModelRequest) -> EngineStream {
        let index = request.model_call_index as usize;
        match self.turns.get(index) {
            Some(turn) => {
                let picked = request.model.as_ref().and_then(|m| turn.by_model.get(m));
                stream_turn(picked.unwrap_or(turn).clone(), self.delay)
            }
            None => {
                let error = EngineError {
                    code: "script_exhausted",
                    message: format!(
                        "the script has {} turns and this is model call {}",
                        self.turns.len(),
                        index + 1
                    ),
                };
                Box::pin(futures_util::stream::once(async move { Err(error) }))
            }
        }
    }

    /// A script holds model turns only: its summaries are the demo's deterministic ones.
    fn summarise(&self, request: SummaryRequest) -> EngineStream {
        stream_turn(super::demo::offline_summary(&request), Duration::ZERO)
    }
}
