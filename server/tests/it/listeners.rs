//! The listeners under slow and greedy clients, over real sockets: a head sent a line at a
//! time is cut at the header timeout, a stalled body gets 408, one address cannot hold
//! every connection, and the binary applies its flags to the API and the gateway.
//! The in-process tests run on tokio's paused clock, so the timeouts pass without waiting.

use std::io::Read;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use crate::common::free_port;
use axum::routing::{get, post};
use axum::Router;
use lowdown_server::caller::TrustedProxies;
use lowdown_server::listen::{self, Limits};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::Instant;

fn limits(per_address: usize, total: usize) -> Limits {
    Limits {
        header: Duration::from_secs(10),
        body: Duration::from_secs(30),
        per_address,
        total,
        proxies: TrustedProxies::default(),
    }
}

/// A listener on 127.0.0.1 serving `/healthz` and `/echo` (the body's length back).
async fn start(limits: Limits) -> SocketAddr {
    let app = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/echo",
            post(|body: axum::body::Bytes| async move { body.len().to_string() }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(listen::serve(listener, app, limits, std::future::pending()));
    addr
}

/// A connection to `to` from the loopback address `from` (Linux routes all of 127/8).
async fn connect(from: &str, to: SocketAddr) -> TcpStream {
    let s = TcpSocket::new_v4().unwrap();
    s.bind(SocketAddr::new(from.parse::<IpAddr>().unwrap(), 0))
        .unwrap();
    s.connect(to).await.unwrap()
}

/// A whole `GET /healthz` from `from`: the status line, or `None` when the server closed
/// the connection without answering.
async fn probe(from: &str, to: SocketAddr) -> Option<String> {
    let mut s = connect(from, to).await;
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .ok()?;
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out).await;
    let text = String::from_utf8_lossy(&out).to_string();
    text.lines()
        .next()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
}

/// A connection holding half a request head.
async fn half_sent(from: &str, to: SocketAddr) -> TcpStream {
    let mut s = connect(from, to).await;
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\n")
        .await
        .unwrap();
    s
}

#[tokio::test(start_paused = true)]
async fn a_head_sent_a_line_every_5_s_is_cut_at_the_header_timeout_while_others_are_answered() {
    let addr = start(limits(256, 1000)).await;
    let started = Instant::now();
    let (mut rd, mut wr) = half_sent("127.0.0.1", addr).await.into_split();
    let writer = tokio::spawn(async move {
        for i in 0..20 {
            tokio::time::sleep(Duration::from_secs(5)).await;
            if wr
                .write_all(format!("X-Line-{i}: x\r\n").as_bytes())
                .await
                .is_err()
            {
                break;
            }
        }
    });
    // Meanwhile everyone else is answered.
    assert_eq!(
        probe("127.0.0.2", addr).await.as_deref(),
        Some("HTTP/1.1 200 OK")
    );
    let mut got = Vec::new();
    let _ = rd.read_to_end(&mut got).await;
    let held = started.elapsed();
    writer.abort();
    assert!(
        !String::from_utf8_lossy(&got).contains("200 OK"),
        "the slow head was answered: {}",
        String::from_utf8_lossy(&got)
    );
    assert!(
        held >= Duration::from_secs(10) && held < Duration::from_secs(15),
        "cut after {held:?}, not at the 10 s header timeout"
    );
}

#[tokio::test(start_paused = true)]
async fn an_idle_keep_alive_connection_is_closed_at_the_header_timeout() {
    let addr = start(limits(256, 1000)).await;
    let mut s = connect("127.0.0.1", addr).await;
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 512];
    let n = s.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    let answered = Instant::now();
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest).await;
    let idle = answered.elapsed();
    assert!(
        idle >= Duration::from_secs(10) && idle < Duration::from_secs(11),
        "an idle keep-alive connection closed after {idle:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_body_that_stalls_is_answered_408_and_the_connection_closed() {
    let addr = start(limits(256, 1000)).await;
    let mut whole = connect("127.0.0.1", addr).await;
    whole
        .write_all(
            format!(
                "POST /echo HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: 100\r\n\r\n{}",
                "x".repeat(100)
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let mut out = String::new();
    whole.read_to_string(&mut out).await.unwrap();
    assert!(
        out.starts_with("HTTP/1.1 200") && out.ends_with("100"),
        "{out}"
    );

    let started = Instant::now();
    let mut s = connect("127.0.0.1", addr).await;
    s.write_all(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nonly ten b")
        .await
        .unwrap();
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got).await;
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(
        text.to_ascii_lowercase().contains("connection: close"),
        "{text}"
    );
    assert!(
        text.contains("request body not received within 30 s"),
        "{text}"
    );
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(30) && took < Duration::from_secs(31),
        "answered after {took:?}"
    );
}

/// Whether the server closed `s` (EOF or reset), read without waiting: run after a later
/// connection was answered, so the accept loop has already decided about `s`.
fn closed(s: &std::net::TcpStream) -> bool {
    let mut b = [0u8; 64];
    match { s }.read(&mut b) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
    }
}

