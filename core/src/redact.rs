//! `redact`: masks secrets in text before it is quoted anywhere (SPEC §3.4).
//!
//! Every secret found is replaced by [`MASK`] (`[REDACTED]`); the text around it, including
//! a key name, `Bearer ` and quotes, is kept so the line still reads naturally. What is masked:
//! - bearer tokens: the token after `Bearer ` (any case);
//! - API keys by their published prefixes: `sk-…` (OpenAI, `sk-ant-…` Anthropic, at least 20
//!   characters after `sk-`), `sk_live_`/`sk_test_`/`rk_live_`/`rk_test_` (Stripe),
//!   `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_` and `github_pat_` (GitHub), `glpat-` (GitLab),
//!   `xoxa-`/`xoxb-`/`xoxp-`/`xoxr-`/`xoxs-`/`xoxe-` (Slack), `AKIA`/`ASIA` + 16 (AWS),
//!   `AIza` (Google), `npm_` (npm), `hf_` (Hugging Face);
//! - JWTs: `eyJ…` `.` `…` `.` `…`;
//! - values of key/value pairs whose key names a secret, separated by `=` or `:`
//!   (`password=x`, `token: x`, `"password": "x"`, `\"secret\":\"x\"`). Key names match
//!   whole words or `_`/`-`/`.`/camelCase-separated parts, any case, short ones included:
//!   `pwd`, `pass`, `passwd`, `password`, `passphrase`, `secret`, `token`, `auth`,
//!   `authorization`, `credential(s)`, `cookie`, `session`; pairs of parts such as
//!   `private_key`, `api_key`, `access_key`; and keys ending in a long secret word such as
//!   `PGPASSWORD`, `csrftoken` or `JSESSIONID` (see `keys.rs` for the lists). So `DB_PASS`,
//!   `clientSecret` and `X-Auth-Token` are secret, while `compass`, `author`, `oauth` and
//!   `max_tokens` are not.
//!   A quoted value ends at its closing quote; a bare value ends at whitespace or one of
//!   `& , ; " ' < > ) ] } \` (so `Cookie: a=1; b=2` masks `a=1` and keeps `b=2`, and a
//!   connection string's `Password=x;Database=y` masks only `x`); `null`, `true`, `false`
//!   and values starting with `{` or `[` are left alone;
//! - the password in URL credentials (`scheme://user:PASSWORD@host`, up to the last `@`
//!   before the host, as URL parsers read it);
//! - the body of PEM blocks (`-----BEGIN … KEY-----` to `-----END …`, or to the end of the
//!   text when the line was cut), markers kept;
//! - any run of 32 or more hexadecimal digits.
//!
//! Short runs are deliberately not masked (`sk-learn`, `max_tokens=5`, UUIDs with dashes),
//! and a masked text passes through unchanged again (`redact` is idempotent).
//! Text with nothing to mask is returned borrowed, without copying. One pass over the
//! bytes with a lookup table finds the few places worth a closer look, so the cost on
//! ordinary log text is a table lookup per byte.

mod keys;
mod pem;
mod rules;

use std::borrow::Cow;

/// The text every secret is replaced with.
pub const MASK: &str = "[REDACTED]";

/// Masks secrets in `text`; see the module documentation for what is masked.
pub fn redact(text: &str) -> Cow<'_, str> {
    let Some((mut out, mut again)) = mask_once(text) else {
        return Cow::Borrowed(text);
    };
    // A mask can expose a new word start (`…abcdefxoxb-…` once the hex run before `xoxb-`
    // is masked), so while a mask is directly followed by a word character, look again:
    // the result is then stable under `redact`.
    for _ in 0..MAX_PASSES {
        if !again {
            break;
        }
        match mask_once(&out) {
            Some((next, more)) if next != out => (out, again) = (next, more),
            _ => break,
        }
    }
    Cow::Owned(out)
}

/// Passes after the first; each can only act on word starts the previous one created.
const MAX_PASSES: usize = 8;

/// One pass: the masked text and whether a mask is followed by a word character (which a
/// further pass may see as a new word start), or `None` when there was nothing to mask.
fn mask_once(text: &str) -> Option<(String, bool)> {
    let spans = rules::find(text.as_bytes());
    if spans.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut again = false;
    for (start, end) in merge(spans) {
        out.push_str(&text[at..start]);
        out.push_str(MASK);
        at = end;
        again |= text
            .as_bytes()
            .get(end)
            .is_some_and(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    }
    out.push_str(&text[at..]);
    Some((out, again))
}

/// Sorts spans and merges overlapping or touching ones.
fn merge(mut spans: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (s, e) in spans {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    merged
}
