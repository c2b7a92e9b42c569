use super::{to_html, to_inline_html};

#[test]
fn common_markdown_and_gfm_render() {
    let html = to_html(
        "# Title\n\n**bold** _it_ ~~gone~~ `code`\n\n- [x] done\n- [ ] todo\n\n\
         | a | b |\n|---|--:|\n| 1 | 2 |\n",
    );
    assert!(!html.contains("style="), "{html}");
    for part in [
        "<h1>Title</h1>",
        "<strong>bold</strong>",
        "<em>it</em>",
        "<del>gone</del>",
        "<code>code</code>",
        r#"<input type="checkbox" disabled checked aria-label="done">"#,
        r#"<input type="checkbox" disabled aria-label="not done">"#,
        r#"<div class="table-wrap" tabindex="0"><table>"#,
        "<th>a</th>",
        r#"<td class="align-right">2</td>"#,
        "<th>a</th><th class=\"align-right\">b</th>",
        "</table>\n</div>",
    ] {
        assert!(html.contains(part), "missing {part} in {html}");
    }
}

#[test]
fn raw_html_from_the_model_stays_text() {
    let html = to_html(
        "<script>alert(1)</script>\n\nHi <img src=x onerror=alert(1)> there\n\n\
         <iframe src=\"https://evil\"></iframe>",
    );
    assert!(!html.contains("<script"), "{html}");
    assert!(!html.contains("<img"), "{html}");
    assert!(!html.contains("<iframe"), "{html}");
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{html}"
    );
    assert!(
        html.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "{html}"
    );
}

#[test]
fn links_open_safely_and_unsafe_ones_lose_their_destination() {
    let html = to_html("[site](https://example.com \"T\") and [bad](javascript:alert(1))");
    assert!(
        html.contains(
            r#"<a href="https://example.com" title="T" target="_blank" rel="noopener noreferrer">site</a>"#
        ),
        "{html}"
    );
    assert!(!html.contains("javascript"), "{html}");
    assert!(html.contains(r#"<span class="link-refused" title="link removed">bad</span>"#));
}

#[test]
fn images_become_links_so_nothing_loads() {
    let html = to_html("![a cat](https://example.com/cat.png)");
    assert!(!html.contains("<img"), "{html}");
    assert!(
        html.contains(r#"class="image-link">Image: a cat</a>"#),
        "{html}"
    );
}

#[test]
fn code_blocks_get_a_header_a_copy_button_and_highlighting() {
    let html = to_html("```rust\nlet x = \"<b>\"; // hi\n```\n");
    assert!(
        html.contains(r#"<span class="code-lang">rust</span>"#),
        "{html}"
    );
    assert!(
        html.contains(
            r#"<button type="button" class="copy-code" title="Copy the code">Copy</button>"#
        ),
        "{html}"
    );
    assert!(html.contains(r#"<code class="language-rust">"#), "{html}");
    assert!(
        html.contains(r#"<span class="hl-keyword">let</span>"#),
        "{html}"
    );
    assert!(html.contains("&lt;b&gt;"), "{html}");
    assert!(!html.contains("<b>"), "{html}");
}

#[test]
fn an_unknown_language_or_a_hostile_info_string_shows_plain_code() {
    let html = to_html("```\"><script>x\nplain <i>\n```\n");
    assert!(!html.contains("<script"), "{html}");
    assert!(!html.contains("<i>"), "{html}");
    assert!(
        html.contains(r#"<span class="code-lang">text</span>"#),
        "{html}"
    );
    let html = to_html("```brainfuck\n+++\n```");
    assert!(
        html.contains(r#"<code class="language-brainfuck">+++"#),
        "{html}"
    );
}

#[test]
fn a_fence_still_streaming_renders_as_code_so_far() {
    let html = to_html("Here:\n\n```python\ndef f():\n    return 1");
    assert!(html.contains(r#"<code class="language-python">"#), "{html}");
    assert!(
        html.contains(r#"<span class="hl-keyword">def</span>"#),
        "{html}"
    );
    assert!(html.ends_with("</code></pre></div>"), "{html}");
}

#[test]
fn a_single_newline_in_a_paragraph_is_a_line_break() {
    let html = to_html("Day 1 — arrive.\nDay 2 — sights.\nDay 3 — home.");
    assert_eq!(
        html,
        "<p>Day 1 — arrive.<br />\nDay 2 — sights.<br />\nDay 3 — home.</p>\n"
    );
    // A blank line still starts a new paragraph, and a list item's own lines break too.
    let html = to_html("One\n\nTwo\n- a\n  still a");
    assert!(html.contains("<p>One</p>"), "{html}");
    assert!(html.contains("<li>a<br />\nstill a</li>"), "{html}");
}

#[test]
fn line_breaks_inside_code_stay_as_they_are() {
    let html = to_html("```\nfirst\nsecond\n```\n\nsee `a\nb` here");
    assert!(html.contains("first\nsecond"), "{html}");
    assert_eq!(html.matches("<br").count(), 0, "{html}");
    assert!(html.contains("<code>a b</code>"), "{html}");
}

#[test]
fn inline_markdown_renders_emphasis_code_and_safe_links() {
    let html = to_inline_html("Allow `write_file` to **run** [here](https://example.com)?");
    assert_eq!(
        html,
        "Allow <code>write_file</code> to <strong>run</strong> <a href=\"https://example.com\" \
         target=\"_blank\" rel=\"noopener noreferrer\">here</a>?"
    );
}

#[test]
fn inline_markdown_keeps_raw_html_and_bad_links_harmless() {
    let html = to_inline_html(
        "<b onclick=x>hi</b> <script>alert(1)</script> [x](javascript:alert(1)) ![i](https://e.com/i.png)",
    );
    assert!(!html.contains("<b"), "{html}");
    assert!(!html.contains("<script"), "{html}");
    assert!(!html.contains("<img"), "{html}");
    assert!(!html.contains("javascript"), "{html}");
    assert!(html.contains("&lt;script&gt;"), "{html}");
    assert!(html.contains(r#"<span class="link-refused" title="link removed">x</span>"#));
    assert!(
        html.contains(r#"class="image-link">Image: i</a>"#),
        "{html}"
    );
}

#[test]
fn inline_markdown_flattens_blocks_to_lines() {
    let html = to_inline_html("# Pick one\n\n- Lisbon\n- Kyoto\n\n```\nls -la\n```\nthen\nsay");
    for block in ["<h1", "<ul", "<li", "<p>", "<pre", "copy-code"] {
        assert!(!html.contains(block), "{block} in {html}");
    }
    assert_eq!(
        html,
        "Pick one<br />\n• Lisbon<br />\n• Kyoto<br />\n<code>ls -la</code><br />\nthen<br />\nsay"
    );
    assert_eq!(to_inline_html(""), "");
}
