//! The facts a session teaches: server name and version, protocol version, schema hashes.

use super::message::{Info, ResultInfo};
use super::scan::Str;
use super::text;
use super::SessionFacts;
use crate::record::build::sanitize_server_version;

/// What a request contributes to learning from its result.
pub(super) struct Asked<'a> {
    /// The method.
    pub method: &'a str,
    /// It asked for the first page (`tools/list` without a cursor).
    pub first_page: bool,
    /// The protocol version its `_meta` named (2026-07-28), as sent.
    pub protocol_version: Option<&'a str>,
}

fn decoded(line: &[u8], s: Option<Str>) -> Option<String> {
    s.map(|s| text::string(s.raw(line), s.escaped))
}

/// Server names: control characters removed, 1 to 128 characters.
fn sanitize_name(raw: &str) -> Option<String> {
    let name: String = raw.chars().filter(|c| !c.is_control()).collect();
    (!name.is_empty() && name.chars().count() <= 128).then_some(name)
}

fn set_info(f: &mut SessionFacts, line: &[u8], info: Info) {
    f.server_name = decoded(line, info.name).as_deref().and_then(sanitize_name);
    f.server_version = decoded(line, info.version)
        .as_deref()
        .and_then(sanitize_server_version);
}

fn has(info: &Info) -> bool {
    info.name.is_some() || info.version.is_some()
}

/// Updates `f` from the result `r` (on `line`) of a client→server request.
pub(super) fn learn(f: &mut SessionFacts, asked: &Asked<'_>, line: &[u8], r: &ResultInfo) {
    // A request's `_meta` names the version it speaks; a result (not an error) accepts it.
    if let Some(v) = asked.protocol_version {
        f.protocol_version = sanitize_server_version(v);
    }
    match asked.method {
        "initialize" | "server/discover" => {
            // `server/discover` names the server in `_meta` (below); `serverInfo` is the
            // initialize form.
            if asked.method == "initialize" || !has(&r.meta_server_info) {
                set_info(f, line, r.server_info);
            }
            // A result may leave the protocol version out; keep the one known then.
            if r.protocol_version.is_some() {
                f.protocol_version = decoded(line, r.protocol_version)
                    .as_deref()
                    .and_then(sanitize_server_version);
            }
        }
        "tools/list" if asked.first_page => {
            if let Ok(h) = crate::schema_hash::hash_tools_result(&line[r.span.0..r.span.1]) {
                (f.schema_hash, f.desc_hash) = (Some(h.schema_hash), Some(h.desc_hash));
                (f.tools_has_more, f.tool_count) = (h.has_more, Some(h.tool_count));
            }
        }
        _ => {}
    }
    // 2026-07-28: any result may say who answered.
    if has(&r.meta_server_info) {
        set_info(f, line, r.meta_server_info);
    }
}
