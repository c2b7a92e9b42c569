//! Multi-row statements in a handful of shapes: a batch's rows split into chunks whose
//! sizes are powers of two, and each shape's SQL built once. The log's tail inserts
//! ([`super::appended`]) and its folds ([`super::fold`]) write with them.

use std::sync::OnceLock;

/// Splits `items` into chunks whose sizes are powers of two no larger than `max` (a power
/// of two): full chunks first, then the rest by its binary digits. A multi-row statement
/// then has one of a handful of shapes, each prepared once and kept in the connection's
/// statement cache, instead of a new statement to parse for every batch size.
pub(super) fn shaped_chunks<T>(items: &[T], max: usize) -> impl Iterator<Item = &[T]> {
    let mut rest = items;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let size = max.min(1 << rest.len().ilog2());
        let (chunk, tail) = rest.split_at(size);
        rest = tail;
        Some(chunk)
    })
}

/// `(?, ?, …), (?, ?, …), …`: `rows` groups of `columns` placeholders.
pub(super) fn value_rows(rows: usize, columns: usize) -> String {
    let row = format!("({})", vec!["?"; columns].join(", "));
    vec![row; rows].join(", ")
}

/// A multi-row statement's SQL in each of its [`shaped_chunks`] sizes (powers of two up
/// to 256), each built the first time it is needed: the token path looks up a string
/// instead of formatting kilobytes of placeholders for every chunk.
pub(super) struct ShapedSql {
    build: fn(usize) -> String,
    built: [OnceLock<String>; 9],
}

impl ShapedSql {
    /// Shapes that `build` makes for a number of rows.
    pub const fn new(build: fn(usize) -> String) -> Self {
        Self {
            build,
            built: [const { OnceLock::new() }; 9],
        }
    }

    /// The SQL for `rows` rows (a power of two, at most 256).
    pub fn get(&self, rows: usize) -> &str {
        assert!(rows.is_power_of_two() && rows <= 256, "{rows} rows");
        self.built[rows.ilog2() as usize].get_or_init(|| (self.build)(rows))
    }
}

#[cfg(test)]
mod tests {
    use super::shaped_chunks;

    #[test]
    fn chunks_come_in_powers_of_two_and_cover_everything_in_order() {
        let items: Vec<usize> = (0..600).collect();
        let sizes: Vec<usize> = shaped_chunks(&items, 256).map(<[usize]>::len).collect();
        assert_eq!(sizes, [256, 256, 64, 16, 8]);
        let joined: Vec<usize> = shaped_chunks(&items, 256).flatten().copied().collect();
        assert_eq!(joined, items);
        assert_eq!(shaped_chunks::<u8>(&[], 256).count(), 0);
    }
}
