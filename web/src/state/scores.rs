//! How the replay and eval dialogs write their figures: a score (0 to 1) with two decimals
//! and dollars with four, without float formatting (which pulls a large formatter into
//! the page).

/// A score with two decimals (`0.67`), or a dash when there is none.
pub fn score(value: Option<f64>) -> String {
    match value {
        Some(score) => {
            let hundredths = (score.clamp(0.0, 1.0) * 100.0).round() as u64;
            format!("{}.{:02}", hundredths / 100, hundredths % 100)
        }
        None => "–".into(),
    }
}

/// Dollars with four decimals (`$0.0123`).
pub fn dollars(cost: f64) -> String {
    let ten_thousandths = (cost.max(0.0) * 10_000.0).round() as u64;
    format!(
        "${}.{:04}",
        ten_thousandths / 10_000,
        ten_thousandths % 10_000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_and_dollars_are_written_with_fixed_decimals() {
        assert_eq!(score(Some(2.0 / 3.0)), "0.67");
        assert_eq!(score(Some(1.0)), "1.00");
        assert_eq!(score(None), "–");
        assert_eq!(dollars(0.1), "$0.1000");
        assert_eq!(dollars(12.34567), "$12.3457");
    }
}
