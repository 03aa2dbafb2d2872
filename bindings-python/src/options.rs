//! Options as mirror structs of `Option` fields, read from a dict (or keyword arguments) and
//! converted to the core's types with its defaults filled in.

use crate::convert::parse_enum;
use lowdown_core::logdiff::LogDiffOptions;
use lowdown_core::record::build::RecordContext;
use pyo3::prelude::*;
use serde::Deserialize;

/// Options of a `LogDiff`; unknown keys are refused.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PyLogDiffOptions {
    /// Regular expression a line must match, case-insensitively. @default the SPEC §3.4 pattern
    pub pattern: Option<String>,
    /// Most matching lines quoted per file per result. @default 20
    pub max_lines: Option<usize>,
    /// Longest quoted line, in characters. @default 300
    pub max_line_chars: Option<usize>,
}

impl TryFrom<PyLogDiffOptions> for LogDiffOptions {
    type Error = PyErr;
    fn try_from(o: PyLogDiffOptions) -> PyResult<Self> {
        let d = LogDiffOptions::default();
        Ok(LogDiffOptions {
            pattern: o.pattern,
            max_lines: o.max_lines.unwrap_or(d.max_lines),
            max_line_chars: o.max_line_chars.unwrap_or(d.max_line_chars),
        })
    }
}

/// Who records, for what, and how; unknown keys are refused.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PyRecordContext {
    /// Who acted. @default `"anonymous"`
    pub actor: Option<String>,
    /// The target label. @default `""`
    pub target: Option<String>,
    /// `organic`, `seeded` or `synthetic`. @default `"organic"`
    pub source: Option<String>,
    /// The recording node's id. @default None
    pub node_id: Option<String>,
    /// The recorder's package version. @default None
    pub recorder_version: Option<String>,
}

impl TryFrom<PyRecordContext> for RecordContext {
    type Error = PyErr;
    fn try_from(o: PyRecordContext) -> PyResult<Self> {
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
