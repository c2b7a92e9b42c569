//! Checking a replay request before anything is kept: each field, named when it is wrong
//! (`422 invalid_replay` with `details.field`).

use shared::replays::{ReplayInput, MAX_K, MAX_VARIANTS};

/// The longest variant label, in characters.
const MAX_LABEL: usize = 60;
/// The longest rubric, in characters.
const MAX_RUBRIC: usize = 4_000;
/// The most texts `contains` and `notContains` hold, each.
const MAX_TEXTS: usize = 20;
/// The longest regular expression, in bytes (its compiled size is bounded too).
const MAX_REGEX: usize = 1_000;

/// A field of a replay request that is wrong, and how.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct FieldError {
    /// The field's name as the API spells it (`variants`, `k`, `expect.regex`, …).
    pub field: &'static str,
    pub message: String,
}

fn refuse<T>(field: &'static str, message: impl Into<String>) -> Result<T, FieldError> {
    Err(FieldError {
        field,
        message: message.into(),
    })
}

/// Checks `input` against the server's `models` and its longest system prompt
/// (`max_prompt_bytes`).
pub fn check(
    input: &ReplayInput,
    models: &[String],
    max_prompt_bytes: usize,
) -> Result<(), FieldError> {
    if !(1..=MAX_K).contains(&input.k) {
        return refuse("k", format!("k must be 1 to {MAX_K}"));
    }
    if input.variants.is_empty() || input.variants.len() > MAX_VARIANTS {
        return refuse("variants", format!("give 1 to {MAX_VARIANTS} variants"));
    }
    let known = |model: &str| models.iter().any(|m| m == model);
    let listed = || models.join(", ");
    for (at, variant) in input.variants.iter().enumerate() {
        let label = variant.label.trim();
        if label.is_empty() || label.chars().count() > MAX_LABEL {
            return refuse(
                "variants.label",
                format!("a label is 1 to {MAX_LABEL} characters"),
            );
        }
        if input.variants[..at].iter().any(|v| v.label.trim() == label) {
            return refuse(
                "variants.label",
                format!("two variants are labelled `{label}`"),
            );
        }
        if let Some(model) = variant.model.as_deref().filter(|m| !known(m)) {
            return refuse(
                "variants.model",
                format!(
                    "no model `{}` here; the models are: {}",
                    cut(model),
                    listed()
                ),
            );
        }
        if let Some(prompt) = &variant.system_prompt {
            if prompt.trim().is_empty() || prompt.len() > max_prompt_bytes {
                return refuse(
                    "variants.systemPrompt",
                    format!("a system prompt is 1 to {max_prompt_bytes} bytes"),
                );
            }
        }
        if let Some(temperature) = variant.temperature {
            if !(0.0..=2.0).contains(&temperature) {
                return refuse("variants.temperature", "a temperature is 0 to 2");
            }
        }
    }
    if input
        .max_cost_usd
        .is_some_and(|cost| !cost.is_finite() || cost <= 0.0)
    {
        return refuse(
            "maxCostUsd",
            "maxCostUsd is a positive amount of US dollars",
        );
    }
    let Some(expect) = &input.expect else {
        return Ok(());
    };
    for (field, texts) in [
        ("expect.contains", &expect.contains),
        ("expect.notContains", &expect.not_contains),
    ] {
        if texts.len() > MAX_TEXTS || texts.iter().any(|t| t.is_empty() || t.len() > 1_000) {
            return refuse(
                field,
                format!("at most {MAX_TEXTS} texts of 1 to 1,000 bytes"),
            );
        }
    }
    if let Some(pattern) = &expect.regex {
        if pattern.len() > MAX_REGEX {
            return refuse("expect.regex", format!("at most {MAX_REGEX} bytes"));
        }
        compile(pattern).map_err(|message| FieldError {
            field: "expect.regex",
            message,
        })?;
    }
    if let Some(judge) = &expect.judge {
        if !known(&judge.model) {
            return refuse(
                "expect.judge.model",
                format!(
                    "no model `{}` here; the models are: {}",
                    cut(&judge.model),
                    listed()
                ),
            );
        }
        let rubric = judge.rubric.trim();
        if rubric.is_empty() || rubric.chars().count() > MAX_RUBRIC {
            return refuse(
                "expect.judge.rubric",
                format!("a rubric is 1 to {MAX_RUBRIC} characters"),
            );
        }
    }
    Ok(())
}

/// A regular expression of `expect.regex`, its compiled size bounded.
pub fn compile(pattern: &str) -> Result<regex::Regex, String> {
    regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .map_err(|error| error.to_string())
}

/// A value from the caller, cut short for an error message.
fn cut(text: &str) -> String {
    text.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use shared::replays::{Expect, Judge, Variant};

    use super::*;

    fn input() -> ReplayInput {
        ReplayInput {
            variants: vec![Variant {
                label: "a".into(),
                ..Variant::default()
            }],
            k: 3,
            ..ReplayInput::default()
        }
    }

    fn field(input: &ReplayInput) -> Option<&'static str> {
        check(input, &["m".into()], 100).err().map(|e| e.field)
    }

    #[test]
    fn each_bad_field_is_named() {
        assert_eq!(field(&input()), None);
        assert_eq!(field(&ReplayInput { k: 11, ..input() }), Some("k"));
        assert_eq!(field(&ReplayInput { k: 0, ..input() }), Some("k"));
        let mut twice = input();
        twice.variants.push(twice.variants[0].clone());
        assert_eq!(field(&twice), Some("variants.label"));
        let mut unknown = input();
        unknown.variants[0].model = Some("gpt-9".into());
        assert_eq!(field(&unknown), Some("variants.model"));
        let mut hot = input();
        hot.variants[0].temperature = Some(2.5);
        assert_eq!(field(&hot), Some("variants.temperature"));
        let mut long = input();
        long.variants[0].system_prompt = Some("x".repeat(101));
        assert_eq!(field(&long), Some("variants.systemPrompt"));
        let expect = |expect: Expect| ReplayInput {
            expect: Some(expect),
            ..input()
        };
        let regex = Expect {
            regex: Some("(".into()),
            ..Expect::default()
        };
        assert_eq!(field(&expect(regex)), Some("expect.regex"));
        let judge = Expect {
            judge: Some(Judge {
                model: "m".into(),
                rubric: " ".into(),
            }),
            ..Expect::default()
        };
        assert_eq!(field(&expect(judge)), Some("expect.judge.rubric"));
        let cost = ReplayInput {
            max_cost_usd: Some(-1.0),
            ..input()
        };
        assert_eq!(field(&cost), Some("maxCostUsd"));
    }
}
