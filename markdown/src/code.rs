//! Fenced code blocks: a header with the language and a copy button, and the code with
//! highlighted spans from `hl-lite` (hand-written lexers, a few tens of KB of WASM, no
//! regex engine) for the languages it knows; other code shows plain.

use hl_lite::{highlight, Kind, Lang};
use pulldown_cmark_escape::escape_html_body_text;

/// The language named by a fence's info string (its first word), kept to characters a
/// language name uses; empty when there is none.
pub fn language(info: &str) -> String {
    info.split_whitespace()
        .next()
        .unwrap_or("")
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '#' | '-' | '.' | '_'))
        .take(32)
        .collect()
}

/// The HTML of one code block; `lang` is what [`language`] returned. The `<pre>` takes
/// focus so a keyboard can scroll a line wider than the screen.
pub fn block(lang: &str, code: &str) -> String {
    let mut html = String::with_capacity(code.len() * 2 + 200);
    html.push_str(r#"<div class="code-block"><div class="code-head"><span class="code-lang">"#);
    html.push_str(if lang.is_empty() { "text" } else { lang });
    html.push_str(
        r#"</span><button type="button" class="copy-code" title="Copy the code">Copy</button></div><pre tabindex="0"><code"#,
    );
    if !lang.is_empty() {
        html.push_str(r#" class="language-"#);
        html.push_str(lang);
        html.push('"');
    }
    html.push('>');
    match Lang::from_slug(lang) {
        Some(known) => {
            for span in highlight(known, code) {
                if span.kind == Kind::Plain {
                    escape_html_body_text(&mut html, span.text).ok();
                } else {
                    html.push_str(r#"<span class="hl-"#);
                    html.push_str(span.kind.class());
                    html.push_str(r#"">"#);
                    escape_html_body_text(&mut html, span.text).ok();
                    html.push_str("</span>");
                }
            }
        }
        None => {
            escape_html_body_text(&mut html, code).ok();
        }
    }
    html.push_str("</code></pre></div>");
    html
}
