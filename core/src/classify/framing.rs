//! Line framing: `\n`-separated messages arriving in arbitrary chunks.

use super::swar::find_newline;

/// Where framed lines go.
pub(super) trait Lines {
    /// Tries to take a whole line straight from the start of `rest` in one pass, without
    /// a separate newline search. Returns the bytes consumed (through the `\n`), or `None`
    /// to let the framer find the line end and call [`Lines::line`] instead.
    fn prefix(&mut self, rest: &[u8]) -> Option<usize>;
    /// One complete line, without its `\n` or a trailing `\r`.
    fn line(&mut self, line: &[u8]);
}

/// The partial line of one direction, carried across feeds.
#[derive(Debug, Default, Clone)]
pub(super) struct Framer {
    tail: Vec<u8>,
}

/// After a line this long, give the memory back instead of keeping the capacity around.
const KEEP_CAPACITY: usize = 1 << 20;

impl Framer {
    /// Splits `bytes` into complete lines for `sink` and keeps the unterminated rest for
    /// the next call. Lines lying entirely inside `bytes` are never copied.
    pub fn feed(&mut self, bytes: &[u8], sink: &mut impl Lines) {
        let mut rest = bytes;
        if !self.tail.is_empty() {
            let Some(nl) = find_newline(rest) else {
                self.tail.extend_from_slice(rest);
                return;
            };
            self.tail.extend_from_slice(&rest[..nl]);
            sink.line(strip_cr(&self.tail));
            self.reset();
            rest = &rest[nl + 1..];
        }
        while !rest.is_empty() {
            if let Some(used) = sink.prefix(rest) {
                rest = &rest[used..];
                continue;
            }
            let Some(nl) = find_newline(rest) else {
                self.tail.extend_from_slice(rest);
                return;
            };
            sink.line(strip_cr(&rest[..nl]));
            rest = &rest[nl + 1..];
        }
    }

    /// Hands over the unterminated last line, if any (end of stream).
    pub fn finish(&mut self, sink: &mut impl Lines) {
        if !self.tail.is_empty() {
            sink.line(strip_cr(&self.tail));
            self.reset();
        }
    }

    fn reset(&mut self) {
        if self.tail.capacity() > KEEP_CAPACITY {
            self.tail = Vec::new();
        } else {
            self.tail.clear();
        }
    }

    /// Bytes held in the partial line.
    pub fn buffered(&self) -> usize {
        self.tail.len()
    }
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Collects lines; takes lines starting with `p` through `prefix` when `fast`.
    struct Collect {
        fast: bool,
        got: Vec<Vec<u8>>,
    }

    impl Lines for Collect {
        fn prefix(&mut self, rest: &[u8]) -> Option<usize> {
            let nl = find_newline(rest).filter(|_| self.fast && rest[0] == b'p')?;
            self.got.push(rest[..nl].to_vec());
            Some(nl + 1)
        }
        fn line(&mut self, line: &[u8]) {
            self.got.push(line.to_vec());
        }
    }

    #[test]
    fn splits_any_way_the_bytes_arrive() {
        let input = b"a\r\npb\n\nccc\nd";
        for fast in [false, true] {
            for cut in 0..input.len() {
                let (mut f, mut sink) = (
                    Framer::default(),
                    Collect {
                        fast,
                        got: Vec::new(),
                    },
                );
                f.feed(&input[..cut], &mut sink);
                f.feed(&input[cut..], &mut sink);
                f.finish(&mut sink);
                let want = [&b"a"[..], b"pb", b"", b"ccc", b"d"].map(<[u8]>::to_vec);
                assert_eq!(sink.got, want, "cut {cut}");
                assert_eq!(f.buffered(), 0);
            }
        }
    }
}
