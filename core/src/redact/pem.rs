//! PEM blocks (`-----BEGIN RSA PRIVATE KEY-----` … `-----END RSA PRIVATE KEY-----`).
//!
//! A log line holds a PEM block when a logger wrote it on one line: with escaped newlines
//! (`"-----BEGIN PRIVATE KEY-----\nMIIE…\n-----END PRIVATE KEY-----"`) or with spaces.
//! Everything between the BEGIN and END markers is masked, whatever the label (a
//! certificate is masked too: telling a key from a certificate is not worth a mistake);
//! the markers stay, so the reader still sees what was there. Without an END marker (the
//! line was cut), the rest of the text is masked.

const BEGIN: &[u8] = b"-----BEGIN ";
const END: &[u8] = b"-----END ";
const DASHES: &[u8] = b"-----";

/// Index of the first `needle` in `hay` at or after `from`.
fn find_from(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    let first = needle[0];
    let mut i = from;
    while i + needle.len() <= hay.len() {
        let rel = hay[i..=hay.len() - needle.len()]
            .iter()
            .position(|&c| c == first)?;
        i += rel;
        if hay[i..].starts_with(needle) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Adds the span of every PEM body in `b` to `spans`.
pub(super) fn blocks(b: &[u8], spans: &mut Vec<(usize, usize)>) {
    let mut at = 0;
    while let Some(begin) = find_from(b, BEGIN, at) {
        let label = begin + BEGIN.len();
        // The BEGIN marker ends at its closing dashes, on the same line.
        let line_end = b[label..]
            .iter()
            .position(|&c| c == b'\n' || c == b'\r')
            .map_or(b.len(), |p| label + p);
        let body = find_from(&b[..line_end], DASHES, label).map_or(label, |d| d + DASHES.len());
        let end = find_from(b, END, body).unwrap_or(b.len());
        // Idempotent: a body that is already exactly the mask is left alone.
        if end > body && &b[body..end] != super::MASK.as_bytes() {
            spans.push((body, end));
        }
        at = end.max(body).max(begin + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::blocks;

    fn spans(s: &str) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        blocks(s.as_bytes(), &mut v);
        v
    }

    #[test]
    fn the_body_between_the_markers_is_found() {
        let t = r"key=-----BEGIN EC PRIVATE KEY-----\nMHcCAQ\n-----END EC PRIVATE KEY----- ok";
        let (a, b) = spans(t)[0];
        assert_eq!(&t[a..b], r"\nMHcCAQ\n");
        let cut = "ERROR -----BEGIN PRIVATE KEY----- MIIEvQIBADAN";
        let (a, b) = spans(cut)[0];
        assert_eq!(&cut[a..b], " MIIEvQIBADAN");
        assert!(spans("-----BEGIN X-----[REDACTED]-----END X-----").is_empty());
        assert!(spans("no pem here -----").is_empty());
    }
}
