//! The session state machine: pending requests and tasks, their answers, and the facts learnt.

use super::framing::{Framer, Lines};
use super::learn::{learn, Asked};
use super::message::{parse_line, Id, Message, ResultInfo, TaskState, ToolResult};
use super::outcome::{tool_result, Verdict};
use super::pending::Bounded;
use super::scan::Str;
use super::text;
use super::{CloseReason, Direction, Exchange, SessionFacts};
use crate::record::{ErrorLayer, FailureType, RequestKind};

/// A request id as a JavaScript peer sees it after `JSON.parse`: a number by its double
/// value (so `1.0` and `1` match, as a Node server echoes `1.0` back as `1`), a string by
/// its UTF-16 units.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum IdKey {
    Num(u64),
    Str(Vec<u16>),
}

/// A task id (always a string), by its UTF-16 units.
type TaskKey = Vec<u16>;

/// A request waiting for its response.
#[derive(Debug, Clone)]
struct Pending {
    raw_id: String,
    method: String,
    tool_name: Option<String>,
    started_ms: f64,
    seq: u64,
    first_page: bool,
    /// A `tools/call` with `params.task` (2025-11-25).
    task_requested: bool,
    /// The task a `tasks/*` request names.
    task: Option<TaskKey>,
    /// `_meta`'s protocol version (2026-07-28).
    protocol_version: Option<String>,
    /// Its id was still pending for an earlier request: its answer teaches no facts.
    ambiguous: bool,
}

/// A tool call running as a task: its outcome comes in a later answer.
#[derive(Debug, Clone)]
struct Task {
    raw_id: String,
    tool_name: Option<String>,
    started_ms: f64,
}

/// How a task ended, as one of its answers says.
enum TaskEnd {
    Tool(ToolResult),
    Error(Option<i64>),
    Cancelled,
}

/// The streaming MCP session classifier (see the [module docs](super) for every rule).
///
/// ```
/// use lowdown_core::classify::{Classifier, CloseReason, Direction};
/// use lowdown_core::record::Outcome;
///
/// let mut c = Classifier::new();
/// c.feed(Direction::ClientToServer, br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#, 0.0);
/// assert!(c.feed(Direction::ClientToServer, b"\n", 1.0).is_empty());
/// let done = c.feed(Direction::ServerToClient, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}\n", 5.0);
/// assert_eq!(done[0].outcome, Outcome::Success);
/// assert_eq!(done[0].latency_ms, 4.0);
/// assert!(c.close(6.0, CloseReason::ClientEnded).is_empty());
/// ```
#[derive(Debug, Default)]
pub struct Classifier {
    framers: [Framer; 2],
    state: State,
}

#[derive(Debug, Default)]
struct State {
    pending: Bounded<IdKey, Pending>,
    tasks: Bounded<TaskKey, Task>,
    seq: u64,
    facts: SessionFacts,
    scratch: Vec<Message>,
}

fn slot(d: Direction) -> usize {
    match d {
        Direction::ClientToServer => 0,
        Direction::ServerToClient => 1,
    }
}

impl Classifier {
    /// A classifier for a new session.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes as they arrived from `direction` (split anywhere); `now_ms` is the
    /// caller's clock in milliseconds. Returns the exchanges these bytes finished.
    pub fn feed(&mut self, direction: Direction, bytes: &[u8], now_ms: f64) -> Vec<Exchange> {
        let mut out = Vec::new();
        let mut sink = Sink {
            state: &mut self.state,
            direction,
            now_ms,
            out: &mut out,
        };
        self.framers[slot(direction)].feed(bytes, &mut sink);
        out
    }

    /// Ends the session at `now_ms`: frames unterminated last lines, then reports every
    /// request and task still waiting (oldest first). `reason` says who ended it: when the
    /// client did, they are `cancelled`; when the server died or broke its pipe on its
    /// own, they are `failure / server_error / server`.
    pub fn close(&mut self, now_ms: f64, reason: CloseReason) -> Vec<Exchange> {
        let mut out = Vec::new();
        for direction in [Direction::ClientToServer, Direction::ServerToClient] {
            let mut sink = Sink {
                state: &mut self.state,
                direction,
                now_ms,
                out: &mut out,
            };
            self.framers[slot(direction)].finish(&mut sink);
        }
        let verdict = match reason {
            CloseReason::ClientEnded => Verdict::CANCELLED,
            CloseReason::ServerEnded => {
                Verdict::failure(ErrorLayer::Server, FailureType::ServerError, None)
            }
        };
        let state = &mut self.state;
        // A request that waits for a task's outcome (`tasks/result`, a poll) is that
        // task's: the task is reported, once, as its tool call.
        let waiting: Vec<(u64, Exchange)> = state
            .pending
            .drain()
            .collect::<Vec<_>>()
            .into_iter()
            .filter(|(d, _, p)| !p.task.as_ref().is_some_and(|k| state.tasks.contains(*d, k)))
            .map(|(d, seq, p)| (seq, exchange(d, &p, verdict, now_ms)))
            .collect();
        let mut left = waiting;
        left.extend(
            state
                .tasks
                .drain()
                .map(|(d, seq, t)| (seq, task_exchange(d, &t, verdict, now_ms))),
        );
        left.sort_by_key(|(seq, _)| *seq);
        out.extend(left.into_iter().map(|(_, e)| e));
        out
    }

