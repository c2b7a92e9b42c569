//! Whether a trial passed: its end, what the replay expects of its last answer (texts it
//! holds or does not, a regular expression), and a judge's verdict; and the judge's call,
//! its prompt and how its reply is read.

use serde_json::Value;
use shared::replays::{Expect, Judge, Verdict};

use super::trial::{Ended, Reading};
use crate::agent::conversation::ChatMessage;
use crate::agent::engines::ModelRequest;

/// What the judge is told it does.
const JUDGE_PROMPT: &str = "You grade one answer of an AI assistant against a rubric. \
Reply with one JSON object and nothing else: {\"pass\": true or false, \"reason\": \"one \
sentence\"}.";

/// Whether an ended trial passed, and why not; `None` while its judge has not spoken.
pub fn passed(reading: &Reading, expect: Option<&Expect>) -> Option<(bool, Option<String>)> {
    match reading.ended.as_ref()? {
        Ended::Stopped(why) => return Some((false, Some(why.clone()))),
        Ended::Cancelled => return Some((false, Some("it was stopped".into()))),
        Ended::Finished => {}
    }
    let Some(expect) = expect else {
        return Some((true, None));
    };
    if let Err(why) = holds(expect, &reading.final_text) {
        return Some((false, Some(why)));
    }
    match (&expect.judge, &reading.verdict) {
        (None, _) => Some((true, None)),
        (Some(_), None) => None,
        (Some(_), Some(verdict)) if verdict.passed => Some((true, None)),
        (Some(_), Some(verdict)) => Some((false, Some(format!("the judge: {}", verdict.reason)))),
    }
}

/// Whether `text` holds what `expect` asks of it, besides the judge (why not, in words).
pub fn holds(expect: &Expect, text: &str) -> Result<(), String> {
    if let Some(missing) = expect.contains.iter().find(|t| !text.contains(t.as_str())) {
        return Err(format!("the answer does not contain “{missing}”"));
    }
    if let Some(found) = expect
        .not_contains
        .iter()
        .find(|t| text.contains(t.as_str()))
    {
        return Err(format!("the answer contains “{found}”"));
    }
    if let Some(pattern) = &expect.regex {
        // Checked when the replay was made.
        let regex = super::spec::compile(pattern)?;
        if !regex.is_match(text) {
            return Err(format!("the answer does not match /{pattern}/"));
        }
    }
    Ok(())
}

/// The judge's call on an answer to `message`: the rubric, the answer and, when given,
/// the answer recorded earlier for reference. `model_call_index`: the trial line's model
/// calls so far (a scripted engine's place).
pub fn judge_request(
    judge: &Judge,
    (message, answer, recorded): (&str, &str, Option<&str>),
    model_call_index: u64,
) -> ModelRequest {
    let mut prompt = format!(
        "Rubric:\n{}\n\nThe person's message:\n{message}\n\nThe answer to grade:\n{answer}",
        judge.rubric.trim()
    );
    if let Some(recorded) = recorded {
        prompt.push_str(&format!(
            "\n\nAn answer recorded earlier to the same message, for reference:\n{recorded}"
        ));
    }
    ModelRequest {
        conversation: vec![ChatMessage::user(&prompt)],
        tools: Vec::new(),
        model_call_index,
        system: Some(JUDGE_PROMPT.into()),
        model: Some(judge.model.clone()),
        summary: None,
        temperature: None,
    }
}

/// The judge's reply as a verdict: a JSON object with `pass` (or `passed`) and `reason`,
/// else a reply that begins with PASS or FAIL; anything else fails, saying so.
pub fn read_verdict(model: &str, reply: &str) -> Verdict {
    let verdict = |passed: bool, reason: String| Verdict {
        model: model.to_string(),
        passed,
        reason,
    };
    let object = match (reply.find('{'), reply.rfind('}')) {
        (Some(start), Some(end)) if start < end => {
            serde_json::from_str::<Value>(&reply[start..=end]).ok()
        }
        _ => None,
    };
    if let Some(object) = object {
        let pass = object.get("pass").or_else(|| object.get("passed"));
        if let Some(pass) = pass.and_then(Value::as_bool) {
            let reason = object["reason"].as_str().unwrap_or_default();
            return verdict(pass, cut(reason, 1_000));
        }
    }
    let upper = reply.trim_start().to_uppercase();
    let rest = || {
        let after = reply.trim_start().get(4..).unwrap_or_default();
        cut(after.trim_start_matches([':', ' ', '-']), 1_000)
    };
    if upper.starts_with("PASS") {
        return verdict(true, rest());
    }
    if upper.starts_with("FAIL") {
        return verdict(false, rest());
    }
    verdict(
        false,
        format!("the judge's reply could not be read: {}", cut(reply, 200)),
    )
}

fn cut(text: &str, chars: usize) -> String {
    text.chars().take(chars).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(text: &str) -> Reading {
        Reading {
            ended: Some(Ended::Finished),
            final_text: text.into(),
            ..Reading::default()
        }
    }

    #[test]
    fn every_part_of_what_is_expected_must_hold() {
        let expect = Expect {
            contains: vec!["Paris".into()],
            not_contains: vec!["London".into()],
            regex: Some(r"^The capital is \w+\.$".into()),
            judge: None,
        };
        assert_eq!(
            passed(&finished("The capital is Paris."), Some(&expect)),
            Some((true, None))
        );
        let (passed_, why) = passed(&finished("The capital is London."), Some(&expect)).unwrap();
        assert!(!passed_);
        assert!(why.unwrap().contains("does not contain “Paris”"));
        let stopped = Reading {
            ended: Some(Ended::Stopped("diverged".into())),
            ..Reading::default()
        };
        assert_eq!(
            passed(&stopped, None),
            Some((false, Some("diverged".into())))
        );
        assert_eq!(passed(&Reading::default(), None), None, "still running");
    }

    #[test]
    fn a_judged_trial_waits_for_its_verdict() {
        let expect = Expect {
            judge: Some(Judge {
                model: "j".into(),
                rubric: "says Paris".into(),
            }),
            ..Expect::default()
        };
        let mut reading = finished("Paris.");
        assert_eq!(passed(&reading, Some(&expect)), None);
        reading.verdict = Some(read_verdict("j", "FAIL: it says Lyon"));
        assert_eq!(
            passed(&reading, Some(&expect)),
            Some((false, Some("the judge: it says Lyon".into())))
        );
    }

    #[test]
    fn a_verdict_is_read_from_json_or_a_pass_fail_line() {
        let json = read_verdict("j", "Sure! {\"pass\": true, \"reason\": \"names Paris\"}");
        assert!(json.passed);
        assert_eq!(json.reason, "names Paris");
        assert!(!read_verdict("j", "fail - too long").passed);
        let unreadable = read_verdict("j", "maybe");
        assert!(!unreadable.passed);
        assert!(unreadable.reason.contains("could not be read"));
    }
}
