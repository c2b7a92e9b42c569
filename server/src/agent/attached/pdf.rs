//! What Tandem reads of a PDF: its page count (`lopdf`, a maintained PDF library), for
//! the demo model's description and the notes a model that takes no documents gets.

/// How many pages the PDF has, if it can be read.
pub fn pages(bytes: &[u8]) -> Option<usize> {
    lopdf::Document::load_mem(bytes)
        .ok()
        .map(|document| document.get_pages().len())
}

/// `1 page`, `3 pages`.
pub fn page_count(pages: usize) -> String {
    match pages {
        1 => "1 page".into(),
        n => format!("{n} pages"),
    }
}
