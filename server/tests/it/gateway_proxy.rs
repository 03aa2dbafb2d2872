//! The gateway listener (SPEC §10) against a recording upstream on loopback: what reaches
//! the vendor byte for byte, streaming both ways, refusals, expiry and the overlap,
//! redirects, timeouts and the ProxyCall each call leaves. SQLite and PostgreSQL.

use crate::common;

use std::time::Duration;

use common::prowl::{assert_nowhere_in_db, raw_http, wait_calls, Rig, CATALOG, VENDOR_SECRET};
use common::{get, post, TestDb};
use futures_util::StreamExt;
use serde_json::{json, Value};
use sqlx::Row;

const TIMEOUT: Duration = Duration::from_secs(20);

async fn only_sampled_calls_reach_the_vendor_stripped_and_with_the_credential(t: &TestDb) {
    let rig = Rig::start(t, CATALOG, TIMEOUT).await;
    let (key, agent_id) = rig.agent(None).await;
    let h = rig.honest(&key, &agent_id, "svc_vendor").await;
    let body = "{\"amount\":5}\n";
    let raw = format!(
        "POST /vendor/v1/charges?amount=5&note=PATHCANARY HTTP/1.1\r\nHost: gateway.local\r\n\
         X-Agent-Key: {}\r\nX-Prowl-Salt-Id: {}\r\nX-Prowl-Sample-Decision: {}\r\nX-Prowl-Trace: t-1\r\n\
         Authorization: Bearer agent-own-token\r\nCookie: agent=1\r\nForwarded: for=203.0.113.9\r\n\
         X-Forwarded-For: 203.0.113.9\r\nX-Forwarded-Proto: https\r\nX-Real-IP: 203.0.113.9\r\n\
         Connection: close, X-Hop\r\nX-Hop: hop-only\r\nKeep-Alive: timeout=5\r\nTE: trailers\r\n\
         Proxy-Authorization: Basic cHJveHk=\r\nAccept: application/json\r\nContent-Type: application/json\r\n\
         Idempotency-Key: idem-1\r\nContent-Length: {}\r\n\r\n{body}",
        h[0].1, h[1].1, h[2].1, body.len()
    );
    let answer = raw_http(rig.gateway, &raw).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let lower = answer.to_ascii_lowercase();
    assert!(
        lower.contains("\r\nx-ratelimit-remaining: 99\r\n") && !lower.contains("x-vendor"),
        "the allowlisted vendor headers, and only they, reach the agent: {answer}"
    );
    assert!(
        !lower.contains("set-cookie"),
        "the vendor account's cookie stays behind: {answer}"
    );
    assert!(answer.contains("\"received_bytes\":13"), "{answer}");

    let seen = rig.up.requests();
    assert_eq!(seen.len(), 1);
    let got = &seen[0];
    assert_eq!(got.method, "POST");
    assert_eq!(
        got.uri, "/base/v1/charges?amount=5&note=PATHCANARY",
        "path and query forwarded under the base"
    );
    assert_eq!(got.body, body.as_bytes(), "body byte for byte");
    let mut headers = got.headers.clone();
    headers.sort();
    let mut want = vec![
        ("accept".to_owned(), "application/json".to_owned()),
        ("authorization".into(), format!("Bearer {VENDOR_SECRET}")),
        ("content-length".into(), body.len().to_string()),
        ("content-type".into(), "application/json".into()),
        ("host".into(), format!("127.0.0.1:{}", rig.up.addr.port())),
        ("idempotency-key".into(), "idem-1".into()),
    ];
    want.sort();
    assert_eq!(
        headers, want,
        "exactly the agent's own request headers plus the credential"
    );

    wait_calls(t, 1).await;
    let row = sqlx::query("SELECT service_id, agent_id, salt_id, method, status, response_bytes, error_type, latency_ms, at FROM proxy_calls")
        .fetch_one(&t.check.pool).await.unwrap();
    assert_eq!(row.get::<String, _>(0), "svc_vendor");
    assert_eq!(row.get::<String, _>(1), agent_id);
    assert_eq!(row.get::<String, _>(2), h[1].1);
    assert_eq!(row.get::<String, _>(3), "POST");
    assert_eq!(row.get::<Option<i64>, _>(4), Some(200));
    assert!(row.get::<Option<i64>, _>(5).unwrap() > 0);
    assert_eq!(row.get::<Option<String>, _>(6), None);
    assert!(row.get::<f64, _>(7) > 0.0);
    // Nothing of the path, query, headers or body is stored anywhere.
    for canary in [
        "PATHCANARY",
        "charges",
        "idem-1",
        "agent-own-token",
        VENDOR_SECRET,
        "203.0.113.9",
    ] {
        assert_nowhere_in_db(t, canary).await;
    }
}
on_both!(only_sampled_calls_reach_the_vendor_stripped_and_with_the_credential);

