//! Changes announced to every process that shares the database: a backend that several
//! instances share (PostgreSQL) sends one per session per committed batch, so each
//! instance can bring its viewers the events another instance committed, stop a run
//! another instance was asked to stop, and close sockets of a deleted session; and one
//! per credential that ended (a revoked user, a sign-out, a deleted share link), so every
//! instance closes the connections that relied on it at once.

use crate::domain::{SessionId, TokenHash, UserId};

/// A committed change of one session, or word that some may have been missed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Events `first_seq..=last_seq` of the session were committed (by any instance).
    Appended {
        session: SessionId,
        first_seq: u64,
        last_seq: u64,
        /// A stop of this run was among them.
        stop_run: Option<String>,
    },
    /// The session was deleted.
    Deleted { session: SessionId },
    /// The session's row as its owner's list shows it changed: it was created or renamed,
    /// or its status (and with it its title, for a first message) changed. Carries no
    /// owner: whoever lists it reads the row.
    Listed { session: SessionId },
    /// The session's queued messages changed (queued, edited, withdrawn or started).
    Queued { session: SessionId },
    /// A credential ended: whatever relied on it must stop.
    Ended(Ending),
    /// An instance that stopped cleanly handed its run leases back: whoever can should
    /// take those runs over now rather than at its next lease check.
    LeasesReleased,
    /// A schedule was added, changed or deleted: each instance's scheduler looks again
    /// for its next time.
    Schedules,
    /// The feed was interrupted (its connection dropped): changes may have been missed,
    /// so whatever is watched must be read again from the log.
    Missed,
}

impl Change {
    /// The text a backend sends: `a <session> <first> <last> [<stopped run>]`,
    /// `d <session>`, `s <session>`, … Ids and run ids never contain spaces.
    pub fn encode(&self) -> String {
        match self {
            Self::Appended {
                session,
                first_seq,
                last_seq,
                stop_run,
            } => match stop_run {
                Some(run) => format!("a {session} {first_seq} {last_seq} {run}"),
                None => format!("a {session} {first_seq} {last_seq}"),
            },
            Self::Deleted { session } => format!("d {session}"),
            Self::Listed { session } => format!("s {session}"),
            Self::Queued { session } => format!("q {session}"),
            Self::Ended(Ending::UserRevoked(user)) => format!("u {user}"),
            Self::Ended(Ending::SignedOut(cookie)) => format!("c {}", hex(cookie.as_bytes())),
            Self::Ended(Ending::ShareDeleted(share)) => format!("l {share}"),
            Self::LeasesReleased => "r".into(),
            Self::Schedules => "k".into(),
            Self::Missed => "m".into(),
        }
    }

    /// Many changes in as few notices as fit PostgreSQL's payload limit (8,000 bytes):
    /// one change per line.
    pub fn encode_many<'a>(changes: impl Iterator<Item = &'a Change>) -> Vec<String> {
        const PAYLOAD: usize = 7_900;
        let mut notices: Vec<String> = Vec::new();
        for change in changes {
            let line = change.encode();
            match notices.last_mut() {
                Some(notice) if notice.len() + 1 + line.len() <= PAYLOAD => {
                    notice.push('\n');
                    notice.push_str(&line);
                }
                _ => notices.push(line),
            }
        }
        notices
    }

    /// The changes of a notice [`Self::encode_many`] wrote; `None` if any line is not one.
    pub fn parse_many(notice: &str) -> Option<Vec<Self>> {
        notice.split('\n').map(Self::parse).collect()
    }

    /// Reads what [`Self::encode`] wrote; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        let mut parts = text.split(' ');
        let change = match (parts.next()?, parts.next()) {
            ("a", Some(session)) => Self::Appended {
                session: SessionId::parse(session).ok()?,
                first_seq: parts.next()?.parse().ok()?,
                last_seq: parts.next()?.parse().ok()?,
                stop_run: parts.next().map(str::to_string),
            },
            ("d", Some(session)) => Self::Deleted {
                session: SessionId::parse(session).ok()?,
            },
            ("s", Some(session)) => Self::Listed {
                session: SessionId::parse(session).ok()?,
            },
            ("q", Some(session)) => Self::Queued {
                session: SessionId::parse(session).ok()?,
            },
            ("u", Some(user)) => Self::Ended(Ending::UserRevoked(UserId::parse(user).ok()?)),
            ("c", Some(cookie)) => Self::Ended(Ending::SignedOut(unhex(cookie)?)),
            ("l", Some(share)) if !share.is_empty() => {
                Self::Ended(Ending::ShareDeleted(share.to_string()))
            }
            ("r", None) => Self::LeasesReleased,
            ("k", None) => Self::Schedules,
            ("m", None) => Self::Missed,
            _ => return None,
        };
        parts.next().is_none().then_some(change)
    }
}

/// A credential that ended. Ids never contain spaces or line breaks (they are UUIDs or
/// `shr_…` ids), so each is one word of a notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The user was revoked: their token, their sign-ins and their share links.
    UserRevoked(UserId),
    /// A browser sign-in ended (signing out): the hash of its cookie.
    SignedOut(TokenHash),
    /// A share link was deleted: its id.
    ShareDeleted(String),
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn unhex(text: &str) -> Option<TokenHash> {
    if text.len() != 64 || !text.is_ascii() {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&text[at..at + 2], 16).ok())
        .collect();
    TokenHash::from_bytes(&bytes?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_read_back_as_written_and_nothing_else_reads() {
        let session = SessionId::generate();
        let changes = [
            Change::Appended {
                session,
                first_seq: 3,
                last_seq: 9,
                stop_run: None,
            },
            Change::Appended {
                session,
                first_seq: 1,
                last_seq: 1,
                stop_run: Some("run_1".into()),
            },
            Change::Deleted { session },
            Change::Listed { session },
            Change::Queued { session },
            Change::Ended(Ending::UserRevoked(UserId::generate())),
            Change::Ended(Ending::SignedOut(TokenHash::of("cookie"))),
            Change::Ended(Ending::ShareDeleted("shr_1".into())),
            Change::LeasesReleased,
            Change::Schedules,
            Change::Missed,
        ];
        for change in changes {
            assert_eq!(Change::parse(&change.encode()), Some(change));
        }
        for junk in [
            "",
            "a",
            "a x 1 2",
            &format!("a {session} 1"),
            "d",
            "s",
            "s x",
            "m m",
            "x y",
            "u not-a-user",
            "c 12",
            &format!("c {}", "zz".repeat(32)),
            "l",
        ] {
            assert_eq!(Change::parse(junk), None, "{junk}");
        }
    }

    #[test]
    fn many_changes_share_notices_that_fit_the_payload_limit() {
        let changes: Vec<Change> = (0..500)
            .map(|seq| Change::Appended {
                session: SessionId::generate(),
                first_seq: seq,
                last_seq: seq + 1,
                stop_run: None,
            })
            .collect();
        let notices = Change::encode_many(changes.iter());
        assert!(notices.len() > 1 && notices.len() < 10, "{}", notices.len());
        assert!(notices.iter().all(|notice| notice.len() <= 8_000));
        let read: Vec<Change> = notices
            .iter()
            .flat_map(|notice| Change::parse_many(notice).unwrap())
            .collect();
        assert_eq!(read, changes);
        assert_eq!(Change::parse_many("m\nnonsense"), None);
    }
}
