//! Several instances, one PostgreSQL (issue 24): two real `lowdown-server` processes on one
//! real database answer as one. Ingest through both with one killed (SIGKILL) and
//! restarted mid-way counts every acknowledged record once; both started with `--scan-at`
//! the same minute run one scan and observe every remote once; a scan whose server is
//! killed mid-run is taken over and finished without probing a remote twice; anonymous
//! quotas are reached through either; salts and leases agree.
//!
//! PostgreSQL only: several servers on one SQLite file is not a deployment (SQLite is one
//! machine's store). Without `LOWDOWN_TEST_DATABASE_URL` these tests print a notice and
//! return, except under `CI=true`, where they fail (`common::pg_url`). Time is moved with
//! the binary's test-only clock offset (`LOWDOWN_UNSAFE_TEST_CLOCK_OFFSET_MS`), never slept.

use crate::common;
use crate::scanner_fixtures;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{free_port, Kind, TestDb};
use lowdown_server::db::lease::{self, SCAN_LEASE};
use scanner_fixtures::mcp::Mcp;
use scanner_fixtures::registry::{streamable, Registry};
use serde_json::{json, Value};

/// One `lowdown-server serve` process on the test database, its stderr kept in a file.
struct Instance {
    child: Child,
    addr: SocketAddr,
    home: PathBuf,
    log: PathBuf,
}

/// How an instance is started: its clock offset and extra flags and environment.
#[derive(Clone, Default)]
struct Setup {
    offset_ms: i64,
    flags: Vec<String>,
    env: Vec<(String, String)>,
}

