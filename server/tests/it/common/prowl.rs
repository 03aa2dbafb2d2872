//! The sampling gateway under test: a recording upstream on loopback (a stand-in for a
//! vendor API, which lives on the internet), the gateway on a real socket, the API over
//! `oneshot`, and helpers for agents, salts and decisions.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::Response;
use axum::Router;
use futures_util::StreamExt;
use lowdown_server::db::quota::Limits;
use lowdown_server::gateway::{catalog, GatewayConfig, Prowl};
use lowdown_server::AppState;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Notify;

use super::{get, post, TestDb};

/// One request exactly as the upstream received it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub uri: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// A recording HTTP upstream on 127.0.0.1. Paths (after any base): `/sse` streams one
/// event, waits for `release`, then two more; `/upload` reads the body, signalling
/// `first_chunk` after the first piece; `/hang` never answers; `/away` redirects to
/// `away_to`; `/home` redirects inside the base; `/status` answers `status`; anything
/// else answers 200 JSON with a vendor header and a cookie.
#[derive(Clone)]
pub struct Upstream {
    pub addr: SocketAddr,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    pub release: Arc<Notify>,
    pub first_chunk: Arc<Notify>,
    pub status: Arc<AtomicU16>,
    pub away_to: Arc<Mutex<String>>,
}

impl Upstream {
    pub async fn start() -> Upstream {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let up = Upstream {
            addr: listener.local_addr().unwrap(),
            seen: Arc::default(),
            release: Arc::new(Notify::new()),
            first_chunk: Arc::new(Notify::new()),
            status: Arc::new(AtomicU16::new(200)),
            away_to: Arc::new(Mutex::new("http://localhost:9/".into())),
        };
        let me = up.clone();
        let app = Router::new().fallback(move |req: Request| {
            let me = me.clone();
            async move { me.handle(req).await }
        });
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        up
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.addr.port())
    }

    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    async fn handle(&self, req: Request) -> Response {
        let (parts, body) = req.into_parts();
        let mut seen = Seen {
            method: parts.method.to_string(),
            uri: parts.uri.to_string(),
            headers: parts
                .headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("?").to_owned()))
                .collect(),
            body: Vec::new(),
        };
        let path = parts.uri.path().to_owned();
        if path.ends_with("/upload") {
            let mut stream = body.into_data_stream();
            let mut first = true;
            while let Some(Ok(chunk)) = stream.next().await {
                seen.body.extend_from_slice(&chunk);
                if first {
                    first = false;
                    self.first_chunk.notify_one();
                }
            }
        } else {
            seen.body = axum::body::to_bytes(body, 1 << 20)
                .await
                .unwrap_or_default()
                .to_vec();
        }
        self.seen.lock().unwrap().push(seen);
        let reply = |status: u16| Response::builder().status(status);
        if path.ends_with("/sse") {
            let release = self.release.clone();
            let events = futures_util::stream::unfold(0, move |i| {
                let release = release.clone();
                async move {
                    match i {
                        0 => Some((Ok::<_, std::io::Error>(Bytes::from("data: one\n\n")), 1)),
                        1 => {
                            release.notified().await;
                            Some((Ok(Bytes::from("data: two\n\n")), 2))
                        }
                        2 => Some((Ok(Bytes::from("data: three\n\n")), 3)),
                        _ => None,
                    }
                }
            });
            return reply(200)
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(events))
                .unwrap();
        }
        if path.ends_with("/hang") {
            std::future::pending::<()>().await;
        }
        if path.ends_with("/away") {
            let to = self.away_to.lock().unwrap().clone();
            return reply(302)
                .header("location", to)
                .body(Body::empty())
                .unwrap();
        }
        if path.ends_with("/home") {
            return reply(302)
                .header("location", "/base/landed?x=1")
                .body(Body::empty())
                .unwrap();
        }
        if path.ends_with("/status") {
            let s = self.status.load(Ordering::SeqCst);
            return reply(s)
                .header("content-type", "application/json")
                .body(Body::from("{}"))
                .unwrap();
        }
        let n = self.seen.lock().unwrap().last().map_or(0, |s| s.body.len());
        reply(200)
            .header("content-type", "application/json")
            .header("x-vendor", "yes")
            .header("x-ratelimit-remaining", "99")
            .header("set-cookie", "session=vendor-account")
            .body(Body::from(
                json!({"ok": true, "received_bytes": n}).to_string(),
            ))
            .unwrap()
    }
}

/// The gateway and the API over one database, with a catalog pointing at `up`.
pub struct Rig {
    pub state: AppState,
    pub app: Router,
    pub gateway: SocketAddr,
    pub up: Upstream,
}

/// Catalog TOML for the rig: `{UP}` becomes the upstream's base URL.
pub const CATALOG: &str = r#"
[[service]]
slug = "vendor"
service_id = "svc_vendor"
upstream = "{UP}/base"
hosts = ["api.vendor-fixture.com"]
sampling_rate = 1.0
allow = ["GET /", "POST /", "HEAD /"]
credential = { header = "Authorization", env = "VENDOR_KEY", format = "Bearer {}" }

[[service]]
slug = "never"
service_id = "svc_never"
upstream = "{UP}/base"
hosts = ["api.never.example"]
sampling_rate = 0.0
allow = ["GET /"]
"#;

/// The secret the rig's environment holds for `VENDOR_KEY`.
pub const VENDOR_SECRET: &str = "sk_live_vendor_secret_CANARY";

impl Rig {
    pub async fn start(t: &TestDb, toml: &str, timeout: Duration) -> Rig {
        Rig::start_with(t, toml, timeout, Limits::default()).await
    }

