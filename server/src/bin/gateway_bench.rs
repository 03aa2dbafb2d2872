//! `lowdown-gateway-bench`: the latency the sampling gateway adds over calling the
//! upstream directly (p50, p99) and the throughput of both, side by side in one run.
//!
//! `lowdown-gateway-bench [--requests 3000] [--concurrency 8] [--seconds 5] [--db URL]`
//!
//! A local upstream (HTTP on loopback, answering a 1 KiB JSON body) runs on its own
//! runtime thread, the gateway on another, the load generator on a third. Latency is
//! measured sequentially with direct and gateway requests interleaved (so both see the
//! same machine load), to the end of the body, over kept-alive connections. Throughput is
//! `--concurrency` clients for `--seconds` against each in turn. Every gateway call is a
//! real one: key lookup, decision check, credential injection, streaming, and a ProxyCall
//! stored in the database (SQLite in a temporary directory unless `--db` names one).

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::Context;
use lowdown_server::db::agents::{register, NewAgent};
use lowdown_server::db::gateway::salts;
use lowdown_server::db::Db;
use lowdown_server::gateway::{catalog, GatewayConfig, Prowl};
use lowdown_server::AppState;

fn arg(args: &[String], name: &str, default: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| default.to_owned())
}

/// Runs `make` on a fresh runtime of `threads` workers in its own thread; returns the
/// address it serves.
fn spawn_runtime<F, Fut>(threads: usize, make: F) -> SocketAddr
where
    F: FnOnce(tokio::net::TcpListener) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + 'static,
{
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(l.local_addr().unwrap()).unwrap();
            make(l).await;
        });
    });
    rx.recv().expect("server thread started")
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank - 1]
}

async fn one(
    c: &reqwest::Client,
    url: &str,
    headers: &reqwest::header::HeaderMap,
) -> anyhow::Result<f64> {
    let t = Instant::now();
    let r = c.get(url).headers(headers.clone()).send().await?;
    anyhow::ensure!(r.status() == 200, "{url}: {}", r.status());
    r.bytes().await?;
    Ok(t.elapsed().as_secs_f64() * 1000.0)
}