impl Instance {
    /// Starts `name` on `db` (on `addr`, or a free port) and waits until `/healthz` answers.
    async fn start(name: &str, db: &str, addr: Option<SocketAddr>, setup: &Setup) -> Instance {
        let addr = addr.unwrap_or_else(|| format!("127.0.0.1:{}", free_port()).parse().unwrap());
        let mut suffix = [0u8; 4];
        getrandom::fill(&mut suffix).unwrap();
        let home = std::env::temp_dir().join(format!(
            "lowdown-instance-{name}-{}-{}",
            std::process::id(),
            hex::encode(suffix)
        ));
        std::fs::create_dir_all(&home).unwrap();
        let log = home.join("stderr.log");
        let child = Command::new(env!("CARGO_BIN_EXE_lowdown-server"))
            .args(["serve", "--listen", &addr.to_string(), "--db", db])
            .args(&setup.flags)
            .env("LOWDOWN_HOME", &home)
            .env("RUST_LOG", "lowdown_server=info")
            .env(
                lowdown_server::clock::TEST_OFFSET_ENV,
                setup.offset_ms.to_string(),
            )
            .envs(setup.env.iter().map(|(k, v)| (k, v)))
            .env_remove("DATABASE_URL")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut instance = Instance {
            child,
            addr,
            home,
            log,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if reqwest::get(instance.url("/healthz"))
                .await
                .is_ok_and(|r| r.status() == 200)
            {
                return instance;
            }
            if let Ok(Some(status)) = instance.child.try_wait() {
                panic!("{name} exited ({status}): {}", instance.stderr());
            }
            assert!(
                Instant::now() < deadline,
                "{name} did not start: {}",
                instance.stderr()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL: no shutdown, no flush, no lease given back.
    fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.home);
    }
}

/// Waits (at most `secs`) until `ready` holds, saying `what` when it never does.
async fn until<F, Fut>(secs: u64, what: &str, mut ready: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !ready().await {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// An answer without what differs by the second it was asked (`source.retrieved_at`).
fn settled(mut v: Value) -> Value {
    if let Some(source) = v.get_mut("source").and_then(Value::as_object_mut) {
        source.remove("retrieved_at");
        source.remove("cite");
    }
    v
}

async fn get_json(url: &str) -> Value {
    let r = reqwest::get(url).await.unwrap();
    assert_eq!(r.status(), 200, "{url}");
    r.json().await.unwrap()
}

fn batch(i: usize, per: usize) -> Value {
    Value::Array(
        (0..per)
            .map(|j| {
                let mut r = common::record("npm:lowdown-multi", "success");
                r["record_id"] = json!(format!("multi-{i}-{j}"));
                r
            })
            .collect(),
    )
}

/// Ingest through two instances while one is SIGKILLed and restarted on the same port:
/// a client sends each batch until an instance acknowledges it (trying the other one when
/// its connection fails, as a load balancer would), and every record is counted exactly
/// once, in the same answer from both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingest_through_two_instances_with_one_killed_counts_every_record_once() {
    let Some(t) = TestDb::new(Kind::Postgres).await else {
        return;
    };
    let setup = Setup::default();
    let mut a = Instance::start("ingest-a", &t.url, None, &setup).await;
    let b = Instance::start("ingest-b", &t.url, None, &setup).await;
    const SENDERS: usize = 4;
    const BATCHES: usize = 64;
    const PER: usize = 500;
    let urls = [a.url("/api/interactions"), b.url("/api/interactions")];
    let acked = Arc::new(AtomicUsize::new(0));
    let (refused, cut) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    // Records acknowledged as new, and as already stored.
    let (accepted, duplicates) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let senders: Vec<_> = (0..SENDERS)
        .map(|k| {
            let (urls, acked) = (urls.clone(), acked.clone());
            let (refused, cut) = (refused.clone(), cut.clone());
            let (accepted, duplicates) = (accepted.clone(), duplicates.clone());
            tokio::spawn(async move {
                let client = reqwest::Client::builder()
                    .timeout(Duration::from_secs(20))
                    .build()
                    .unwrap();
                for i in (k..BATCHES).step_by(SENDERS) {
                    let body = batch(i, PER);
                    let mut to = (i / SENDERS) % 2;
                    loop {
                        match client.post(&urls[to]).json(&body).send().await {
                            Ok(r) if r.status() == 201 => {
                                let v: Value = r.json().await.unwrap();
                                let (n, d) = (
                                    v["accepted"].as_u64().unwrap() as usize,
                                    v["duplicates"].as_u64().unwrap() as usize,
                                );
                                // `accepted` counts every record taken, duplicates included.
                                assert_eq!(n, PER, "every record acknowledged: {v}");
                                accepted.fetch_add(n - d, Ordering::SeqCst);
                                duplicates.fetch_add(d, Ordering::SeqCst);
                                acked.fetch_add(PER, Ordering::SeqCst);
                                break;
                            }
                            Ok(r) => {
                                panic!("batch {i}: {} {}", r.status(), r.text().await.unwrap())
                            }
                            Err(e) => {
                                // The instance died under it (or before it): the same batch
                                // goes to the other.
                                match e.is_connect() {
                                    true => refused.fetch_add(1, Ordering::SeqCst),
                                    false => cut.fetch_add(1, Ordering::SeqCst),
                                };
                                to = 1 - to;
                                tokio::time::sleep(Duration::from_millis(20)).await;
                            }
                        }
                    }
                }
            })
        })
        .collect();
    until(120, "a third of the records acknowledged", || {
        let acked = acked.clone();
        async move { acked.load(Ordering::SeqCst) >= BATCHES * PER / 3 }
    })
    .await;
    let addr = a.addr;
    a.kill();
    let a = Instance::start("ingest-a2", &t.url, Some(addr), &setup).await;
    for s in senders {
        s.await.unwrap();
    }
    let total = BATCHES * PER;
    eprintln!(
        "ingest with a kill: {total} records; sent again: {} requests cut off in flight, {} \
         refused while the instance was down; {} records acknowledged as duplicates (committed \
         by the killed instance before it answered)",
        cut.load(Ordering::SeqCst),
        refused.load(Ordering::SeqCst),
        duplicates.load(Ordering::SeqCst)
    );
    assert_eq!(acked.load(Ordering::SeqCst), total);
    assert!(
        cut.load(Ordering::SeqCst) + refused.load(Ordering::SeqCst) > 0,
        "the kill cost some request its answer (else this test tested nothing)"
    );
    // Each record acknowledged as new once at most (a batch the killed instance committed
    // before it could answer comes back as duplicates when sent again).
    assert!(accepted.load(Ordering::SeqCst) <= total);
    // What a client whose answer was lost does: send again. Through either instance, the
    // records come back as duplicates and nothing is counted twice.
    for i in [&a, &b] {
        let (s, v, _) = post(&i.url("/api/interactions"), &batch(0, PER), None).await;
        assert_eq!(
            (s, &v["accepted"], &v["duplicates"]),
            (201, &json!(PER), &json!(PER)),
            "{v}"
        );
    }
    let from_a = get_json(&a.url("/api/reputation/npm:lowdown-multi")).await;
    let from_b = get_json(&b.url("/api/reputation/npm:lowdown-multi")).await;
    assert_eq!(from_a["interactions"], total, "{from_a}");
    assert_eq!(
        settled(from_a),
        settled(from_b),
        "both instances give one answer"
    );
    assert_eq!(t.count("interactions").await, total as i64);
    common::assert_rollups_match_raw(&t).await;
    drop((a, b));
    t.cleanup().await;
}

/// Unix ms of 04:00 UTC on a day a week from now, a time far from midnight, so that a few
/// minutes of clock moves stay on one day.
fn four_am_next_week() -> i64 {
    const DAY: i64 = 86_400_000;
    let now = lowdown_server::clock::now_ms();
    (now.div_euclid(DAY) + 7) * DAY + 4 * 3_600_000
}

/// The clock offset that makes an instance's clock reach `at` `lead` ms from now.
fn offset_to(at: i64, lead: i64) -> i64 {
    at - lowdown_server::clock::now_ms() - lead
}

fn scan_setup(registry: &Registry, offset_ms: i64) -> Setup {
    Setup {
        offset_ms,
        flags: [
            "--scan-at",
            "04:00",
            "--registry-url",
            &registry.url,
            "--unsafe-allow-loopback",
            "--skip-packages",
        ]
        .map(str::to_owned)
        .to_vec(),
        env: Vec::new(),
    }
}

/// How many times each fixture path was sent `initialize` (one per probe).
fn initializes(mcp: &Mcp) -> BTreeMap<String, usize> {
    let mut n = BTreeMap::new();
    for h in mcp.hits().into_iter().filter(|h| h.method == "initialize") {
        *n.entry(h.path).or_default() += 1;
    }
    n
}

/// Observations per remote, over every run.
async fn observations_per_remote(t: &TestDb) -> BTreeMap<String, i64> {
    let rows: Vec<(String, i64)> = t
        .rows("SELECT remote_url, COUNT(*) FROM scanner_observations GROUP BY remote_url")
        .await;
    rows.into_iter().collect()
}

const SKIPPED: &str = "the day's scan already ran; skipping";
const FINISHED: &str = "scan finished";

/// Both instances started with `--scan-at` the same minute: one scan runs, the other
/// instance (which meets the lease, tries again and finds the day done) runs none; every
/// remote is observed once and both answer the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_scanning_at_the_same_minute_run_one_scan() {
    let Some(t) = TestDb::new(Kind::Postgres).await else {
        return;
    };
    let mcp = Mcp::start(true).await;
    let registry = Registry::start().await;
    let mut entries: Vec<_> = (0..5)
        .map(|i| streamable(&format!("io.fixture/ok{i}"), &mcp.url("ok", &i.to_string())))
        .collect();
    entries.push(streamable("io.fixture/slow", &mcp.url("slow", "")));
    registry.set_entries(entries, 100);
    let at = four_am_next_week();
    let setup = scan_setup(&registry, offset_to(at, 6_000));
    let a = Instance::start("scan-a", &t.url, None, &setup).await;
    let b = Instance::start("scan-b", &t.url, None, &setup).await;
    until(
        120,
        "one instance scanned and the other found the day done",
        || {
            let logs = [a.stderr(), b.stderr()];
            async move {
                let finished = logs.iter().filter(|l| l.contains(FINISHED)).count();
                let skipped = logs.iter().filter(|l| l.contains(SKIPPED)).count();
                finished == 1 && skipped == 1
            }
        },
    )
    .await;
    let runs: Vec<(String, String)> = t.rows("SELECT day, status FROM scan_runs").await;
    let day = lowdown_server::clock::day_of(at);
    assert_eq!(runs, vec![(day.clone(), "completed".to_owned())]);
    let per_remote = observations_per_remote(&t).await;
    assert_eq!(per_remote.len(), 6);
    assert!(per_remote.values().all(|n| *n == 1), "{per_remote:?}");
    let sent = initializes(&mcp);
    assert_eq!(sent.len(), 6);
    assert!(
        sent.values().all(|n| *n == 1),
        "one probe per remote: {sent:?}"
    );
    // The job's lease agrees: the day is done and nobody holds it.
    let (left, holder) = lease::peek(&t.db, SCAN_LEASE, at + 3_600_000)
        .await
        .unwrap();
    assert_eq!((left.done.as_deref(), holder), (Some(day.as_str()), None));
    for name in ["ok0", "slow"] {
        let path = format!("/api/reputation/mcp:io.fixture/{name}");
        let (x, y) = (get_json(&a.url(&path)).await, get_json(&b.url(&path)).await);
        assert_eq!(x["scanner"]["observations_30d"], 1, "{x}");
        assert_eq!(x["scanner"]["latest"]["reached_level"], 2, "{x}");
        assert_eq!(settled(x), settled(y));
    }
    let (fa, fb) = (
        reqwest::get(a.url("/daily/feed.json"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
        reqwest::get(b.url("/daily/feed.json"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    );
    assert_eq!(fa, fb, "one daily record");
    drop((a, b));
    t.cleanup().await;
}

/// The instance running the day's scan is SIGKILLed mid-run. Started again once its lease
/// has run out (its clock moved past it), it takes the run over: the same run completes,
/// the remotes observed before the kill are not probed again, the one cut off is, and the
/// other instance, which met the lease, finds the day done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scan_killed_mid_run_is_taken_over_without_losing_or_repeating_work() {
    let Some(t) = TestDb::new(Kind::Postgres).await else {
        return;
    };
    let mcp = Mcp::start(true).await;
    let registry = Registry::start().await;
    let mut entries: Vec<_> = (0..6)
        .map(|i| {
            streamable(
                &format!("io.fixture/fast{i}"),
                &mcp.url("ok", &i.to_string()),
            )
        })
        .collect();
    entries.push(streamable("io.fixture/stuck", &mcp.url("hang", "")));
    registry.set_entries(entries, 100);
    let at = four_am_next_week();
    let offset = offset_to(at, 6_000);
    let setup = scan_setup(&registry, offset);
    let mut a = Instance::start("takeover-a", &t.url, None, &setup).await;
    let mut b = Instance::start("takeover-b", &t.url, None, &setup).await;
    // The fast remotes are observed; the stuck one holds the run open (10 s timeout).
    until(120, "the fast remotes observed", || {
        let t = &t;
        async move { t.count("scanner_observations").await >= 6 }
    })
    .await;
    let (run_id, status): (String, String) =
        t.row("SELECT scan_run_id, status FROM scan_runs").await;
    assert_eq!(status, "running");
    let holder_is_a = a.stderr().contains("scan: run sr_");
    let (holder, other) = if holder_is_a {
        (&mut a, &b)
    } else {
        (&mut b, &a)
    };
    assert!(holder.stderr().contains(&format!("scan: run {run_id}")));
    let addr = holder.addr;
    holder.kill();
    assert!(!other.stderr().contains(FINISHED));

    // Started again six minutes later by its clock: the five-minute lease has run out.
    let later = Setup {
        offset_ms: offset + 6 * 60_000,
        ..setup.clone()
    };
    let restarted = Instance::start("takeover-a2", &t.url, Some(addr), &later).await;
    until(120, "the run taken over and completed", || {
        let t = &t;
        async move {
            let (s,): (String,) = t.row("SELECT status FROM scan_runs").await;
            s == "completed"
        }
    })
    .await;
    let log = restarted.stderr();
    assert!(
        log.contains(&format!("scan: resuming run {run_id}")),
        "{log}"
    );
    assert!(
        log.contains("6 remotes were observed before the run was taken over; 1 left"),
        "{log}"
    );
    let runs: Vec<(String, String)> = t.rows("SELECT scan_run_id, status FROM scan_runs").await;
    assert_eq!(runs, vec![(run_id, "completed".to_owned())]);
    let per_remote = observations_per_remote(&t).await;
    assert_eq!(per_remote.len(), 7);
    assert!(per_remote.values().all(|n| *n == 1), "{per_remote:?}");
    let sent = initializes(&mcp);
    for i in 0..6 {
        assert_eq!(sent[&format!("ok/{i}")], 1, "fast{i} probed once: {sent:?}");
    }
    assert_eq!(sent["hang"], 2, "the probe the kill cut off is made again");
    // The survivor retries while the lease is held and then finds the day done.
    until(60, "the other instance finds the day done", || {
        let log = other.stderr();
        async move { log.contains(SKIPPED) }
    })
    .await;
    assert!(!other.stderr().contains(FINISHED));
    assert_eq!(t.count("scan_runs").await, 1);
    let path = "/api/reputation/mcp:io.fixture/stuck";
    let (x, y) = (
        get_json(&restarted.url(path)).await,
        get_json(&other.url(path)).await,
    );
    assert_eq!(x["scanner"]["latest"]["error_type"], "timeout", "{x}");
    assert_eq!(x["scanner"]["missing_days"], json!([]), "{x}");
    assert_eq!(
        x["scanner"]["observations_30d"],
        y["scanner"]["observations_30d"]
    );
    drop((a, b, restarted));
    t.cleanup().await;
}

fn observations(n: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|_| {
                json!({"host": "api.multi-fixture.com", "method": "GET", "status": 200,
                            "latency_ms": 12, "response_bytes": 100})
            })
            .collect(),
    )
}

async fn post(url: &str, body: &Value, key: Option<&str>) -> (u16, Value, Option<String>) {
    let mut req = reqwest::Client::new().post(url).json(body);
    if let Some(k) = key {
        req = req.header("x-agent-key", k);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let retry = r
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, r.json().await.unwrap_or(Value::Null), retry)
}

fn agent() -> Value {
    json!({"name": "bot", "model_provider": "acme", "model_id": "m-1", "environment": "test"})
}

/// The anonymous budgets are the deployment's, not an instance's: 60 observations an hour
/// per network, and 10 registrations, reached through either instance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anonymous_rate_limits_are_reached_through_either_instance() {
    let Some(t) = TestDb::new(Kind::Postgres).await else {
        return;
    };
    let setup = Setup::default();
    let a = Instance::start("quota-a", &t.url, None, &setup).await;
    let b = Instance::start("quota-b", &t.url, None, &setup).await;
    let observe = |i: &Instance| i.url("/v1/telemetry/observe");
    let (s, v, _) = post(&observe(&a), &observations(40), None).await;
    assert_eq!((s, &v["accepted"]), (200, &json!(40)), "{v}");
    let (s, v, retry) = post(&observe(&b), &observations(40), None).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        (&v["accepted"], &v["rate_limited"]),
        (&json!(20), &json!(20)),
        "{v}"
    );
    assert!(retry.is_some(), "Retry-After says when to send the rest");
    let (s, v, _) = post(&observe(&a), &observations(1), None).await;
    assert_eq!((s, &v["reason"]), (429, &json!("rate_limited")), "{v}");
    assert_eq!(t.count("observations").await, 60);

