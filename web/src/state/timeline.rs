//! How a run's timeline reads: one row per model call, tool call and wait for a person,
//! each with its words and its bar's place on the run's scale, and the run's total. Pure,
//! tested on the host; the times are the log's ([`shared::timeline`]).

use shared::decimal::tenths;
use shared::timeline::{HumanWait, ItemDetail, ModelCall, RunTimeline, TimelineItem};

use super::usage::{dollars, tokens};

/// What a row is, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    Model,
    Tool,
    Wait,
}

/// One row of the waterfall.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineRow {
    pub kind: RowKind,
    /// What it was: `Model gpt-4.1`, `Tool calculator`, `Waited for your answer`.
    pub label: String,
    /// How long and what it did: `1.2 s · first token 320 ms · 1.2k in · 40 out`.
    pub detail: String,
    /// Its bar: where it begins and how wide it is, in percent of the run's span.
    pub left: f64,
    pub width: f64,
    /// It failed (a model call that fell back or ended the run, a tool's error).
    pub failed: bool,
}

/// The rows of a run and its total line; `now_ms` ends what still goes on.
pub fn rows(run: &RunTimeline, now_ms: i64) -> (Vec<TimelineRow>, String) {
    let start = run.started_ms;
    let end_of = |item: &TimelineItem| item.end_ms.unwrap_or(now_ms).max(item.start_ms);
    let end = run
        .items
        .iter()
        .map(end_of)
        .chain(run.ended_ms)
        .max()
        .unwrap_or(start)
        .max(start + 1);
    let scale = (end - start) as f64;
    // Time and rows of each kind (a tool can take under a millisecond: it still counts).
    let mut spent = [0i64; 3];
    let mut seen = [0usize; 3];
    let rows = run
        .items
        .iter()
        .map(|item| {
            let took = end_of(item) - item.start_ms;
            let (kind, label, detail, failed) = match &item.detail {
                ItemDetail::Model(call) => model(call, item, took),
                ItemDetail::Tool(tool) => (
                    RowKind::Tool,
                    format!("Tool {}", tool.name),
                    match tool.failed {
                        true => format!("{} · failed", duration(took)),
                        false => duration(took),
                    },
                    tool.failed,
                ),
                ItemDetail::Wait(wait) => {
                    (RowKind::Wait, waited(wait), wait_detail(wait, took), false)
                }
            };
            spent[kind as usize] += took;
            seen[kind as usize] += 1;
            TimelineRow {
                kind,
                label,
                detail,
                left: (item.start_ms - start) as f64 * 100.0 / scale,
                width: (took as f64 * 100.0 / scale).max(0.5),
                failed,
            }
        })
        .collect();
    let whole = run
        .ended_ms
        .map_or_else(|| "so far".to_string(), |ended| duration(ended - start));
    let mut total = vec![
        format!("Run {whole}"),
        format!("models {}", duration(spent[0])),
    ];
    if seen[1] > 0 {
        total.push(format!("tools {}", duration(spent[1])));
    }
    if seen[2] > 0 {
        total.push(format!("waiting for you {}", duration(spent[2])));
    }
    (rows, total.join(" · "))
}

fn model(call: &ModelCall, item: &TimelineItem, took: i64) -> (RowKind, String, String, bool) {
    let label = match call.model() {
        Some(model) => format!("Model {model}"),
        None => "Model call".to_string(),
    };
    let mut parts = vec![duration(took)];
    if let Some(first) = call.first_chunk_ms {
        parts.push(format!("first token {}", duration(first - item.start_ms)));
    }
    if let Some(usage) = &call.usage {
        parts.push(format!(
            "{} in · {} out",
            tokens(usage.input_tokens),
            tokens(usage.output_tokens)
        ));
        if let Some(cost) = usage.cost_usd {
            parts.push(dollars(cost));
        }
        if usage.retries > 0 {
            parts.push(format!("retried {}×", usage.retries));
        }
    }
    if let Some(to) = &call.fallback_to {
        let why = call.error.as_deref().unwrap_or("failed");
        parts.push(format!("{why}: fell back to {to}"));
    } else if let Some(error) = &call.error {
        parts.push(format!("failed: {error}"));
    }
    (
        RowKind::Model,
        label,
        parts.join(" · "),
        call.error.is_some(),
    )
}