    /// The rig with these quotas.
    pub async fn start_with(t: &TestDb, toml: &str, timeout: Duration, limits: Limits) -> Rig {
        let up = Upstream::start().await;
        let text = toml.replace("{UP}", &up.base());
        let services = catalog::parse(&text, "services.toml", true).expect("test catalog");
        let loaded = lowdown_server::clock::now_ms();
        lowdown_server::db::catalog::upsert(&t.db, catalog::telemetry_services(&services), loaded)
            .await
            .unwrap();
        let config = GatewayConfig {
            timeout,
            allow_loopback: true,
        };
        let prowl = Prowl::new(services, config, |k| {
            (k == "VENDOR_KEY").then(|| VENDOR_SECRET.to_owned())
        });
        let state = AppState::new(t.db.clone(), "lowdown-test")
            .with_prowl(prowl)
            .with_limits(limits);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let gateway = listener.local_addr().unwrap();
        let s = state.clone();
        tokio::spawn(async move {
            lowdown_server::gateway::cli::serve_gateway(listener, s, std::future::pending())
                .await
                .unwrap()
        });
        Rig {
            app: lowdown_server::app(state.clone()),
            state,
            gateway,
            up,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.gateway)
    }

    /// Registers an agent (with `public_key` when given): `(agent_key, agent_id)`.
    pub async fn agent(&self, public_key: Option<&str>) -> (String, String) {
        let mut body = json!({"name": "bot", "model_provider": "acme", "model_id": "m-1", "environment": "test"});
        if let Some(k) = public_key {
            body["public_key"] = json!(k);
        }
        let r = post(&self.app, "/v1/auth/agents/register", &body).await;
        assert_eq!(r.status, 201, "{}", r.text);
        (
            r.json["agent_key"].as_str().unwrap().to_owned(),
            r.json["agent_id"].as_str().unwrap().to_owned(),
        )
    }

    /// The current salt as an agent gets it: `(salt_id, salt)`.
    pub async fn salt(&self, key: &str) -> (String, String) {
        let r = super::get_as(&self.app, "/v1/sampling/salt", &[("x-agent-key", key)]).await;
        assert_eq!(r.status, 200, "{}", r.text);
        (
            r.json["salt_id"].as_str().unwrap().to_owned(),
            r.json["salt"].as_str().unwrap().to_owned(),
        )
    }

    /// The headers of an honest sampled call for `service_id` (rate 1.0).
    pub async fn honest(
        &self,
        key: &str,
        agent_id: &str,
        service_id: &str,
    ) -> Vec<(String, String)> {
        let (salt_id, salt) = self.salt(key).await;
        let d = lowdown_core::sample::decide(service_id, agent_id, &salt_id, &salt, 1.0);
        vec![
            ("x-agent-key".into(), key.into()),
            ("x-prowl-salt-id".into(), salt_id),
            ("x-prowl-sample-decision".into(), d.roll),
        ]
    }

    /// GET through the gateway with `headers`: `(status, body as JSON or text)`.
    pub async fn call(&self, path: &str, headers: &[(String, String)]) -> (u16, Value) {
        let c = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let mut req = c.get(self.url(path));
        for (k, v) in headers {
            req = req.header(k, v);
        }
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        let text = r.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    pub async fn service(&self, slug: &str) -> Value {
        let r = get(&self.app, &format!("/v1/services/{slug}")).await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.json
    }
}

/// Waits (bounded) until `n` ProxyCalls are stored: they are written as responses end.
pub async fn wait_calls(t: &TestDb, n: i64) {
    for _ in 0..1000 {
        if t.count("proxy_calls").await >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!(
        "{n} ProxyCalls were never stored (have {})",
        t.count("proxy_calls").await
    );
}

/// Sends `raw` bytes to `addr` and reads the whole answer (the request asks to close).
pub async fn raw_http(addr: SocketAddr, raw: &str) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(raw.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), s.read_to_end(&mut out))
        .await
        .expect("answer within 20 s")
        .unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

/// Panics naming the place when `canary` is anywhere in the database: every text value of
/// every table, and for SQLite the file and its write-ahead log byte for byte.
pub async fn assert_nowhere_in_db(t: &TestDb, canary: &str) {
    use sqlx::Row;
    let sqlite = t.url.starts_with("sqlite:");
    let list = if sqlite {
        "SELECT name FROM sqlite_master WHERE type = 'table'"
    } else {
        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema()"
    };
    let tables: Vec<String> = sqlx::query(list)
        .fetch_all(&t.check.pool)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get::<String, _>(0))
        // sqlx's own bookkeeping: migration names and checksums, with types Any cannot read.
        .filter(|t| !t.starts_with("_sqlx"))
        .collect();
    assert!(tables.iter().any(|t| t == "proxy_calls"), "{tables:?}");
    for table in tables {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT * FROM {table}")))
            .fetch_all(&t.check.pool)
            .await
            .unwrap();
        for r in rows {
            for i in 0..r.len() {
                if let Ok(Some(v)) = r.try_get::<Option<String>, _>(i) {
                    assert!(!v.contains(canary), "{canary} stored in {table}");
                }
            }
        }
    }
    if sqlite {
        let path = t
            .url
            .trim_start_matches("sqlite://")
            .split('?')
            .next()
            .unwrap()
            .to_owned();
        for f in [path.clone(), format!("{path}-wal")] {
            if let Ok(bytes) = std::fs::read(&f) {
                assert!(
                    !bytes.windows(canary.len()).any(|w| w == canary.as_bytes()),
                    "{canary} in {f}"
                );
            }
        }
    }
}
