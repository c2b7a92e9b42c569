//! Which sessions wait for the person, and which started waiting since the last look:
//! the tab title's count and the "needs you" notifications come from here. Pure, tested
//! on the host.

use std::collections::HashSet;

/// A session waiting for an answer: its id and title.
pub type Waiting = (String, String);

/// The sessions seen waiting at the last look.
#[derive(Debug, Default)]
pub struct WaitingWatch {
    seen: Option<HashSet<String>>,
}

impl WaitingWatch {
    /// Takes the sessions waiting now and returns those that were not at the last look.
    /// The first look returns none: what already waited when the page opened is not news.
    pub fn look(&mut self, now: &[Waiting]) -> Vec<Waiting> {
        let ids: HashSet<String> = now.iter().map(|(id, _)| id.clone()).collect();
        let fresh = match &self.seen {
            Some(seen) => now
                .iter()
                .filter(|(id, _)| !seen.contains(id))
                .cloned()
                .collect(),
            None => Vec::new(),
        };
        self.seen = Some(ids);
        fresh
    }
}

/// The tab title: the count of waiting sessions first, so it shows in a narrow tab.
pub fn tab_title(waiting: usize) -> String {
    match waiting {
        0 => "Tandem".into(),
        n => format!("({n}) Tandem — needs you"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(ids: &[&str]) -> Vec<Waiting> {
        ids.iter()
            .map(|id| (id.to_string(), format!("t-{id}")))
            .collect()
    }

    #[test]
    fn only_sessions_that_start_waiting_are_news() {
        let mut watch = WaitingWatch::default();
        assert!(watch.look(&waiting(&["a"])).is_empty(), "the first look");
        assert_eq!(watch.look(&waiting(&["a", "b"])), waiting(&["b"]));
        assert!(watch.look(&waiting(&["b"])).is_empty());
        assert!(watch.look(&waiting(&[])).is_empty());
        assert_eq!(watch.look(&waiting(&["b"])), waiting(&["b"]), "waits again");
    }

    #[test]
    fn the_title_counts_waiting_sessions() {
        assert_eq!(tab_title(0), "Tandem");
        assert_eq!(tab_title(2), "(2) Tandem — needs you");
    }
}
