//! The response heads of a connection as they leave, so that those the app did not
//! write get the security headers too.
//!
//! actix-http's HTTP/1 parser answers some requests itself, before any app code runs:
//! 400 for a malformed request, 431 for a head too large, 408 for a slow one. Those
//! responses never pass [`super::guard`] and actix-http has no hook for them, so this
//! follows the bytes written to the connection: it gathers each response head, adds the
//! security headers to one without `x-content-type-options` (every head the app writes
//! has it), then lets the body through by its framing (`Content-Length`, chunked, none
//! for 1xx, 204, 304 and answers to `HEAD`), up to the next head. After a `101` (a
//! WebSocket), a body that lasts until the connection closes, or anything it cannot
//! follow, every further byte passes unchanged: it never guesses.
//!
//! An answer to `HEAD` says the length of the body it does not carry; the guard records,
//! in order, which of the app's responses answer one ([`AppResponses`]).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

mod chunked;

use chunked::Chunked;

/// The longest response head followed; a longer one passes unchanged, and so does all
/// that comes after it.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Headers parsed in one head; a head with more passes unchanged, as above.
const MAX_HEADERS: usize = 128;
/// How many of the app's responses may wait to be seen leaving.
const MAX_WAITING: usize = 64;

/// Which of the app's responses on one connection answer a `HEAD` request, in the order
/// the app wrote them (shared by the connection and its requests, on one worker thread).
#[derive(Debug, Clone, Default)]
pub struct AppResponses(Rc<RefCell<VecDeque<bool>>>);

impl AppResponses {
    /// The app wrote its next response; `answers_head` if it answers a `HEAD` request.
    pub fn wrote(&self, answers_head: bool) {
        let mut waiting = self.0.borrow_mut();
        if waiting.len() < MAX_WAITING {
            waiting.push_back(answers_head);
        }
    }

    /// Whether the app's next response to leave answers a `HEAD` request.
    fn next_answers_head(&self) -> bool {
        self.0.borrow_mut().pop_front().unwrap_or(false)
    }
}

/// What to do with bytes written to the connection.
#[derive(Debug, PartialEq, Eq)]
pub enum Outgoing {
    /// Write the first `n` bytes as they are, then tell [`ResponseHeads::passed`] how
    /// many went.
    Pass(usize),
    /// The first `taken` bytes are taken; write `bytes` in their place (nothing while a
    /// head is still incomplete).
    Replace { taken: usize, bytes: Vec<u8> },
}

/// Where the outgoing bytes are.
#[derive(Debug)]
enum State {
    /// Between responses, or inside a head (gathered in `held`).
    Head,
    /// This many body bytes are still to come.
    Length(u64),
    /// Inside a chunked body.
    Chunked(Chunked),
    /// Everything passes from here on.
    Opaque,
}

/// One connection's outgoing responses.
#[derive(Debug)]
pub struct ResponseHeads {
    state: State,
    /// The head being gathered.
    held: Vec<u8>,
    /// The header lines added to heads the app did not write (`name: value\r\n`…).
    added: Rc<[u8]>,
    app: AppResponses,
}

impl ResponseHeads {
    /// Follows a connection, adding `added` to heads without `x-content-type-options`.
    pub fn new(added: Rc<[u8]>, app: AppResponses) -> Self {
        Self {
            state: State::Head,
            held: Vec::new(),
            added,
            app,
        }
    }

    /// What to do with `bytes` (not empty), the next bytes written.
    pub fn next(&mut self, bytes: &[u8]) -> Outgoing {
        match &self.state {
            State::Head => self.gather(bytes),
            State::Length(left) => {
                Outgoing::Pass(usize::try_from(*left).map_or(bytes.len(), |l| l.min(bytes.len())))
            }
            State::Chunked(chunked) => Outgoing::Pass(chunked.clone().body_bytes(bytes)),
            State::Opaque => Outgoing::Pass(bytes.len()),
        }
    }