async fn refusals_name_the_reason_and_forgeries_are_flagged(t: &TestDb) {
    let rig = Rig::start(t, CATALOG, TIMEOUT).await;
    let (key, agent_id) = rig.agent(None).await;
    let (_, other_id) = rig.agent(None).await;
    let h = rig.honest(&key, &agent_id, "svc_vendor").await;
    let (salt_id, salt) = rig.salt(&key).await;
    let with = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<Vec<_>>()
    };
    let others_roll =
        lowdown_core::sample::decide("svc_vendor", &other_id, &salt_id, &salt, 1.0).roll;
    let never_roll =
        lowdown_core::sample::decide("svc_never", &agent_id, &salt_id, &salt, 0.0).roll;
    type Case<'a> = (&'a str, Vec<(String, String)>, u16, &'a str);
    let cases: Vec<Case> = vec![
        ("/nope/x", h.clone(), 404, "unknown_service"),
        (
            "/vendor/x",
            with(&[
                ("x-prowl-salt-id", &salt_id),
                ("x-prowl-sample-decision", &h[2].1),
            ]),
            403,
            "missing_agent_key",
        ),
        (
            "/vendor/x",
            with(&[
                (
                    "x-agent-key",
                    "ak_000000000000000000000000000000000000000000000000",
                ),
                ("x-prowl-salt-id", &salt_id),
                ("x-prowl-sample-decision", &h[2].1),
            ]),
            403,
            "unknown_agent_key",
        ),
        (
            "/vendor/x",
            with(&[("x-agent-key", &key), ("x-prowl-sample-decision", &h[2].1)]),
            403,
            "missing_salt_id",
        ),
        (
            "/vendor/x",
            with(&[("x-agent-key", &key), ("x-prowl-salt-id", &salt_id)]),
            403,
            "missing_decision",
        ),
        (
            "/vendor/x",
            with(&[
                ("x-agent-key", &key),
                ("x-prowl-salt-id", &salt_id),
                ("x-prowl-sample-decision", "yes"),
            ]),
            403,
            "malformed_decision",
        ),
        (
            "/vendor/x",
            with(&[
                ("x-agent-key", &key),
                ("x-prowl-salt-id", "s_29990101"),
                ("x-prowl-sample-decision", &h[2].1),
            ]),
            403,
            "unknown_salt",
        ),
        (
            "/vendor/x",
            with(&[
                ("x-agent-key", &key),
                ("x-prowl-salt-id", &salt_id),
                ("x-prowl-sample-decision", &others_roll),
            ]),
            403,
            "wrong_decision",
        ),
        (
            "/vendor/x",
            with(&[
                ("x-agent-key", &key),
                ("x-prowl-salt-id", "s_20200101"),
                ("x-prowl-sample-decision", &h[2].1),
            ]),
            403,
            "expired_salt",
        ),
        (
            "/never/x",
            with(&[
                ("x-agent-key", &key),
                ("x-prowl-salt-id", &salt_id),
                ("x-prowl-sample-decision", &never_roll),
            ]),
            403,
            "not_sampled",
        ),
    ];
    for (path, headers, status, reason) in &cases {
        let (got, body) = rig.call(path, headers).await;
        assert_eq!(
            (got, body["reason"].as_str().unwrap_or_default()),
            (*status, *reason),
            "{path} {reason}: {body}"
        );
        assert!(
            body["error"].as_str().is_some_and(|e| e.len() > 20),
            "a clear message: {body}"
        );
    }
    assert!(
        rig.up.requests().is_empty(),
        "no refused call reached the vendor"
    );
    // Each refusal of a catalog service is a ProxyCall with its reason (never counted); a
    // slug that names no service has none.
    let known: Vec<&str> = cases
        .iter()
        .map(|c| c.3)
        .filter(|r| *r != "unknown_service")
        .collect();
    wait_calls(t, known.len() as i64).await;
    let mut stored: Vec<String> = sqlx::query("SELECT refused FROM proxy_calls")
        .fetch_all(&t.check.pool)
        .await
        .unwrap()
        .iter()
        .map(|r| {
            r.get::<Option<String>, _>(0)
                .expect("every stored call is a refusal")
        })
        .collect();
    stored.sort();
    let mut known: Vec<String> = known.into_iter().map(str::to_owned).collect();
    known.sort();
    assert_eq!(stored, known);
    // unknown salt, wrong decision and not sampled are forgeries; the expired salt a replay.
    let kinds = sqlx::query(
        "SELECT kind, COUNT(*) FROM agent_flags WHERE agent_id = $1 GROUP BY kind ORDER BY kind",
    )
    .bind(agent_id.clone())
    .fetch_all(&t.check.pool)
    .await
    .unwrap();
    let kinds: Vec<(String, i64)> = kinds.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(
        kinds,
        vec![
            ("forged_decision".into(), 3),
            ("replayed_decision".into(), 1)
        ]
    );
    let rep = get(&rig.app, &format!("/v1/agents/{agent_id}/reputation")).await;
    assert_eq!(
        rep.json["abuse_flags"],
        json!({"value": 4, "n": 4}),
        "{}",
        rep.text
    );
    // The honest call still goes through.
    assert_eq!(rig.call("/vendor/x", &h).await.0, 200);
}
on_both!(refusals_name_the_reason_and_forgeries_are_flagged);

