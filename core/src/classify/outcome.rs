//! What an answer means: JSON-RPC error codes, and the `isError` results real SDKs use for
//! the caller's mistakes (see the module docs of [`super`] for every rule).

use super::message::ToolResult;
use super::scan::Str;
use super::text;
use crate::record::{ErrorLayer, FailureType, Outcome};

/// How one answer is classified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Verdict {
    pub outcome: Outcome,
    pub failure_type: Option<FailureType>,
    pub error_layer: Option<ErrorLayer>,
    pub error_code: Option<i64>,
}

impl Verdict {
    pub const SUCCESS: Verdict = Verdict {
        outcome: Outcome::Success,
        failure_type: None,
        error_layer: None,
        error_code: None,
    };

    pub const CANCELLED: Verdict = Verdict {
        outcome: Outcome::Cancelled,
        ..Verdict::SUCCESS
    };

    /// A failure of `layer` and `failure` type, with a JSON-RPC code when one is known.
    pub fn failure(layer: ErrorLayer, failure: FailureType, code: Option<i64>) -> Verdict {
        Verdict {
            outcome: Outcome::Failure,
            failure_type: Some(failure),
            error_layer: Some(layer),
            error_code: code,
        }
    }

    /// A JSON-RPC error with this code (or none).
    pub fn error(code: Option<i64>) -> Verdict {
        let (layer, failure) = error_code_class(code);
        Verdict::failure(layer, failure, code)
    }
}

/// Where a JSON-RPC error with this code (or none) failed, and why (SPEC §3.1): -32700,
/// -32600, -32601 and -32602 are the caller's (request layer; -32602 is
/// `invalid_arguments`), -32001 is the TypeScript SDK's timeout, everything else is the
/// server's. OTLP spans (`crate::otlp`) use it for their `error.type` codes.
pub fn error_code_class(code: Option<i64>) -> (ErrorLayer, FailureType) {
    match code {
        Some(-32602) => (ErrorLayer::Request, FailureType::InvalidArguments),
        Some(-32700 | -32600 | -32601) => (ErrorLayer::Request, FailureType::Unknown),
        Some(-32001) => (ErrorLayer::Server, FailureType::Timeout),
        _ => (ErrorLayer::Server, FailureType::ServerError),
    }
}

/// The verdict on a `tools/call` result of the tool named `tool` (when known).
pub(super) fn tool_result(line: &[u8], r: &ToolResult, tool: Option<&str>) -> Verdict {
    if !r.is_error {
        return Verdict::SUCCESS;
    }
    let tool_error = Verdict::failure(ErrorLayer::Tool, FailureType::ToolError, None);
    let Some(first) = r.first_text else {
        return tool_error;
    };
    let raw = first.raw(line);
    // The TypeScript SDK's server validates a tool's structured output against its
    // outputSchema and reports a mismatch as -32602 too, but that is the tool's fault.
    if text::starts_with(raw, "MCP error -32602: Output validation error") {
        return tool_error;
    }
    if let Some(code) = ts_sdk_code(raw) {
        return Verdict::error(Some(code));
    }
    if python_sdk_validation(line, first, tool) {
        return Verdict::failure(ErrorLayer::Request, FailureType::InvalidArguments, None);
    }
    tool_error
}

/// The code of the TypeScript SDK's `isError` quirk (`MCP error -32602` or `-32601` at the
/// start of the first text item).
fn ts_sdk_code(raw: &[u8]) -> Option<i64> {
    [(-32602, "MCP error -32602"), (-32601, "MCP error -32601")]
        .into_iter()
        .find_map(|(code, prefix)| {
            // `MCP error -326021` is not the quirk: the code must end where the prefix does.
            let ends =
                !text::unit_at(raw, prefix.len()).is_some_and(|u| (0x30..=0x39).contains(&u));
            (text::starts_with(raw, prefix) && ends).then_some(code)
        })
}

/// Whether the first text is the Python MCP SDK's report of arguments that failed the
/// tool's input schema: `Error executing tool NAME: N validation error(s) for
/// FUNCArguments` (FastMCP and `MCPServer`, whose argument model is `<function>Arguments`)
/// or `Input validation error: …` (the low-level server of `mcp` 1.x).
fn python_sdk_validation(line: &[u8], first: Str, tool: Option<&str>) -> bool {
    let raw = first.raw(line);
    if text::starts_with(raw, "Input validation error") {
        return true;
    }
    // Decode only the head: the pattern ends within a few names of the start.
    let budget = 512 + 12 * tool.map_or(128, str::len);
    let head = text::string(&raw[..raw.len().min(budget)], first.escaped);
    let Some(rest) = head.strip_prefix("Error executing tool ") else {
        return false;
    };
    let rest = match tool {
        Some(name) => rest.strip_prefix(name),
        None => rest.find(": ").map(|i| &rest[i..]),
    };
    let Some(rest) = rest.and_then(|r| r.strip_prefix(": ")) else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let Some(rest) = rest[digits..].strip_prefix(" validation error") else {
        return false;
    };
    let rest = rest.strip_prefix('s').unwrap_or(rest);
    let Some(model) = rest.strip_prefix(" for ") else {
        return false;
    };
    let ident: String = model
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    digits > 0 && ident.len() > "Arguments".len() && ident.ends_with("Arguments")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(text_json: &str, tool: Option<&str>) -> Verdict {
        let line =
            format!(r#"{{"isError":true,"content":[{{"type":"text","text":{text_json}}}]}}"#);
        let start = line.find(text_json).unwrap() + 1;
        let r = ToolResult {
            is_error: true,
            has_content: true,
            first_text: Some(Str {
                start,
                end: start + text_json.len() - 2,
                escaped: text_json.contains('\\'),
            }),
        };
        tool_result(line.as_bytes(), &r, tool)
    }

    #[test]
    fn python_sdk_argument_errors_are_the_callers() {
        let rejected = Verdict::failure(ErrorLayer::Request, FailureType::InvalidArguments, None);
        let tool_error = Verdict::failure(ErrorLayer::Tool, FailureType::ToolError, None);
        for (text, tool, want) in [
            (
                r#""Error executing tool get_time: 1 validation error for get_timeArguments\ntz""#,
                Some("get_time"),
                rejected,
            ),
            (
                r#""Error executing tool add: 2 validation errors for addArguments""#,
                Some("add"),
                rejected,
            ),
            (
                r#""Error executing tool add: 2 validation errors for addArguments""#,
                None,
                rejected,
            ),
            (
                r#""Input validation error: 'url' is a required property""#,
                Some("fetch"),
                rejected,
            ),
            // Another tool's name, a model that is not the arguments, no count: the tool's own failure.
            (
                r#""Error executing tool other: 1 validation error for addArguments""#,
                Some("add"),
                tool_error,
            ),
            (
                r#""Error executing tool add: 1 validation error for Forecast""#,
                Some("add"),
                tool_error,
            ),
            (
                r#""Error executing tool add: validation error for addArguments""#,
                Some("add"),
                tool_error,
            ),
            (r#""Error executing tool add""#, Some("add"), tool_error),
            (
                r#""MCP error -32602: Output validation error: bad""#,
                Some("add"),
                tool_error,
            ),
        ] {
            assert_eq!(verdict(text, tool), want, "{text}");
        }
    }
}
