//! Numbers written with a fixed count of decimals, by integer arithmetic.
//!
//! Costs, sizes, token counts and progress read with a decimal or two on the page.
//! `format!("{:.2}", x)` would write them, but then core's float formatting (Grisu with a
//! Dragon fallback, and their tables) ships in the page's WASM for a handful of labels.
//! Here a value is rounded to whole units of its last decimal and written as integers.
//! Ties round away from zero, where `format!` rounds the exact binary value half to even:
//! the two differ only on values that are exact ties in binary (`0.125` to two places).

/// `value` with `places` decimals (at most 18): `fixed(1.234, 2)` is `1.23`,
/// `fixed(-0.05, 1)` is `-0.1`, `fixed(2.5, 0)` is `3`. Not a number reads `NaN` and the
/// infinities `inf` and `-inf`, as `format!` writes them; a magnitude past 2^64 units of
/// the last decimal saturates there. A negative value that rounds to zero reads without a
/// sign (`format!` writes `-0.0`).
pub fn fixed(value: f64, places: usize) -> String {
    assert!(places <= 18, "at most 18 decimals fit a u64");
    if value.is_nan() {
        return "NaN".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.into();
    }
    let scale = 10u64.pow(places as u32);
    // `as` saturates: a huge value reads as u64::MAX units.
    let units = (value.abs() * scale as f64).round() as u64;
    let sign = if value < 0.0 && units > 0 { "-" } else { "" };
    let (whole, fraction) = (units / scale, units % scale);
    match places {
        0 => format!("{sign}{whole}"),
        _ => format!("{sign}{whole}.{fraction:0places$}"),
    }
}

/// `count / divisor` with one decimal, by integers alone (half a tenth rounds up):
/// `tenths(1_250, 1_000)` is `1.3`.
pub fn tenths(count: u64, divisor: u64) -> String {
    let tenths = (u128::from(count) * 10 + u128::from(divisor) / 2) / u128::from(divisor);
    format!("{}.{}", tenths / 10, tenths % 10)
}

/// How much of `whole` `part` is, in whole percent from 0 to 100 (a progress bar's
/// `value` of `max="100"`): `percent(1.0, 3.0)` is `33`.
pub fn percent(part: f64, whole: f64) -> u8 {
    (part / whole * 100.0).round().clamp(0.0, 100.0) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_reads_as_format_does_off_exact_ties() {
        let cases: [(f64, usize); 12] = [
            (-0.06, 1),
            (0.0, 2),
            (1.234, 2),
            (1.235_000_1, 2),
            (0.0042, 4),
            (0.000_123, 5),
            (99.994, 2),
            (99.996, 2),
            (123.4, 0),
            (-1.26, 1),
            (1e9 + 0.26, 1),
            (7.0, 3),
        ];
        for (value, places) in cases {
            assert_eq!(fixed(value, places), format!("{value:.places$}"), "{value}");
        }
    }

    #[test]
    fn fixed_rounds_ties_away_from_zero_and_names_what_is_not_a_number() {
        assert_eq!(fixed(2.5, 0), "3");
        assert_eq!(fixed(-2.5, 0), "-3");
        assert_eq!(fixed(-0.0001, 2), "0.00", "format! writes -0.00");
        assert_eq!(fixed(-0.04, 1), "0.0");
        assert_eq!(fixed(f64::NAN, 1), "NaN");
        assert_eq!(fixed(f64::INFINITY, 1), "inf");
        assert_eq!(fixed(f64::NEG_INFINITY, 0), "-inf");
        assert_eq!(fixed(1e30, 0), u64::MAX.to_string());
    }

    #[test]
    fn percent_is_whole_and_stays_within_the_bar() {
        assert_eq!(percent(1.0, 3.0), 33);
        assert_eq!(percent(2.0, 3.0), 67);
        assert_eq!(percent(5.0, 4.0), 100);
        assert_eq!(percent(-1.0, 4.0), 0);
    }

    #[test]
    fn tenths_round_half_up_by_integers() {
        assert_eq!(tenths(1_234, 1_000), "1.2");
        assert_eq!(tenths(1_250, 1_000), "1.3");
        assert_eq!(tenths(1_949, 1_000), "1.9");
        assert_eq!(tenths(9_960, 1_000), "10.0");
        assert_eq!(tenths(3_400_000, 1_000_000), "3.4");
        assert_eq!(tenths(u64::MAX, 1), format!("{}.0", u64::MAX));
    }
}
