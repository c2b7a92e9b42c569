//! Markdown of the agent's answers, rendered to an HTML string that is safe to set as
//! `innerHTML`.
//!
//! `pulldown-cmark` parses CommonMark with the GFM extensions people expect (tables, task
//! lists, strikethrough) and writes the HTML; this module only rewrites the events whose
//! default output would be unsafe or unhelpful in a chat transcript:
//! - raw HTML in the model's text becomes escaped text, so it shows as written and never
//!   runs or renders;
//! - links keep only safe destinations ([`links`]) and open in a new tab with
//!   `rel="noopener noreferrer"`; images become links, so nothing loads from elsewhere;
//! - fenced code gets a header with its language and a copy button, and highlighted
//!   spans ([`code`]);
//! - tables sit in a scrolling box (keyboard-focusable) so a wide one never widens the
//!   page, and their cells are aligned by class (the page's CSP allows no `style`
//!   attribute);
//! - task list boxes carry a label for screen readers;
//! - a single line break inside a paragraph is a line break (`<br>`), as in chat products:
//!   models often write one item a line without list syntax. Code is untouched (a code
//!   block's lines are its text, and CommonMark makes a newline in inline code a space).
//!
//! [`to_inline_html`] renders the same way for a short line of text such as a question's
//! prompt: inline Markdown only, blocks flattened to lines ([`inline`]).
//!
//! Pure Rust with no DOM, so the host tests check the HTML itself. The page renders with
//! it, and so does the server's first-paint preview (`GET /api/sessions/{id}/preview`), so
//! an answer looks the same before and after the page's code takes over.

mod code;
mod inline;
mod links;

pub use code::block as code_block;
pub use inline::to_inline_html;

use pulldown_cmark::{Alignment, CowStr, Event, Options, Parser, Tag, TagEnd};
use pulldown_cmark_escape::escape_html;

/// `text` as HTML body text: `&`, `<` and `>` escaped, so it shows as written.
pub fn escape_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // Writing to a String cannot fail.
    let _ = pulldown_cmark_escape::escape_html_body_text(&mut out, text);
    out
}

/// The HTML of `text` read as Markdown.
///
/// An unfinished fence (an answer still streaming) renders as a code block running to
/// the end, so a streamed code block is highlighted as it arrives.
pub fn to_html(text: &str) -> String {
    let mut rewriter = Rewriter::default();
    let events = Parser::new_ext(text, options()).flat_map(|event| rewriter.rewrite(event));
    let mut html = String::with_capacity(text.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events);
    html
}

/// The Markdown the page reads: CommonMark with the GFM extensions.
fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_GFM
}

/// Rewrites the parser's events one by one; holds the little state a rewrite needs.
#[derive(Default)]
struct Rewriter {
    /// The open table's column alignments, whether its head is open, and the next cell's
    /// column: cells are written here with a class, because the page's CSP allows no
    /// `style` attribute (pulldown-cmark's writer would add one).
    alignments: Vec<Alignment>,
    in_head: bool,
    column: usize,
    /// The open code block's language and text, gathered until its end.
    code: Option<(String, String)>,
    /// For each open link or image: whether it was written as an `<a>` (else a `<span>`).
    anchors: Vec<bool>,
}

impl Rewriter {
    fn rewrite<'a>(&mut self, event: Event<'a>) -> Vec<Event<'a>> {
        if let Some((_, code)) = &mut self.code {
            return match event {
                Event::Text(text) => {
                    code.push_str(&text);
                    Vec::new()
                }
                Event::End(TagEnd::CodeBlock) => {
                    let (lang, code) = self.code.take().unwrap_or_default();
                    vec![html(code::block(&lang, &code).into())]
                }
                _ => Vec::new(),
            };
        }
        match event {
            Event::Html(raw) | Event::InlineHtml(raw) => vec![Event::Text(raw)],
            Event::SoftBreak => vec![Event::HardBreak],
            Event::Start(Tag::HtmlBlock) => vec![html(r#"<p class="raw-html">"#.into())],
            Event::End(TagEnd::HtmlBlock) => vec![html("</p>".into())],
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    pulldown_cmark::CodeBlockKind::Fenced(info) => code::language(&info),
                    pulldown_cmark::CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
                Vec::new()
            }
            Event::Start(Tag::Link {
                dest_url, title, ..
            }) => vec![self.open_link(&dest_url, &title, false)],
            Event::Start(Tag::Image {
                dest_url, title, ..
            }) => vec![self.open_link(&dest_url, &title, true)],
            Event::End(TagEnd::Link | TagEnd::Image) => {
                let close = if self.anchors.pop().unwrap_or(false) {
                    "</a>"
                } else {
                    "</span>"
                };
                vec![html(close.into())]
            }
            Event::Start(Tag::Table(alignments)) => {
                self.alignments = alignments.clone();
                vec![
                    // A wide table scrolls in its box; a keyboard reaches it to scroll it.
                    html(r#"<div class="table-wrap" tabindex="0">"#.into()),
                    Event::Start(Tag::Table(alignments)),
                ]
            }
            Event::End(TagEnd::Table) => vec![event, html("</div>".into())],
            Event::Start(Tag::TableHead) => {
                (self.in_head, self.column) = (true, 0);
                vec![event]
            }
            Event::End(TagEnd::TableHead) => {
                self.in_head = false;
                vec![event]
            }
            Event::Start(Tag::TableRow) => {
                self.column = 0;
                vec![event]
            }
            Event::Start(Tag::TableCell) => vec![html(self.open_cell().into())],
            Event::End(TagEnd::TableCell) => {
                vec![html(if self.in_head { "</th>" } else { "</td>" }.into())]
            }
            Event::TaskListMarker(done) => {
                let (checked, label) = if done {
                    (" checked", "done")
                } else {
                    ("", "not done")
                };
                let input =
                    format!(r#"<input type="checkbox" disabled{checked} aria-label="{label}"> "#);
                vec![html(input.into())]
            }
            event => vec![event],
        }
    }

    /// A table cell's opening tag, its column's alignment as a class.
    fn open_cell(&mut self) -> String {
        let tag = if self.in_head { "th" } else { "td" };
        let align = match self.alignments.get(self.column) {
            Some(Alignment::Left) => r#" class="align-left""#,
            Some(Alignment::Center) => r#" class="align-center""#,
            Some(Alignment::Right) => r#" class="align-right""#,
            _ => "",
        };
        self.column += 1;
        format!("<{tag}{align}>")
    }

    /// The opening tag of a link (or an image, shown as a link to it): an `<a>` for a safe
    /// destination, else a `<span>` that keeps the text and drops the destination.
    fn open_link(&mut self, dest: &str, title: &str, image: bool) -> Event<'static> {
        let Some(href) = links::safe_href(dest) else {
            self.anchors.push(false);
            return html(r#"<span class="link-refused" title="link removed">"#.into());
        };
        self.anchors.push(true);
        let mut tag = String::from(r#"<a href=""#);
        tag.push_str(&href);
        tag.push('"');
        if !title.is_empty() {
            tag.push_str(r#" title=""#);
            escape_html(&mut tag, title).ok();
            tag.push('"');
        }
        tag.push_str(r#" target="_blank" rel="noopener noreferrer""#);
        if image {
            tag.push_str(r#" class="image-link">"#);
            tag.push_str("Image: ");
        } else {
            tag.push('>');
        }
        html(tag.into())
    }
}

/// HTML this module wrote itself (everything from the model is escaped before).
fn html(text: CowStr<'static>) -> Event<'static> {
    Event::InlineHtml(text)
}

#[cfg(test)]
mod tests;
