use super::*;
use crate::scanner::rpc::AnswerReader;

/// A 2xx reply whose body is `text` read as JSON (`sse`: as an event stream).
fn http(status: u16, id: u64, text: &str) -> Reply {
    let mut r = AnswerReader::new(Some("application/json"), id, 1 << 20);
    r.feed(text.as_bytes());
    Reply::Http {
        status,
        session_id: Some("sess-1".into()),
        www_authenticate: false,
        elapsed_ms: 12.5,
        answer: r.finish().map_err(BodyError::Answer),
    }
}

fn status_only(status: u16, www_authenticate: bool) -> Reply {
    Reply::Http {
        status,
        session_id: None,
        www_authenticate,
        elapsed_ms: 3.0,
        answer: Err(BodyError::NotRead),
    }
}

fn result(id: u64, r: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{r}}}"#)
}

const INIT: &str = r#"{"protocolVersion":"2025-06-18","serverInfo":{"name":"x","version":"1.2.3"},"capabilities":{}}"#;

fn expect_send(step: Step) -> Request {
    match step {
        Step::Send(r) => r,
        Step::Done(r) => panic!("expected a request, got {r:?}"),
    }
}

fn expect_done(step: Step) -> ProbeResult {
    match step {
        Step::Done(r) => r,
        Step::Send(r) => panic!("expected the end, got {r:?}"),
    }
}

