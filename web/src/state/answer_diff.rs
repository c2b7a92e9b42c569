//! What a replay's answer changed of the recorded one, word by word (the replay dialog
//! highlights it): runs of words kept, added and left out, in the answer's order. The
//! diff is `similar`'s (Myers over words, spaces kept with their words).

use similar::{ChangeTag, TextDiff};

/// A run of words of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// In both answers.
    Same(String),
    /// Only in the replay's.
    Added(String),
    /// Only in the recorded one.
    Removed(String),
}

/// The parts that turn `recorded` into `replayed`, neighbours of one kind joined.
pub fn word_diff(recorded: &str, replayed: &str) -> Vec<Part> {
    let diff = TextDiff::from_words(recorded, replayed);
    let mut parts: Vec<Part> = Vec::new();
    for change in diff.iter_all_changes() {
        let text = change.value();
        match (change.tag(), parts.last_mut()) {
            (ChangeTag::Equal, Some(Part::Same(run)))
            | (ChangeTag::Insert, Some(Part::Added(run)))
            | (ChangeTag::Delete, Some(Part::Removed(run))) => run.push_str(text),
            (ChangeTag::Equal, _) => parts.push(Part::Same(text.into())),
            (ChangeTag::Insert, _) => parts.push(Part::Added(text.into())),
            (ChangeTag::Delete, _) => parts.push(Part::Removed(text.into())),
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_kept_added_and_left_out_come_in_order() {
        let parts = word_diff("The answer is 42.", "The answer is surely 42.");
        assert_eq!(
            parts,
            vec![
                Part::Same("The answer is ".into()),
                Part::Added("surely ".into()),
                Part::Same("42.".into()),
            ]
        );
        let changed = word_diff("It is 42.", "It is 41.");
        assert!(
            changed.contains(&Part::Removed("42.".into())),
            "{changed:?}"
        );
        assert!(changed.contains(&Part::Added("41.".into())), "{changed:?}");
        assert_eq!(word_diff("same", "same"), vec![Part::Same("same".into())]);
    }
}