    /// What has been learnt about the session so far.
    pub fn facts(&self) -> &SessionFacts {
        &self.state.facts
    }

    /// Requests (both directions) still waiting for a response, and tool calls running as
    /// tasks still waiting for their outcome.
    pub fn pending(&self) -> usize {
        self.state.pending.len() + self.state.tasks.len()
    }

    /// Bytes of unterminated lines held for the next feed (both directions).
    pub fn buffered(&self) -> usize {
        self.framers.iter().map(Framer::buffered).sum()
    }
}

/// The exchange of a finished request.
fn exchange(direction: Direction, p: &Pending, v: Verdict, now_ms: f64) -> Exchange {
    Exchange {
        direction,
        id: p.raw_id.clone(),
        method: p.method.clone(),
        tool_name: p.tool_name.clone(),
        request_kind: if p.method == "tools/call" {
            RequestKind::Tool
        } else {
            RequestKind::Protocol
        },
        outcome: v.outcome,
        failure_type: v.failure_type,
        error_layer: v.error_layer,
        error_code: v.error_code,
        started_ms: p.started_ms,
        latency_ms: (now_ms - p.started_ms).max(0.0),
        has_content: false,
    }
}

/// The exchange of a tool call that ran as a task: timed from the `tools/call`, and never
/// carrying the log block (SPEC §3.4).
fn task_exchange(direction: Direction, t: &Task, v: Verdict, now_ms: f64) -> Exchange {
    Exchange {
        direction,
        id: t.raw_id.clone(),
        method: "tools/call".to_owned(),
        tool_name: t.tool_name.clone(),
        request_kind: RequestKind::Tool,
        outcome: v.outcome,
        failure_type: v.failure_type,
        error_layer: v.error_layer,
        error_code: v.error_code,
        started_ms: t.started_ms,
        latency_ms: (now_ms - t.started_ms).max(0.0),
        has_content: false,
    }
}

fn key(line: &[u8], id: Id) -> IdKey {
    match id {
        Id::Num(a, b) => {
            // The scanner checked the grammar, so this parses; `+ 0.0` folds -0 into 0.
            let v: f64 = std::str::from_utf8(&line[a..b])
                .ok()
                .and_then(|t| t.parse().ok())
                .unwrap_or(f64::NAN);
            IdKey::Num((v + 0.0).to_bits())
        }
        Id::Str(s) => IdKey::Str(text::units(s.raw(line)).collect()),
    }
}

fn task_key(line: &[u8], s: Option<Str>) -> Option<TaskKey> {
    s.map(|s| text::units(s.raw(line)).collect())
}

fn raw_id(line: &[u8], id: Id) -> String {
    let (a, b) = match id {
        Id::Num(a, b) => (a, b),
        Id::Str(s) => (s.start - 1, s.end + 1),
    };
    String::from_utf8_lossy(&line[a..b]).into_owned()
}

fn decoded(line: &[u8], s: Option<Str>) -> Option<String> {
    s.map(|s| text::string(s.raw(line), s.escaped))
}

fn is(line: &[u8], s: Option<Str>, want: &str) -> bool {
    s.is_some_and(|s| text::units(s.raw(line)).eq(want.encode_utf16()))
}

/// How a task ended, when `t` (a `Task` in an answer or a notification) says so with its
/// payload: `completed` with its `result`, `failed` with its `error`, or `cancelled`.
/// A 2025-11-25 `completed` names no result: `tasks/result` carries it.
fn terminal(line: &[u8], t: &TaskState) -> Option<TaskEnd> {
    if is(line, t.status, "completed") {
        t.result.map(TaskEnd::Tool)
    } else if is(line, t.status, "failed") {
        t.error.map(TaskEnd::Error)
    } else if is(line, t.status, "cancelled") {
        Some(TaskEnd::Cancelled)
    } else {
        None
    }
}

