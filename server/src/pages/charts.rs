//! Inline SVG charts, each with its text equivalent: an `<svg role="img">` with a title
//! and a description, a caption naming the sample and the source, and the same numbers as
//! a table. Every mark carries its numbers in `data-*` attributes (what the browser test
//! compares with the API answer). No script, no external file.

use super::escape::escape;

/// Bar colours (≥ 4.5:1 against white).
const BAR: &str = "#1f5fa8";
const BAD: &str = "#a4262c";

/// A percentage with one decimal, or `n/a`.
pub fn pct(rate: Option<f64>) -> String {
    rate.map_or("n/a".to_owned(), |r| format!("{:.1}%", r * 100.0))
}

/// The wire name of a value: an enumeration's serde name (`no_change_observed`), a
/// number or a string as the answer gives it.
pub fn label<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(serde_json::Value::Null) | Err(_) => "—".to_owned(),
        Ok(serde_json::Value::Array(a)) if a.is_empty() => "—".to_owned(),
        Ok(serde_json::Value::Array(a)) => a.iter().map(label).collect::<Vec<_>>().join(", "),
        Ok(other) => other.to_string(),
    }
}

/// `yes`, `no`, or `—` when unknown.
pub fn yes(v: Option<bool>) -> String {
    v.map_or("—", |b| if b { "yes" } else { "no" }).to_owned()
}

/// A label cut for an axis (the table and `data-label` keep it whole).
fn short(label: &str, max: usize) -> String {
    if label.chars().count() <= max {
        label.to_owned()
    } else {
        format!("{}…", label.chars().take(max - 1).collect::<String>())
    }
}

/// One bar of a rate chart: a label, a rate in 0..1 (none: nothing rated), its sample.
#[derive(Debug, Clone)]
pub struct RateBar {
    /// Category (a day, a version, a hash).
    pub label: String,
    /// Success rate, 0..1.
    pub rate: Option<f64>,
    /// The sample behind the rate (the caption says what it counts).
    pub n: u64,
    /// All interactions in the category.
    pub interactions: u64,
}

fn svg_open(id: &str, title: &str, desc: &str, w: usize, h: usize) -> String {
    format!(
        "<svg role=\"img\" aria-labelledby=\"{id}-t {id}-d\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" \
         xmlns=\"http://www.w3.org/2000/svg\"><title id=\"{id}-t\">{}</title><desc id=\"{id}-d\">{}</desc>",
        escape(title),
        escape(desc)
    )
}

/// Vertical bars of success rates on a 0-100 % axis, one per category in the given order
/// (so a release that broke things shows as a step between neighbours).
pub fn rate_chart(id: &str, title: &str, desc: &str, bars: &[RateBar]) -> String {
    let (left, top, plot_h, slot) = (44usize, 16usize, 160usize, 56usize);
    let w = left + slot * bars.len().max(1) + 8;
    let h = top + plot_h + 48;
    let mut s = svg_open(id, title, desc, w.max(320), h);
    for tick in [0, 25, 50, 75, 100] {
        let y = top + plot_h - plot_h * tick / 100;
        s.push_str(&format!(
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\" stroke=\"#c8c8c8\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{tick}%</text>",
            w.max(320) - 4,
            left - 4,
            y + 4
        ));
    }
    for (i, b) in bars.iter().enumerate() {
        let x = left + slot * i + 8;
        let cx = x + (slot - 16) / 2;
        s.push_str(&format!(
            "<g class=\"bar\" data-label=\"{}\" data-rate=\"{}\" data-n=\"{}\" data-interactions=\"{}\">",
            escape(&b.label),
            b.rate.map_or("".to_owned(), |r| r.to_string()),
            b.n,
            b.interactions
        ));
        match b.rate {
            Some(r) => {
                let bh = ((plot_h as f64) * r).round() as usize;
                s.push_str(&format!(
                    "<rect x=\"{x}\" y=\"{}\" width=\"{}\" height=\"{bh}\" fill=\"{BAR}\"/><text x=\"{cx}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                    top + plot_h - bh,
                    slot - 16,
                    top + plot_h - bh - 3,
                    escape(&pct(Some(r)))
                ));
            }
            None => s.push_str(&format!(
                "<rect x=\"{x}\" y=\"{}\" width=\"{}\" height=\"{plot_h}\" fill=\"none\" stroke=\"#767676\" stroke-dasharray=\"4 3\"/>\
                 <text x=\"{cx}\" y=\"{}\" text-anchor=\"middle\">n/a</text>",
                top,
                slot - 16,
                top + plot_h / 2
            )),
        }
        s.push_str(&format!(
            "<text x=\"{cx}\" y=\"{}\" text-anchor=\"middle\">{}</text><text x=\"{cx}\" y=\"{}\" text-anchor=\"middle\">n={}</text></g>",
            top + plot_h + 16,
            escape(&short(&b.label, 8)),
            top + plot_h + 32,
            b.n
        ));
    }
    s.push_str("</svg>");
    s
}

