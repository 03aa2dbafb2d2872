//! What the classifier needs from one JSON-RPC message, as spans of the line.
//!
//! One pass over the line validates it and picks out a handful of fields; everything else
//! (arguments, result content, schemas) is skipped without being copied. Key order does
//! not matter, and a repeated key takes its last value, as with `JSON.parse`.

use super::scan::{Invalid, Scanner, Str};

/// An `id` or `requestId` token.
#[derive(Debug, Clone, Copy)]
pub(super) enum Id {
    /// A string id (span of its body).
    Str(Str),
    /// A number id (span of its text).
    Num(usize, usize),
}

/// `serverInfo`-like `{name, version}`.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Info {
    pub name: Option<Str>,
    pub version: Option<Str>,
}

/// What a tool result (`CallToolResult`) says about its outcome.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct ToolResult {
    /// `isError` is literally `true`.
    pub is_error: bool,
    /// `content` is an array.
    pub has_content: bool,
    /// `text` of the first content item whose `type` is `"text"`.
    pub first_text: Option<Str>,
}

/// The task fields of an object: a `Task` in a result (`tasks/get`, `tasks/cancel`, a
/// 2026-07-28 `CreateTaskResult`) or in the params of a task status notification.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct TaskState {
    /// `taskId`, when a string.
    pub task_id: Option<Str>,
    /// `status`, when a string.
    pub status: Option<Str>,
    /// `result`, the tool result of a completed task (2026-07-28), when an object.
    pub result: Option<ToolResult>,
    /// `error`, the JSON-RPC error of a failed task (2026-07-28): its integral `code`, if any.
    pub error: Option<Option<i64>>,
}

/// The fields of a `result` the classifier looks at.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct ResultInfo {
    /// Span of the whole result value (handed to schema hashing for `tools/list`).
    pub span: (usize, usize),
    /// `isError`, `content` and the first text.
    pub tool: ToolResult,
    /// `resultType` (2026-07-28 revision).
    pub result_type: Option<Str>,
    /// `serverInfo` (initialize).
    pub server_info: Info,
    /// `_meta["io.modelcontextprotocol/serverInfo"]` (2026-07-28, any result).
    pub meta_server_info: Info,
    /// `protocolVersion`.
    pub protocol_version: Option<Str>,
    /// `task.taskId`: the task a 2025-11-25 `CreateTaskResult` created.
    pub created_task: Option<Str>,
    /// Top-level task fields (`taskId`, `status`, `result`, `error`).
    pub task: TaskState,
}

/// One JSON-RPC message.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Message {
    /// A string or number `id` (anything else counts as absent).
    pub id: Option<Id>,
    /// `method`, when a string.
    pub method: Option<Str>,
    /// `params.name` (tool name of `tools/call`).
    pub name: Option<Str>,
    /// `params.requestId` (notifications/cancelled).
    pub request_id: Option<Id>,
    /// `params.cursor` is present and not null (a later page of a list).
    pub cursor: bool,
    /// `params.task` is an object: a task-augmented request (2025-11-25).
    pub task_requested: bool,
    /// `params._meta["io.modelcontextprotocol/protocolVersion"]` (2026-07-28).
    pub meta_protocol_version: Option<Str>,
    /// Task fields of the params: `taskId` of `tasks/*` requests, and the whole task state
    /// of `notifications/tasks` and `notifications/tasks/status`.
    pub task: TaskState,
    /// The `result`, when present.
    pub result: Option<ResultInfo>,
    /// The `error`, when present: its integral `code`, if any.
    pub error: Option<Option<i64>>,
}

/// Parses a line: one message object, or a batch array whose object elements are
/// messages (other elements are ignored). Fails when the line is not JSON. `bytes` may go
/// on past the line: the value must then be followed by whitespace and `\n`, whose
/// index is returned (`None` when the value ends with `bytes`).
pub(super) fn parse_line(bytes: &[u8], out: &mut Vec<Message>) -> Result<Option<usize>, Invalid> {
    let line = bytes;
    let mut s = Scanner::new(line);
    match s.peek() {
        Some(b'{') => out.push(message(&mut s)?),
        Some(b'[') => s.array(|s| {
            if s.peek() == Some(b'{') {
                out.push(message(s)?);
            } else {
                s.skip_value()?;
            }
            Ok(())
        })?,
        _ => return Err(Invalid),
    }
    s.line_end()
}

