//! An incremental `text/event-stream` decoder (the WHATWG event-stream format), enough for
//! MCP's streamable HTTP answers: `data:` lines joined with `\n` and dispatched at a blank
//! line; `\r\n`, `\n` and `\r` all end a line, also when split across chunks; comments and
//! other fields (`event`, `id`, `retry`) are skipped. Unlike a browser, an event left
//! without its blank line when the stream ends is still dispatched: a server that closes
//! right after its answer has answered.

/// Decoder state between chunks.
#[derive(Debug, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    after_cr: bool,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds `chunk`, calling `on_event` with each complete event's data; stops early and
    /// returns `true` as soon as `on_event` returns `true`.
    pub fn feed(&mut self, chunk: &[u8], on_event: &mut impl FnMut(&[u8]) -> bool) -> bool {
        for &b in chunk {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\r' | b'\n' => {
                    self.after_cr = b == b'\r';
                    if self.end_line(on_event) {
                        return true;
                    }
                }
                _ => self.line.push(b),
            }
        }
        false
    }

    /// Ends the stream: dispatches a pending event (see the module docs).
    pub fn finish(&mut self, on_event: &mut impl FnMut(&[u8]) -> bool) -> bool {
        if !self.line.is_empty() && self.end_line(on_event) {
            return true;
        }
        self.dispatch(on_event)
    }

    fn end_line(&mut self, on_event: &mut impl FnMut(&[u8]) -> bool) -> bool {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            return self.dispatch(on_event);
        }
        if line[0] == b':' {
            return false;
        }
        let (field, value) = match line.iter().position(|&c| c == b':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (&line[..], &[][..]),
        };
        if field == b"data" {
            if self.has_data {
                self.data.push(b'\n');
            }
            self.data.extend_from_slice(value);
            self.has_data = true;
        }
        self.line = line;
        self.line.clear();
        false
    }

    fn dispatch(&mut self, on_event: &mut impl FnMut(&[u8]) -> bool) -> bool {
        if !self.has_data {
            return false;
        }
        self.has_data = false;
        let stop = on_event(&self.data);
        self.data.clear();
        stop
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]]) -> Vec<String> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        let mut push = |e: &[u8]| {
            out.push(String::from_utf8_lossy(e).into_owned());
            false
        };
        for c in chunks {
            d.feed(c, &mut push);
        }
        d.finish(&mut push);
        out
    }

    #[test]
    fn events_split_anywhere_decode_the_same() {
        let stream = b": ping\r\nevent: message\r\nid: 7\r\ndata: {\"a\":\r\ndata:1}\r\n\r\ndata: two\n\ndata: three\r\rdata:last";
        let whole = events(&[stream]);
        assert_eq!(whole, ["{\"a\":\n1}", "two", "three", "last"]);
        for cut in 1..stream.len() {
            assert_eq!(
                events(&[&stream[..cut], &stream[cut..]]),
                whole,
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn a_stop_from_the_callback_ends_feeding() {
        let mut d = SseDecoder::new();
        let mut seen = 0;
        let stopped = d.feed(b"data: 1\n\ndata: 2\n\n", &mut |_| {
            seen += 1;
            true
        });
        assert!(stopped);
        assert_eq!(seen, 1);
    }
}