async fn an_expired_salt_is_accepted_inside_the_overlap_only_and_published_after(t: &TestDb) {
    let rig = Rig::start(t, CATALOG, TIMEOUT).await;
    let (key, agent_id) = rig.agent(None).await;
    let h = rig.honest(&key, &agent_id, "svc_vendor").await;
    let (salt_id, _) = rig.salt(&key).await;
    let clock = &rig.state.clock;
    let day = 86_400_000;
    let verify = json!({"service_id": "svc_vendor", "agent_id": agent_id, "salt_id": salt_id, "sample_decision": h[2].1});
    let r = post(&rig.app, "/v1/sampling/verify", &verify).await;
    assert_eq!(
        (r.status.as_u16(), r.json["error"].as_str()),
        (409, Some("salt not yet published"))
    );
    // 30 minutes into the next day: the rotation happened, the old salt is still accepted.
    let now = clock.now();
    clock.shift((now / day + 1) * day + 30 * 60_000 - now);
    assert_ne!(rig.salt(&key).await.0, salt_id, "a new day has a new salt");
    assert_eq!(
        rig.call("/vendor/x", &h).await.0,
        200,
        "inside the 60-minute overlap"
    );
    let listed = get(&rig.app, "/v1/sampling/salts").await;
    assert!(
        !listed.text.contains(&salt_id),
        "not published during the overlap: {}",
        listed.text
    );
    assert_eq!(
        post(&rig.app, "/v1/sampling/verify", &verify).await.status,
        409
    );
    // The overlap ends at 01:00.
    clock.shift(30 * 60_000);
    let (status, body) = rig.call("/vendor/x", &h).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (403, Some("expired_salt"))
    );
    let listed = get(&rig.app, "/v1/sampling/salts").await;
    assert_eq!(
        listed.json["salts"][0]["salt_id"],
        json!(salt_id),
        "published once retired: {}",
        listed.text
    );
    let r = post(&rig.app, "/v1/sampling/verify", &verify).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let (_, salt) = (
        0,
        listed.json["salts"][0]["salt"].as_str().unwrap().to_owned(),
    );
    let d = lowdown_core::sample::decide("svc_vendor", &agent_id, &salt_id, &salt, 1.0);
    assert_eq!(
        r.json,
        json!({"valid": true, "sampled": true, "bucket": d.bucket, "sampling_rate": 1.0})
    );
    // The server restarts with the vendor at a rate of 0: a past decision is still checked
    // with the rate its salt had.
    let restarted = Rig::start(
        t,
        &CATALOG.replacen("sampling_rate = 1.0", "sampling_rate = 0.0", 1),
        TIMEOUT,
    )
    .await;
    restarted
        .state
        .clock
        .shift(clock.now() - restarted.state.now());
    assert_eq!(
        restarted
            .state
            .prowl
            .by_slug("vendor")
            .unwrap()
            .sampling_rate,
        0.0
    );
    let r = post(&restarted.app, "/v1/sampling/verify", &verify).await;
    assert_eq!(
        r.json,
        json!({"valid": true, "sampled": true, "bucket": d.bucket, "sampling_rate": 1.0}),
        "{}",
        r.text
    );
    let mut forged = verify.clone();
    forged["agent_id"] = json!("ag_someoneelse");
    assert_eq!(
        post(&rig.app, "/v1/sampling/verify", &forged).await.json["valid"],
        false
    );
    let mut unknown = verify.clone();
    unknown["salt_id"] = json!("s_20200101");
    assert_eq!(
        post(&rig.app, "/v1/sampling/verify", &unknown).await.status,
        404
    );
    for (k, v) in [
        ("sample_decision", json!("zz")),
        ("service_id", json!("svc_x")),
        ("salt_id", json!("2026-12-01")),
        ("agent_id", json!(7)),
    ] {
        let mut b = verify.clone();
        b[k] = v;
        let r = post(&rig.app, "/v1/sampling/verify", &b).await;
        assert_eq!(r.status, 400, "{k}: {}", r.text);
        assert!(
            r.json["error"].as_str().unwrap().starts_with(k),
            "{}",
            r.text
        );
    }
}
on_both!(an_expired_salt_is_accepted_inside_the_overlap_only_and_published_after);

