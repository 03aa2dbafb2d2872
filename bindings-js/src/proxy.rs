//! What `lowdown-proxy`, `wrap` and the editor extension use: the session [`JsRecorder`],
//! `targetLabel`, and the `--watch-log` pieces ([`JsLogDiff`], `appendTextItem`,
//! `expandPath`).

use crate::errors::{core_error, from_json, invalid_argument, opt_text, OptText, Result};
use lowdown_core::classify::{CloseReason, Direction};
use lowdown_core::logdiff::{self, LogDiff, LogDiffOptions};
use lowdown_core::record::build::RecordContext;
use lowdown_core::record::{spool, Recorder};
use lowdown_core::target_label::{self, LabelFacts};
use serde::Deserialize;
use std::collections::HashMap;

#[cfg(not(target_arch = "wasm32"))]
use napi_derive::napi;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen::prelude::wasm_bindgen;

/// Bytes from JavaScript (a `Uint8Array` or `Buffer`).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) type Bytes = napi::bindgen_prelude::Uint8Array;
/// Bytes from JavaScript (a `Uint8Array` or `Buffer`).
#[cfg(target_arch = "wasm32")]
pub(crate) type Bytes = Vec<u8>;

/// Optional bytes to JavaScript: a `Buffer` natively, a `Uint8Array` in WebAssembly, `null`
/// when absent in both.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) type OptBytes = Option<napi::bindgen_prelude::Buffer>;
/// Optional bytes to JavaScript: a `Buffer` natively, a `Uint8Array` in WebAssembly, `null`
/// when absent in both.
#[cfg(target_arch = "wasm32")]
pub(crate) type OptBytes = wasm_bindgen::JsValue;

fn direction(name: &str) -> Result<Direction> {
    match name {
        "client_to_server" => Ok(Direction::ClientToServer),
        "server_to_client" => Ok(Direction::ServerToClient),
        _ => Err(invalid_argument(
            "direction must be client_to_server or server_to_client",
        )),
    }
}

/// Who records, for what, and how (JSON keys of `new Recorder(contextJson)`); `null` or a
/// missing key means the default. Unknown keys are refused.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsRecordContext {
    /// Who acted. @default `"anonymous"`
    actor: Option<String>,
    /// The target label. @default `""`
    target: Option<String>,
    /// `organic`, `seeded` or `synthetic`. @default `"organic"`
    source: Option<lowdown_core::record::Source>,
    /// The recording node's id (`ld_<12 hex>`). @default null
    node_id: Option<String>,
    /// The recorder's package version. @default null
    recorder_version: Option<String>,
}

impl From<JsRecordContext> for RecordContext {
    fn from(o: JsRecordContext) -> Self {
        let d = RecordContext::default();
        RecordContext {
            actor: o.actor.unwrap_or(d.actor),
            target: o.target.unwrap_or(d.target),
            source: o.source.unwrap_or(d.source),
            node_id: o.node_id,
            recorder_version: o.recorder_version,
        }
    }
}

/// Records one MCP stdio session: feed it the bytes of both directions as they arrive, with
/// your clock; it returns the finished interaction records as JSON lines, ready to send.
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "Recorder"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "Recorder"))]
pub struct JsRecorder {
    inner: Recorder,
}

#[cfg_attr(not(target_arch = "wasm32"), napi)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_class = "Recorder"))]
impl JsRecorder {
    /// A recorder for one session. `contextJson`: `{actor, target, source, node_id,
    /// recorder_version}` (all optional); `idPrefix`: a random token (≤40 of `[A-Za-z0-9_-]`)
    /// that starts every record id of the session. Throws `invalid_argument` on bad JSON.
    #[cfg_attr(not(target_arch = "wasm32"), napi(constructor))]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen(constructor))]
    pub fn new(context_json: Option<String>, id_prefix: String) -> Result<JsRecorder> {
        let ctx: JsRecordContext = from_json(context_json.as_deref())?;
        Ok(JsRecorder {
            inner: Recorder::new(ctx.into(), &id_prefix),
        })
    }