/// One horizontal bar: a label and a value (a count, or milliseconds).
#[derive(Debug, Clone)]
pub struct ValueBar {
    /// Category.
    pub label: String,
    /// Its value.
    pub value: f64,
    /// How the value is written (`"12"`, `"≤ 250 ms"`).
    pub text: String,
}

/// Horizontal bars scaled to the largest value; `bad` draws them in the failure colour.
pub fn value_chart(id: &str, title: &str, desc: &str, bars: &[ValueBar], bad: bool) -> String {
    let (label_w, bar_w, row) = (170usize, 300usize, 24usize);
    let w = label_w + bar_w + 110;
    let h = row * bars.len().max(1) + 8;
    let max = bars.iter().map(|b| b.value).fold(0.0_f64, f64::max);
    let mut s = svg_open(id, title, desc, w, h);
    for (i, b) in bars.iter().enumerate() {
        let y = 4 + row * i;
        let len = if max > 0.0 {
            ((bar_w as f64) * b.value / max).round().max(1.0) as usize
        } else {
            0
        };
        s.push_str(&format!(
            "<g class=\"bar\" data-label=\"{}\" data-value=\"{}\"><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{label_w}\" y=\"{}\" width=\"{len}\" height=\"{}\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text></g>",
            escape(&b.label),
            b.value,
            label_w - 6,
            y + 15,
            escape(&short(&b.label, 24)),
            y + 3,
            row - 8,
            if bad { BAD } else { BAR },
            label_w + len + 6,
            y + 15,
            escape(&b.text)
        ));
    }
    s.push_str("</svg>");
    s
}

/// One day of the Scanner's 30-day strip.
#[derive(Debug, Clone)]
pub struct StripDay {
    /// UTC day.
    pub day: String,
    /// The day's highest level, when observed.
    pub level: Option<u8>,
    /// Its HTTP status.
    pub status: Option<u16>,
    /// Why there is no observation (`scanner_did_not_run`, ...), when there is none.
    pub missing: Option<String>,
    /// Tool definitions changed that day.
    pub changed: bool,
}

