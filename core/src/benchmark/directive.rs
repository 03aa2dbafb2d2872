//! What a benchmark directive may ask (SPEC §11): `POST /v1/benchmark/directives
//! {service_id, kind, spec, price_credits, critical?}`, checked field by field.
//!
//! - `protocol`: `spec: {remote_url}`, an MCP remote the provider probes as the Scanner
//!   does.
//! - `agent`: `spec: {prompt, mcp_server: {url}, expect: {contains: [...]}}`: the prompt run
//!   by the provider's `claude --print` with that remote MCP server, reached through the
//!   provider's own stdio bridge.
//!
//! A directive never runs local code: an `mcp_server` naming a `command` or `args` (a
//! program the provider would start, such as `npx -y <anything>`) is refused by name
//! ([`DirectiveError::LocalCommandRefused`]), and its `url` must be `https`
//! ([`DirectiveError::McpServerNotHttps`]). The server applies this on create and to every
//! stored row it would list or lease; the provider hook applies it again before it starts
//! anything. Otherwise only shapes and sizes are checked here; whether a URL may be
//! reached is the SSRF rule of [`crate::scanner::target`], applied by each host with its
//! own URL parser.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Kind;

/// Longest URL accepted, in characters.
pub const MAX_URL_CHARS: usize = 2048;
/// Longest prompt, in characters.
pub const MAX_PROMPT_CHARS: usize = 20_000;
/// Most `expect.contains` strings, each at most [`MAX_EXPECT_CHARS`] characters.
pub const MAX_EXPECTED: usize = 20;
/// Longest expected string.
pub const MAX_EXPECT_CHARS: usize = 1000;
/// Largest price, in credits.
pub const MAX_PRICE_CREDITS: i64 = 1_000_000_000;
/// Longest `service_id`.
pub const MAX_SERVICE_ID_CHARS: usize = 64;

/// The MCP server an `agent` directive names: a remote one, never a local program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServer {
    /// Its streamable-HTTP URL, `https`.
    pub url: String,
}

/// A directive's `spec`, by kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Spec {
    /// `protocol`.
    Protocol {
        /// The MCP remote to probe.
        remote_url: String,
    },
    /// `agent`.
    Agent {
        /// What `claude --print` is asked.
        prompt: String,
        /// The server it runs with.
        mcp_server: McpServer,
        /// `{contains: [...]}`: every string must be in the answer.
        expect: Expect,
    },
}

/// What an `agent` answer must contain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expect {
    /// Strings the answer must contain, each exactly (case and all).
    pub contains: Vec<String>,
}

/// A directive as the operator posts it, checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewDirective {
    /// The catalog service it benchmarks.
    pub service_id: String,
    /// What to run.
    pub kind: Kind,
    /// How.
    pub spec: Spec,
    /// What the vendor pays, in whole credits (the provider earns 70 %).
    pub price_credits: i64,
    /// Critical directives go to providers of higher reputation first.
    pub critical: bool,
}

/// Why a directive was refused; `field` names what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DirectiveError {
    /// A field is missing or malformed.
    #[error("{field}: {message}")]
    Invalid {
        /// The field at fault, e.g. `spec.expect.contains[1]`.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// `spec.mcp_server` names a program to start on the provider's machine.
    #[error("{field}: a directive never runs a program on a provider's machine; name a remote MCP server by its https URL ({{\"url\": \"https://…\"}})")]
    LocalCommandRefused {
        /// `spec.mcp_server.command` or `spec.mcp_server.args`.
        field: String,
    },
    /// `spec.mcp_server.url` is not an `https` URL.
    #[error("{field}: the MCP server must be an https URL")]
    McpServerNotHttps {
        /// `spec.mcp_server.url`.
        field: String,
    },
}

impl DirectiveError {
    /// The field at fault.
    pub fn field(&self) -> &str {
        match self {
            DirectiveError::Invalid { field, .. }
            | DirectiveError::LocalCommandRefused { field }
            | DirectiveError::McpServerNotHttps { field } => field,
        }
    }
}

fn invalid(field: &str, message: impl Into<String>) -> DirectiveError {
    DirectiveError::Invalid {
        field: field.to_owned(),
        message: message.into(),
    }
}

fn text(
    m: &Map<String, Value>,
    key: &str,
    field: &str,
    max: usize,
) -> Result<String, DirectiveError> {
    match m.get(key) {
        None | Some(Value::Null) => Err(invalid(field, "missing")),
        Some(Value::String(s)) if s.trim().is_empty() => Err(invalid(field, "must not be empty")),
        Some(Value::String(s)) if s.chars().count() > max => {
            Err(invalid(field, format!("longer than {max} characters")))
        }
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(invalid(field, "must be a string")),
    }
}

