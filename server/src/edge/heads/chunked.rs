//! Following a chunked body (RFC 9112 §7.1) to its end, byte by byte as it is written:
//! `size[;ext]\r\n data \r\n` … `0\r\n` trailer lines `\r\n`. Anything else and it is
//! lost, and the connection's bytes pass unchanged from then on.

/// Where in a chunked body the bytes written so far end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chunked {
    /// A chunk's size line: the size so far, whether a digit was seen, whether inside an
    /// extension (`;name=value`).
    Size { size: u64, digits: bool, ext: bool },
    /// The size line's `\r` was seen.
    SizeEnd { size: u64 },
    /// This many bytes of chunk data are left.
    Data(u64),
    /// The `\r` after a chunk's data is next.
    DataCr,
    /// The `\n` after a chunk's data is next.
    DataLf,
    /// After the last chunk: a trailer line, `empty` while it has no byte yet.
    Trailer { empty: bool },
    /// A trailer line's `\r` was seen.
    TrailerEnd { empty: bool },
    /// The body is over.
    Done,
    /// Not a chunked body after all.
    Lost,
}

impl Default for Chunked {
    fn default() -> Self {
        Self::Size {
            size: 0,
            digits: false,
            ext: false,
        }
    }
}

impl Chunked {
    /// Follows `bytes`; returns how many of them belong to the body (all of them unless
    /// it ends inside them, or all if it is lost).
    pub fn body_bytes(&mut self, bytes: &[u8]) -> usize {
        let mut at = 0;
        while at < bytes.len() {
            match self {
                Self::Done => return at,
                Self::Lost => return bytes.len(),
                Self::Data(left) => {
                    let take = usize::try_from(*left)
                        .map_or(bytes.len() - at, |l| l.min(bytes.len() - at));
                    *left -= take as u64;
                    at += take;
                    if *left == 0 {
                        *self = Self::DataCr;
                    }
                }
                _ => {
                    *self = self.clone().after(bytes[at]);
                    at += 1;
                }
            }
        }
        if *self == Self::Lost {
            return bytes.len();
        }
        at
    }

    /// Whether the body ended.
    pub fn is_done(&self) -> bool {
        *self == Self::Done
    }

    /// Whether the bytes were not a chunked body.
    pub fn is_lost(&self) -> bool {
        *self == Self::Lost
    }

    /// The state after one byte of a size line, a data line's end or a trailer.
    fn after(self, byte: u8) -> Self {
        match (self, byte) {
            (
                Self::Size {
                    size, ext: false, ..
                },
                b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F',
            ) => {
                let digit = u64::from((byte as char).to_digit(16).unwrap_or(0));
                match size.checked_mul(16).and_then(|s| s.checked_add(digit)) {
                    Some(size) => Self::Size {
                        size,
                        digits: true,
                        ext: false,
                    },
                    None => Self::Lost,
                }
            }
            (
                Self::Size {
                    size, digits: true, ..
                },
                b';',
            ) => Self::Size {
                size,
                digits: true,
                ext: true,
            },
            (
                Self::Size {
                    size, digits: true, ..
                },
                b'\r',
            ) => Self::SizeEnd { size },
            (Self::Size { ext: true, .. }, b'\n') => Self::Lost,
            (state @ Self::Size { ext: true, .. }, _) => state,
            (Self::SizeEnd { size: 0 }, b'\n') => Self::Trailer { empty: true },
            (Self::SizeEnd { size }, b'\n') => Self::Data(size),
            (Self::DataCr, b'\r') => Self::DataLf,
            (Self::DataLf, b'\n') => Self::default(),
            (Self::Trailer { empty }, b'\r') => Self::TrailerEnd { empty },
            (Self::Trailer { .. }, b'\n') => Self::Lost,
            (Self::Trailer { .. }, _) => Self::Trailer { empty: false },
            (Self::TrailerEnd { empty: true }, b'\n') => Self::Done,
            (Self::TrailerEnd { empty: false }, b'\n') => Self::Trailer { empty: true },
            _ => Self::Lost,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunked_body_ends_after_its_last_chunk_and_trailers() {
        let body = b"5\r\nhello\r\nA;x=y\r\n0123456789\r\n0\r\n\r\nHTTP/1.1 400";
        let whole = body.len() - b"HTTP/1.1 400".len();
        let mut chunked = Chunked::default();
        assert_eq!(chunked.body_bytes(body), whole);
        assert!(chunked.is_done());
        for split in 1..whole {
            let mut chunked = Chunked::default();
            let first = chunked.body_bytes(&body[..split]);
            assert_eq!(first, split, "split at {split}");
            assert_eq!(chunked.body_bytes(&body[split..]), whole - split);
            assert!(chunked.is_done(), "split at {split}");
        }
        let mut with_trailer = Chunked::default();
        let trailed = b"0\r\nx-sum: 1\r\n\r\n";
        assert_eq!(with_trailer.body_bytes(trailed), trailed.len());
        assert!(with_trailer.is_done());
    }

    #[test]
    fn bytes_that_are_not_chunks_are_lost() {
        for bad in [
            &b"zz\r\n"[..],
            b"5\r\nhelloXX",
            b"\r\n",
            b"FFFFFFFFFFFFFFFFFF\r\n",
        ] {
            let mut chunked = Chunked::default();
            assert_eq!(chunked.body_bytes(bad), bad.len(), "{bad:?}");
            assert!(chunked.is_lost(), "{bad:?}");
        }
    }
}
