//! CSV as RFC 4180 writes it, with LF line ends: a field is quoted when it holds a comma,
//! a quote, a CR or an LF (quotes doubled inside); a null is an empty field and an empty
//! string is `""`, so the two stay apart.

/// One field: `None` (null) is empty.
pub fn field(v: Option<&str>) -> String {
    match v {
        None => String::new(),
        Some("") => "\"\"".to_owned(),
        Some(s) if s.contains([',', '"', '\r', '\n']) => format!("\"{}\"", s.replace('"', "\"\"")),
        Some(s) => s.to_owned(),
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
}