async fn salts_need_a_registered_agent_and_every_server_agrees(t: &TestDb) {
    let rig = Rig::start(t, CATALOG, TIMEOUT).await;
    let (key, agent_id) = rig.agent(None).await;
    let mine = common::get_as(&rig.app, "/v1/sampling/salt", &[("x-agent-key", &key)]).await;
    assert_eq!(
        mine.json["agent_id"].as_str(),
        Some(agent_id.as_str()),
        "the key's agent_id comes with the salt: {}",
        mine.text
    );
    assert_eq!(common::get(&rig.app, "/v1/sampling/salt").await.status, 401);
    assert_eq!(
        common::get_as(&rig.app, "/v1/sampling/salt", &[("x-agent-key", "ak_nope")])
            .await
            .status,
        401
    );
    // Two servers (two pools, two processes' worth of caches) ask at once.
    let second = lowdown_server::db::Db::open(&t.url, 4).await.unwrap();
    let other = Rig {
        state: lowdown_server::AppState::new(second.clone(), "b"),
        ..Rig::start(t, CATALOG, TIMEOUT).await
    };
    let other = Rig {
        app: lowdown_server::app(other.state.clone()),
        ..other
    };
    let (a, b) = tokio::join!(rig.salt(&key), other.salt(&key));
    assert_eq!(a, b, "one salt per day, whichever server creates it");
    assert_eq!(a.1.len(), 64, "32 random bytes as hex");
    assert!(a.0.starts_with("s_") && a.0.len() == 10);
    second.close().await;
}
on_both!(salts_need_a_registered_agent_and_every_server_agrees);

