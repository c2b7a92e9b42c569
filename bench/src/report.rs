//! The result of a run: one [`Row`] per figure, printed as a table and written as JSON
//! to `target/bench/<timestamp>.json` and `target/bench/latest.json`.
//!
//! Rows only carry what the figures measured; judging a figure against its target is
//! the figure's job, failing the run on a correctness problem is `main`'s.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::machine::Facts;

/// How a figure compares with its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Met,
    Missed,
    /// A figure without a target (shown for context).
    Info,
    /// The figure could not be measured here (the reason is in the row).
    NotMeasured,
    /// The measurement ran into an error or a correctness failure.
    Failed,
}

impl Verdict {
    /// Met if `ok`, else missed.
    pub fn of(ok: bool) -> Self {
        if ok {
            Self::Met
        } else {
            Self::Missed
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Met => "met",
            Self::Missed => "MISSED",
            Self::Info => "-",
            Self::NotMeasured => "not measured",
            Self::Failed => "FAILED",
        }
    }
}

/// One line of the table.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub figure: String,
    pub tandem: String,
    pub baseline: String,
    pub ratio: Option<f64>,
    pub target: String,
    pub verdict: Verdict,
    /// The raw numbers behind the line.
    pub data: Value,
}

impl Row {
    /// A row with only its name; fill in the rest with the builder methods.
    pub fn new(figure: impl Into<String>) -> Self {
        Self {
            figure: figure.into(),
            tandem: String::new(),
            baseline: "-".into(),
            ratio: None,
            target: "-".into(),
            verdict: Verdict::Info,
            data: Value::Null,
        }
    }

    pub fn tandem(mut self, text: impl Into<String>) -> Self {
        self.tandem = text.into();
        self
    }

    pub fn baseline(mut self, text: impl Into<String>) -> Self {
        self.baseline = text.into();
        self
    }

    pub fn ratio(mut self, ratio: f64) -> Self {
        self.ratio = ratio.is_finite().then_some(ratio);
        self
    }

    /// The target and whether it was met.
    pub fn target(mut self, text: impl Into<String>, verdict: Verdict) -> Self {
        self.target = text.into();
        self.verdict = verdict;
        self
    }

    pub fn data(mut self, data: Value) -> Self {
        self.data = data;
        self
    }

    /// A figure that could not be measured, and why.
    pub fn not_measured(figure: impl Into<String>, why: impl Into<String>) -> Self {
        let mut row = Self::new(figure).tandem(format!("not measured: {}", why.into()));
        row.verdict = Verdict::NotMeasured;
        row
    }

    /// A figure whose measurement failed.
    pub fn failed(figure: impl Into<String>, why: impl Into<String>) -> Self {
        let mut row = Self::new(figure).tandem(format!("error: {}", why.into()));
        row.verdict = Verdict::Failed;
        row
    }
}

/// Everything a run found.
#[derive(Debug, Serialize)]
pub struct Report {
    pub started_at: String,
    pub mode: &'static str,
    pub profile: &'static str,
    pub machine_before: Facts,
    pub machine_after: Option<Facts>,
    /// Share of all cores busy during a quiet second before the run and after it.
    pub cpu_busy_before: Option<f64>,
    pub cpu_busy_after: Option<f64>,
    pub elapsed_seconds: f64,
    pub rows: Vec<Row>,
    /// Correctness failures (lost, duplicated or out-of-order frames, errors).
    pub failures: Vec<String>,
}

impl Report {
    /// The table, Markdown-style so it pastes into an issue.
    pub fn table(&self) -> String {
        let header = ["figure", "Tandem", "baseline", "ratio", "target", "verdict"];
        let lines: Vec<[String; 6]> = self
            .rows
            .iter()
            .map(|row| {
                [
                    row.figure.clone(),
                    row.tandem.clone(),
                    row.baseline.clone(),
                    row.ratio.map_or("-".into(), |r| format!("{r:.2}")),
                    row.target.clone(),
                    row.verdict.label().to_string(),
                ]
            })
            .collect();
        let mut widths = header.map(str::len);
        for line in &lines {
            for (width, cell) in widths.iter_mut().zip(line) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let render = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .zip(widths)
                .map(|(cell, width)| format!("{cell:<width$}"))
                .collect();
            format!("| {} |\n", padded.join(" | "))
        };
        let mut out = render(&header.map(String::from));
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        out.push_str(&render(&rule));
        for line in &lines {
            out.push_str(&render(line));
        }
        out
    }

    /// Writes `<dir>/<timestamp>.json` and `<dir>/latest.json`; returns the first path.
    pub fn write(&self, dir: &Path) -> anyhow::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let json = serde_json::to_string_pretty(self)?;
        let stamp = self.started_at.replace([':', '-'], "").replace('.', "_");
        let path = dir.join(format!("{stamp}.json"));
        std::fs::write(&path, &json)?;
        std::fs::write(dir.join("latest.json"), &json)?;
        Ok(path)
    }
}
