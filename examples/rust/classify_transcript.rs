//! Feeds a recorded MCP stdio session (examples/transcripts/*.jsonl) through lowdown-core's
//! `classify` state machine and prints one interaction record per line.
//!
//!     cargo run -q -p lowdown-core --example classify_transcript [transcript.jsonl]

// core/clippy.toml bans IO in the core's own code; this example is a host program.
#![allow(
    clippy::disallowed_methods,
    reason = "an example reads args and a file"
)]

use lowdown_core::classify::{Classifier, CloseReason, Direction, Exchange};
use lowdown_core::record::build::{build_record, RecordContext};
use lowdown_core::schema_hash::canonical_json;

/// One line of a transcript file (see examples/transcripts/README.md).
#[derive(serde::Deserialize)]
struct Entry {
    direction: Direction,
    at_ms: f64,
    line: String,
}

fn main() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/transcripts");
    let path = std::env::args()
        .nth(1)
        .unwrap_or(format!("{dir}/server-everything.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| fail(format!("{path}: {e}")));
    // Who records, for what. The transcript holds no command line, so the target is fixed.
    let target = "npm:@modelcontextprotocol/server-everything".to_owned();
    let context = RecordContext {
        actor: "example".to_owned(),
        target,
        ..Default::default()
    };

    let (mut classifier, mut last_ms) = (Classifier::new(), 0.0);
    for (i, text) in text.lines().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let entry: Entry =
            serde_json::from_str(text).unwrap_or_else(|e| fail(format!("{path}:{}: {e}", i + 1)));
        let bytes = format!("{}\n", entry.line);
        let exchanges = classifier.feed(entry.direction, bytes.as_bytes(), entry.at_ms);
        print(&exchanges, &classifier, &context);
        last_ms = entry.at_ms;
    }
    // End of session: the recorded client closed its side, so anything still pending
    // was given up by the client (cancelled), not failed by the server.
    print(
        &classifier.close(last_ms, CloseReason::ClientEnded),
        &classifier,
        &context,
    );
}

/// Prints each exchange's record, with the facts learnt so far (server version, schema hash).
fn print(exchanges: &[Exchange], classifier: &Classifier, context: &RecordContext) {
    for exchange in exchanges {
        // None: a server→client request (sampling, roots/list) is relayed, never recorded.
        if let Some(record) = build_record(exchange, classifier.facts(), context, None) {
            // canonical_json sorts the keys and writes numbers the same way in every host.
            let json = serde_json::to_vec(&record).expect("a record always serializes");
            println!(
                "{}",
                canonical_json(&json).expect("serde_json writes valid JSON")
            );
        }
    }
}

/// Reports bad input on stderr and exits with status 1.
fn fail(message: String) -> ! {
    eprintln!("{message}");
    std::process::exit(1)
}
