//! `schema_hash` of a realistic 1,000-tool `tools/list` result (target: ≤20 ms).
//! Run: `cargo bench -p lowdown-core --bench schema_hash`

#![allow(
    missing_docs,
    reason = "criterion's macros generate undocumented items"
)]
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lowdown_core::schema_hash::{canonical_json, hash_tools_result};
use std::hint::black_box;

/// A `tools/list` result of `n` tools, each with a title, a description and an input schema
/// of a few typed properties (about 600 bytes per tool, like real servers).
fn tools_list(n: usize) -> String {
    let tools: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"name":"tool_{i}","title":"Tool {i}","description":"Does thing number {i} with the given path and options; returns a summary.","inputSchema":{{"type":"object","properties":{{"path":{{"type":"string","description":"Absolute path"}},"limit":{{"type":"integer","minimum":1,"maximum":1000,"default":100}},"recursive":{{"type":"boolean"}},"tags":{{"type":"array","items":{{"type":"string"}}}},"ratio":{{"type":"number","default":0.25}}}},"required":["path"],"additionalProperties":false}},"annotations":{{"readOnlyHint":true}}}}"#
            )
        })
        .collect();
    format!(r#"{{"tools":[{}],"nextCursor":null}}"#, tools.join(","))
}

fn bench(c: &mut Criterion) {
    let text = tools_list(1000);
    let mut g = c.benchmark_group("schema_hash");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("1000_tools", |b| {
        b.iter(|| hash_tools_result(black_box(text.as_bytes())).expect("hashes"))
    });
    // For comparison: canonical JSON of the whole result (parse + write, no sort or sha256),
    // and serde_json parsing the same text into a `Value`.
    g.bench_function("canonical_json_1000_tools", |b| {
        b.iter(|| {
            canonical_json(black_box(text.as_bytes()))
                .expect("canonical")
                .len()
        })
    });
    g.bench_function("serde_json_parse_1000_tools", |b| {
        b.iter(|| {
            serde_json::from_slice::<serde_json::Value>(black_box(text.as_bytes())).expect("parses")
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