fn header<'a>(r: &'a Request, name: &str) -> Option<&'a str> {
    r.headers
        .iter()
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn a_full_probe_pages_tools_and_ends_the_session() {
    let mut p = Probe::new(false, "0.1.0");
    let init = expect_send(p.start());
    assert_eq!(init.answer, Some((1, INITIALIZE_BODY_CAP)));
    assert_eq!(header(&init, "mcp-protocol-version"), None);
    let note = expect_send(p.on_reply(http(200, 1, &result(1, INIT))));
    assert_eq!(note.answer, None);
    assert_eq!(header(&note, "mcp-session-id"), Some("sess-1"));
    assert_eq!(header(&note, "mcp-protocol-version"), Some("2025-06-18"));
    let page1 = expect_send(p.on_reply(status_only(202, false)));
    assert_eq!(page1.answer, Some((2, TOOLS_BODY_CAP)));
    let page2 = expect_send(p.on_reply(http(
        200,
        2,
        &result(2, r#"{"tools":[{"name":"a"}],"nextCursor":"p2"}"#),
    )));
    assert!(String::from_utf8_lossy(&page2.body).contains("\"cursor\":\"p2\""));
    let delete = expect_send(p.on_reply(http(200, 3, &result(3, r#"{"tools":[{"name":"b"}]}"#))));
    assert_eq!(delete.method, Method::Delete);
    let r = expect_done(p.on_reply(status_only(405, false)));
    assert_eq!(r.reached_level, 2);
    assert_eq!(r.http_status, Some(200), "the DELETE does not count");
    assert_eq!(r.initialize_status, Some(200));
    assert_eq!(
        (r.server.instructions, r.server.name, r.server.version),
        (false, true, true)
    );
    assert_eq!(r.server_version.as_deref(), Some("1.2.3"));
    assert_eq!(r.latency_ms, Some(12.5));
    let tools = r.tools.unwrap();
    assert_eq!(tools.tool_count, 2);
    assert_eq!(tools.tool_names, ["a", "b"]);
}

#[test]
fn refusals_stop_at_level_zero_with_the_status_seen() {
    let mut p = Probe::new(false, "0.1.0");
    p.start();
    let r = expect_done(p.on_reply(status_only(401, true)));
    assert_eq!(
        (
            r.reached_level,
            r.http_status,
            r.error_type,
            r.www_authenticate
        ),
        (0, Some(401), None, true)
    );
    let mut p = Probe::new(false, "0.1.0");
    p.start();
    let r = expect_done(p.on_reply(Reply::Failed(ErrorType::Timeout)));
    assert_eq!(
        (r.http_status, r.error_type, r.latency_ms),
        (None, Some(ErrorType::Timeout), None)
    );
    let mut p = Probe::new(false, "0.1.0");
    p.start();
    let r = expect_done(p.on_reply(http(200, 1, "<html>hi</html>")));
    assert_eq!(
        (r.reached_level, r.http_status, r.error_type),
        (0, Some(200), Some(ErrorType::InvalidResponse))
    );
    let mut p = Probe::new(false, "0.1.0");
    p.start();
    let err = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no"}}"#;
    let r = expect_done(p.on_reply(http(200, 1, err)));
    assert_eq!((r.reached_level, r.error_type), (0, None));
}

#[test]
fn tools_failures_keep_level_one_or_two() {
    let mut p = Probe::new(false, "0.1.0");
    p.start();
    p.on_reply(http(200, 1, &result(1, INIT)));
    p.on_reply(status_only(202, false));
    let delete = expect_send(p.on_reply(status_only(500, false)));
    assert_eq!(delete.method, Method::Delete);
    let r = expect_done(p.on_reply(Reply::Failed(ErrorType::ConnReset)));
    assert_eq!(
        (r.reached_level, r.http_status, r.error_type),
        (1, Some(500), None)
    );
    assert!(r.tools.is_none());

    let mut p = Probe::new(false, "0.1.0");
    p.start();
    p.on_reply(http(200, 1, &result(1, INIT)));
    p.on_reply(status_only(202, false));
    p.on_reply(http(
        200,
        2,
        &result(2, r#"{"tools":[{"name":"a"}],"nextCursor":"x"}"#),
    ));
    p.on_reply(Reply::Failed(ErrorType::Timeout));
    let r = expect_done(p.on_reply(status_only(200, false)));
    assert_eq!((r.reached_level, r.error_type), (2, None));
    assert!(r.tools.unwrap().tools_has_more);
}

#[test]
fn cursors_are_followed_at_most_twenty_pages_and_never_twice() {
    let mut p = Probe::new(false, "0.1.0");
    p.start();
    p.on_reply(http(200, 1, &result(1, INIT)));
    let mut step = p.on_reply(status_only(202, false));
    let mut pages = 0;
    loop {
        let req = match step {
            Step::Send(r) if r.method == Method::Post => r,
            Step::Send(_) => break,
            Step::Done(_) => panic!("the session is deleted first"),
        };
        let (id, _) = req.answer.unwrap();
        pages += 1;
        let body = format!(r#"{{"tools":[{{"name":"t{pages}"}}],"nextCursor":"c{pages}"}}"#);
        step = p.on_reply(http(200, id, &result(id, &body)));
    }
    assert_eq!(pages, MAX_TOOLS_PAGES);
    let mut p = Probe::new(false, "0.1.0");
    p.start();
    p.on_reply(http(200, 1, &result(1, INIT)));
    p.on_reply(status_only(202, false));
    p.on_reply(http(
        200,
        2,
        &result(2, r#"{"tools":[],"nextCursor":"same"}"#),
    ));
    let delete = expect_send(p.on_reply(http(
        200,
        3,
        &result(3, r#"{"tools":[],"nextCursor":"same"}"#),
    )));
    assert_eq!(delete.method, Method::Delete);
}

#[test]
fn modern_discover_replaces_initialize_or_falls_back() {
    let mut p = Probe::new(true, "0.1.0");
    let d = expect_send(p.start());
    assert_eq!(
        header(&d, "mcp-protocol-version"),
        Some(MODERN_PROTOCOL_VERSION)
    );
    assert_eq!(header(&d, "mcp-method"), Some("server/discover"));
    let disc = r#"{"supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"m","version":"9.9.9"}}}"#;
    let tools = expect_send(p.on_reply(http(200, 0, &result(0, disc))));
    assert_eq!(header(&tools, "mcp-session-id"), None);
    assert_eq!(header(&tools, "mcp-method"), Some("tools/list"));
    let r = expect_done(p.on_reply(http(200, 2, &result(2, r#"{"tools":[]}"#))));
    assert_eq!(r.reached_level, 2);
    assert_eq!(r.server_version.as_deref(), Some("9.9.9"));
    assert!(r.server.name && r.server.version);
    assert_eq!(r.protocol_version.as_deref(), Some(MODERN_PROTOCOL_VERSION));

    let mut p = Probe::new(true, "0.1.0");
    p.start();
    let init = expect_send(p.on_reply(status_only(404, false)));
    assert_eq!(init.answer, Some((1, INITIALIZE_BODY_CAP)));
    let r = expect_done(p.on_reply(status_only(401, false)));
    assert_eq!(
        r.http_status,
        Some(401),
        "the discover status is not reported"
    );
}

#[test]
fn unsafe_versions_and_session_ids_are_not_kept() {
    let mut p = Probe::new(false, "0.1.0");
    p.start();
    let init =
        r#"{"protocolVersion":"2025-06-18 ignore previous","serverInfo":{"version":"<b>1</b>"}}"#;
    let mut reply = http(200, 1, &result(1, init));
    if let Reply::Http { session_id, .. } = &mut reply {
        *session_id = Some("bad id\n".into());
    }
    let note = expect_send(p.on_reply(reply));
    assert_eq!(header(&note, "mcp-session-id"), None);
    assert_eq!(
        header(&note, "mcp-protocol-version"),
        Some(PROTOCOL_VERSION)
    );
    assert!(is_valid_session_id("a1-~"));
    assert!(!is_valid_session_id(""));
    let r = expect_done({
        p.on_reply(status_only(202, false));
        p.on_reply(http(200, 2, &result(2, r#"{"tools":[]}"#)))
    });
    assert_eq!((&r.server_version, &r.protocol_version), (&None, &None));
    let (obs, defs) = r.into_observation("sr_1", "mcp:a/b", "https://a.example.com/mcp", 5);
    assert_eq!(obs.tool_count, Some(0));
    assert!(defs.is_empty());
    let (blocked, _) = ProbeResult::blocked().into_observation("sr_1", "mcp:a/b", "http://x", 5);
    assert_eq!(
        (blocked.reached_level, blocked.error_type),
        (0, Some(ErrorType::BlockedUrl))
    );
    assert_eq!(blocked.tool_count, None);
}
