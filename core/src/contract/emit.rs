//! The contracts written out for each host: TypeScript declarations, a Python module, a
//! JavaScript module of limits and enumerations, and `llms.txt`'s field table.

use super::{Contract, Field, Kind, CONTRACTS};
use std::fmt::Write;

const HEADER: &str = "Generated from lowdown-core's contract (core/src/contract.rs) by `make contracts`: do not edit.";

fn number(x: f64) -> String {
    // The limits are whole numbers; written as JavaScript and Python write them.
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

fn limit_text(f: &Field) -> String {
    match f.kind {
        Kind::Text { max, pattern } => match pattern {
            Some(p) => format!("string, at most {max} characters, matching {p}"),
            None => format!("string of 1 to {max} characters"),
        },
        Kind::Enum(values) => values.join(" | "),
        Kind::Number { min, max } => format!("number from {} to {}", number(min), number(max)),
        Kind::Integer { min, max } => {
            format!("whole number from {min} to {max}")
        }
        Kind::Bool => "true | false".to_owned(),
    }
}

/// TypeScript declarations of every contract.
pub fn typescript() -> String {
    let mut out = format!("/* {HEADER} */\n");
    for c in CONTRACTS {
        let _ = write!(out, "\n/** {} */\nexport interface {} {{\n", c.doc, c.name);
        for f in c.fields {
            let ty = match f.kind {
                Kind::Text { .. } => "string".to_owned(),
                Kind::Enum(values) => values
                    .iter()
                    .map(|v| format!("'{v}'"))
                    .collect::<Vec<_>>()
                    .join(" | "),
                Kind::Number { .. } | Kind::Integer { .. } => "number".to_owned(),
                Kind::Bool => "boolean".to_owned(),
            };
            let optional = if f.required { "" } else { "?" };
            let null = if f.nullable { " | null" } else { "" };
            let default = f
                .default
                .map(|d| format!(" @default {d}"))
                .unwrap_or_default();
            let _ = write!(
                out,
                "  /** {} ({}){default} */\n  {}{optional}: {ty}{null}\n",
                f.doc,
                limit_text(f),
                f.name
            );
        }
        out.push_str("}\n");
    }
    out
}

/// A Python module: the enumerations and limits as constants, each contract as a TypedDict.
pub fn python_module() -> String {
    let mut out = format!(
        "\"\"\"The wire contracts of Lowdown (SPEC §3.2, §4). {HEADER}\"\"\"\n\nfrom typing import Literal, Optional, TypedDict\n\n"
    );
    let mut seen: Vec<&str> = Vec::new();
    for c in CONTRACTS {
        for f in c.fields {
            if let Kind::Enum(values) = f.kind {
                let name = format!("{}_VALUES", f.name.to_uppercase());
                if !seen.contains(&f.name) {
                    seen.push(f.name);
                    let quoted: Vec<String> = values.iter().map(|v| format!("\"{v}\"")).collect();
                    let _ = writeln!(out, "{name} = ({},)", quoted.join(", "));
                }
            }
        }
    }
    // The defaults reach Python through the native module; the rest only from here.
    for (group, doc, members) in shared().into_iter().skip(1) {
        let _ = writeln!(out, "\n# {group}: {doc}");
        for (k, v) in members {
            let _ = writeln!(out, "{k} = {}", v.py_literal());
        }
    }
    out.push('\n');
    for c in CONTRACTS {
        for f in c.fields {
            if let Kind::Text { max, .. } = f.kind {
                let _ = writeln!(out, "{}_{}_MAX = {max}", c.short, f.name.to_uppercase());
            }
        }
    }
    for c in CONTRACTS {
        let required: Vec<&str> = c
            .fields
            .iter()
            .filter(|f| f.required)
            .map(|f| f.name)
            .collect();
        let _ = write!(
            out,
            "\n\nclass {}(TypedDict, total=False):\n    \"\"\"{} Required: {}.\"\"\"\n\n",
            c.name,
            c.doc,
            required.join(", ")
        );
        for f in c.fields {
            let ty = match f.kind {
                Kind::Text { .. } => "str".to_owned(),
                Kind::Enum(values) => format!(
                    "Literal[{}]",
                    values
                        .iter()
                        .map(|v| format!("\"{v}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                Kind::Number { .. } => "float".to_owned(),
                Kind::Integer { .. } => "int".to_owned(),
                Kind::Bool => "bool".to_owned(),
            };
            let ty = if f.nullable {
                format!("Optional[{ty}]")
            } else {
                ty
            };
            let _ = write!(
                out,
                "    {}: {ty}\n    \"\"\"{} ({})\"\"\"\n",
                f.name,
                f.doc,
                limit_text(f)
            );
        }
    }
    out
}

/// A constant every host shares.
enum Shared {
    Text(&'static str),
    Int(u64),
    Texts(&'static [&'static str]),
    Ints(&'static [u16]),
}

impl Shared {
    /// As JavaScript and Python both write it.
    fn literal(&self) -> String {
        match self {
            Shared::Text(t) => serde_json::to_string(t).unwrap_or_default(),
            Shared::Int(n) => n.to_string(),
            Shared::Texts(t) => serde_json::to_string(t).unwrap_or_default(),
            Shared::Ints(n) => serde_json::to_string(n).unwrap_or_default(),
        }
    }

    /// As Python writes it: lists become tuples.
    fn py_literal(&self) -> String {
        let items = |v: Vec<String>| format!("({},)", v.join(", "));
        match self {
            Shared::Texts(t) => items(t.iter().map(|x| Shared::Text(x).literal()).collect()),
            Shared::Ints(n) => items(n.iter().map(u16::to_string).collect()),
            other => other.literal(),
        }
    }
}

/// A named group of shared constants: its name, its doc line, its members.
type Group = (&'static str, &'static str, Vec<(&'static str, Shared)>);

/// The constants hosts take from the core rather than retype: the shared defaults (SPEC §2),
/// how deliveries go (`record::delivery`), the files under `LOWDOWN_HOME` (SPEC §3.5), and
/// how a client tells the gateway's own refusal (`gateway::router`), and what each recorder
/// writes as `recorder_version` (`record::provenance`).
fn shared() -> [Group; 5] {
    use crate::gateway::router as gw;
    use crate::record::{delivery as dv, provenance as pv, spool};
    use crate::{defaults as d, identity, local_node, stored};
    use Shared::{Int, Ints, Text, Texts};
    [
        (
            "DEFAULTS",
            "The defaults every host shares (SPEC §2).",
            vec![
                ("API_URL", Text(d::API_URL)),
                ("API_URL_ENV", Text(d::API_URL_ENV)),
                ("PROWL_API_URL_ENV", Text(d::PROWL_API_URL_ENV)),
                ("HOME_ENV", Text(d::HOME_ENV)),
                ("HOME_DIR_NAME", Text(d::HOME_DIR_NAME)),
                ("NODE_ID_HEADER", Text(d::NODE_ID_HEADER)),
                ("AGENT_KEY_HEADER", Text(d::AGENT_KEY_HEADER)),
                ("AUTOSTART_ENV", Text(local_node::AUTOSTART_ENV)),
            ],
        ),
        (
            "DELIVERY",
            "How every host delivers (SPEC §3, §5): the batch size, the request timeout, the exit budget, the answer's size bound, the pauses.",
            vec![
                ("BATCH_MAX", Int(dv::BATCH_MAX as u64)),
                ("SEND_TIMEOUT_MS", Int(dv::SEND_TIMEOUT_MS)),
                ("EXIT_BUDGET_MS", Int(dv::EXIT_BUDGET_MS)),
                ("ANSWER_MAX_BYTES", Int(dv::ANSWER_MAX_BYTES)),
                ("BACKOFF_MS", Int(dv::BACKOFF_MS)),
                ("MAX_PAUSE_MS", Int(dv::MAX_PAUSE_MS)),
            ],
        ),
        (
            "FILES",
            "The files every host shares under LOWDOWN_HOME (SPEC §3.5), and the spool's bounds (SPEC §3).",
            vec![
                ("NODE_FILE", Text(identity::FILE_NAME)),
                ("SPOOL_DIR", Text(spool::DIR_NAME)),
                ("DROPPED_FILE", Text(spool::DROPPED_FILE)),
                ("SPOOL_MAX_FILES", Int(spool::MAX_FILES as u64)),
                ("SPOOL_MAX_RECORDS_PER_FILE", Int(spool::MAX_RECORDS_PER_FILE as u64)),
                ("SPOOL_STALE_CLAIM_MS", Int(spool::STALE_CLAIM_MS)),
                ("LOCAL_NODE_FILE", Text(local_node::FILE_NAME)),
                ("LOCAL_NODE_LOCK", Text(local_node::LOCK_NAME)),
                ("LOCAL_NODE_LOG", Text(local_node::LOG_NAME)),
                ("CONFIG_FILE", Text(stored::FILE_NAME)),
            ],
        ),
        (
            "GATEWAY",
            "What a client routing through the sampling gateway shares (SPEC §10): the gateway's own refusals (a status and a reason of these), and how long a catalog or salt fetch may take.",
            vec![
                ("REFUSAL_STATUSES", Ints(gw::REFUSAL_STATUSES)),
                ("REFUSAL_REASONS", Texts(gw::REFUSAL_REASONS)),
                ("FETCH_TIMEOUT_MS", Int(gw::FETCH_TIMEOUT_MS)),
            ],
        ),
        (
            "RECORDERS",
            "Who made a record (SPEC §3.2): the release every package carries, and the recorder_version each recorder writes (<recorder>/<version>; a bare version, or one before IS_ERROR_COUNTED_SINCE, is an older recorder's).",
            vec![
                ("RELEASE", Text(pv::RELEASE)),
                ("PROXY_RECORDER", Text(pv::PROXY)),
                ("MCP_RECORDER", Text(pv::MCP)),
                ("PROWL_RECORDER", Text(pv::PROWL)),
                ("IS_ERROR_COUNTED_SINCE", Text(pv::IS_ERROR_COUNTED_SINCE)),
            ],
        ),
    ]
}

/// An ES module: the shared defaults, and each contract's fields as data (for building tool
/// schemas from them).
pub fn js_module() -> String {
    let mut out = format!("// {HEADER}\n");
    for (group, doc, members) in shared() {
        let _ = write!(
            out,
            "\n/** {doc} */\nexport const {group} = Object.freeze({{\n"
        );
        for (k, v) in members {
            let _ = writeln!(out, "  {k}: {},", v.literal());
        }
        out.push_str("});\n");
    }
    for c in CONTRACTS {
        let _ = write!(
            out,
            "\n/** {} */\nexport const {} = Object.freeze({{\n",
            c.doc, c.name
        );
        for f in c.fields {
            let kind = match f.kind {
                Kind::Text { max, pattern } => format!(
                    "kind: 'text', max: {max}{}",
                    pattern
                        .map(|p| format!(
                            ", pattern: {}",
                            serde_json::to_string(p).unwrap_or_default()
                        ))
                        .unwrap_or_default()
                ),
                Kind::Enum(values) => format!("kind: 'enum', values: {:?}", values),
                Kind::Number { min, max } => {
                    format!("kind: 'number', min: {}, max: {}", number(min), number(max))
                }
                Kind::Integer { min, max } => format!("kind: 'integer', min: {min}, max: {max}"),
                Kind::Bool => "kind: 'bool'".to_owned(),
            };
            let _ = writeln!(
                out,
                "  {}: {{ {kind}, required: {}, nullable: {}, default: {}, doc: {} }},",
                f.name,
                f.required,
                f.nullable,
                f.default.unwrap_or("undefined"),
                serde_json::to_string(f.doc).unwrap_or_default()
            );
        }
        out.push_str("});\n");
    }
    out
}

/// The field table `llms.txt` shows for each contract.
pub fn llms_fields() -> String {
    let mut out = String::new();
    for (i, c) in CONTRACTS.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = writeln!(out, "{} fields ({}):", c.name, c.doc);
        for f in c.fields {
            let need = if f.required {
                "required".to_owned()
            } else {
                match f.default {
                    Some(d) => format!("default {d}"),
                    None => "optional".to_owned(),
                }
            };
            let _ = writeln!(out, "  {} ({need}): {}; {}", f.name, limit_text(f), f.doc);
        }
    }
    out
}

impl Contract {
    /// The field named `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}