/// One direction's lines, delivered to the state.
struct Sink<'a> {
    state: &'a mut State,
    direction: Direction,
    now_ms: f64,
    out: &'a mut Vec<Exchange>,
}

impl Lines for Sink<'_> {
    fn prefix(&mut self, rest: &[u8]) -> Option<usize> {
        self.state
            .take_line(self.direction, rest, false, self.now_ms, self.out)
    }

    fn line(&mut self, line: &[u8]) {
        self.state
            .take_line(self.direction, line, true, self.now_ms, self.out);
    }
}

/// One parsed line, with what acting on it needs.
struct At<'a> {
    direction: Direction,
    line: &'a [u8],
    now_ms: f64,
}

impl State {
    /// Parses the line at the start of `bytes` and acts on its messages when it is JSON.
    /// A framed line (`framed`) is all of `bytes`; otherwise the line must end with a `\n`
    /// inside `bytes`, and the bytes used through it are returned (`None`: nothing done).
    fn take_line(
        &mut self,
        direction: Direction,
        bytes: &[u8],
        framed: bool,
        now_ms: f64,
        out: &mut Vec<Exchange>,
    ) -> Option<usize> {
        let mut messages = std::mem::take(&mut self.scratch);
        messages.clear();
        // A line the peer's JSON.parse would reject is ignored whole, so nothing is done
        // before the whole line has parsed.
        let used = match parse_line(bytes, &mut messages) {
            Ok(None) if framed => Some(bytes.len()),
            Ok(Some(nl)) if !framed => Some(nl + 1),
            _ => None,
        };
        if used.is_some() {
            let at = At {
                direction,
                line: bytes,
                now_ms,
            };
            for m in &messages {
                self.message(&at, m, out);
            }
        }
        messages.clear();
        self.scratch = messages;
        used
    }

    fn message(&mut self, at: &At<'_>, m: &Message, out: &mut Vec<Exchange>) {
        match (m.method, m.id) {
            (Some(method), Some(id)) => self.request(at, method, id, m, out),
            (Some(method), None) => self.notification(at, method, m, out),
            (None, Some(id)) if m.result.is_some() || m.error.is_some() => {
                self.response(at, id, m, out)
            }
            _ => {}
        }
    }

    fn request(&mut self, at: &At<'_>, method: Str, id: Id, m: &Message, out: &mut Vec<Exchange>) {
        let line = at.line;
        let method = text::string(method.raw(line), method.escaped);
        let k = key(line, id);
        self.seq += 1;
        let p = Pending {
            raw_id: raw_id(line, id),
            tool_name: (method == "tools/call")
                .then(|| decoded(line, m.name))
                .flatten(),
            task: task_key(line, m.task.task_id).filter(|_| method.starts_with("tasks/")),
            task_requested: m.task_requested && method == "tools/call",
            protocol_version: decoded(line, m.meta_protocol_version),
            ambiguous: self.pending.contains(at.direction, &k),
            method,
            started_ms: at.now_ms,
            seq: self.seq,
            first_page: !m.cursor,
        };
        let (reused, evicted) = self.pending.insert(at.direction, k, self.seq, p);
        // The earlier request under a reused id can no longer be told from the new one.
        if let Some(old) = reused {
            let v = Verdict::failure(ErrorLayer::Request, FailureType::Unknown, None);
            out.push(exchange(at.direction, &old, v, at.now_ms));
        }
        if let Some(old) = evicted {
            let v = Verdict::failure(ErrorLayer::Server, FailureType::Timeout, None);
            out.push(exchange(at.direction, &old, v, at.now_ms));
        }
    }

    fn notification(&mut self, at: &At<'_>, method: Str, m: &Message, out: &mut Vec<Exchange>) {
        let line = at.line;
        if is(line, Some(method), "notifications/cancelled") {
            let Some(id) = m.request_id else { return };
            if let Some(p) = self.pending.remove(at.direction, &key(line, id)) {
                out.push(exchange(at.direction, &p, Verdict::CANCELLED, at.now_ms));
            }
        } else if is(line, Some(method), "notifications/tasks")
            || is(line, Some(method), "notifications/tasks/status")
        {
            // The task's receiver reports on a task the other side created.
            if let (Some(k), Some(end)) = (task_key(line, m.task.task_id), terminal(line, &m.task))
            {
                self.end_task(at, at.direction.opposite(), &k, end, out);
            }
        }
    }