#[tokio::test]
async fn one_address_cannot_hold_every_connection() {
    let addr = start(limits(4, 6)).await;
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(half_sent("127.0.0.2", addr).await);
    }
    let fifth = half_sent("127.0.0.2", addr).await;
    assert_eq!(
        probe("127.0.0.3", addr).await.as_deref(),
        Some("HTTP/1.1 200 OK"),
        "another address is answered while one holds its four"
    );
    assert!(
        closed(&fifth.into_std().unwrap()),
        "a fifth connection from one address stays open"
    );
    assert_eq!(probe("127.0.0.2", addr).await, None);

    // Two more from elsewhere fill the total of 6: then nobody new gets in.
    held.push(half_sent("127.0.0.3", addr).await);
    held.push(half_sent("127.0.0.4", addr).await);
    assert_eq!(probe("127.0.0.5", addr).await, None, "over the total");

    // A closed connection frees its place.
    drop(held.remove(0));
    let mut answered = None;
    for _ in 0..200 {
        answered = probe("127.0.0.5", addr).await;
        if answered.is_some() {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(answered.as_deref(), Some("HTTP/1.1 200 OK"));
    for s in held {
        assert!(
            !closed(&s.into_std().unwrap()),
            "a connection within the caps was closed"
        );
    }
}

#[tokio::test]
async fn a_trusted_proxy_counts_only_in_the_total() {
    let mut l = limits(2, 100);
    l.proxies = TrustedProxies::parse(&["127.0.0.9"]).unwrap();
    let addr = start(l).await;
    let mut held = Vec::new();
    for _ in 0..5 {
        held.push(half_sent("127.0.0.9", addr).await);
    }
    assert_eq!(
        probe("127.0.0.9", addr).await.as_deref(),
        Some("HTTP/1.1 200 OK")
    );
    for s in held {
        assert!(!closed(&s.into_std().unwrap()));
    }
}

/// `lowdown-server` on its own home with an API and a gateway listener and `flags`, once
/// both answer; killed (and its home removed) when dropped.
struct Binary {
    child: std::process::Child,
    home: std::path::PathBuf,
    api: SocketAddr,
    gateway: SocketAddr,
}

impl Binary {
    async fn start(name: &str, flags: &[&str]) -> Binary {
        let home = std::env::temp_dir().join(format!("lowdown-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        let api: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let gateway: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_lowdown-server"))
            .args([
                "--listen",
                &api.to_string(),
                "--gateway-listen",
                &gateway.to_string(),
            ])
            .args(flags)
            .env("LOWDOWN_HOME", &home)
            .env_remove("DATABASE_URL")
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let binary = Binary {
            child,
            home,
            api,
            gateway,
        };
        for _ in 0..200 {
            if TcpStream::connect(gateway).await.is_ok() && probe("127.0.0.1", api).await.is_some()
            {
                return binary;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("lowdown-server did not start");
    }
}

impl Drop for Binary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.home);
    }
}

/// Six hundred half-sent requests from one address (the reproduction held 20,000 until
/// `/healthz` stopped answering): the binary keeps 256, closes the rest at once and answers
/// everyone else. Its header timeout is far off, so however slowly the 600 connect, none of
/// the 256 is cut before they are counted.
#[tokio::test]
async fn the_binary_caps_the_connections_of_one_address() {
    let server = Binary::start("caps", &["--header-timeout", "600"]).await;
    let mut many = Vec::new();
    for _ in 0..600 {
        many.push(half_sent("127.0.0.7", server.api).await.into_std().unwrap());
    }
    assert_eq!(
        probe("127.0.0.8", server.api).await.as_deref(),
        Some("HTTP/1.1 200 OK"),
        "/healthz answers another address"
    );
    let open = many.into_iter().filter(|s| !closed(s)).count();
    assert_eq!(open, 256, "connections one address holds");
}

/// Stalled heads on both listeners, and a stalled body, are cut by the binary's flags.
#[tokio::test]
async fn the_binary_cuts_stalled_heads_and_bodies_on_both_listeners_by_its_flags() {
    let server = Binary::start(
        "timeouts",
        &["--header-timeout", "2", "--body-timeout", "2"],
    )
    .await;
    for to in [server.api, server.gateway] {
        let mut s = half_sent("127.0.0.10", to).await;
        let mut got = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(30), s.read_to_end(&mut got)).await;
        assert!(read.is_ok(), "a stalled head on {to} was not cut");
    }
    let mut s = connect("127.0.0.11", server.api).await;
    s.write_all(b"POST /api/interactions HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n[{")
        .await
        .unwrap();
    let mut got = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), s.read_to_end(&mut got)).await;
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
}