    /// Feeds bytes that travelled `direction` (`"client_to_server"` or `"server_to_client"`)
    /// at `nowMs`; returns the records they finished as JSON lines (`""` when none).
    #[cfg_attr(
        not(target_arch = "wasm32"),
        napi(
            ts_args_type = "direction: 'client_to_server' | 'server_to_client', bytes: Uint8Array, nowMs: number"
        )
    )]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn feed(&mut self, direction_name: String, bytes: Bytes, now_ms: f64) -> Result<String> {
        Ok(self.inner.feed(direction(&direction_name)?, &bytes, now_ms))
    }

    /// Ends the session at `nowMs`: frames unterminated last lines and records every request
    /// still pending, as `cancelled` when the client ended the session (`"client_ended"`:
    /// stdin EOF, a signal to the proxy) or as server failures when the server did
    /// (`"server_ended"`: the child exited or broke its pipe). Returns those records as JSON
    /// lines.
    #[cfg_attr(
        not(target_arch = "wasm32"),
        napi(ts_args_type = "nowMs: number, reason: 'client_ended' | 'server_ended'")
    )]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn close(&mut self, now_ms: f64, reason: String) -> Result<String> {
        let reason = match reason.as_str() {
            "client_ended" => CloseReason::ClientEnded,
            "server_ended" => CloseReason::ServerEnded,
            _ => {
                return Err(invalid_argument(
                    "reason must be client_ended or server_ended",
                ))
            }
        };
        Ok(self.inner.close(now_ms, reason))
    }

    /// From now on also builds each finished client request's OpenTelemetry span, for
    /// `takeSpans` (the core's `otel_export::exchange_span`).
    #[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "collectSpans"))]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "collectSpans"))]
    pub fn collect_spans(&mut self) {
        self.inner.collect_spans();
    }

    /// The spans built since the last call, as JSON lines (`""` when none), for an
    /// `OtelExporter` (`add`), which may live on another thread.
    #[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "takeSpans"))]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "takeSpans"))]
    pub fn take_spans(&mut self) -> String {
        self.inner.take_spans()
    }

    /// Bits about the last feed: 1 = it finished a client's `tools/call` whose result has a
    /// `content` array (the `--watch-log` block may be appended to that line).
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn flags(&self) -> u32 {
        self.inner.flags()
    }
}

/// The SPEC §3.2 target label of a command line (`argv[0]` is the command): `npm:pkg`,
/// `pypi:pkg`, `oci:image`, `url:host` or a file's name; `null` when none is safe to publish.
/// `factsJson` is what the host resolved by reading files (`{packages: [{arg, registry,
/// name}], cwd}`: a `.bin` link's or script's package), so one server gets one label however
/// it is launched. Throws `invalid_argument` on bad JSON.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi(js_name = "targetLabel", ts_return_type = "string | null")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen(js_name = "targetLabel", unchecked_return_type = "string | null")
)]
pub fn js_target_label(argv: Vec<String>, facts_json: Option<String>) -> Result<OptText> {
    let facts: LabelFacts = from_json(facts_json.as_deref())?;
    Ok(opt_text(target_label::target_label(&argv, &facts)))
}

/// Options of a `LogDiff` (JSON keys); `null` or a missing key means the default.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsLogDiffOptions {
    /// Regular expression a line must match, case-insensitively.
    /// @default `\b(error|exception|fatal|uncaught|unhandled|failed)\b`
    pattern: Option<String>,
    /// Most matching lines quoted per file per result. @default 20
    max_lines: Option<usize>,
    /// Longest quoted line, in characters. @default 300
    max_line_chars: Option<usize>,
}

impl From<JsLogDiffOptions> for LogDiffOptions {
    fn from(o: JsLogDiffOptions) -> Self {
        let d = LogDiffOptions::default();
        LogDiffOptions {
            pattern: o.pattern,
            max_lines: o.max_lines.unwrap_or(d.max_lines),
            max_line_chars: o.max_line_chars.unwrap_or(d.max_line_chars),
        }
    }
}

/// Watches log files for new matching lines (SPEC §3.4). The host reads the files (from
/// `offset(path)`) and supplies the time; this holds cursors, partial lines and matches.
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "LogDiff"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "LogDiff"))]
pub struct JsLogDiff {
    inner: LogDiff,
}

#[cfg_attr(not(target_arch = "wasm32"), napi)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_class = "LogDiff"))]
impl JsLogDiff {
    /// A watcher. `optionsJson`: `{pattern, max_lines, max_line_chars}` (all optional).
    /// Throws `code: "invalid_pattern"` when the pattern is not a valid regex.
    #[cfg_attr(not(target_arch = "wasm32"), napi(constructor))]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen(constructor))]
    pub fn new(options_json: Option<String>) -> Result<JsLogDiff> {
        let opts: JsLogDiffOptions = from_json(options_json.as_deref())?;
        Ok(JsLogDiff {
            inner: LogDiff::new(opts.into()).map_err(core_error)?,
        })
    }

    /// Starts watching `path` (expanded, absolute); `initialSize` is its size now, `null`
    /// when it does not exist yet. Watching a path again changes nothing.
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn watch(&mut self, path: String, initial_size: Option<f64>) {
        self.inner.watch(&path, initial_size.map(|s| s as u64));
    }