    /// `bytes` of an [`Outgoing::Pass`] were written.
    pub fn passed(&mut self, bytes: &[u8]) {
        match &mut self.state {
            State::Length(left) => {
                *left -= bytes.len() as u64;
                if *left == 0 {
                    self.state = State::Head;
                }
            }
            State::Chunked(chunked) => {
                let body = chunked.body_bytes(bytes);
                if chunked.is_lost() {
                    self.state = State::Opaque;
                } else if chunked.is_done() {
                    debug_assert_eq!(body, bytes.len(), "a pass never crosses the body's end");
                    self.state = State::Head;
                }
            }
            State::Head | State::Opaque => {}
        }
    }

    /// The bytes of a head still incomplete, given up on (the writer flushes or closes
    /// mid-head): they go out unchanged and so does everything after them.
    pub fn release(&mut self) -> Vec<u8> {
        if !self.held.is_empty() {
            self.state = State::Opaque;
        }
        std::mem::take(&mut self.held)
    }

    /// Takes bytes of a head; replaces the head once it is complete.
    fn gather(&mut self, bytes: &[u8]) -> Outgoing {
        let before = self.held.len();
        let room = MAX_HEAD_BYTES.saturating_sub(before).min(bytes.len());
        self.held.extend_from_slice(&bytes[..room]);
        let search_from = before.saturating_sub(3);
        let end = self.held[search_from..]
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map(|at| search_from + at + 4);
        match end {
            Some(end) => {
                self.held.truncate(end);
                let bytes = self.finish_head();
                Outgoing::Replace {
                    taken: end - before,
                    bytes,
                }
            }
            None if self.held.len() >= MAX_HEAD_BYTES => Outgoing::Replace {
                taken: room,
                bytes: self.release(),
            },
            None => Outgoing::Replace {
                taken: room,
                bytes: Vec::new(),
            },
        }
    }

    /// The complete head in `held`, with the headers added if the app did not write it;
    /// sets what follows it.
    fn finish_head(&mut self) -> Vec<u8> {
        let mut head = std::mem::take(&mut self.held);
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut response = httparse::Response::new(&mut headers);
        let Ok(httparse::Status::Complete(_)) = response.parse(&head) else {
            self.state = State::Opaque;
            return head;
        };
        let code = response.code.unwrap_or_default();
        if (100..200).contains(&code) && code != 101 {
            return head; // informational (`100 Continue`): the real answer follows
        }
        let headers = &*response.headers;
        let app_wrote = values(headers, "x-content-type-options").next().is_some();
        let answers_head = app_wrote && self.app.next_answers_head();
        self.state = match code {
            101 => State::Opaque,
            204 | 304 => State::Head,
            _ if answers_head => State::Head,
            _ => body_framing(
                values(headers, "transfer-encoding"),
                values(headers, "content-length"),
            ),
        };
        if !app_wrote {
            let blank_line = head.len() - 2;
            head.splice(blank_line..blank_line, self.added.iter().copied());
        }
        head
    }
}

/// The values of the header `name` in `headers`.
fn values<'a>(
    headers: &'a [httparse::Header<'a>],
    name: &'a str,
) -> impl Iterator<Item = &'a [u8]> + 'a {
    headers
        .iter()
        .filter(move |header| header.name.eq_ignore_ascii_case(name))
        .map(|header| header.value)
}

/// What follows a head with these `Transfer-Encoding` and `Content-Length` values.
fn body_framing<'a>(
    mut encodings: impl Iterator<Item = &'a [u8]>,
    lengths: impl Iterator<Item = &'a [u8]>,
) -> State {
    if let Some(encoding) = encodings.next() {
        let last = encoding.rsplit(|&b| b == b',').next().unwrap_or_default();
        let chunked = last.trim_ascii().eq_ignore_ascii_case(b"chunked");
        return match chunked && encodings.next().is_none() {
            true => State::Chunked(Chunked::default()),
            false => State::Opaque,
        };
    }
    let lengths: Vec<Option<u64>> = lengths
        .map(|value| std::str::from_utf8(value).ok()?.trim().parse().ok())
        .collect();
    match lengths.as_slice() {
        [Some(0)] => State::Head,
        [Some(length)] => State::Length(*length),
        // No length: the body lasts until the connection closes; or a length not followed.
        _ => State::Opaque,
    }
}

#[cfg(test)]
mod tests;
