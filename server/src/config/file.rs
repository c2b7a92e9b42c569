//! `tandem.toml`: every setting a flag takes, under the flag's name (`max-tokens = 2048`,
//! `require-approval = ["write_file"]`), read from the file `--config` (or `TANDEM_CONFIG`)
//! names. Its values become the flags' defaults, so a flag or an environment variable
//! still wins: flags > environment > file > defaults in code.
//!
//! [`load`] also reports every effective setting and where it came from, for
//! `--print-config`, with secrets masked: secret values, header values, URLs' user info (a
//! password or token) and all but the origin of webhook URLs.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches};

use super::Config;
use crate::domain::{hide_user_info, origin};

/// Settings the file may not hold: they say where the file is or what to do with it.
const NOT_IN_FILE: [&str; 4] = ["config", "print_config", "help", "version"];

/// The configuration and how it came about.
#[derive(Debug)]
pub struct Loaded {
    pub config: Config,
    /// Every setting with a value, in the order `--help` lists them.
    pub settings: Vec<Setting>,
}

/// One effective setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    /// The flag's name (`max-tokens`).
    pub key: String,
    /// Its value (`***` for a secret); a list's values joined by commas.
    pub value: String,
    /// `flag`, `env`, `file` or `default`.
    pub source: &'static str,
}

/// Why the settings cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A bad flag, `--help` or `--version`: clap prints it.
    #[error(transparent)]
    Clap(#[from] clap::Error),
    #[error("cannot read the config file {path}: {message}")]
    File { path: String, message: String },
}

/// Reads flags, environment and the config file into a [`Config`].
pub fn load<I, T>(args: I) -> Result<Loaded, LoadError>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let path = Config::command()
        .ignore_errors(true)
        .try_get_matches_from(&args)
        .ok()
        .and_then(|matches| matches.get_one::<PathBuf>("config").cloned());
    let mut command = Config::command();
    let mut from_file = BTreeSet::new();
    if let Some(path) = path {
        let shown = path.display().to_string();
        let fail = |message: String| LoadError::File {
            path: shown.clone(),
            message,
        };
        let text = std::fs::read_to_string(&path).map_err(|e| fail(e.to_string()))?;
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| fail(e.to_string()))?;
        for (key, value) in table {
            let (kebab, snake) = (key.replace('_', "-"), key.replace('-', "_"));
            let found = command.get_arguments().find(|arg| {
                arg.get_long() == Some(kebab.as_str()) || arg.get_id() == snake.as_str()
            });
            let id = found.map_or(snake.clone(), |arg| arg.get_id().to_string());
            let known = found.is_some();
            if id.ends_with("_api_key") {
                return Err(fail(format!(
                    "`{key}`: keep API keys out of this file; name a file that holds the key with `{key}-file`"
                )));
            }
            if !known || NOT_IN_FILE.contains(&id.as_str()) {
                return Err(fail(format!(
                    "`{key}` is not a setting; the settings are the flags of `tandem --help`, without their dashes"
                )));
            }
            let values = values_of(&value).ok_or_else(|| {
                fail(format!(
                    "`{key}` must be a string, number, boolean or a list of them"
                ))
            })?;
            // clap keeps defaults as `'static` strings; these live as long as the process.
            let values: Vec<&'static str> = values
                .into_iter()
                .map(|v| &*Box::leak(v.into_boxed_str()))
                .collect();
            command = command.mut_arg(id.clone(), |arg| arg.default_values(values));
            from_file.insert(id);
        }
    }
    let matches = command.try_get_matches_from_mut(&args)?;
    let config = Config::from_arg_matches(&matches)?;
    let settings = settings(&command, &matches, &from_file);
    Ok(Loaded { config, settings })
}

/// A TOML value as flag values.
fn values_of(value: &toml::Value) -> Option<Vec<String>> {
    match value {
        toml::Value::String(text) => Some(vec![text.clone()]),
        toml::Value::Integer(n) => Some(vec![n.to_string()]),
        toml::Value::Float(x) => Some(vec![x.to_string()]),
        toml::Value::Boolean(b) => Some(vec![b.to_string()]),
        toml::Value::Array(items) => items
            .iter()
            .map(|item| {
                values_of(item)
                    .filter(|v| v.len() == 1)
                    .map(|mut v| v.remove(0))
            })
            .collect(),
        _ => None,
    }
}

fn settings(
    command: &clap::Command,
    matches: &ArgMatches,
    from_file: &BTreeSet<String>,
) -> Vec<Setting> {
    command
        .get_arguments()
        .filter(|arg| !NOT_IN_FILE.contains(&arg.get_id().as_str()))
        .filter_map(|arg| {
            let id = arg.get_id().as_str();
            let raw = matches.get_raw(id)?;
            let value: Vec<String> = raw.map(|v| v.to_string_lossy().into_owned()).collect();
            let source = match matches.value_source(id)? {
                ValueSource::CommandLine => "flag",
                ValueSource::EnvVariable => "env",
                _ if from_file.contains(id) => "file",
                _ => "default",
            };
            let value = if is_secret(id) {
                "***".to_string()
            } else if id == "webhook_urls" {
                // A receiver's URL may hold a secret (a token in its path or query).
                let origins: Vec<String> = value.iter().map(|url| origin(url)).collect();
                origins.join(",")
            } else if id == "otel_headers" {
                // `key=value` pairs whose values are often API keys: the keys only.
                let names: Vec<String> = value
                    .iter()
                    .flat_map(|pairs| pairs.split(','))
                    .map(|pair| {
                        format!("{}=***", pair.split('=').next().unwrap_or_default().trim())
                    })
                    .collect();
                names.join(",")
            } else if id == "extra_headers" {
                // Header values may be credentials: show the names only.
                let names: Vec<String> = value
                    .iter()
                    .map(|header| format!("{}: ***", header.split(':').next().unwrap_or_default()))
                    .collect();
                names.join(",")
            } else {
                // Any URL's user info (`postgres://user:password@host/db`).
                let values: Vec<String> = value.iter().map(|v| hide_user_info(v)).collect();
                values.join(",")
            };
            Some(Setting {
                key: arg.get_long().map_or(id.replace('_', "-"), str::to_string),
                value,
                source,
            })
        })
        .collect()
}