fn string_or_skip(s: &mut Scanner<'_>) -> Result<Option<Str>, Invalid> {
    if s.peek() == Some(b'"') {
        s.string().map(Some)
    } else {
        s.skip_value().map(|_| None)
    }
}

fn id(s: &mut Scanner<'_>) -> Result<Option<Id>, Invalid> {
    match s.peek() {
        Some(b'"') => s.string().map(|x| Some(Id::Str(x))),
        Some(b'-' | b'0'..=b'9') => s.number().map(|(a, b)| Some(Id::Num(a, b))),
        _ => s.skip_value().map(|_| None),
    }
}

fn if_object(
    s: &mut Scanner<'_>,
    f: impl FnMut(&mut Scanner<'_>, Str) -> Result<(), Invalid>,
) -> Result<(), Invalid> {
    if s.peek() == Some(b'{') {
        s.object(f)
    } else {
        s.skip_value().map(|_| ())
    }
}

fn message(s: &mut Scanner<'_>) -> Result<Message, Invalid> {
    let mut m = Message::default();
    s.object(|s, key| {
        if s.key_is(key, "id") {
            m.id = id(s)?;
        } else if s.key_is(key, "method") {
            m.method = string_or_skip(s)?;
        } else if s.key_is(key, "params") {
            params(s, &mut m)?;
        } else if s.key_is(key, "result") {
            m.result = Some(result(s)?);
        } else if s.key_is(key, "error") {
            m.error = Some(error_code(s)?);
        } else {
            s.skip_value()?;
        }
        Ok(())
    })?;
    Ok(m)
}

fn params(s: &mut Scanner<'_>, m: &mut Message) -> Result<(), Invalid> {
    m.name = None;
    m.request_id = None;
    m.cursor = false;
    m.task_requested = false;
    m.meta_protocol_version = None;
    m.task = TaskState::default();
    if_object(s, |s, key| {
        if s.key_is(key, "name") {
            m.name = string_or_skip(s)?;
        } else if s.key_is(key, "requestId") {
            m.request_id = id(s)?;
        } else if s.key_is(key, "cursor") {
            m.cursor = s.peek() != Some(b'n');
            s.skip_value()?;
        } else if s.key_is(key, "task") {
            m.task_requested = s.peek() == Some(b'{');
            s.skip_value()?;
        } else if s.key_is(key, "_meta") {
            m.meta_protocol_version = None;
            if_object(s, |s, key| {
                if s.key_is(key, "io.modelcontextprotocol/protocolVersion") {
                    m.meta_protocol_version = string_or_skip(s)?;
                } else {
                    s.skip_value()?;
                }
                Ok(())
            })?;
        } else if !task_member(s, key, &mut m.task)? {
            s.skip_value()?;
        }
        Ok(())
    })
}

/// Reads `key` into `task` when it is one of the task fields; `false` leaves the value to
/// the caller.
fn task_member(s: &mut Scanner<'_>, key: Str, task: &mut TaskState) -> Result<bool, Invalid> {
    if s.key_is(key, "taskId") {
        task.task_id = string_or_skip(s)?;
    } else if s.key_is(key, "status") {
        task.status = string_or_skip(s)?;
    } else if s.key_is(key, "result") {
        task.result = None;
        if s.peek() == Some(b'{') {
            let mut r = ToolResult::default();
            s.object(|s, key| {
                if !tool_member(s, key, &mut r)? {
                    s.skip_value()?;
                }
                Ok(())
            })?;
            task.result = Some(r);
        } else {
            s.skip_value()?;
        }
    } else if s.key_is(key, "error") {
        task.error = Some(error_code(s)?);
    } else {
        return Ok(false);
    }
    Ok(true)
}

/// Reads `key` into `r` when it is `isError` or `content`; `false` leaves the value.
fn tool_member(s: &mut Scanner<'_>, key: Str, r: &mut ToolResult) -> Result<bool, Invalid> {
    if s.key_is(key, "isError") {
        r.is_error = s.peek() == Some(b't');
        s.skip_value()?;
    } else if s.key_is(key, "content") {
        content(s, r)?;
    } else {
        return Ok(false);
    }
    Ok(true)
}

fn info(s: &mut Scanner<'_>, out: &mut Info) -> Result<(), Invalid> {
    *out = Info::default();
    if_object(s, |s, key| {
        if s.key_is(key, "name") {
            out.name = string_or_skip(s)?;
        } else if s.key_is(key, "version") {
            out.version = string_or_skip(s)?;
        } else {
            s.skip_value()?;
        }
        Ok(())
    })
}

fn result(s: &mut Scanner<'_>) -> Result<ResultInfo, Invalid> {
    let mut r = ResultInfo::default();
    s.ws();
    let start = s.i;
    if s.peek() != Some(b'{') {
        // JSON-RPC allows any result value; MCP results are objects. Treat others as a
        // plain result with nothing to look at.
        r.span = s.skip_value()?;
        return Ok(r);
    }
    s.object(|s, key| {
        if tool_member(s, key, &mut r.tool)? || task_member(s, key, &mut r.task)? {
            return Ok(());
        }
        if s.key_is(key, "resultType") {
            r.result_type = string_or_skip(s)?;
        } else if s.key_is(key, "serverInfo") {
            info(s, &mut r.server_info)?;
        } else if s.key_is(key, "protocolVersion") {
            r.protocol_version = string_or_skip(s)?;
        } else if s.key_is(key, "task") {
            r.created_task = None;
            if_object(s, |s, key| {
                if s.key_is(key, "taskId") {
                    r.created_task = string_or_skip(s)?;
                } else {
                    s.skip_value()?;
                }
                Ok(())
            })?;
        } else if s.key_is(key, "_meta") {
            r.meta_server_info = Info::default();
            if_object(s, |s, key| {
                if s.key_is(key, "io.modelcontextprotocol/serverInfo") {
                    info(s, &mut r.meta_server_info)
                } else {
                    s.skip_value().map(|_| ())
                }
            })?;
        } else {
            s.skip_value()?;
        }
        Ok(())
    })?;
    r.span = (start, s.i);
    Ok(r)
}

fn content(s: &mut Scanner<'_>, r: &mut ToolResult) -> Result<(), Invalid> {
    r.has_content = s.peek() == Some(b'[');
    r.first_text = None;
    if !r.has_content {
        return s.skip_value().map(|_| ());
    }
    s.array(|s| {
        if r.first_text.is_some() || s.peek() != Some(b'{') {
            return s.skip_value().map(|_| ());
        }
        let (mut is_text, mut text) = (false, None);
        s.object(|s, key| {
            if s.key_is(key, "type") {
                let t = string_or_skip(s)?;
                is_text = t.is_some_and(|t| s.key_is(t, "text"));
            } else if s.key_is(key, "text") {
                text = string_or_skip(s)?;
            } else {
                s.skip_value()?;
            }
            Ok(())
        })?;
        if is_text {
            r.first_text = text;
        }
        Ok(())
    })
}

fn error_code(s: &mut Scanner<'_>) -> Result<Option<i64>, Invalid> {
    let mut code = None;
    if_object(s, |s, key| {
        if s.key_is(key, "code") && matches!(s.peek(), Some(b'-' | b'0'..=b'9')) {
            let (a, b) = s.number()?;
            code = integral(&s.b[a..b]);
        } else if s.key_is(key, "code") {
            code = None;
            s.skip_value()?;
        } else {
            s.skip_value()?;
        }
        Ok(())
    })?;
    Ok(code)
}

/// A JSON number's value as an integer, when it is one (`-32602`, `-32602.0`, `-3.2602e4`).
fn integral(text: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(text).ok()?;
    if let Ok(v) = text.parse::<i64>() {
        return Some(v);
    }
    let f: f64 = text.parse().ok()?;
    // The bound is 2^63: every f64 below it in magnitude and integral fits an i64.
    (f.fract() == 0.0 && f.abs() < 9.223_372_036_854_776e18).then_some(f as i64)
}