    fn response(&mut self, at: &At<'_>, id: Id, m: &Message, out: &mut Vec<Exchange>) {
        let line = at.line;
        let rd = at.direction.opposite();
        let Some(p) = self.pending.remove(rd, &key(line, id)) else {
            return;
        };
        if let Some(code) = m.error {
            match &p.task {
                Some(k) if p.method == "tasks/result" && self.tasks.contains(rd, k) => {
                    self.end_task(at, rd, k, TaskEnd::Error(code), out);
                }
                _ => out.push(exchange(rd, &p, Verdict::error(code), at.now_ms)),
            }
            return;
        }
        let Some(r) = &m.result else { return };
        // `input_required` (2026-07-28) is interim: the retry, under a new id, is the outcome.
        if is(line, r.result_type, "input_required") {
            return;
        }
        if rd == Direction::ClientToServer && !p.ambiguous {
            let asked = Asked {
                method: &p.method,
                first_page: p.first_page,
                protocol_version: p.protocol_version.as_deref(),
            };
            learn(&mut self.facts, &asked, line, r);
        }
        if p.method == "tools/call" {
            self.tool_call(at, rd, p, r, out);
            return;
        }
        if let Some((k, end)) = task_answer(line, &p, r) {
            if self.tasks.contains(rd, &k) {
                self.end_task(at, rd, &k, end, out);
                return;
            }
        }
        let mut e = exchange(rd, &p, Verdict::SUCCESS, at.now_ms);
        e.has_content = r.tool.has_content;
        out.push(e);
    }

    /// The answer to a `tools/call`: its outcome, or the creation of the task that will
    /// carry it (2025-11-25 `task.taskId` when the call asked for a task; 2026-07-28
    /// `resultType: "task"`).
    fn tool_call(
        &mut self,
        at: &At<'_>,
        rd: Direction,
        p: Pending,
        r: &ResultInfo,
        out: &mut Vec<Exchange>,
    ) {
        let line = at.line;
        let created = if p.task_requested {
            r.created_task
        } else if is(line, r.result_type, "task") {
            r.task.task_id
        } else {
            None
        };
        if let Some(k) = task_key(line, created) {
            let task = Task {
                raw_id: p.raw_id,
                tool_name: p.tool_name,
                started_ms: p.started_ms,
            };
            let (reused, evicted) = self.tasks.insert(rd, k, p.seq, task);
            if let Some(t) = reused {
                let v = Verdict::failure(ErrorLayer::Request, FailureType::Unknown, None);
                out.push(task_exchange(rd, &t, v, at.now_ms));
            }
            if let Some(t) = evicted {
                let v = Verdict::failure(ErrorLayer::Server, FailureType::Timeout, None);
                out.push(task_exchange(rd, &t, v, at.now_ms));
            }
            return;
        }
        let mut e = exchange(
            rd,
            &p,
            tool_result(line, &r.tool, p.tool_name.as_deref()),
            at.now_ms,
        );
        e.has_content = r.tool.has_content;
        out.push(e);
    }

    /// Reports the task `k` of direction `rd`, if known, as its tool call's exchange.
    fn end_task(
        &mut self,
        at: &At<'_>,
        rd: Direction,
        k: &TaskKey,
        end: TaskEnd,
        out: &mut Vec<Exchange>,
    ) {
        let Some(t) = self.tasks.remove(rd, k) else {
            return;
        };
        let v = match end {
            TaskEnd::Tool(r) => tool_result(at.line, &r, t.tool_name.as_deref()),
            TaskEnd::Error(code) => Verdict::error(code),
            TaskEnd::Cancelled => Verdict::CANCELLED,
        };
        out.push(task_exchange(rd, &t, v, at.now_ms));
    }
}

/// The task and its end that the result of a `tasks/*` request carries: `tasks/result`
/// answers with the tool result itself; `tasks/get` and `tasks/cancel` with the task,
/// which names its end only once terminal.
fn task_answer(line: &[u8], p: &Pending, r: &ResultInfo) -> Option<(TaskKey, TaskEnd)> {
    match p.method.as_str() {
        "tasks/result" => Some((p.task.clone()?, TaskEnd::Tool(r.tool))),
        "tasks/get" | "tasks/cancel" => {
            let k = task_key(line, r.task.task_id).or_else(|| p.task.clone())?;
            Some((k, terminal(line, &r.task)?))
        }
        _ => None,
    }
}
