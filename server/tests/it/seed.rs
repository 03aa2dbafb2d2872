//! The seed READMEs' curl examples, verbatim (only the host changed to a local server),
//! run with the real `curl` against a real server over a socket, on SQLite and PostgreSQL:
//! recording interactions, reading them back by full and short name, node stats, and the
//! universal telemetry contract with a wrapper's name in `source`.

use crate::common;

use std::time::Duration;

use common::TestDb;
use serde_json::Value;

/// The examples as the seeds print them (Spanish and Japanese lowdown-proxy READMEs), in
/// an order that records before it reads.
const SEED_RECORDS: &[&str] = &[
    r#"curl -X POST https://lowdown-proxy.vercel.app/api/interactions \
  -H "Content-Type: application/json" \
  -d '{"actor":"agent:my-bot","target":"mcp:modelcontextprotocol/brave-search","target_type":"tool","task_type":"web_search","outcome":"success"}'"#,
    r#"curl -X POST https://lowdown-proxy.vercel.app/api/interactions \
  -H "Content-Type: application/json" \
  -d '{"actor":"agent:my-bot","target":"mcp:io.github.user/server","target_type":"tool","task_type":"web_search","outcome":"success"}'"#,
];

/// The seed's universal telemetry contract (the Prowl README), sent as curl sends a body.
const SEED_OBSERVATION: &str = r#"curl -X POST https://prowl.world/v1/telemetry/observe \
  -H "Content-Type: application/json" \
  -d '{"host":"api.stripe.com","method":"GET","status":200,"latency_ms":312,"response_bytes":2048,"source":"your-wrapper-name"}'"#;

/// Runs one example against `base`, returning its output parsed as JSON.
fn run(example: &str, base: &str) -> Value {
    let command = example
        .replace("https://lowdown-proxy.vercel.app", base)
        .replace("https://prowl.world", base);
    let out = std::process::Command::new("bash")
        .args([
            "-c",
            &format!("{command} --silent --show-error --max-time 10"),
        ])
        .output()
        .expect("bash and curl");
    assert!(
        out.status.success(),
        "{command}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{command}: not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

async fn the_seeds_curl_examples_run_against_the_server(t: &TestDb) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(lowdown_server::serve(listener, t.state(), async move {
        let _ = stopped.await;
    }));
    let b = base.clone();
    let answers = tokio::task::spawn_blocking(move || {
        let mut answers = Vec::new();
        for example in SEED_RECORDS {
            answers.push(run(example, &b));
        }
        let read = [
            "curl https://lowdown-proxy.vercel.app/api/reputation/brave-search",
            "curl https://lowdown-proxy.vercel.app/api/reputation/brave-search \\\n  -H \"x-lowdown-node-id: ld_your_node_id\"",
            "curl https://lowdown-proxy.vercel.app/api/node/ld_your_node_id",
            "curl https://lowdown-proxy.vercel.app/api/reputation/mcp:io.github.user/server",
            "curl https://lowdown-proxy.vercel.app/api/reputation/mcp:ai.agent-bev/bev-door",
            "curl https://lowdown-proxy.vercel.app/api/reputation/bev-door",
            "curl https://lowdown-proxy.vercel.app/api/reputation/npm:maplith-bridge",
            "curl https://lowdown-proxy.vercel.app/api/reputation/mcp:ai.agent-bev/bev-door \\\n  -H \"x-lowdown-node-id: ld_your_node_id\"",
            SEED_OBSERVATION,
        ];
        for example in read {
            answers.push(run(example, &b));
        }
        answers
    })
    .await
    .unwrap();
    let recorded = serde_json::json!({"ok": true, "accepted": 1, "duplicates": 0, "rejected": [], "rate_limited": []});
    assert_eq!(answers[0], recorded);
    assert_eq!(answers[1], recorded);
    let brave = &answers[2];
    assert_eq!(
        brave["resolved_target"], "mcp:modelcontextprotocol/brave-search",
        "{brave}"
    );
    assert_eq!(brave["interactions"], 1);
    assert_eq!(brave["success_rate"], 1.0);
    assert_eq!(brave["confidence"], "low");
    assert_eq!(answers[3]["resolved_target"], brave["resolved_target"]);
    assert_eq!(answers[4]["status"], "unknown");
    assert_eq!(answers[5]["resolved_target"], "mcp:io.github.user/server");
    assert_eq!(answers[5]["interactions"], 1);
    for unknown in &answers[6..10] {
        assert_eq!(unknown["interactions"], 0, "{unknown}");
        assert_eq!(unknown["resolved_target"], Value::Null, "{unknown}");
        assert!(unknown["source"]["cite"].is_string());
    }
    assert_eq!(
        answers[10],
        serde_json::json!({"ok": true, "weight": 0.1, "service_id": null})
    );
    assert_eq!(t.count("observations").await, 1);
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(20), server)
        .await
        .expect("shutdown in time")
        .unwrap()
        .unwrap();
}
on_both!(the_seeds_curl_examples_run_against_the_server);