fn url(m: &Map<String, Value>, key: &str, field: &str) -> Result<String, DirectiveError> {
    let u = text(m, key, field, MAX_URL_CHARS)?;
    if u.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid(
            field,
            "must be a URL without spaces or control characters",
        ));
    }
    Ok(u)
}

fn object<'a>(
    v: Option<&'a Value>,
    field: &str,
    keys: &[&str],
) -> Result<&'a Map<String, Value>, DirectiveError> {
    let Some(Value::Object(m)) = v else {
        return Err(invalid(
            field,
            format!("must be an object with {}", keys.join(", ")),
        ));
    };
    if let Some(k) = m.keys().find(|k| !keys.contains(&k.as_str())) {
        return Err(invalid(
            &format!("{field}.{k}"),
            format!("unknown key (expected {})", keys.join(", ")),
        ));
    }
    Ok(m)
}

fn strings(
    v: Option<&Value>,
    field: &str,
    max_items: usize,
    max_chars: usize,
    min_items: usize,
) -> Result<Vec<String>, DirectiveError> {
    let Some(Value::Array(items)) = v else {
        return Err(invalid(field, "must be an array of strings"));
    };
    if items.len() < min_items || items.len() > max_items {
        return Err(invalid(
            field,
            format!("must hold {min_items} to {max_items} strings"),
        ));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, s)| match s {
            Value::String(s)
                if s.chars().count() <= max_chars && (min_items == 0 || !s.is_empty()) =>
            {
                Ok(s.clone())
            }
            _ => Err(invalid(
                &format!("{field}[{i}]"),
                format!("must be a non-empty string of at most {max_chars} characters"),
            )),
        })
        .collect()
}

fn mcp_server(v: Option<&Value>) -> Result<McpServer, DirectiveError> {
    const F: &str = "spec.mcp_server";
    if let Some(Value::Object(m)) = v {
        // Named before any other fault, so an old `{command, args}` row reads as what it is.
        if let Some(k) = ["command", "args"].into_iter().find(|k| m.contains_key(*k)) {
            return Err(DirectiveError::LocalCommandRefused {
                field: format!("{F}.{k}"),
            });
        }
    }
    let m = object(v, F, &["url"])?;
    let url = url(m, "url", "spec.mcp_server.url")?;
    // The scheme as WHATWG parsers read it: ASCII case-insensitive, before the first `:`.
    let https = url
        .split_once(':')
        .is_some_and(|(scheme, _)| scheme.eq_ignore_ascii_case("https"));
    if !https {
        return Err(DirectiveError::McpServerNotHttps {
            field: "spec.mcp_server.url".to_owned(),
        });
    }
    Ok(McpServer { url })
}

/// Checks a `spec` for `kind`.
pub fn check_spec(kind: Kind, spec: Option<&Value>) -> Result<Spec, DirectiveError> {
    match kind {
        Kind::Protocol => {
            let m = object(spec, "spec", &["remote_url"])?;
            Ok(Spec::Protocol {
                remote_url: url(m, "remote_url", "spec.remote_url")?,
            })
        }
        Kind::Agent => {
            let m = object(spec, "spec", &["prompt", "mcp_server", "expect"])?;
            let server = mcp_server(m.get("mcp_server"))?;
            let prompt = text(m, "prompt", "spec.prompt", MAX_PROMPT_CHARS)?;
            let e = object(m.get("expect"), "spec.expect", &["contains"])?;
            let contains = strings(
                e.get("contains"),
                "spec.expect.contains",
                MAX_EXPECTED,
                MAX_EXPECT_CHARS,
                1,
            )?;
            Ok(Spec::Agent {
                prompt,
                mcp_server: server,
                expect: Expect { contains },
            })
        }
    }
}