/// Settings whose values are secrets (a path to a secret is not one).
fn is_secret(id: &str) -> bool {
    let secretive = ["key", "token", "secret", "password"];
    let mut words = id.split('_');
    words.any(|word| secretive.contains(&word)) && !id.ends_with("_file")
}

/// The settings as TOML a person can read (and paste into a `tandem.toml`).
pub fn render(settings: &[Setting]) -> String {
    let mut out = String::from(
        "# Tandem's effective configuration: flags > environment > config file > defaults\n",
    );
    for setting in settings {
        let value = toml::Value::String(setting.value.clone());
        out.push_str(&format!(
            "{} = {value}  # {}\n",
            setting.key, setting.source
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_file(text: &str, flags: &[&str]) -> Result<Loaded, LoadError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tandem.toml");
        std::fs::write(&path, text).unwrap();
        let mut args = vec!["tandem", "--config", path.to_str().unwrap()];
        args.extend_from_slice(flags);
        load(args)
    }

    fn source(loaded: &Loaded, key: &str) -> (String, &'static str) {
        let setting = loaded.settings.iter().find(|s| s.key == key).unwrap();
        (setting.value.clone(), setting.source)
    }

    #[test]
    fn the_file_sets_what_flags_do_not() {
        let text = "max-tokens = 2048\nengine = \"script\"\nscript = \"s.json\"\n\
                    require_approval = [\"calculator\", \"clock\"]\ntemperature = 0.5\n";
        let loaded = with_file(text, &["--max-tokens", "100"]).unwrap();
        assert_eq!(
            loaded.config.provider.max_tokens, 100,
            "a flag wins over the file"
        );
        assert_eq!(source(&loaded, "max-tokens"), ("100".into(), "flag"));
        assert_eq!(source(&loaded, "engine"), ("script".into(), "file"));
        assert_eq!(loaded.config.require_approval, ["calculator", "clock"]);
        assert_eq!(loaded.config.provider.temperature, Some(0.5));
        assert_eq!(source(&loaded, "heartbeat-interval-ms").1, "default");
    }

    #[test]
    fn a_bad_file_says_what_is_wrong() {
        let unknown = with_file("max_tokenz = 1", &[]).unwrap_err().to_string();
        assert!(
            unknown.contains("`max_tokenz` is not a setting"),
            "{unknown}"
        );
        let nested = with_file("[limits]\nx = 1", &[]).unwrap_err().to_string();
        assert!(nested.contains("not a setting"), "{nested}");
        let typed = with_file("max-tokens = \"many\"", &[])
            .unwrap_err()
            .to_string();
        assert!(
            typed.contains("max-tokens") || typed.contains("many"),
            "{typed}"
        );
        let broken = with_file("max-tokens = ", &[]).unwrap_err().to_string();
        assert!(broken.contains("config file"), "{broken}");
    }

    #[test]
    fn secrets_are_masked_and_paths_to_them_are_not() {
        assert!(is_secret("openai_api_key"));
        assert!(!is_secret("openai_api_key_file"));
        assert!(!is_secret("max_tokens"));
        let key = with_file("openai-api-key = \"sk-very-secret\"", &[]).unwrap_err();
        assert!(key.to_string().contains("openai-api-key-file"), "{key}");
        assert!(!key.to_string().contains("sk-very-secret"));
        let loaded = with_file("extra-header = [\"X-Api-Key: sk-very-secret\"]", &[]).unwrap();
        assert_eq!(
            source(&loaded, "extra-header"),
            ("X-Api-Key: ***".into(), "file")
        );
        assert!(!render(&loaded.settings).contains("sk-very-secret"));
        let urls = "database-url = \"postgres://tandem:pg-secret@db/tandem\"\n\
                    webhook-url = [\"https://hooks.example.com/t/hook-secret\"]\n";
        let loaded = with_file(urls, &[]).unwrap();
        assert_eq!(
            source(&loaded, "database-url").0,
            "postgres://***@db/tandem"
        );
        assert_eq!(
            source(&loaded, "webhook-url").0,
            "https://hooks.example.com"
        );
        let shown = render(&loaded.settings);
        assert!(!shown.contains("pg-secret") && !shown.contains("hook-secret"));
    }

    #[test]
    fn context_settings_come_from_the_file_too() {
        let text = "context-strategy = \"summarise\"\nmodel-context-tokens = [\"gpt-4o=5\", \"claude-*=9\"]\n";
        let loaded = with_file(text, &["--engine", "openai"]).unwrap();
        let policy = loaded.config.context_policy();
        use crate::config::context::Strategy;
        assert_eq!(policy.strategy, Strategy::Summarise);
        let budgets = [("gpt-4o".to_string(), 5), ("claude-*".to_string(), 9)];
        assert_eq!(policy.per_model, budgets);
        assert_eq!(
            source(&loaded, "context-strategy"),
            ("summarise".into(), "file")
        );
        let bad = with_file("model-context-tokens = [\"gpt-4o\"]", &[]).unwrap_err();
        assert!(bad.to_string().contains("MODEL=TOKENS"), "{bad}");
    }
}