    let register = |i: &Instance| i.url("/v1/auth/agents/register");
    for n in 0..10 {
        let via = if n % 2 == 0 { &a } else { &b };
        assert_eq!(
            post(&register(via), &agent(), None).await.0,
            201,
            "registration {n}"
        );
    }
    for via in [&a, &b] {
        let (s, v, _) = post(&register(via), &agent(), None).await;
        assert_eq!((s, &v["reason"]), (429, &json!("rate_limited")), "{v}");
    }
    drop((a, b));
    t.cleanup().await;
}

const TOKEN: &str = "operator-token-0123456789abcdef";

/// On a day no server has drawn a salt for yet, both instances asked at once hand out the
/// same salt; a directive's lease taken through one instance is the lease the other sees
/// and enforces.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn salts_and_leases_agree_between_instances() {
    let Some(t) = TestDb::new(Kind::Postgres).await else {
        return;
    };
    let mcp = Mcp::start(false).await;
    let catalog = std::env::temp_dir().join(format!("lowdown-instances-{}.toml", free_port()));
    std::fs::write(
        &catalog,
        "[[service]]\nslug = \"vendor\"\nservice_id = \"svc_vendor\"\n\
         upstream = \"http://127.0.0.1:9/base\"\nhosts = [\"api.vendor-fixture.com\"]\n\
         sampling_rate = 1.0\nallow = [\"GET /\"]\n",
    )
    .unwrap();
    let setup = Setup {
        // Three days ahead: a salt day nobody has used.
        offset_ms: 3 * 86_400_000,
        flags: [
            "--catalog",
            catalog.to_str().unwrap(),
            "--unsafe-allow-loopback",
        ]
        .map(str::to_owned)
        .to_vec(),
        env: vec![("LOWDOWN_ADMIN_TOKEN".into(), TOKEN.into())],
    };
    let a = Instance::start("salt-a", &t.url, None, &setup).await;
    let b = Instance::start("salt-b", &t.url, None, &setup).await;
    let (_, agent_a, _) = post(&a.url("/v1/auth/agents/register"), &agent(), None).await;
    let (_, agent_b, _) = post(&b.url("/v1/auth/agents/register"), &agent(), None).await;
    let (ka, kb) = (
        agent_a["agent_key"].as_str().unwrap().to_owned(),
        agent_b["agent_key"].as_str().unwrap().to_owned(),
    );
    let salt = |i: &Instance, key: &str| {
        let req = reqwest::Client::new()
            .get(i.url("/v1/sampling/salt"))
            .header("x-agent-key", key);
        async move {
            let r = req.send().await.unwrap();
            assert_eq!(r.status(), 200);
            r.json::<Value>().await.unwrap()
        }
    };
    let (sa, sb) = tokio::join!(salt(&a, &ka), salt(&b, &kb));
    assert_eq!(
        (&sa["salt_id"], &sa["salt"]),
        (&sb["salt_id"], &sb["salt"]),
        "{sa} {sb}"
    );
    assert_eq!(t.count("sampling_salts").await, 1);

    // Providers, one registered through each instance; a directive posted through a.
    let mut providers = Vec::new();
    for (i, key) in [(&a, &ka), (&b, &kb)] {
        let (s, v, _) = post(&i.url("/v1/provider/register"), &json!({}), Some(key)).await;
        assert_eq!(s, 201, "{v}");
        providers.push(v["provider_id"].clone());
    }
    let req = reqwest::Client::new()
        .post(a.url("/v1/benchmark/directives"))
        .bearer_auth(TOKEN)
        .json(
            &json!({"service_id": "svc_vendor", "kind": "protocol", "price_credits": 10,
                      "spec": {"remote_url": mcp.url("ok", "")}}),
        );
    let r = req.send().await.unwrap();
    assert_eq!(r.status(), 201);
    let id = r.json::<Value>().await.unwrap()["directive_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let claim = format!("/v1/provider/directives/{id}/claim");
    let (s, v, _) = post(&a.url(&claim), &json!({}), Some(&ka)).await;
    assert_eq!(s, 200, "{v}");
    let (s, v, _) = post(&b.url(&claim), &json!({}), Some(&kb)).await;
    assert_eq!((s, &v["reason"]), (403, &json!("foreign_directive")), "{v}");
    let (s, v, _) = post(&b.url(&claim), &json!({}), Some(&ka)).await;
    assert_eq!((s, &v["reason"]), (409, &json!("already_claimed")), "{v}");
    let view = |i: &Instance| {
        let req = reqwest::Client::new()
            .get(i.url(&format!("/v1/benchmark/directives/{id}")))
            .bearer_auth(TOKEN);
        async move { req.send().await.unwrap().json::<Value>().await.unwrap() }
    };
    let (va, vb) = (view(&a).await, view(&b).await);
    assert_eq!(va["status"], "claimed", "{va}");
    assert_eq!(va["lease"], vb["lease"]);
    assert_eq!(va["lease"]["provider_id"], providers[0], "{va}");
    // Both ran the audit job on start, under its lease: one audit, the same from both.
    let (sa, sb) = (
        get_json(&a.url("/v1/services/vendor")).await,
        get_json(&b.url("/v1/services/vendor")).await,
    );
    assert!(sa["audit"]["checked_at"].is_string(), "{sa}");
    assert_eq!(sa["audit"], sb["audit"]);
    drop((a, b));
    let _ = std::fs::remove_file(catalog);
    t.cleanup().await;
}