/// Checks an operator's `POST /v1/benchmark/directives` body.
pub fn check_new(body: &Value) -> Result<NewDirective, DirectiveError> {
    let m = object(
        Some(body),
        "body",
        &["service_id", "kind", "spec", "price_credits", "critical"],
    )
    .map_err(|e| match e {
        DirectiveError::Invalid { field, message } if field == "body" => {
            invalid("body", format!("must be a JSON object ({message})"))
        }
        other => other,
    })?;
    let service_id = text(m, "service_id", "service_id", MAX_SERVICE_ID_CHARS)?;
    let kind = match m.get("kind") {
        Some(Value::String(k)) => {
            Kind::parse(k).ok_or_else(|| invalid("kind", "must be protocol or agent"))?
        }
        _ => return Err(invalid("kind", "must be protocol or agent")),
    };
    let price_credits = match m.get("price_credits").and_then(Value::as_i64) {
        Some(p) if (1..=MAX_PRICE_CREDITS).contains(&p) => p,
        _ => {
            return Err(invalid(
                "price_credits",
                format!("must be a whole number of credits from 1 to {MAX_PRICE_CREDITS}"),
            ))
        }
    };
    let critical = match m.get("critical") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(invalid("critical", "must be true or false")),
    };
    Ok(NewDirective {
        service_id,
        kind,
        spec: check_spec(kind, m.get("spec"))?,
        price_credits,
        critical,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_kinds_round_trip_as_posted() {
        let p = json!({"service_id": "svc_x", "kind": "protocol", "spec": {"remote_url": "https://mcp.example.com/mcp"}, "price_credits": 1});
        let d = check_new(&p).unwrap();
        assert_eq!(serde_json::to_value(&d.spec).unwrap(), p["spec"]);
        assert!(!d.critical);
        let a = json!({"service_id": "svc_x", "kind": "agent", "critical": true, "price_credits": 5, "spec": {
            "prompt": "List the tools", "mcp_server": {"url": "HTTPS://mcp.example.com/mcp"},
            "expect": {"contains": ["echo"]}}});
        let d = check_new(&a).unwrap();
        assert_eq!(serde_json::to_value(&d.spec).unwrap(), a["spec"]);
        assert!(d.critical);
    }

    #[test]
    fn a_local_program_or_a_plain_url_is_refused_by_name() {
        let spec = |server: Value| json!({"prompt": "p", "mcp_server": server, "expect": {"contains": ["x"]}});
        for (server, field) in [
            (
                json!({"command": "npx", "args": ["-y", "-c", "touch /tmp/x"]}),
                "spec.mcp_server.command",
            ),
            (json!({"command": "uvx"}), "spec.mcp_server.command"),
            (json!({"args": ["-c", "id"]}), "spec.mcp_server.args"),
            (
                json!({"url": "https://mcp.example.com/mcp", "command": "sh"}),
                "spec.mcp_server.command",
            ),
        ] {
            assert_eq!(
                check_spec(Kind::Agent, Some(&spec(server))),
                Err(DirectiveError::LocalCommandRefused {
                    field: field.into()
                })
            );
        }
        for url in [
            "http://mcp.example.com/mcp",
            "file:///etc/passwd",
            "ws://a.example.com/",
            "//a.example.com/",
            "httpsx://a.example.com/",
        ] {
            let err = check_spec(Kind::Agent, Some(&spec(json!({ "url": url })))).unwrap_err();
            assert_eq!(
                err,
                DirectiveError::McpServerNotHttps {
                    field: "spec.mcp_server.url".into()
                },
                "{url}"
            );
            assert_eq!(err.field(), "spec.mcp_server.url");
        }
    }

    #[test]
    fn each_fault_is_named() {
        let base = json!({"service_id": "svc_x", "kind": "agent", "price_credits": 1, "spec": {
            "prompt": "p", "mcp_server": {"url": "https://a.example.com/mcp"}, "expect": {"contains": ["x"]}}});
        for (pointer, value, field) in [
            ("/kind", json!("llm"), "kind"),
            ("/price_credits", json!(0), "price_credits"),
            ("/price_credits", json!(1.5), "price_credits"),
            ("/critical", json!("yes"), "critical"),
            ("/spec/prompt", json!(""), "spec.prompt"),
            ("/spec/expect/contains", json!([]), "spec.expect.contains"),
            (
                "/spec/expect/contains",
                json!(["a", ""]),
                "spec.expect.contains[1]",
            ),
            (
                "/spec/mcp_server",
                json!({"url": "https://a.example.com/ x"}),
                "spec.mcp_server.url",
            ),
            (
                "/spec/mcp_server",
                json!({"url": "https://a.example.com/mcp", "headers": {}}),
                "spec.mcp_server.headers",
            ),
            ("/spec/extra", json!(1), "spec.extra"),
        ] {
            let mut b = base.clone();
            let (parent, key) = pointer.rsplit_once('/').unwrap();
            let parent = if parent.is_empty() {
                &mut b
            } else {
                b.pointer_mut(parent).unwrap()
            };
            parent[key] = value;
            let err = check_new(&b).unwrap_err().to_string();
            assert!(err.starts_with(&format!("{field}:")), "{pointer}: {err}");
        }
        assert!(check_new(&json!([]))
            .unwrap_err()
            .to_string()
            .starts_with("body:"));
    }
}
