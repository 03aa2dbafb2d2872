//! `ingest`: records/s and CPU per record through `POST /api/interactions`, beside two
//! baselines measured in the same run:
//!
//! - `http_validate`: the same requests to a server that reads, parses and validates
//!   them exactly as the real route does but stores nothing (what HTTP, JSON and the
//!   core's checks cost);
//! - `store_only`: the same records, already validated, stored through the storage layer
//!   by as many concurrent writers as there are clients, without HTTP (what storage costs).
//!
//! `http_store`'s `seconds` and `records_per_sec` run until a reputation answer counts every
//! record (the answer waits for the roll-ups, as every answer does); `acked_*` until the last
//! request was acknowledged, and `rolled_after_ack_ms` is the gap, the backlog of rows not yet
//! rolled up when ingest ended.
//!
//! The server runs in a child process (this binary, `serve`), so its CPU time is read
//! from `/proc` apart from the load generator's. On PostgreSQL the database's own CPU
//! (the backends serving this database) is reported too.

use std::collections::HashMap;
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use lowdown_core::record::validate::{check_records, validate_records, Rejection};
use lowdown_core::record::InteractionRecord;
use lowdown_core::telemetry::unlisted_target;
use lowdown_server::db::{ingest, Db};
use lowdown_server::error::AppError;
use lowdown_server::extract::JsonBody;
use lowdown_server::{clock, AppState};
use serde_json::{json, Value};
use sqlx::{Connection, Row};

use crate::records::{body, Spread};
use crate::scratch::Scratch;

/// The load: `records` records in batches of `batch` from `clients` concurrent clients.
pub struct Load {
    pub records: u64,
    pub batch: u64,
    pub clients: usize,
    /// Clients reading answers meanwhile (storing server only).
    pub readers: usize,
}

/// CPU time (user + system, every thread) of process `pid` (`self` for this one).
fn cpu(pid: &str) -> anyhow::Result<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command name (which may hold spaces): state is field 3, utime 14,
    // stime 15, in clock ticks of 1/100 s (USER_HZ, fixed at 100 in Linux's ABI).
    let rest = stat.rsplit_once(')').context("/proc stat")?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f[11].parse::<u64>()? + f[12].parse::<u64>()?;
    Ok(Duration::from_millis(ticks * 10))
}