async fn sse_and_request_bodies_stream_through_without_buffering(t: &TestDb) {
    let rig = Rig::start(t, CATALOG, TIMEOUT).await;
    let (key, agent_id) = rig.agent(None).await;
    let h = rig.honest(&key, &agent_id, "svc_vendor").await;
    let c = reqwest::Client::new();
    let mut req = c.get(rig.url("/vendor/sse"));
    for (k, v) in &h {
        req = req.header(k, v);
    }
    let r = req.send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let mut body = r.bytes_stream();
    // The upstream holds the rest of the stream until the first event is read here: a
    // buffering gateway would never deliver it, and this read would time out.
    let first = tokio::time::timeout(Duration::from_secs(20), body.next())
        .await
        .expect("first event before the stream ends")
        .unwrap()
        .unwrap();
    assert_eq!(&first[..], b"data: one\n\n");
    rig.up.release.notify_one();
    let mut rest = Vec::new();
    while let Some(chunk) = body.next().await {
        rest.extend_from_slice(&chunk.unwrap());
    }
    assert_eq!(rest, b"data: two\n\ndata: three\n\n");

    // Request body: the upstream sees the first chunk before the agent sends the second.
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(1);
    let stream =
        futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|c| (c, rx)) });
    let mut req = c
        .post(rig.url("/vendor/upload"))
        .body(reqwest::Body::wrap_stream(stream));
    for (k, v) in &h {
        req = req.header(k, v);
    }
    let sending = tokio::spawn(req.send());
    tx.send(Ok(b"first-".to_vec())).await.unwrap();
    tokio::time::timeout(Duration::from_secs(20), rig.up.first_chunk.notified())
        .await
        .expect("the upstream got the first chunk while the body was still open");
    tx.send(Ok(b"second".to_vec())).await.unwrap();
    drop(tx);
    let r = sending.await.unwrap().unwrap();
    assert_eq!(r.status(), 200);
    let seen = rig.up.requests();
    let upload = seen.iter().find(|s| s.uri.ends_with("/upload")).unwrap();
    assert_eq!(upload.body, b"first-second");
    assert!(
        upload
            .headers
            .iter()
            .any(|(k, v)| k == "transfer-encoding" && v == "chunked"),
        "{:?}",
        upload.headers
    );
    wait_calls(t, 2).await;
    let (bytes,): (Option<i64>,) = t
        .row("SELECT response_bytes FROM proxy_calls WHERE method = 'GET'")
        .await;
    assert_eq!(bytes, Some(35), "the whole SSE stream counted");
}
on_both!(sse_and_request_bodies_stream_through_without_buffering);

async fn redirects_stay_inside_the_upstream_and_a_hang_is_504(t: &TestDb) {
    let rig = Rig::start(t, CATALOG, Duration::from_secs(1)).await;
    let elsewhere = common::prowl::Upstream::start().await;
    *rig.up.away_to.lock().unwrap() = format!("http://localhost:{}/stolen", elsewhere.addr.port());
    let (key, agent_id) = rig.agent(None).await;
    let h = rig.honest(&key, &agent_id, "svc_vendor").await;
    let (status, body) = rig.call("/vendor/away", &h).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (502, Some("redirect_off_host")),
        "{body}"
    );
    assert!(
        elsewhere.requests().is_empty(),
        "the other host was never called"
    );
    let c = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let mut req = c.get(rig.url("/vendor/home"));
    for (k, v) in &h {
        req = req.header(k, v);
    }
    let r = req.send().await.unwrap();
    assert_eq!(r.status(), 302);
    assert_eq!(
        r.headers()["location"],
        "/vendor/landed?x=1",
        "a redirect inside the base stays on the gateway"
    );
    let (status, body) = rig.call("/vendor/hang", &h).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (504, Some("upstream_timeout")),
        "{body}"
    );
    wait_calls(t, 3).await;
    let mut got: Vec<(Option<i64>, Option<String>)> = t
        .rows("SELECT status, error_type FROM proxy_calls ORDER BY at, error_type")
        .await;
    got.sort();
    assert_eq!(
        got,
        vec![
            (None, Some("timeout".into())),
            (Some(302), None),
            (Some(302), Some("redirect_off_host".into()))
        ]
    );
}
on_both!(redirects_stay_inside_the_upstream_and_a_hang_is_504);

async fn a_service_without_its_credential_answers_503(t: &TestDb) {
    let toml = CATALOG.replace("env = \"VENDOR_KEY\"", "env = \"UNSET_VENDOR_KEY\"");
    let rig = Rig::start(t, &toml, TIMEOUT).await;
    let (key, agent_id) = rig.agent(None).await;
    let h = rig.honest(&key, &agent_id, "svc_vendor").await;
    let (status, body) = rig.call("/vendor/x", &h).await;
    assert_eq!(status, 503);
    assert!(
        body["error"].as_str().unwrap().contains("UNSET_VENDOR_KEY"),
        "{body}"
    );
    assert!(rig.up.requests().is_empty());
    let _: Value = body;
}
on_both!(a_service_without_its_credential_answers_503);
