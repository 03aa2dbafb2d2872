//! Which key names hold secrets (SPEC §3.4): `password=…`, `DB_PASS: …`, `"clientSecret": …`.
//!
//! A key is split into parts at `_`, `-`, `.` and camelCase boundaries (`XAuthToken` →
//! `x`, `auth`, `token`), compared in lower case. It is secret when
//! - one part is a secret word ([`PART_WORDS`]: short ones such as `pwd`, `pass` and `auth`
//!   count only as a whole part, so `compass`, `bypass`, `author` and `oauth` do not);
//! - two neighbouring parts name one ([`PART_PAIRS`]: `private_key`, `apiKey`, `ACCESS-KEY`);
//! - or the key, separators dropped, ends in a long secret word ([`SUFFIX_WORDS`]:
//!   `PGPASSWORD`, `csrftoken`, `JSESSIONID`).

/// Longest key name looked at.
pub(super) const MAX_KEY: usize = 64;

/// Words that make a key secret when they are one of its parts.
const PART_WORDS: &[&[u8]] = &[
    b"pwd",
    b"pass",
    b"passwd",
    b"password",
    b"passphrase",
    b"passcode",
    b"secret",
    b"token",
    b"auth",
    b"authorization",
    b"credential",
    b"credentials",
    b"cookie",
    b"session",
    b"sessionid",
    b"apikey",
    b"accesskey",
    b"privatekey",
    b"secretkey",
];

/// Neighbouring parts that make a key secret together (neither is secret alone: `key`,
/// `private`, `api` and `access` name many harmless things).
const PART_PAIRS: &[(&[u8], &[u8])] = &[
    (b"private", b"key"),
    (b"api", b"key"),
    (b"access", b"key"),
    (b"secret", b"key"),
    (b"signing", b"key"),
    (b"encryption", b"key"),
];

/// Long words that make a key secret when it ends with them, separators dropped.
const SUFFIX_WORDS: &[&[u8]] = &[
    b"password",
    b"passwd",
    b"passphrase",
    b"secret",
    b"token",
    b"apikey",
    b"accesskey",
    b"privatekey",
    b"secretkey",
    b"credential",
    b"credentials",
    b"authorization",
    b"sessionid",
    b"sessid",
    b"cookie",
];

/// Most parts a key is split into; later parts are only seen through the suffix rule.
const MAX_PARTS: usize = 16;

/// Whether `key` (at most [`MAX_KEY`] bytes of `[A-Za-z0-9_.-]`) names a secret.
pub(super) fn sensitive(key: &[u8]) -> bool {
    if key.len() < 3 || key.len() > MAX_KEY || !key.iter().any(u8::is_ascii_alphabetic) {
        return false;
    }
    // The key's letters and digits in lower case, and where each part starts and ends.
    let mut lower = [0u8; MAX_KEY];
    let mut n = 0;
    let mut parts = [(0usize, 0usize); MAX_PARTS];
    let mut count = 0;
    let mut start = 0;
    for (i, &c) in key.iter().enumerate() {
        let boundary = if !c.is_ascii_alphanumeric() {
            true
        } else if c.is_ascii_uppercase() && i > 0 {
            let prev = key[i - 1];
            let next_lower = key.get(i + 1).is_some_and(u8::is_ascii_lowercase);
            prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower)
        } else {
            false
        };
        if boundary {
            if n > start && count < MAX_PARTS {
                parts[count] = (start, n);
                count += 1;
            }
            start = n;
        }
        if c.is_ascii_alphanumeric() {
            lower[n] = c.to_ascii_lowercase();
            n += 1;
        }
    }
    if n > start && count < MAX_PARTS {
        parts[count] = (start, n);
        count += 1;
    }
    let lower = &lower[..n];
    let parts = &parts[..count];
    let part = |&(a, b): &(usize, usize)| &lower[a..b];
    parts.iter().any(|p| PART_WORDS.contains(&part(p)))
        || parts.windows(2).any(|w| {
            PART_PAIRS
                .iter()
                .any(|(x, y)| part(&w[0]) == *x && part(&w[1]) == *y)
        })
        || SUFFIX_WORDS.iter().any(|w| lower.ends_with(w))
}

#[cfg(test)]
mod tests {
    use super::sensitive;

    #[test]
    fn secret_words_match_as_parts_or_long_suffixes() {
        for key in [
            "pwd",
            "PASS",
            "DB_PASS",
            "db-pass",
            "dbPass",
            "passwd",
            "passphrase",
            "sshPassphrase",
            "PGPASSWORD",
            "MYSQL_PWD",
            "auth",
            "X-Auth-Token",
            "XAuthToken",
            "credential",
            "AWS_CREDENTIALS",
            "private_key",
            "privateKey",
            "client_secret",
            "clientSecret",
            "session",
            "session_id",
            "JSESSIONID",
            "PHPSESSID",
            "cookie",
            "Set-Cookie",
            "APIKey",
            "x-api-key",
            "AWS_SECRET_ACCESS_KEY",
            "SECRET_KEY_BASE",
            "csrftoken",
            "_authToken",
        ] {
            assert!(sensitive(key.as_bytes()), "{key} should be secret");
        }
    }

    #[test]
    fn harmless_keys_stay_readable() {
        for key in [
            "compass",
            "bypass",
            "author",
            "oauth",
            "max_tokens",
            "tokenizer",
            "keyboard",
            "api_url",
            "access_log",
            "private",
            "key",
            "level",
            "2026-11-30T21",
            "id",
        ] {
            assert!(!sensitive(key.as_bytes()), "{key} should not be secret");
        }
    }
}
