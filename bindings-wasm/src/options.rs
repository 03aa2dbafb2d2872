//! Options as mirror structs of `Option` fields (snake_case keys, like every other object
//! crossing this binding; `null` and a missing key both mean "the default"), converted to
//! the core's types with its defaults filled in. Unknown keys are refused, so a misspelt
//! option fails loudly instead of being ignored.

use crate::convert::parse_enum;
use crate::errors::Result;
use lowdown_core::logdiff::LogDiffOptions;
use lowdown_core::record::build::RecordContext;
use serde::Deserialize;
use wasm_bindgen::JsValue;

/// Options of a `LogDiff` (TypeScript: `LogDiffOptions`).
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsLogDiffOptions {
    /// Regular expression a line must match, case-insensitively.
    /// @default `\b(error|exception|fatal|uncaught|unhandled|failed)\b`
    pub pattern: Option<String>,
    /// Most matching lines quoted per file per result. @default 20
    pub max_lines: Option<usize>,
    /// Longest quoted line, in characters. @default 300
    pub max_line_chars: Option<usize>,
}

impl TryFrom<JsLogDiffOptions> for LogDiffOptions {
    type Error = JsValue;
    fn try_from(o: JsLogDiffOptions) -> Result<Self> {
        let d = LogDiffOptions::default();
        Ok(LogDiffOptions {
            pattern: o.pattern,
            max_lines: o.max_lines.unwrap_or(d.max_lines),
            max_line_chars: o.max_line_chars.unwrap_or(d.max_line_chars),
        })
    }
}

/// Who records, for what, and how (TypeScript: `RecordContext`).
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsRecordContext {
    /// Who acted. @default `"anonymous"`
    pub actor: Option<String>,
    /// The target label. @default `""`
    pub target: Option<String>,
    /// `organic`, `seeded` or `synthetic`. @default `"organic"`
    pub source: Option<String>,
    /// The recording node's id (`ld_<12 hex>`). @default null
    pub node_id: Option<String>,
    /// The recorder's package version. @default null
    pub recorder_version: Option<String>,
}

impl TryFrom<JsRecordContext> for RecordContext {
    type Error = JsValue;
    fn try_from(o: JsRecordContext) -> Result<Self> {
        let d = RecordContext::default();
        Ok(RecordContext {
            actor: o.actor.unwrap_or(d.actor),
            target: o.target.unwrap_or(d.target),
            source: o
                .source
                .as_deref()
                .map(parse_enum)
                .transpose()?
                .unwrap_or(d.source),
            node_id: o.node_id,
            recorder_version: o.recorder_version,
        })
    }
}
