//! `classify` throughput: exchanges/s for 1 KB `tools/call` request/result pairs, and MB/s
//! through one 10 MB result. Run with `cargo bench -p lowdown-core --bench classify`.

#![allow(
    missing_docs,
    reason = "criterion's macros generate undocumented items"
)]

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lowdown_core::classify::{Classifier, Direction};

/// A realistic ~1 KB `tools/call` request and its ~1 KB result.
fn pair(id: usize) -> (String, String) {
    let words = "The quick brown fox jumps over the lazy dog, \\\"quoted\\\" and caf\u{e9}. ";
    let body: String = words.repeat(14);
    let request = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"search_docs","arguments":{{"query":"{body}","limit":10,"filters":{{"lang":["en","fr"],"since":"2026-01-01"}}}},"_meta":{{"progressToken":{id}}}}}}}"#
    );
    let result = format!(
        r#"{{"result":{{"content":[{{"type":"text","text":"{body}"}}],"structuredContent":{{"hits":3,"took_ms":12.5}},"isError":false}},"jsonrpc":"2.0","id":{id}}}"#
    );
    (request + "\n", result + "\n")
}

fn exchanges(c: &mut Criterion) {
    const N: usize = 1000;
    let pairs: Vec<(String, String)> = (0..N).map(pair).collect();
    let (req_len, res_len) = (pairs[0].0.len(), pairs[0].1.len());
    let mut group = c.benchmark_group(format!(
        "classify/exchanges ({req_len} B request, {res_len} B result)"
    ));
    group.throughput(Throughput::Elements(N as u64));

    // One read per message, as a quiet pipe delivers them.
    group.bench_function("one read per message", |b| {
        b.iter(|| {
            let mut cl = Classifier::new();
            let mut n = 0;
            for (i, (request, result)) in pairs.iter().enumerate() {
                n += cl
                    .feed(Direction::ClientToServer, request.as_bytes(), i as f64)
                    .len();
                n += cl
                    .feed(Direction::ServerToClient, result.as_bytes(), i as f64 + 0.5)
                    .len();
            }
            assert_eq!(n, N);
            black_box(cl.facts());
        })
    });

    // A busy session: 32 requests in flight at a time, each side's bytes read 4 KiB at a
    // time (the pipe cuts messages anywhere).
    let rounds: Vec<(Vec<u8>, Vec<u8>)> = pairs
        .chunks(32)
        .map(|round| {
            (
                round.iter().flat_map(|p| p.0.bytes()).collect(),
                round.iter().flat_map(|p| p.1.bytes()).collect(),
            )
        })
        .collect();
    group.bench_function("4 KiB reads, 32 in flight", |b| {
        b.iter(|| {
            let mut cl = Classifier::new();
            let mut n = 0;
            for (i, (requests, results)) in rounds.iter().enumerate() {
                for q in requests.chunks(4096) {
                    n += cl.feed(Direction::ClientToServer, q, i as f64).len();
                }
                for r in results.chunks(4096) {
                    n += cl.feed(Direction::ServerToClient, r, i as f64 + 0.5).len();
                }
            }
            assert_eq!(n, N);
        })
    });
    group.finish();
}

fn big_result(c: &mut Criterion) {
    let request = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"read_file\"}}\n";
    let text =
        "0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ \\n\\\"escaped\\\" "
            .repeat(10 << 20 >> 6);
    let result = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}}]}}}}\n");
    let mut group = c.benchmark_group("classify/10 MB result");
    group.throughput(Throughput::Bytes(result.len() as u64));
    group.sample_size(20);
    for chunk in [65536, result.len()] {
        let label = if chunk == result.len() {
            "one read".to_owned()
        } else {
            format!("{} KiB reads", chunk / 1024)
        };
        group.bench_with_input(BenchmarkId::from_parameter(label), &chunk, |b, &chunk| {
            b.iter(|| {
                let mut cl = Classifier::new();
                cl.feed(Direction::ClientToServer, request, 0.0);
                let mut n = 0;
                for part in result.as_bytes().chunks(chunk) {
                    n += cl.feed(Direction::ServerToClient, part, 1.0).len();
                }
                assert_eq!(n, 1);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, exchanges, big_result);
criterion_main!(benches);