/// CPU time of the PostgreSQL backends connected to the database `conn` is on (except
/// `conn`'s own), by process id.
async fn pg_backends(conn: &mut sqlx::AnyConnection) -> anyhow::Result<HashMap<i64, Duration>> {
    let rows = sqlx::query(
        "SELECT CAST(pid AS BIGINT) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    .fetch_all(conn)
    .await?;
    let mut out = HashMap::new();
    for row in rows {
        let pid: i64 = row.try_get(0)?;
        if let Ok(t) = cpu(&pid.to_string()) {
            out.insert(pid, t);
        }
    }
    Ok(out)
}

/// What one measurement saw.
struct Seen {
    records: u64,
    /// Until the work was done: for a storing server over HTTP, until an answer counted
    /// every record (rolled up, not only acknowledged).
    seconds: f64,
    /// Until the last request was acknowledged (a storing server over HTTP).
    acked_seconds: Option<f64>,
    /// CPU of the process doing the work (the server, or this one for `store_only`).
    cpu: Duration,
    /// CPU of the load generator (this process), when separate.
    client_cpu: Option<Duration>,
    /// CPU of the PostgreSQL backends, when on PostgreSQL.
    db_cpu: Option<Duration>,
    /// Latencies of the answers read during the ingest, sorted.
    answers: Vec<Duration>,
}

fn report(what: &str, backend: &str, load: &Load, s: &Seen) {
    let per = |d: Duration| d.as_secs_f64() * 1e6 / s.records as f64;
    let mut line = format!(
        "ingest what={what} backend={backend} records={} batch={} clients={} seconds={:.2} records_per_sec={:.0} cpu_us_per_record={:.1} cores={:.2}",
        s.records,
        load.batch,
        load.clients,
        s.seconds,
        s.records as f64 / s.seconds,
        per(s.cpu),
        s.cpu.as_secs_f64() / s.seconds,
    );
    if let Some(acked) = s.acked_seconds {
        line.push_str(&format!(
            " acked_seconds={acked:.2} acked_records_per_sec={:.0} rolled_after_ack_ms={:.0}",
            s.records as f64 / acked,
            (s.seconds - acked) * 1e3
        ));
    }
    if let Some(c) = s.client_cpu {
        line.push_str(&format!(" client_cpu_us_per_record={:.1}", per(c)));
    }
    if let Some(c) = s.db_cpu {
        line.push_str(&format!(
            " db_cpu_us_per_record={:.1} db_cores={:.2}",
            per(c),
            c.as_secs_f64() / s.seconds
        ));
    }
    if !s.answers.is_empty() {
        let at = |q: f64| s.answers[((s.answers.len() - 1) as f64 * q).round() as usize];
        line.push_str(&format!(
            " readers={} answers={} answer_p50_ms={:.3} answer_p99_ms={:.3}",
            load.readers,
            s.answers.len(),
            at(0.5).as_secs_f64() * 1e3,
            at(0.99).as_secs_f64() * 1e3
        ));
    }
    println!("{line}");
}

/// Runs the three measurements for `url`'s engine.
pub async fn run(url: &str, load: &Load) -> anyhow::Result<()> {
    let batches = load.records / load.batch;
    // Bodies are built before any clock starts: the numbers are the server's, not serde's.
    let bodies: Arc<Vec<String>> = Arc::new(
        (0..batches)
            .map(|b| body(b, load.batch, "ingest", Spread::Even).to_string())
            .collect(),
    );
    let backend = if url.starts_with("postgres") {
        "postgres"
    } else {
        "sqlite"
    };

    let server = Server::start("-", "validate")?;
    let seen = over_http(&server, &bodies, load, None, false).await?;
    server.stop()?;
    report("http_validate", "-", load, &seen);

    let scratch = Scratch::create(url).await?;
    Db::open(&scratch.url, 1).await?.close().await;
    let server = Server::start(&scratch.url, "store")?;
    let mut admin = match backend {
        "postgres" => Some(sqlx::AnyConnection::connect(&scratch.url).await?),
        _ => None,
    };
    let mut seen = over_http(&server, &bodies, load, admin.as_mut(), true).await?;
    server.stop()?;
    seen.records = stored(&scratch.url).await?;
    if let Some(c) = admin {
        c.close().await?;
    }
    scratch.delete().await?;
    report("http_store", backend, load, &seen);

    let scratch = Scratch::create(url).await?;
    let seen = store_only(&scratch.url, &bodies, load).await?;
    scratch.delete().await?;
    report("store_only", backend, load, &seen);
    Ok(())
}

async fn stored(url: &str) -> anyhow::Result<u64> {
    let mut conn = sqlx::AnyConnection::connect(url).await?;
    let n: i64 = sqlx::query("SELECT COUNT(*) FROM interactions")
        .fetch_one(&mut conn)
        .await?
        .try_get(0)?;
    conn.close().await?;
    Ok(u64::try_from(n)?)
}

/// The server child process.
struct Server {
    child: Child,
    base: String,
}

impl Server {
    fn start(db: &str, mode: &str) -> anyhow::Result<Server> {
        let mut child = Command::new(std::env::current_exe()?)
            .args(["serve", "--db", db, "--mode", mode])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().context("child stdout")?)
            .read_line(&mut line)?;
        if !line.starts_with("http://") {
            bail!("the server child did not start: {line:?}");
        }
        Ok(Server {
            base: line.trim().to_owned(),
            child,
        })
    }

    fn pid(&self) -> String {
        self.child.id().to_string()
    }

    /// Closes its stdin (it then shuts down gracefully) and waits for it.
    fn stop(mut self) -> anyhow::Result<()> {
        drop(self.child.stdin.take());
        let status = self.child.wait()?;
        if !status.success() {
            bail!("the server child exited with {status}");
        }
        Ok(())
    }
}

