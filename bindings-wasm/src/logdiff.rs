//! `LogDiff`: the `--watch-log` state machine as a JavaScript class, and its two helpers.

use crate::convert::{from_js, to_js};
use crate::errors::{to_js_error, Result};
use crate::options::JsLogDiffOptions;
use lowdown_core::logdiff::{self, LogDiff};
use std::collections::HashMap;
use wasm_bindgen::prelude::*;

/// Watches log files for new matching lines. The host reads the files (from `offset(path)`)
/// and supplies the time; this holds cursors, partial lines and pending matches.
#[wasm_bindgen(js_name = "LogDiff")]
pub struct JsLogDiff {
    inner: LogDiff,
}

#[wasm_bindgen(js_class = "LogDiff")]
impl JsLogDiff {
    /// A watcher; throws `code: "invalid_pattern"` when `options.pattern` is not a valid regex.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "LogDiffOptions | null")] options: JsValue,
    ) -> Result<JsLogDiff> {
        let opts = from_js::<Option<JsLogDiffOptions>>(options)?.unwrap_or_default();
        Ok(JsLogDiff {
            inner: LogDiff::new(opts.try_into()?).map_err(to_js_error)?,
        })
    }

    /// Starts watching `path` (expanded, absolute); `initialSize` is its size now, `null`
    /// when it does not exist yet. Watching a path again changes nothing.
    pub fn watch(
        &mut self,
        path: &str,
        #[wasm_bindgen(js_name = "initialSize")] initial_size: Option<f64>,
    ) {
        self.inner.watch(path, initial_size.map(|s| s as u64));
    }

    /// Takes `bytes` read from `offset(path)` of a file whose size is now `fileSize`.
    #[wasm_bindgen(unchecked_return_type = "'read' | 'restarted' | 'not_watched'")]
    pub fn feed(
        &mut self,
        path: &str,
        #[wasm_bindgen(js_name = "fileSize")] file_size: f64,
        bytes: &[u8],
    ) -> Result<JsValue> {
        to_js(&self.inner.feed(path, file_size as u64, bytes))
    }

    /// The file at `path` was replaced (rotation): read it again from its start.
    pub fn restart(&mut self, path: &str) {
        self.inner.restart(path);
    }

    /// Where to read `path` from next (0 when it is not watched).
    pub fn offset(&self, path: &str) -> f64 {
        self.inner.offset(path) as f64
    }

    /// Whether any file has matching lines waiting.
    #[wasm_bindgen(js_name = "hasPending")]
    pub fn has_pending(&self) -> bool {
        self.inner.has_pending()
    }

    /// Watched paths, in the order they were added.
    pub fn paths(&self) -> Vec<String> {
        self.inner.paths().map(str::to_owned).collect()
    }

    /// The `[lowdown] Since HH:MM:SS, ...` block of every file with lines waiting (which are
    /// then cleared), or `undefined` when nothing matched.
    #[wasm_bindgen(js_name = "takeBlock")]
    pub fn take_block(&mut self, since_hhmmss: &str) -> Option<String> {
        self.inner.take_block(since_hhmmss)
    }
}

/// Expands `%VAR%`, `$VAR`, `${VAR}` and a leading `~` in a `--watch-log` path; `env` is an
/// object of variables, unknown ones are left as written.
#[wasm_bindgen(js_name = "expandPath")]
pub fn js_expand_path(
    path: &str,
    #[wasm_bindgen(unchecked_param_type = "Record<string, string>")] env: JsValue,
    home: Option<String>,
) -> Result<String> {
    let env: HashMap<String, String> = from_js(env)?;
    Ok(logdiff::expand_path(
        path,
        &|name| env.get(name).cloned(),
        home.as_deref(),
    ))
}

/// Appends one `text` content item to a JSON-RPC result line, keeping every other byte;
/// `undefined` when the message has no result `content` array to carry it.
#[wasm_bindgen(js_name = "appendTextItem")]
pub fn js_append_text_item(message: &[u8], text: &str) -> Option<Vec<u8>> {
    logdiff::append_text_item(message, text)
}