/// Thirty cells, oldest first, each with its level written in it (colour is never the
/// only carrier): 2, 1, 0, or – for a day without an observation.
pub fn strip_chart(id: &str, title: &str, desc: &str, days: &[StripDay]) -> String {
    let (cell, gap) = (20usize, 3usize);
    let w = (cell + gap) * days.len().max(1) + 4;
    let h = cell + 36;
    let mut s = svg_open(id, title, desc, w.max(320), h);
    for (i, d) in days.iter().enumerate() {
        let x = 2 + (cell + gap) * i;
        let (fill, text, ink) = match d.level {
            Some(2) => ("#1e6b34", "2", "#ffffff"),
            Some(1) => ("#7a4f00", "1", "#ffffff"),
            Some(_) => ("#a4262c", "0", "#ffffff"),
            None => ("#ffffff", "–", "#1b1b1b"),
        };
        s.push_str(&format!(
            "<g class=\"day\" data-day=\"{}\" data-level=\"{}\" data-status=\"{}\" data-missing=\"{}\" data-changed=\"{}\">\
             <rect x=\"{x}\" y=\"2\" width=\"{cell}\" height=\"{cell}\" fill=\"{fill}\" stroke=\"#767676\"/>\
             <text x=\"{}\" y=\"16\" text-anchor=\"middle\" style=\"fill:{ink}\">{text}</text>",
            escape(&d.day),
            d.level.map_or(String::new(), |l| l.to_string()),
            d.status.map_or(String::new(), |s| s.to_string()),
            escape(d.missing.as_deref().unwrap_or("")),
            d.changed,
            x + cell / 2
        ));
        if d.changed {
            s.push_str(&format!(
                "<text x=\"{}\" y=\"36\" text-anchor=\"middle\">Δ</text>",
                x + cell / 2
            ));
        }
        s.push_str("</g>");
    }
    if let (Some(first), Some(last)) = (days.first(), days.last()) {
        s.push_str(&format!(
            "<text x=\"2\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            h - 2,
            escape(&first.day),
            w.max(320) - 2,
            h - 2,
            escape(&last.day)
        ));
    }
    s.push_str("</svg>");
    s
}

/// A table; every cell is text and is escaped here.
pub fn table(caption: &str, head: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = format!(
        "<table><caption class=\"muted\">{}</caption><thead><tr>",
        escape(caption)
    );
    for h in head {
        s.push_str(&format!("<th scope=\"col\">{}</th>", escape(h)));
    }
    s.push_str("</tr></thead><tbody>");
    for r in rows {
        s.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            if i == 0 {
                s.push_str(&format!("<th scope=\"row\">{}</th>", escape(c)));
            } else {
                s.push_str(&format!("<td>{}</td>", escape(c)));
            }
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
    s
}

/// A figure: the chart, a caption (what, the sample, the source; escaped here), and the
/// table with the same numbers.
pub fn figure(id: &str, svg: &str, caption: &str, table_html: &str) -> String {
    format!(
        "<figure id=\"{id}\">{svg}<figcaption>{}</figcaption>\
         <details><summary>The numbers as a table</summary>{table_html}</details></figure>",
        escape(caption)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_titles_are_escaped_in_every_chart() {
        let evil = "<script>x</script>\"'&";
        let bars = [RateBar {
            label: evil.into(),
            rate: Some(0.5),
            n: 2,
            interactions: 2,
        }];
        let v = [ValueBar {
            label: evil.into(),
            value: 1.0,
            text: evil.into(),
        }];
        let d = [StripDay {
            day: evil.into(),
            level: None,
            status: None,
            missing: Some(evil.into()),
            changed: true,
        }];
        for svg in [
            rate_chart("a", evil, evil, &bars),
            value_chart("b", evil, evil, &v, false),
            strip_chart("c", evil, evil, &d),
            table(evil, &[evil], &[vec![evil.into(), evil.into()]]),
            figure("f", "", evil, ""),
        ] {
            assert!(!svg.contains("<script>"), "{svg}");
            assert!(!svg.contains("\"'"), "{svg}");
        }
    }

    #[test]
    fn a_rate_bar_is_as_tall_as_its_rate() {
        let bars = [
            RateBar {
                label: "1.0.0".into(),
                rate: Some(1.0),
                n: 4,
                interactions: 4,
            },
            RateBar {
                label: "1.1.0".into(),
                rate: Some(0.25),
                n: 4,
                interactions: 5,
            },
            RateBar {
                label: "2.0.0".into(),
                rate: None,
                n: 0,
                interactions: 1,
            },
        ];
        let svg = rate_chart("r", "t", "d", &bars);
        assert!(svg.contains("height=\"160\" fill=\"#1f5fa8\""));
        assert!(svg.contains("height=\"40\" fill=\"#1f5fa8\""));
        assert!(svg
            .contains("data-label=\"2.0.0\" data-rate=\"\" data-n=\"0\" data-interactions=\"1\""));
        assert!(svg.contains(">100.0%<") && svg.contains(">25.0%<") && svg.contains(">n/a<"));
    }
}
