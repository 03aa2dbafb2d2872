//! CSV as RFC 4180 writes it, with LF line ends: a field is quoted when it holds a comma,
//! a quote, a CR or an LF (quotes doubled inside); a null is an empty field and an empty
//! string is `""`, so the two stay apart. A text a spreadsheet would run as a formula
//! (starting with `=`, `+`, `-`, `@`, a tab or a CR; a number such as `-3` aside) starts
//! with a `'`, so a hostile Registry entry stays text.

/// One field: `None` (null) is empty.
pub fn field(v: Option<&str>) -> String {
    match v {
        None => String::new(),
        Some("") => "\"\"".to_owned(),
        Some(s) => {
            let s = if formula(s) {
                std::borrow::Cow::Owned(format!("'{s}"))
            } else {
                std::borrow::Cow::Borrowed(s)
            };
            if s.contains([',', '"', '\r', '\n']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.into_owned()
            }
        }
    }
}

/// Whether a spreadsheet would read `s` as a formula (OWASP's CSV injection list).
fn formula(s: &str) -> bool {
    match s.as_bytes().first() {
        Some(b'=' | b'@' | b'\t' | b'\r') => true,
        Some(b'+' | b'-') => s.parse::<f64>().is_err(),
        _ => false,
    }
}

/// One record: the fields joined by commas, ended by LF.
pub fn record<'a>(fields: impl IntoIterator<Item = Option<&'a str>>) -> String {
    let mut line = fields.into_iter().map(field).collect::<Vec<_>>().join(",");
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_4180_quoting() {
        assert_eq!(field(None), "");
        assert_eq!(field(Some("")), "\"\"");
        assert_eq!(field(Some("plain")), "plain");
        assert_eq!(field(Some("a,b")), "\"a,b\"");
        assert_eq!(field(Some("say \"hi\"")), "\"say \"\"hi\"\"\"");
        assert_eq!(field(Some("two\nlines")), "\"two\nlines\"");
        assert_eq!(field(Some("cr\r")), "\"cr\r\"");
        assert_eq!(record([Some("1"), None, Some("x,y")]), "1,,\"x,y\"\n");
    }

    #[test]
    fn a_formula_stays_text() {
        assert_eq!(
            field(Some("=HYPERLINK(\"http://x\",\"y\")")),
            "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""
        );
        assert_eq!(field(Some("@SUM(A1)")), "'@SUM(A1)");
        assert_eq!(field(Some("+1+cmd|' /C calc'!A0")), "'+1+cmd|' /C calc'!A0");
        assert_eq!(field(Some("-2+3")), "'-2+3");
        assert_eq!(field(Some("\tx")), "'\tx");
        assert_eq!(field(Some("\rx")), "\"'\rx\"");
        assert_eq!(field(Some("-3")), "-3");
        assert_eq!(field(Some("+0.5")), "+0.5");
        assert_eq!(field(Some("a=b")), "a=b");
    }
}