fn waited(wait: &HumanWait) -> String {
    match wait.reason.as_str() {
        "input_required" => "Waited for your answer",
        "tool_approval" => "Waited for your approval",
        "budget" => "Waited for your decision on the budget",
        "client_tools" => "Waited for the app's tools",
        _ => "Waited for you",
    }
    .to_string()
}

fn wait_detail(wait: &HumanWait, took: i64) -> String {
    match &wait.answer {
        Some(answer) => format!("{} · {answer}", duration(took)),
        None => format!("{} · still waiting", duration(took)),
    }
}

/// `0 ms`, `320 ms`, `4.2 s`, `3 min 5 s`, `2 h 14 min`, `3 d 4 h`.
pub fn duration(ms: i64) -> String {
    let ms = ms.max(0) as u64;
    let (s, min, h, d) = (ms / 1000, ms / 60_000, ms / 3_600_000, ms / 86_400_000);
    match ms {
        0..=999 => format!("{ms} ms"),
        1_000..=59_999 => format!("{} s", tenths(ms, 1_000)),
        60_000..=3_599_999 => format!("{min} min {} s", s % 60),
        3_600_000..=86_399_999 => format!("{h} h {} min", min % 60),
        _ => format!("{d} d {} h", h % 24),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::timeline::{RunEnd, ToolRun};
    use shared::usage::CallUsage;

    fn item(start_ms: i64, end_ms: Option<i64>, detail: ItemDetail) -> TimelineItem {
        TimelineItem {
            first_seq: 1,
            start_ms,
            end_ms,
            detail,
        }
    }

    #[test]
    fn durations_read_at_every_scale() {
        assert_eq!(duration(0), "0 ms");
        assert_eq!(duration(320), "320 ms");
        assert_eq!(duration(4_240), "4.2 s");
        assert_eq!(duration(185_000), "3 min 5 s");
        assert_eq!(duration(2 * 3_600_000 + 14 * 60_000), "2 h 14 min");
        assert_eq!(duration(3 * 86_400_000 + 4 * 3_600_000), "3 d 4 h");
    }

    #[test]
    fn a_run_reads_as_rows_on_its_own_scale() {
        let call = ModelCall {
            usage: Some(CallUsage {
                model: Some("gpt-4.1".into()),
                input_tokens: 1200,
                output_tokens: 40,
                cost_usd: Some(0.0042),
                ..CallUsage::default()
            }),
            first_chunk_ms: Some(1_320),
            ..ModelCall::default()
        };
        let tool = ToolRun {
            tool_call_id: "c".into(),
            name: "calculator".into(),
            failed: true,
            ..ToolRun::default()
        };
        let wait = HumanWait {
            interrupt_id: "i".into(),
            reason: "input_required".into(),
            ..HumanWait::default()
        };
        let run = RunTimeline {
            run_id: "r".into(),
            first_seq: 1,
            started_ms: 1_000,
            ended_ms: Some(3_000),
            end: RunEnd::Paused,
            resumes_run_id: None,
            trace_parent: None,
            input_text: None,
            items: vec![
                item(1_000, Some(2_000), ItemDetail::Model(call)),
                item(2_000, Some(2_500), ItemDetail::Tool(tool)),
                item(3_000, None, ItemDetail::Wait(wait)),
            ],
        };
        let (rows, total) = rows(&run, 5_000);
        assert_eq!(rows[0].label, "Model gpt-4.1");
        assert_eq!(
            rows[0].detail,
            "1.0 s · first token 320 ms · 1.2k in · 40 out · $0.0042"
        );
        assert_eq!(
            (rows[0].left, rows[0].width),
            (0.0, 25.0),
            "on a 4 s scale: to now"
        );
        assert_eq!(rows[1].detail, "500 ms · failed");
        assert!(rows[1].failed);
        assert_eq!(rows[2].label, "Waited for your answer");
        assert_eq!(rows[2].detail, "2.0 s · still waiting");
        assert_eq!((rows[2].left, rows[2].width), (50.0, 50.0));
        assert_eq!(
            total,
            "Run 2.0 s · models 1.0 s · tools 500 ms · waiting for you 2.0 s"
        );
    }
}
