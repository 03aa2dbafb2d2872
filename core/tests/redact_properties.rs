//! Property test of `redact` (SPEC §3.4): a log line carrying any secret form the SPEC
//! names, at any position among ordinary words, never leaves `redact` with the secret in it,
//! and redacting again changes nothing.

use lowdown_core::redact::redact;
use proptest::prelude::*;
use proptest::sample::select;

/// One secret as it appears in a line, and the parts of it that must never survive.
#[derive(Debug, Clone)]
struct Secret {
    text: String,
    hidden: Vec<String>,
}

fn secret(text: String, hidden: Vec<String>) -> Secret {
    Secret { text, hidden }
}

/// A value with enough entropy that it cannot appear in the line by chance.
fn value() -> impl Strategy<Value = String> {
    "[A-Za-z0-9]{14,28}"
}

/// Key names SPEC §3.4 lists, in the spellings people write them.
const KEYS: &[&str] = &[
    "token",
    "api_key",
    "apiKey",
    "secret",
    "password",
    "Password",
    "pwd",
    "MYSQL_PWD",
    "pass",
    "passwd",
    "passphrase",
    "DB_PASS",
    "db-pass",
    "PGPASSWORD",
    "auth",
    "X-Auth-Token",
    "credential",
    "credentials",
    "AWS_CREDENTIALS",
    "private_key",
    "privateKey",
    "client_secret",
    "clientSecret",
    "session",
    "session_id",
    "JSESSIONID",
    "cookie",
    "x-api-key",
    "access_token",
];

fn key_value() -> impl Strategy<Value = Secret> {
    (select(KEYS), value(), 0..6usize).prop_map(|(key, v, style)| {
        let text = match style {
            0 => format!("{key}={v}"),
            1 => format!("{key}: {v}"),
            2 => format!("\"{key}\":\"{v}\""),
            3 => format!("\"{key}\": \"{v}\""),
            4 => format!("{key}='{v}'"),
            _ => format!("\\\"{key}\\\":\\\"{v}\\\""),
        };
        secret(text, vec![v])
    })
}

fn bearer() -> impl Strategy<Value = Secret> {
    (
        select(&["Bearer ", "bearer ", "BEARER\t", "Authorization: Bearer "][..]),
        "[A-Za-z0-9._~+/-]{16,40}",
    )
        .prop_map(|(p, t)| secret(format!("{p}{t}"), vec![t]))
}

fn prefixed_key() -> impl Strategy<Value = Secret> {
    prop_oneof![
        "[A-Za-z0-9]{20,40}".prop_map(|b| format!("sk-{b}")),
        "[A-Za-z0-9_-]{24,40}".prop_map(|b| format!("sk-ant-api03-{b}")),
        "[A-Za-z0-9]{36}".prop_map(|b| format!("ghp_{b}")),
        ("[abprse]", "[0-9]{10,12}", "[A-Za-z0-9]{24}")
            .prop_map(|(k, n, b)| format!("xox{k}-{n}-{b}")),
        "[A-Z0-9]{16}".prop_map(|b| format!("AKIA{b}")),
    ]
    .prop_map(|k| secret(k.clone(), vec![k]))
}

fn jwt() -> impl Strategy<Value = Secret> {
    (
        "[A-Za-z0-9_-]{10,30}",
        "[A-Za-z0-9_-]{10,60}",
        "[A-Za-z0-9_-]{10,43}",
    )
        .prop_map(|(h, p, s)| {
            let t = format!("eyJ{h}.eyJ{p}.{s}");
            secret(t.clone(), vec![t])
        })
}

fn hex_run() -> impl Strategy<Value = Secret> {
    "[0-9a-f]{32,64}".prop_map(|h| secret(h.clone(), vec![h]))
}

fn url_credentials() -> impl Strategy<Value = Secret> {
    (
        select(&["https", "postgres", "redis", "mongodb+srv", "amqp"][..]),
        "[a-z0-9]{0,10}",
        value(),
        select(&["", "@", ":"][..]),
        select(&["db.example.com", "10.0.0.5:5432", "cache.example:6379/0"][..]),
    )
        .prop_map(|(scheme, user, pw, extra, host)| {
            // A password may itself hold `@` or `:` (URL parsers split at the last `@`).
            let pw = format!("{pw}{extra}{}", pw.to_lowercase());
            let parts = pw
                .split(['@', ':'])
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect();
            secret(format!("{scheme}://{user}:{pw}@{host}"), parts)
        })
}

fn pem() -> impl Strategy<Value = Secret> {
    (
        select(
            &[
                "RSA PRIVATE KEY",
                "PRIVATE KEY",
                "EC PRIVATE KEY",
                "OPENSSH PRIVATE KEY",
            ][..],
        ),
        proptest::collection::vec("[A-Za-z0-9+/]{20,64}", 1..4),
        select(&["\\n", " ", ""][..]),
        any::<bool>(),
    )
        .prop_map(|(label, body, nl, ended)| {
            let mut text = format!("-----BEGIN {label}-----{nl}{}", body.join(nl));
            if ended {
                text.push_str(&format!("{nl}-----END {label}-----"));
            }
            secret(text, body)
        })
}

fn any_secret() -> impl Strategy<Value = Secret> {
    prop_oneof![
        4 => key_value(),
        1 => bearer(),
        1 => prefixed_key(),
        1 => jwt(),
        1 => hex_run(),
        1 => url_credentials(),
        1 => pem(),
    ]
}

/// Ordinary log words: timestamps, paths, levels, ids.
fn words() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec("[A-Za-z0-9.:/()_-]{1,14}", 0..8)
}

fn separator() -> impl Strategy<Value = &'static str> {
    select(&[" ", "  ", "\t", ", ", " | ", "; ", " - "][..])
}

/// A line of words with secrets at random positions.
fn line() -> impl Strategy<Value = (String, Vec<String>)> {
    (
        words(),
        proptest::collection::vec((any_secret(), words()), 1..4),
        separator(),
    )
        .prop_map(|(head, secrets, sep)| {
            let mut parts: Vec<String> = head;
            let mut hidden = Vec::new();
            for (s, tail) in secrets {
                parts.push(s.text);
                hidden.extend(s.hidden);
                parts.extend(tail);
            }
            (parts.join(sep), hidden)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn no_secret_form_survives_redaction((text, hidden) in line()) {
        let out = redact(&text);
        for h in &hidden {
            prop_assert!(!out.contains(h.as_str()), "{h:?} left in {out:?}");
        }
        prop_assert_eq!(redact(&out), out.clone(), "not idempotent");
    }
}
