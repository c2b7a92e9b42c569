//! Settings of the real model providers (OpenAI-compatible and Anthropic): where, with
//! which key (a [`Secret`]), with which timeouts and retries.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use crate::domain::Secret;

/// When and how often a provider request is retried (`--max-retries`, `--retry-base-ms`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// The first backoff; each retry doubles it, up to `max_delay`.
    pub base_delay: Duration,
    pub max_delay: Duration,
}

/// The default OpenAI base URL; another one means a compatible server.
pub const OPENAI_URL: &str = "https://api.openai.com/v1";

/// Provider flags and environment variables.
#[derive(Debug, Clone, Args)]
pub struct ProviderArgs {
    /// The model name; default `gpt-4.1-mini` (openai) or `claude-sonnet-4-5` (anthropic).
    #[arg(long, env = "TANDEM_MODEL")]
    pub model: Option<String>,
    /// Base URL of an OpenAI-compatible API (Ollama: http://localhost:11434/v1).
    #[arg(long, env = "OPENAI_BASE_URL", default_value = OPENAI_URL)]
    pub openai_base_url: String,
    /// A file holding the API key of the OpenAI-compatible API (else `OPENAI_API_KEY` is
    /// read; optional for local servers). Keys are never taken as flags: flags show in
    /// the process list.
    #[arg(long, env = "OPENAI_API_KEY_FILE")]
    pub openai_api_key_file: Option<PathBuf>,
    /// Refused with an explanation: keys on the command line leak to the process list.
    #[arg(long, hide = true)]
    pub openai_api_key: Option<String>,
    /// Base URL of the Anthropic API.
    #[arg(
        long,
        env = "ANTHROPIC_BASE_URL",
        default_value = "https://api.anthropic.com"
    )]
    pub anthropic_base_url: String,
    /// A file holding the Anthropic API key (else `ANTHROPIC_API_KEY` is read).
    #[arg(long, env = "ANTHROPIC_API_KEY_FILE")]
    pub anthropic_api_key_file: Option<PathBuf>,
    /// Refused with an explanation, like `--openai-api-key`.
    #[arg(long, hide = true)]
    pub anthropic_api_key: Option<String>,
    /// Sampling temperature (provider default if unset).
    #[arg(long, env = "TANDEM_TEMPERATURE")]
    pub temperature: Option<f32>,
    /// Most tokens one model call may produce.
    #[arg(long, env = "TANDEM_MAX_TOKENS", default_value_t = 4096)]
    pub max_tokens: u32,
    /// Anthropic extended thinking budget in tokens (at least 1024, below max tokens).
    #[arg(long, env = "TANDEM_THINKING_BUDGET")]
    pub thinking_budget: Option<u32>,
    /// Extra request headers, `Name: value`; repeat the flag or separate with `;`.
    #[arg(
        long = "extra-header",
        env = "TANDEM_EXTRA_HEADERS",
        value_delimiter = ';'
    )]
    pub extra_headers: Vec<Secret>,
    /// How long to wait for a connection to the provider, in ms.
    #[arg(long, env = "TANDEM_CONNECT_TIMEOUT_MS", default_value_t = 10_000)]
    pub connect_timeout_ms: u64,
    /// How long a response may go without sending a byte, in ms.
    #[arg(long, env = "TANDEM_READ_TIMEOUT_MS", default_value_t = 120_000)]
    pub read_timeout_ms: u64,
    /// Retries of a failed model call before its first token.
    #[arg(long, env = "TANDEM_MAX_RETRIES", default_value_t = 3)]
    pub max_retries: u32,
    /// The first retry's backoff window, in ms (doubles each retry, up to 30 s).
    #[arg(long, env = "TANDEM_RETRY_BASE_MS", default_value_t = 500)]
    pub retry_base_ms: u64,
}

/// Everything an HTTP engine needs, checked.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    pub base_url: String,
    pub api_key: Option<Secret>,
    pub model: String,
    pub temperature: Option<f32>,
    pub max_tokens: u32,
    pub thinking_budget: Option<u32>,
    /// Extra request headers; their values may be credentials, so they are secrets.
    pub extra_headers: Vec<(String, Secret)>,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    pub retry: RetryPolicy,
}