async fn over_http(
    server: &Server,
    bodies: &Arc<Vec<String>>,
    load: &Load,
    mut pg: Option<&mut sqlx::AnyConnection>,
    stores: bool,
) -> anyhow::Result<Seen> {
    let client = reqwest::Client::new();
    // One client per network the load comes from (records::batch_addr), so the server
    // sees each batch from its node's network, as an honest busy network's arrive.
    let from: Arc<Vec<reqwest::Client>> = Arc::new(
        (0..crate::records::NETWORKS)
            .map(|n| {
                reqwest::Client::builder()
                    .local_address(crate::records::network_addr(n))
                    .build()
            })
            .collect::<Result<_, _>>()?,
    );
    let url = format!("{}/api/interactions", server.base);
    let next = Arc::new(AtomicUsize::new(0));
    let pg_before = match pg.as_deref_mut() {
        Some(c) => Some(pg_backends(c).await?),
        None => None,
    };
    // The answer readers ask for, and the one that ends a storing server's run.
    let first: Value = serde_json::from_str(&bodies[0])?;
    let target = first[0]["target"].as_str().context("bench target")?;
    let answer = format!("{}/api/reputation/{target}", server.base);
    let (server_before, self_before) = (cpu(&server.pid())?, cpu("self")?);
    let start = Instant::now();
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut readers = vec![];
    if stores {
        for _ in 0..load.readers {
            let (client, answer, done) = (client.clone(), answer.clone(), done.clone());
            readers.push(tokio::spawn(async move {
                let mut seen = vec![];
                while !done.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    let r = client.get(&answer).send().await?;
                    if !r.status().is_success() {
                        bail!("an answer during ingest was {}", r.status());
                    }
                    r.bytes().await?;
                    seen.push(t.elapsed());
                }
                Ok(seen)
            }));
        }
    }
    let mut tasks = vec![];
    for _ in 0..load.clients {
        let (from, bodies, next, url) = (from.clone(), bodies.clone(), next.clone(), url.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let b = next.fetch_add(1, Ordering::Relaxed);
                let Some(body) = bodies.get(b) else {
                    break;
                };
                let client = &from[crate::records::batch_network(b as u64) as usize];
                let r = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(body.clone())
                    .send()
                    .await?;
                if r.status() != 201 {
                    bail!("ingest answered {}", r.status());
                }
                // Every record taken: the quotas never throttle this load.
                if !all_taken(r).await? {
                    bail!("ingest refused records over a quota");
                }
            }
            Ok(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    let acked_seconds = start.elapsed().as_secs_f64();
    done.store(true, Ordering::Relaxed);
    let mut answers = vec![];
    for r in readers {
        answers.extend(r.await??);
    }
    answers.sort();
    // A storing server: until an answer counts every record (SQLite rolls up behind the
    // raw rows, and an answer waits for what is left), so a backlog the roller leaves
    // behind is in `seconds`.
    if stores {
        let r = client.get(&answer).send().await?;
        if !r.status().is_success() {
            bail!("the answer after ingest was {}", r.status());
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let (server_after, self_after) = (cpu(&server.pid())?, cpu("self")?);
    let db_cpu = match (pg, pg_before) {
        (Some(c), Some(before)) => Some(
            pg_backends(c)
                .await?
                .into_iter()
                .map(|(pid, t)| t.saturating_sub(before.get(&pid).copied().unwrap_or_default()))
                .sum(),
        ),
        _ => None,
    };
    Ok(Seen {
        records: bodies.len() as u64 * load.batch,
        seconds,
        acked_seconds: stores.then_some(acked_seconds),
        cpu: server_after - server_before,
        client_cpu: Some(self_after - self_before),
        db_cpu,
        answers,
    })
}

/// Whether an ingest answer took every record (a validating server answers no
/// `rate_limited`).
async fn all_taken(r: reqwest::Response) -> anyhow::Result<bool> {
    let v: Value = r.json().await?;
    Ok(v["rate_limited"].as_array().is_none_or(Vec::is_empty))
}

/// The records, validated before the clock starts, stored by `clients` concurrent writers
/// through [`ingest::store_interactions`] (group commit included), in this process.
async fn store_only(url: &str, bodies: &[String], load: &Load) -> anyhow::Result<Seen> {
    let db = Db::open(url, 16).await?;
    let mut batches = Vec::with_capacity(bodies.len());
    for (b, text) in bodies.iter().enumerate() {
        let v: Value = serde_json::from_str(text)?;
        let records = validate_records(&v).map_err(|e| anyhow::anyhow!("{e}"))?;
        let from = crate::records::sender(&db, b as u64, &records);
        batches.push((records, from));
    }
    type Batch = (Vec<InteractionRecord>, ingest::Sender);
    let queue: Arc<Mutex<Vec<Batch>>> = Arc::new(Mutex::new(batches));
    let now = clock::now_ms();
    let before = cpu("self")?;
    let start = Instant::now();
    let mut tasks = vec![];
    for _ in 0..load.clients {
        let (db, queue) = (db.clone(), queue.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let Some((batch, from)) = queue.lock().unwrap_or_else(|p| p.into_inner()).pop()
                else {
                    return Ok::<_, anyhow::Error>(());
                };
                ingest::store_interactions(&db, batch, from, now)
                    .await
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
            }
        }));
    }
    for t in tasks {
        t.await??;
    }
    db.settle().await.map_err(|e| anyhow::anyhow!("{e}"))?;
    let seconds = start.elapsed().as_secs_f64();
    let cpu = cpu("self")? - before;
    db.close().await;
    Ok(Seen {
        records: stored(url).await?,
        seconds,
        acked_seconds: None,
        cpu,
        client_cpu: None,
        db_cpu: None,
        answers: vec![],
    })
}

