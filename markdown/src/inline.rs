//! Inline Markdown for a short text that is not an answer, such as a question's prompt:
//! emphasis, code spans, links and line breaks, with the same safety as answers (raw HTML
//! shows as text, links keep only safe destinations, images become links). Blocks are
//! flattened to lines: paragraphs, headings, list items and table rows each start a new
//! line (a list item with a bullet), and a code block becomes a code span, so a prompt
//! never grows headings, tables or copy buttons.

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

use super::{html, options, Rewriter};

/// The HTML of `text` read as inline Markdown, safe to set as `innerHTML`.
pub fn to_inline_html(text: &str) -> String {
    let mut flattener = Flattener::default();
    let mut events = Vec::new();
    for event in Parser::new_ext(text, options()) {
        flattener.flatten(event, &mut events);
    }
    let mut out = String::with_capacity(text.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut out, events.into_iter());
    out
}

/// Turns block events into line breaks and hands inline ones to the answers' [`Rewriter`].
#[derive(Default)]
struct Flattener {
    rewriter: Rewriter,
    /// Nothing has been written on the current line yet (true at the start).
    line_empty: bool,
    /// Something has been written at all.
    started: bool,
    /// Inside a code block: its text goes out as the text of a code span.
    in_code: bool,
}

impl Flattener {
    fn flatten<'a>(&mut self, event: Event<'a>, out: &mut Vec<Event<'a>>) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => {
                self.new_line(out);
                self.in_code = true;
                self.write(out, [html("<code>".into())]);
            }
            Event::End(TagEnd::CodeBlock) => {
                self.in_code = false;
                out.push(html("</code>".into()));
            }
            Event::Text(text) if self.in_code => {
                let text = text.trim_end_matches('\n').to_string();
                self.write(out, [Event::Text(text.into())]);
            }
            Event::Start(Tag::Item) => {
                self.new_line(out);
                self.write(out, [Event::Text("• ".into())]);
            }
            Event::Start(
                Tag::Paragraph
                | Tag::Heading { .. }
                | Tag::BlockQuote(_)
                | Tag::List(_)
                | Tag::HtmlBlock
                | Tag::Table(_)
                | Tag::TableHead
                | Tag::TableRow
                | Tag::FootnoteDefinition(_)
                | Tag::DefinitionList
                | Tag::DefinitionListTitle
                | Tag::DefinitionListDefinition
                | Tag::MetadataBlock(_),
            )
            | Event::Rule => self.new_line(out),
            Event::Start(Tag::TableCell) => {
                if !self.line_empty {
                    self.write(out, [Event::Text(" · ".into())]);
                }
            }
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Heading(_)
                | TagEnd::BlockQuote(_)
                | TagEnd::List(_)
                | TagEnd::Item
                | TagEnd::HtmlBlock
                | TagEnd::Table
                | TagEnd::TableHead
                | TagEnd::TableRow
                | TagEnd::TableCell
                | TagEnd::FootnoteDefinition
                | TagEnd::DefinitionList
                | TagEnd::DefinitionListTitle
                | TagEnd::DefinitionListDefinition
                | TagEnd::MetadataBlock(_),
            ) => {}
            event => {
                let rewritten = self.rewriter.rewrite(event);
                self.write(out, rewritten);
            }
        }
    }

    /// Starts a new line unless the current one is still empty.
    fn new_line(&mut self, out: &mut Vec<Event<'_>>) {
        if self.started && !self.line_empty {
            out.push(Event::HardBreak);
            self.line_empty = true;
        }
    }

    fn write<'a>(&mut self, out: &mut Vec<Event<'a>>, events: impl IntoIterator<Item = Event<'a>>) {
        for event in events {
            self.line_empty = matches!(event, Event::HardBreak);
            self.started = true;
            out.push(event);
        }
    }
}
