//! Names and titles people read as one line (a session's title, an attachment's name, a
//! file name in an export or a `Content-Disposition`): one rule for all of them, on the
//! server and, should it need it, the page. Control characters never reach a reader, and
//! neither do the invisible bidirectional controls that reorder what is around them
//! (`U+202E` before `gnp.exe` makes it read as "exe.png").

/// Whether `c` is an invisible bidirectional control (Unicode's `Bidi_Control`: the
/// embeddings, overrides and isolates, the marks and the Arabic letter mark).
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

/// `text` as one line safe to show: a control character that breaks or spaces text
/// (line breaks, tabs, the line and paragraph separators) becomes a space, every other
/// control character and every bidirectional control is removed, and the ends are
/// trimmed. Everything else (letters of any script, emoji with their joiners) stays.
pub fn one_line(text: &str) -> String {
    let mut line = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_whitespace() && (c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')) {
            line.push(' ');
        } else if !(c.is_control() || is_bidi_control(c)) {
            line.push(c);
        }
    }
    line.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_overrides_never_reach_a_reader() {
        assert_eq!(one_line("\u{202E}gnp.exe"), "gnp.exe");
        assert_eq!(one_line("a\u{2066}b\u{2069}\u{200F}c\u{061C}"), "abc");
        assert_eq!(
            one_line("one\ntwo\tthree\u{2028}four"),
            "one two three four"
        );
        assert_eq!(one_line("bell\u{0007}\u{0000}\u{009B}[31m"), "bell[31m");
        assert_eq!(one_line("  \u{202D}  "), "");
    }

    #[test]
    fn every_script_and_emoji_stay() {
        for kept in [
            "Café",
            "שלום עולם",
            "سلام",
            "日本語",
            "👨\u{200D}👩\u{200D}👧",
            "می‌خواهم",
        ] {
            assert_eq!(one_line(kept), kept);
        }
    }
}