/// A provider setting that cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    #[error("the {0} engine needs an API key: set {1} (or pass --{2} <file>)")]
    MissingKey(&'static str, &'static str, &'static str),
    #[error(
        "API keys are not taken as flags (the process list would show them): set {0} or \
         pass --{1} <file>"
    )]
    KeyOnCommandLine(&'static str, &'static str),
    #[error("cannot read the API key file {0}: {1}")]
    KeyFile(String, String),
    #[error("--extra-header `{0}…` must look like `Name: value` with a valid HTTP name and value")]
    BadHeader(String),
    #[error("the API key contains characters an HTTP header cannot carry")]
    BadKey,
    #[error("--thinking-budget must be at least 1024 and below --max-tokens ({0})")]
    ThinkingBudget(u32),
    #[error("the base URL `{0}` must start with http:// or https://")]
    BaseUrl(String),
}

impl ProviderArgs {
    /// Settings for the OpenAI-compatible engine. A key is required only for OpenAI's own API.
    pub fn openai(&self) -> Result<ProviderSettings, ProviderError> {
        let source = KeySource {
            env: "OPENAI_API_KEY",
            flag: "openai-api-key-file",
            file: self.openai_api_key_file.as_deref(),
        };
        let key = source.read(self.openai_api_key.is_some())?;
        let url = self.openai_base_url.trim_end_matches('/').to_string();
        if url == OPENAI_URL && key.is_none() {
            return Err(source.missing("openai"));
        }
        self.settings(url, key, "gpt-4.1-mini")
    }

    /// Settings for the Anthropic engine.
    pub fn anthropic(&self) -> Result<ProviderSettings, ProviderError> {
        let source = KeySource {
            env: "ANTHROPIC_API_KEY",
            flag: "anthropic-api-key-file",
            file: self.anthropic_api_key_file.as_deref(),
        };
        let Some(key) = source.read(self.anthropic_api_key.is_some())? else {
            return Err(source.missing("anthropic"));
        };
        if let Some(budget) = self.thinking_budget {
            if budget < 1024 || budget >= self.max_tokens {
                return Err(ProviderError::ThinkingBudget(self.max_tokens));
            }
        }
        let url = self.anthropic_base_url.trim_end_matches('/').to_string();
        self.settings(url, Some(key), "claude-sonnet-4-5")
    }

    fn settings(
        &self,
        base_url: String,
        api_key: Option<Secret>,
        default_model: &str,
    ) -> Result<ProviderSettings, ProviderError> {
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(ProviderError::BaseUrl(base_url));
        }
        let extra_headers = self
            .extra_headers
            .iter()
            .map(Secret::expose)
            .filter(|header| !header.trim().is_empty())
            .map(|header| match header.split_once(':') {
                Some((name, value)) if valid_header(name.trim(), value.trim()) => {
                    Ok((name.trim().to_string(), Secret::from(value)))
                }
                // Only the name is shown: the value may be a credential.
                _ => Err(ProviderError::BadHeader(
                    header
                        .split(':')
                        .next()
                        .unwrap_or_default()
                        .trim()
                        .chars()
                        .take(60)
                        .collect(),
                )),
            })
            .collect::<Result<_, _>>()?;
        if let Some(key) = &api_key {
            if reqwest::header::HeaderValue::from_str(key.expose()).is_err() {
                return Err(ProviderError::BadKey);
            }
        }
        Ok(ProviderSettings {
            base_url,
            api_key,
            model: self.model.clone().unwrap_or_else(|| default_model.into()),
            temperature: self.temperature,
            max_tokens: self.max_tokens,
            thinking_budget: self.thinking_budget,
            extra_headers,
            connect_timeout: Duration::from_millis(self.connect_timeout_ms),
            read_timeout: Duration::from_millis(self.read_timeout_ms),
            retry: RetryPolicy {
                max_retries: self.max_retries,
                base_delay: Duration::from_millis(self.retry_base_ms),
                max_delay: Duration::from_secs(30),
            },
        })
    }
}