    /// Takes `bytes` read from `offset(path)` of a file whose size is now `fileSize`:
    /// `"read"`, `"restarted"` (it shrank: read again from 0) or `"not_watched"`.
    #[cfg_attr(
        not(target_arch = "wasm32"),
        napi(
            ts_args_type = "path: string, fileSize: number, bytes: Uint8Array",
            ts_return_type = "'read' | 'restarted' | 'not_watched'"
        )
    )]
    #[cfg_attr(
        target_arch = "wasm32",
        wasm_bindgen(unchecked_return_type = "'read' | 'restarted' | 'not_watched'")
    )]
    pub fn feed(&mut self, path: String, file_size: f64, bytes: Bytes) -> String {
        let feed = self.inner.feed(&path, file_size as u64, &bytes);
        // A unit enum serialises to its snake_case name.
        serde_json::to_value(feed)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    }

    /// The file at `path` was replaced (rotation): read it again from its start.
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn restart(&mut self, path: String) {
        self.inner.restart(&path);
    }

    /// Where to read `path` from next (0 when it is not watched).
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn offset(&self, path: String) -> f64 {
        self.inner.offset(&path) as f64
    }

    /// Whether any file has matching lines waiting.
    #[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "hasPending"))]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "hasPending"))]
    pub fn has_pending(&self) -> bool {
        self.inner.has_pending()
    }

    /// Watched paths, in the order they were added.
    #[cfg_attr(not(target_arch = "wasm32"), napi)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen)]
    pub fn paths(&self) -> Vec<String> {
        self.inner.paths().map(str::to_owned).collect()
    }

    /// The `[lowdown] Since HH:MM:SS, ...` block of every file with lines waiting (which are
    /// then cleared), or `null` when nothing matched.
    #[cfg_attr(
        not(target_arch = "wasm32"),
        napi(js_name = "takeBlock", ts_return_type = "string | null")
    )]
    #[cfg_attr(
        target_arch = "wasm32",
        wasm_bindgen(js_name = "takeBlock", unchecked_return_type = "string | null")
    )]
    pub fn take_block(&mut self, since_hhmmss: String) -> OptText {
        opt_text(self.inner.take_block(&since_hhmmss))
    }
}

/// Expands `%VAR%`, `$VAR`, `${VAR}` and a leading `~` in a `--watch-log` path, with the
/// variables of `envJson` (`{"NAME": "value"}`); unknown variables are left as written.
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "expandPath"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "expandPath"))]
pub fn js_expand_path(path: String, env_json: String, home: Option<String>) -> Result<String> {
    let env: HashMap<String, String> = from_json(Some(&env_json))?;
    Ok(logdiff::expand_path(
        &path,
        &|name| env.get(name).cloned(),
        home.as_deref(),
    ))
}

/// Appends one `text` content item to a JSON-RPC result line, keeping every other byte;
/// `null` when the message has no result `content` array to carry it.
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi(
        js_name = "appendTextItem",
        ts_args_type = "message: Uint8Array, text: string",
        ts_return_type = "Buffer | null"
    )
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen(
        js_name = "appendTextItem",
        unchecked_return_type = "Uint8Array | null"
    )
)]
pub fn js_append_text_item(message: Bytes, text: String) -> OptBytes {
    opt_bytes(logdiff::append_text_item(&message, &text))
}

#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn opt_bytes(bytes: Option<Vec<u8>>) -> OptBytes {
    bytes.map(Into::into)
}
#[cfg(target_arch = "wasm32")]
pub(crate) fn opt_bytes(bytes: Option<Vec<u8>>) -> OptBytes {
    bytes.map_or(wasm_bindgen::JsValue::NULL, |b| {
        js_sys::Uint8Array::from(b.as_slice()).into()
    })
}

/// What the spool's entries hold, for a status line: `names` and their `texts` (empty when
/// unreadable) as JSON text `{"files","records","dropped"}` (the core's `spool::tally`).
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "spoolTally"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "spoolTally"))]
pub fn js_spool_tally(names: Vec<String>, texts: Vec<String>) -> String {
    let entries: Vec<(String, String)> = names.into_iter().zip(texts).collect();
    serde_json::to_string(&spool::tally(&entries)).unwrap_or_default()
}

/// What the answer to a batch of `len` records means (`status` null when none came), as
/// JSON text `{"delivered","duplicates","rejected","keep":[i…],"pause_ms","reason"}`: the
/// core's `record::delivery`, so every host delivers alike.
#[cfg_attr(not(target_arch = "wasm32"), napi(js_name = "delivery"))]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen(js_name = "delivery"))]
pub fn js_delivery(
    len: u32,
    status: Option<u32>,
    retry_after: Option<String>,
    body: Option<String>,
) -> String {
    let status = status.and_then(|s| u16::try_from(s).ok());
    let d = lowdown_core::record::delivery::delivery(
        len,
        status,
        retry_after.as_deref(),
        body.as_deref(),
    );
    serde_json::to_string(&d).unwrap_or_default()
}
