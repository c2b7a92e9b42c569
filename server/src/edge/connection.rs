//! The connection the HTTP server reads and writes: a TCP stream whose outgoing response
//! heads pass [`ResponseHeads`], so the responses actix-http's parser writes itself
//! (400, 431, 408) carry the security headers like every other.
//!
//! Reads pass straight through, until the edge ends them ([`EndReads`]: a body that
//! stalled or was left unread): then, after a linger, they end as if the client had
//! closed. A write inside a body passes
//! straight through too; a
//! write that holds a head is taken whole into a buffer of the connection's own (the
//! head changed if it must be, and the body bytes after it, so they still leave in one
//! socket write), which is written before anything else: a short write of the socket
//! never splits what the writer sees.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{ready, Context, Poll};

use actix_web::rt::net::TcpStream;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::bodies::EndReads;
use super::heads::{AppResponses, Outgoing, ResponseHeads};

/// Most bytes taken into the connection's own buffer by one write.
const MAX_PENDING: usize = 64 * 1024;

/// A connection whose response heads are checked on their way out.
#[derive(Debug)]
pub struct Connection<T> {
    io: T,
    heads: ResponseHeads,
    /// Bytes taken from the writer (a head) and not yet all written to `io`.
    pending: Vec<u8>,
    /// How many of `pending` are written.
    sent: usize,
    app: AppResponses,
    end_reads: EndReads,
    /// When the reads end, once [`EndReads`] said so.
    reads_end: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Connection<TcpStream> {
    /// An accepted TCP connection, with Nagle's algorithm off: each event frame is small
    /// and must leave at once, not wait for the client's delayed ACK (~40 ms).
    pub fn accepted(stream: TcpStream, added: Rc<[u8]>) -> Self {
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
        Self::new(stream, added)
    }
}

impl<T> Connection<T> {
    /// `io`, adding the header lines `added` to heads the app did not write.
    pub fn new(io: T, added: Rc<[u8]>) -> Self {
        let app = AppResponses::default();
        Self {
            io,
            heads: ResponseHeads::new(added, app.clone()),
            pending: Vec::new(),
            sent: 0,
            app,
            end_reads: EndReads::default(),
            reads_end: None,
        }
    }

    /// The record of this connection's app responses, for its requests
    /// ([`super::guard`] finds it in the connection data).
    pub fn app_responses(&self) -> AppResponses {
        self.app.clone()
    }

    /// What ends this connection's reads, for its requests (found in the connection data
    /// like [`Self::app_responses`]).
    pub fn end_reads(&self) -> EndReads {
        self.end_reads.clone()
    }
}

impl<T: AsyncWrite + Unpin> Connection<T> {
    /// Writes what is pending; ready once all of it is written.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.sent < self.pending.len() {
            let n = ready!(Pin::new(&mut self.io).poll_write(cx, &self.pending[self.sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.sent += n;
        }
        self.pending.clear();
        self.sent = 0;
        Poll::Ready(Ok(()))
    }

    /// Takes what follows a head in the same write into `pending` too (up to
    /// [`MAX_PENDING`]), so a head and its body leave together as the writer meant, in
    /// one socket write; returns how many bytes it took.
    fn take(&mut self, bytes: &[u8]) -> usize {
        let mut taken = 0;
        while taken < bytes.len() && self.pending.len() < MAX_PENDING {
            let rest = &bytes[taken..];
            match self.heads.next(rest) {
                Outgoing::Pass(n) => {
                    let n = n.min(MAX_PENDING - self.pending.len());
                    self.pending.extend_from_slice(&rest[..n]);
                    self.heads.passed(&rest[..n]);
                    taken += n;
                }
                Outgoing::Replace { taken: head, bytes } => {
                    self.pending.extend_from_slice(&bytes);
                    taken += head;
                }
            }
        }
        taken
    }

    /// Sends a head's bytes the writer gave up on (it flushes or closes mid-head).
    fn release_held(&mut self) {
        let held = self.heads.release();
        self.pending.extend_from_slice(&held);
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Connection<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if let Some(at) = this.end_reads.at() {
            let end = this
                .reads_end
                .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
            if end.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Ok(()));
            }
        }
        let read = Pin::new(&mut this.io).poll_read(cx, buf);
        if read.is_pending() {
            this.end_reads.waiting(cx.waker());
        }
        read
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Connection<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        ready!(this.poll_pending(cx))?;
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        match this.heads.next(buf) {
            Outgoing::Pass(n) => {
                let written = ready!(Pin::new(&mut this.io).poll_write(cx, &buf[..n]))?;
                this.heads.passed(&buf[..written]);
                Poll::Ready(Ok(written))
            }
            Outgoing::Replace { taken, bytes } => {
                this.pending = bytes;
                let taken = taken + this.take(&buf[taken..]);
                // Start at once; what is left goes before the next write, or on flush.
                if let Poll::Ready(Err(error)) = this.poll_pending(cx) {
                    return Poll::Ready(Err(error));
                }
                Poll::Ready(Ok(taken))
            }
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        this.release_held();
        ready!(this.poll_pending(cx))?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        this.release_held();
        ready!(this.poll_pending(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt;

    use super::*;

    /// A socket that takes at most `per_write` bytes a call and is not ready every other.
    #[derive(Default)]
    struct Trickle {
        written: Vec<u8>,
        per_write: usize,
        stalled: bool,
    }

    impl AsyncWrite for Trickle {
        fn poll_write(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            self.stalled = !self.stalled;
            if self.stalled {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            let n = buf.len().min(self.per_write);
            self.written.extend_from_slice(&buf[..n]);
            Poll::Ready(Ok(n))
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn short_and_stalled_socket_writes_lose_and_reorder_nothing() {
        let app_head =
            b"HTTP/1.1 200 OK\r\nx-content-type-options: nosniff\r\ncontent-length: 5\r\n\r\nhello";
        let parser_head =
            b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n";
        let added: Rc<[u8]> = Rc::from(&b"x-frame-options: DENY\r\n"[..]);
        let mut expected = app_head.to_vec();
        expected.extend_from_slice(
            b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\nx-frame-options: DENY\r\n\r\n",
        );
        for per_write in [1, 2, 7, 64, 4096] {
            for step in [1, 3, 50, 4096] {
                let io = Trickle {
                    per_write,
                    ..Trickle::default()
                };
                let mut connection = Connection::new(io, added.clone());
                connection.app_responses().wrote(false);
                let stream = [&app_head[..], &parser_head[..]].concat();
                for piece in stream.chunks(step) {
                    connection.write_all(piece).await.unwrap();
                }
                connection.flush().await.unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&connection.io.written),
                    String::from_utf8_lossy(&expected),
                    "{per_write} bytes a socket write, {step} a writer's"
                );
            }
        }
    }
}