/// `serve`: the server `ingest` measures, in this process until stdin closes. `store` is
/// the real app over `url`; `validate` answers `POST /api/interactions` exactly as the
/// real route does, without storing.
pub async fn serve_child(url: &str, mode: &str) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let (closed, stdin_closed) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        let _ = closed.send(());
    });
    let shutdown = async move {
        let _ = stdin_closed.await;
    };
    match mode {
        "store" => {
            let db = Db::open(url, 16).await?;
            println!("http://{addr}");
            lowdown_server::serve(listener, AppState::new(db, "bench"), shutdown).await?;
        }
        "validate" => {
            let app = axum::Router::new()
                .route("/api/interactions", axum::routing::post(validate_only))
                .layer(tower_http::cors::CorsLayer::permissive())
                .with_state(false);
            println!("http://{addr}");
            axum::serve(listener, app)
                .with_graceful_shutdown(shutdown)
                .await?;
        }
        _ => bail!("--mode must be store or validate"),
    }
    Ok(())
}

/// The real route's work (`routes/interactions.rs`) up to the store, and its answer.
async fn validate_only(
    State(allow_private): State<bool>,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let checked = check_records(&body).map_err(|e| AppError::bad_request(e.to_string()))?;
    let mut valid = Vec::with_capacity(checked.items.len());
    let mut rejected = Vec::new();
    for (index, item) in checked.items.into_iter().enumerate() {
        match item {
            Ok(record) => match unlisted_target(&record.target, allow_private) {
                None => valid.push(record),
                Some(_) => rejected.push(Rejection {
                    index,
                    error: "target: private host".to_owned(),
                }),
            },
            Err(e) => rejected.push(Rejection::new(index, "record", &e)),
        }
    }
    Ok((
        StatusCode::CREATED,
        Json(json!({"ok": true, "accepted": valid.len(), "duplicates": 0, "rejected": rejected})),
    ))
}
