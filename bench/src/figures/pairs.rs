//! Figures measured by alternating pairs (Tandem, then its baseline, several times): one
//! pair of a short or noisy measurement moves by more than the gap to its target, so the
//! row shows the pair whose ratio is the median, with the range beside it.

/// Sorts `pairs` by `ratio`; returns the place of the median pair (the upper one for an
/// even count, as `streaming::median` takes) and what the row says after its figures: how
/// many pairs and the range of their ratios (nothing for a single pair).
pub(super) fn sort_to_median<P>(pairs: &mut [P], ratio: impl Fn(&P) -> f64) -> (usize, String) {
    pairs.sort_by(|a, b| ratio(a).total_cmp(&ratio(b)));
    let count = pairs.len();
    let spread = match &*pairs {
        [] | [_] => String::new(),
        [lowest, .., highest] => format!(
            "; median of {count} alternating pairs, ratios {:.2}–{:.2}",
            ratio(lowest),
            ratio(highest)
        ),
    };
    (count / 2, spread)
}

#[cfg(test)]
mod tests {
    use super::sort_to_median;

    #[test]
    fn the_median_pair_and_the_range() {
        let mut pairs = vec![(3.0, 4.0), (1.0, 2.0), (9.0, 10.0)];
        let (median, spread) = sort_to_median(&mut pairs, |&(a, b)| a / b);
        assert_eq!(pairs[median], (3.0, 4.0));
        assert_eq!(spread, "; median of 3 alternating pairs, ratios 0.50–0.90");
        let mut one = vec![(1.0, 2.0)];
        assert_eq!(
            sort_to_median(&mut one, |&(a, b)| a / b),
            (0, String::new())
        );
    }
}