async fn throughput(
    url: String,
    headers: reqwest::header::HeaderMap,
    clients: usize,
    secs: u64,
) -> anyhow::Result<(f64, u64)> {
    let until = Instant::now() + Duration::from_secs(secs);
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (url, headers) = (url.clone(), headers.clone());
        tasks.push(tokio::spawn(async move {
            let c = reqwest::Client::new();
            let mut n = 0u64;
            while Instant::now() < until {
                one(&c, &url, &headers).await?;
                n += 1;
            }
            Ok::<_, anyhow::Error>(n)
        }));
    }
    let started = Instant::now();
    let mut total = 0;
    for t in tasks {
        total += t.await??;
    }
    Ok((total as f64 / started.elapsed().as_secs_f64(), total))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let requests: usize = arg(&args, "--requests", "3000").parse()?;
    let clients: usize = arg(&args, "--concurrency", "8").parse()?;
    let secs: u64 = arg(&args, "--seconds", "5").parse()?;
    let dir = std::env::temp_dir().join(format!("lowdown-gateway-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let url = arg(
        &args,
        "--db",
        &lowdown_server::config::sqlite_url(&dir.join("bench.db")),
    );

    let body = format!("{{\"ok\":true,\"pad\":\"{}\"}}", "x".repeat(1000));
    let upstream = spawn_runtime(1, move |l| async move {
        let app = axum::Router::new().fallback(move || {
            let body = body.clone();
            async move { ([("content-type", "application/json")], body) }
        });
        axum::serve(l, app).await.unwrap();
    });
    let toml = format!(
        "[[service]]\nslug = \"bench\"\nservice_id = \"svc_bench\"\nupstream = \"http://{upstream}\"\nhosts = [\"api.bench.example\"]\nsampling_rate = 1.0\nallow = [\"GET /\", \"POST /\"]\ncredential = {{ header = \"Authorization\", env = \"BENCH_KEY\", format = \"Bearer {{}}\" }}\n"
    );
    let services = catalog::parse(&toml, "bench", true).map_err(anyhow::Error::msg)?;
    let db = Db::open(&url, 8).await.context("open the database")?;
    let agent = register(
        &db,
        NewAgent {
            name: "bench".into(),
            model_provider: "bench".into(),
            model_id: "bench".into(),
            environment: "bench".into(),
            public_key: None,
        },
        lowdown_server::clock::now_ms(),
        None,
    )
    .await?;
    let prowl = Prowl::new(
        services,
        GatewayConfig {
            timeout: Duration::from_secs(30),
            allow_loopback: true,
        },
        |_| Some("sk_bench".into()),
    );
    let now = lowdown_server::clock::now_ms();
    let salt_id = lowdown_core::sample::salt_id(lowdown_core::sample::salt_epoch(now));
    let salt = salts::get_or_create(&db, &salt_id, now).await?;
    let roll =
        lowdown_core::sample::decide("svc_bench", &agent.agent_id, &salt_id, &salt, 1.0).roll;
    // The gateway-call quotas are taken on every call, as for any agent, but set high enough
    // that the bench's thousands of calls from one agent are never refused.
    let limits = lowdown_server::db::quota::Limits {
        gateway_calls_per_agent: u32::MAX,
        gateway_calls_per_network: u32::MAX,
        ..Default::default()
    };
    let state = AppState::new(db.clone(), "bench")
        .with_prowl(prowl)
        .with_limits(limits);
    let flusher = state.clone();
    let gateway = spawn_runtime(2, move |l| async move {
        lowdown_server::gateway::cli::serve_gateway(l, state, std::future::pending())
            .await
            .unwrap();
    });

    let direct_url = format!("http://{upstream}/v1/items");
    let gateway_url = format!("http://{gateway}/bench/v1/items");
    let none = reqwest::header::HeaderMap::new();
    let mut sampled = reqwest::header::HeaderMap::new();
    sampled.insert("x-agent-key", agent.agent_key.parse()?);
    sampled.insert("x-prowl-salt-id", salt_id.parse()?);
    sampled.insert("x-prowl-sample-decision", roll.parse()?);
    let (cd, cg) = (reqwest::Client::new(), reqwest::Client::new());
    for _ in 0..200 {
        one(&cd, &direct_url, &none).await?;
        one(&cg, &gateway_url, &sampled).await?;
    }
    let (mut d, mut g) = (Vec::with_capacity(requests), Vec::with_capacity(requests));
    for _ in 0..requests {
        d.push(one(&cd, &direct_url, &none).await?);
        g.push(one(&cg, &gateway_url, &sampled).await?);
    }
    d.sort_by(f64::total_cmp);
    g.sort_by(f64::total_cmp);
    let (direct_rps, _) = throughput(direct_url, none, clients, secs).await?;
    let (gateway_rps, gateway_n) = throughput(gateway_url, sampled, clients, secs).await?;
    flusher.prowl.recorder.flush().await;
    let through = 200 + requests as u64 + gateway_n;
    let stored: i64 = sqlx::Row::try_get(
        &sqlx::query("SELECT COUNT(*) FROM proxy_calls")
            .fetch_one(&db.pool)
            .await?,
        0,
    )?;

    let backend = format!("{:?}", db.backend).to_lowercase();
    let report = format!(
        "gateway bench ({backend}, {requests} sequential requests each, {clients} clients x {secs} s, 1 KiB answers)\n\
         | | p50 ms | p99 ms | req/s ({clients} clients) |\n|---|---|---|---|\n\
         | direct to upstream | {:.3} | {:.3} | {:.0} |\n| through the gateway | {:.3} | {:.3} | {:.0} |\n\
         | added by the gateway | {:.3} | {:.3} | |\n\
         ProxyCalls stored: {stored} of {through} calls through the gateway\n",
        pct(&d, 50.0), pct(&d, 99.0), direct_rps, pct(&g, 50.0), pct(&g, 99.0), gateway_rps,
        pct(&g, 50.0) - pct(&d, 50.0), pct(&g, 99.0) - pct(&d, 99.0),
    );
    print!("{report}");
    let _ = std::fs::create_dir_all("target");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open("target/bench-gateway.txt")
    {
        use std::io::Write;
        let _ = writeln!(
            f,
            "{}\n{report}",
            lowdown_server::clock::iso(lowdown_server::clock::now_ms())
        );
    }
    db.close().await;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