/// The key from `file` if given, else from the environment variable `env`; empty means
/// none.
/// Where a provider's API key comes from: its file (`--<flag>`), else its environment
/// variable.
struct KeySource<'a> {
    env: &'static str,
    flag: &'static str,
    file: Option<&'a Path>,
}

impl KeySource<'_> {
    /// The key, if one is given; refused if it was given on the command line
    /// (`on_command_line`), where any user of the machine can read it.
    fn read(&self, on_command_line: bool) -> Result<Option<Secret>, ProviderError> {
        if on_command_line {
            return Err(ProviderError::KeyOnCommandLine(self.env, self.flag));
        }
        let text = match self.file {
            Some(path) => std::fs::read_to_string(path)
                .map_err(|e| ProviderError::KeyFile(path.display().to_string(), e.to_string()))?,
            None => std::env::var(self.env).unwrap_or_default(),
        };
        let key = text.trim();
        Ok((!key.is_empty()).then(|| Secret::from(key)))
    }

    /// The error of `provider` without a key.
    fn missing(&self, provider: &'static str) -> ProviderError {
        ProviderError::MissingKey(provider, self.env, self.flag)
    }
}

impl ProviderSettings {
    /// Every secret these settings hold (the key and the extra header values), for
    /// scrubbing text that leaves the server.
    pub fn secrets(&self) -> Vec<Secret> {
        let headers = self.extra_headers.iter().map(|(_, value)| value.clone());
        self.api_key.iter().cloned().chain(headers).collect()
    }
}

fn valid_header(name: &str, value: &str) -> bool {
    reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_ok()
        && reqwest::header::HeaderValue::from_str(value).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        provider: ProviderArgs,
    }

    fn args(flags: &[&str]) -> ProviderArgs {
        let mut all = vec!["tandem"];
        all.extend_from_slice(flags);
        Flags::parse_from(all).provider
    }

    fn key_file(key: &str) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        std::fs::write(&path, format!("{key}\n")).unwrap();
        (dir, path.display().to_string())
    }

    #[test]
    fn keys_and_header_values_never_show_in_debug_output() {
        let (_dir, file) = key_file("sk-ant-secret");
        let parsed = args(&[
            "--anthropic-api-key-file",
            &file,
            "--extra-header",
            "X-Team-Auth: hidden-value",
        ]);
        let settings = parsed.anthropic().unwrap();
        let debug = format!("{parsed:?}{settings:?}");
        assert!(
            !debug.contains("sk-ant-secret") && !debug.contains("hidden-value"),
            "{debug}"
        );
        assert_eq!(settings.api_key.as_ref().unwrap().expose(), "sk-ant-secret");
        assert_eq!(settings.secrets().len(), 2);
    }

    #[test]
    fn a_missing_key_says_what_to_set_and_keys_as_flags_are_refused() {
        let (_dir, missing) = key_file("");
        let error = args(&["--anthropic-api-key-file", &missing])
            .anthropic()
            .unwrap_err()
            .to_string();
        assert!(error.contains("ANTHROPIC_API_KEY"), "{error}");
        let local = args(&["--openai-base-url", "http://localhost:11434/v1"]);
        assert!(local.openai().is_ok(), "local servers need no key");
        let flag = args(&["--anthropic-api-key", "sk-ant-x"])
            .anthropic()
            .unwrap_err();
        assert!(flag.to_string().contains("process list"), "{flag}");
        assert!(!flag.to_string().contains("sk-ant-x"));
    }

    #[test]
    fn headers_and_budgets_are_checked() {
        let parsed = args(&["--extra-header", "X-Team: a;OpenAI-Organization: org"]);
        let settings = parsed
            .settings("http://x".into(), None, "m")
            .expect("valid headers");
        assert_eq!(settings.extra_headers[1].0, "OpenAI-Organization");
        let bad = args(&["--openai-base-url", "http://x", "--extra-header", "nocolon"]);
        assert_eq!(
            bad.openai().unwrap_err(),
            ProviderError::BadHeader("nocolon".into())
        );
        let (_dir, file) = key_file("k");
        let budget = args(&["--anthropic-api-key-file", &file, "--thinking-budget", "10"]);
        assert!(budget.anthropic().is_err());
    }
}
