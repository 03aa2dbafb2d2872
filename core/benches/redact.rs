//! `redact` throughput on realistic log text (target: ≥200 MB/s): mostly clean lines with
//! timestamps, paths, ids and the occasional secret, plus a clean-only run.
//! Run: `cargo bench -p lowdown-core --bench redact`

#![allow(
    missing_docs,
    reason = "criterion's macros generate undocumented items"
)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lowdown_core::redact::redact;
use std::hint::black_box;

const LINES: &[&str] = &[
    "2026-11-30T21:14:20.786Z INFO  server listening on 127.0.0.1:8080 (pid 4242)",
    "2026-11-30T21:14:21.002Z DEBUG GET /api/v1/items?page=2&limit=50 200 12ms user_id=8812",
    "2026-11-30T21:14:21.115Z WARN  slow query: SELECT * FROM orders WHERE created_at > $1 (312 ms)",
    "2026-11-30T21:14:22.540Z ERROR Uncaught TypeError: Cannot read properties of undefined (reading 'position')",
    "    at Object.handler (/srv/app/dist/routes/items.js:88:17)",
    "    at processTicksAndRejections (node:internal/process/task_queues:95:5)",
    "2026-11-30T21:14:23.001Z INFO  request_id=123e4567-e89b-12d3-a456-426614174000 completed in 45ms",
    "2026-11-30T21:14:23.300Z INFO  cache hit ratio=0.93 entries=18231 evictions=12",
];
const SECRET_LINES: &[&str] = &[
    "2026-11-30T21:14:24.000Z DEBUG outgoing headers: Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl",
    "2026-11-30T21:14:24.100Z ERROR auth failed for key sk-proj-AbCdEfGhIjKlMnOpQrStUvWx token=abc123",
];

fn log_text(bytes: usize, with_secrets: bool) -> String {
    let mut out = String::with_capacity(bytes + 256);
    let mut i = 0;
    while out.len() < bytes {
        let line = if with_secrets && i % 50 == 49 {
            SECRET_LINES[i / 50 % 2]
        } else {
            LINES[i % LINES.len()]
        };
        out.push_str(line);
        out.push('\n');
        i += 1;
    }
    out
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("redact");
    for (name, text) in [
        ("log_4MiB_with_secrets", log_text(4 << 20, true)),
        ("log_4MiB_clean", log_text(4 << 20, false)),
    ] {
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(name, |b| b.iter(|| redact(black_box(&text)).len()));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
