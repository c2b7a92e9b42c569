//! A WebSocket client over plain TCP that writes frames byte by byte, for what
//! tungstenite refuses to send: text frames with invalid UTF-8 (its `Utf8Bytes` can only
//! be built from bad bytes through an `unsafe` constructor whose contract forbids them),
//! stray continuations and unmasked frames. It also sends without Nagle's delay, so
//! frames written back to back (a race) leave together.

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Longest wait for one server frame.
const DEADLINE: Duration = Duration::from_secs(20);

pub const TEXT: u8 = 0x1;
pub const BINARY: u8 = 0x2;
pub const CONTINUATION: u8 = 0x0;
const CLOSE: u8 = 0x8;
const PING: u8 = 0x9;

/// A hand-rolled client connection.
pub struct RawSocket {
    stream: TcpStream,
}

impl RawSocket {
    /// Opens `path` on `address` and reads past the backlog to `caught_up`.
    pub async fn connect(address: &str, path: &str) -> Self {
        let mut stream = TcpStream::connect(address).await.unwrap();
        // Every frame leaves at once: no Nagle wait for the server's delayed ACK.
        stream.set_nodelay(true).unwrap();
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {address}\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
             Sec-WebSocket-Version: 13\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            head.push(stream.read_u8().await.unwrap());
        }
        assert!(
            head.starts_with(b"HTTP/1.1 101"),
            "{}",
            String::from_utf8_lossy(&head)
        );
        let mut socket = Self { stream };
        while socket.next_json().await.map(|f| f["kind"] != "caught_up") != Some(false) {}
        socket
    }

    /// Sends one frame, masked as a client must unless `masked` is false.
    pub async fn send_frame(&mut self, fin: bool, opcode: u8, payload: &[u8], masked: bool) {
        let mut frame = vec![(u8::from(fin) << 7) | opcode];
        let mask_bit = if masked { 0x80 } else { 0 };
        match payload.len() {
            n if n < 126 => frame.push(mask_bit | n as u8),
            n if n <= 0xffff => {
                frame.push(mask_bit | 126);
                frame.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                frame.push(mask_bit | 127);
                frame.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        let key = [0x37, 0xfa, 0x21, 0x3d];
        if masked {
            frame.extend_from_slice(&key);
            frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
        } else {
            frame.extend_from_slice(payload);
        }
        // The server may close mid-write (oversized frames); that is what some cases test.
        let _ = self.stream.write_all(&frame).await;
    }

    /// Sends a text frame.
    pub async fn send_text(&mut self, text: &str) {
        self.send_frame(true, TEXT, text.as_bytes(), true).await;
    }

    /// The next text frame as JSON, skipping pings; `None` once the server closes.
    pub async fn next_json(&mut self) -> Option<Value> {
        loop {
            match self.read_frame().await? {
                (TEXT, payload) => return Some(serde_json::from_slice(&payload).unwrap()),
                (CLOSE, _) => return None,
                _ => {}
            }
        }
    }

    /// The code of the server's close frame, skipping other frames; `None` if the
    /// connection ended without one.
    pub async fn close_code(&mut self) -> Option<u16> {
        loop {
            match self.read_frame().await? {
                (CLOSE, payload) if payload.len() >= 2 => {
                    return Some(u16::from_be_bytes([payload[0], payload[1]]))
                }
                (CLOSE, _) => return None,
                _ => {}
            }
        }
    }

    /// Reads one (unmasked) server frame: opcode and payload; `None` at end of stream.
    async fn read_frame(&mut self) -> Option<(u8, Vec<u8>)> {
        let stream = &mut self.stream;
        tokio::time::timeout(DEADLINE, async {
            let first = stream.read_u8().await.ok()?;
            let length = match stream.read_u8().await.ok()? & 0x7f {
                126 => u64::from(stream.read_u16().await.ok()?),
                127 => stream.read_u64().await.ok()?,
                short => u64::from(short),
            };
            let mut payload = vec![0; length as usize];
            stream.read_exact(&mut payload).await.ok()?;
            if first & 0x0f == PING {
                // Answer like a browser would, so the heartbeat never closes us.
                let pong = [
                    &[0x8a, 0x80 | payload.len() as u8, 0, 0, 0, 0][..],
                    &payload,
                ]
                .concat();
                let _ = stream.write_all(&pong).await;
            }
            Some((first & 0x0f, payload))
        })
        .await
        .expect("a server frame in time")
    }
}
