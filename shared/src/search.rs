//! What a session search shows of a match: a short piece of the message that matched,
//! around the first place it matches, on word boundaries, on one line; and where the match
//! is in it, for the page to mark. Matching is as the search's: letters in any case (ASCII
//! letters fold; other characters must be equal).

/// Characters kept before the match, at most.
const BEFORE: usize = 40;
/// Characters kept after the start of the match, at most.
const AFTER: usize = 100;

/// The piece of `text` around the first place `query` matches, with `…` where it was cut;
/// `None` when it does not match (or the query is empty).
pub fn snippet(text: &str, query: &str) -> Option<String> {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let query = query.split_whitespace().collect::<Vec<_>>().join(" ");
    let (start, end) = find(&flat, &query)?;
    let chars: Vec<(usize, char)> = flat.char_indices().collect();
    let at = chars.iter().position(|(byte, _)| *byte == start)?;
    let from = at.saturating_sub(BEFORE);
    // Start after a space, unless that would drop more than it keeps.
    let from = match chars[from..at].iter().position(|(_, c)| *c == ' ') {
        Some(space) if from > 0 => from + space + 1,
        _ => from,
    };
    let match_end = chars
        .iter()
        .position(|(byte, _)| *byte >= end)
        .unwrap_or(chars.len());
    let to = (at + AFTER).max(match_end).min(chars.len());
    let to = match chars[match_end..to].iter().rposition(|(_, c)| *c == ' ') {
        Some(space) if to < chars.len() => match_end + space,
        _ => to,
    };
    let byte = |index: usize| chars.get(index).map_or(flat.len(), |(byte, _)| *byte);
    let mut piece = String::new();
    if from > 0 {
        piece.push('…');
    }
    piece.push_str(&flat[byte(from)..byte(to)]);
    if to < chars.len() {
        piece.push('…');
    }
    Some(piece)
}

/// Where `query` first matches in `text`, as byte offsets; `None` if nowhere (or the query
/// is empty).
pub fn find(text: &str, query: &str) -> Option<(usize, usize)> {
    if query.is_empty() {
        return None;
    }
    let folded_text = text.to_ascii_lowercase();
    let folded_query = query.to_ascii_lowercase();
    // ASCII folding keeps every byte where it was, so offsets hold in `text`.
    let start = folded_text.find(&folded_query)?;
    Some((start, start + query.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_message_is_shown_whole_on_one_line() {
        assert_eq!(
            snippet("Paris is\nlovely  in spring", "LOVELY").as_deref(),
            Some("Paris is lovely in spring")
        );
        assert_eq!(snippet("Paris", "Rome"), None);
        assert_eq!(snippet("Paris", "  "), None);
    }

    #[test]
    fn a_long_message_is_cut_at_words_around_the_match() {
        let before = "word ".repeat(30);
        let after = " more".repeat(40);
        let text = format!("{before}the needle here{after}");
        let piece = snippet(&text, "needle").unwrap();
        assert!(piece.starts_with("…word "), "{piece}");
        assert!(piece.ends_with(" more…"), "{piece}");
        assert!(piece.contains("the needle here"), "{piece}");
        assert!(piece.chars().count() <= BEFORE + AFTER + 2, "{piece}");
        let (start, end) = find(&piece, "NEEDLE").unwrap();
        assert_eq!(&piece[start..end], "needle");
    }

    #[test]
    fn offsets_hold_around_characters_of_several_bytes() {
        let text = "Café Zürich — the thé is ready";
        let (start, end) = find(text, "THé").unwrap();
        assert_eq!(&text[start..end], "thé");
        assert_eq!(find(text, "the THÉ"), None, "only ASCII letters fold");
        assert_eq!(snippet(text, "ready").as_deref(), Some(text));
    }
}
