//! `LogDiff`: the `--watch-log` state machine as a JavaScript class, and its two helpers.

use crate::convert::{from_js_or_default, to_js};
use crate::errors::{to_js_error, Result};
use crate::options::JsLogDiffOptions;
use lowdown_core::logdiff::{self, LogDiff};
use napi::bindgen_prelude::{Buffer, Env, Uint8Array, Unknown};
use napi_derive::napi;
use std::collections::HashMap;

/// Watches log files for new matching lines. The host reads the files (from `offset(path)`)
/// and supplies the time; this holds cursors, partial lines and pending matches.
#[napi(js_name = "LogDiff")]
pub struct JsLogDiff {
    inner: LogDiff,
}

#[napi]
impl JsLogDiff {
    /// A watcher; throws `code: "invalid_pattern"` when `options.pattern` is not a valid regex.
    #[napi(constructor, ts_args_type = "options?: LogDiffOptions | null")]
    pub fn new(env: &Env, options: Option<Unknown<'_>>) -> Result<Self> {
        let opts = from_js_or_default::<JsLogDiffOptions>(env, options)?.try_into()?;
        Ok(JsLogDiff {
            inner: LogDiff::new(opts).map_err(|e| to_js_error(env, e))?,
        })
    }

    /// Starts watching `path` (expanded, absolute); `initialSize` is its size now, `null`
    /// when it does not exist yet. Watching a path again changes nothing.
    #[napi]
    pub fn watch(&mut self, path: String, initial_size: Option<f64>) {
        self.inner.watch(&path, initial_size.map(|s| s as u64));
    }

    /// Takes `bytes` read from `offset(path)` of a file whose size is now `fileSize`.
    #[napi(ts_return_type = "'read' | 'restarted' | 'not_watched'")]
    pub fn feed<'e>(
        &mut self,
        env: &'e Env,
        path: String,
        file_size: f64,
        bytes: Uint8Array,
    ) -> Result<Unknown<'e>> {
        to_js(env, &self.inner.feed(&path, file_size as u64, &bytes))
    }

    /// The file at `path` was replaced (rotation): read it again from its start.
    #[napi]
    pub fn restart(&mut self, path: String) {
        self.inner.restart(&path);
    }

    /// Where to read `path` from next (0 when it is not watched).
    #[napi]
    pub fn offset(&self, path: String) -> f64 {
        self.inner.offset(&path) as f64
    }

    /// Whether any file has matching lines waiting.
    #[napi]
    pub fn has_pending(&self) -> bool {
        self.inner.has_pending()
    }

    /// Watched paths, in the order they were added.
    #[napi]
    pub fn paths(&self) -> Vec<String> {
        self.inner.paths().map(str::to_owned).collect()
    }

    /// The `[lowdown] Since HH:MM:SS, ...` block of every file with lines waiting (which are
    /// then cleared), or `null` when nothing matched.
    #[napi]
    pub fn take_block(&mut self, since_hhmmss: String) -> Option<String> {
        self.inner.take_block(&since_hhmmss)
    }
}

/// Expands `%VAR%`, `$VAR`, `${VAR}` and a leading `~` in a `--watch-log` path; unknown
/// variables are left as written.
#[napi(js_name = "expandPath")]
pub fn js_expand_path(path: String, env: HashMap<String, String>, home: Option<String>) -> String {
    logdiff::expand_path(&path, &|name| env.get(name).cloned(), home.as_deref())
}

/// Appends one `text` content item to a JSON-RPC result line, keeping every other byte;
/// `null` when the message has no result `content` array to carry it.
#[napi(js_name = "appendTextItem")]
pub fn js_append_text_item(message: Uint8Array, text: String) -> Option<Buffer> {
    logdiff::append_text_item(&message, &text).map(Buffer::from)
}
