//! Latency samples and their percentiles (nearest rank), in nanoseconds.
//!
//! Only arithmetic: no clocks, no I/O.

use serde::Serialize;

/// p50/p99/p99.9/max of a set of samples.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Summary {
    pub count: usize,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

impl Summary {
    /// Summarises `samples` (sorted in place).
    pub fn of(samples: &mut [u64]) -> Self {
        samples.sort_unstable();
        Self {
            count: samples.len(),
            p50_ns: percentile(samples, 50.0),
            p99_ns: percentile(samples, 99.0),
            p999_ns: percentile(samples, 99.9),
            max_ns: samples.last().copied().unwrap_or(0),
        }
    }

    /// `p50 / p99 / p99.9 / max` in milliseconds.
    pub fn display_ms(&self) -> String {
        format!(
            "{} / {} / {} / {} ms",
            ms(self.p50_ns),
            ms(self.p99_ns),
            ms(self.p999_ns),
            ms(self.max_ns)
        )
    }
}

/// The nearest-rank `q`th percentile of sorted samples (0 when empty).
pub fn percentile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    // The epsilon keeps 99.9% of 1000 at rank 999 despite floating-point rounding.
    let rank = ((q / 100.0) * sorted.len() as f64 - 1e-9).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Nanoseconds as milliseconds with µs precision, e.g. `0.412`.
pub fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

/// A rate with thousands separators, e.g. `123,456/s`.
pub fn per_second(count: f64) -> String {
    format!("{}/s", thousands(count.round() as u64))
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes as KiB or MiB.
pub fn bytes(n: f64) -> String {
    if n.abs() >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", n / (1024.0 * 1024.0))
    } else {
        format!("{:.1} KiB", n / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let mut samples: Vec<u64> = (1..=1000).rev().collect();
        let summary = Summary::of(&mut samples);
        assert_eq!(summary.p50_ns, 500);
        assert_eq!(summary.p99_ns, 990);
        assert_eq!(summary.p999_ns, 999);
        assert_eq!(summary.max_ns, 1000);
        assert_eq!(percentile(&[], 50.0), 0);
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(12), "12");
        assert_eq!(ms(412_345), "0.412");
        assert_eq!(bytes(2048.0), "2.0 KiB");
    }
}
