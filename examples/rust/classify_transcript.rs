//! Feeds a recorded MCP stdio session (examples/transcripts/*.jsonl) through lowdown-core's
//! `Recorder` (the `classify` state machine and record building) and prints one interaction
//! record per line, in canonical JSON.
//!
//!     cargo run -q -p lowdown-core --example classify_transcript [transcript.jsonl]

// core/clippy.toml bans IO in the core's own code; this example is a host program.
#![allow(
    clippy::disallowed_methods,
    reason = "an example reads args and a file"
)]

use lowdown_core::classify::{CloseReason, Direction};
use lowdown_core::record::build::RecordContext;
use lowdown_core::record::Recorder;
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

    // Record ids are "example-0", "example-1", ...: the prefix is the host's (a random one).
    let (mut recorder, mut last_ms) = (Recorder::new(context, "example"), 0.0);
    for (i, text) in text.lines().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let entry: Entry =
            serde_json::from_str(text).unwrap_or_else(|e| fail(format!("{path}:{}: {e}", i + 1)));
        let bytes = format!("{}\n", entry.line);
        print(&recorder.feed(entry.direction, bytes.as_bytes(), entry.at_ms));
        last_ms = entry.at_ms;
    }
    // End of session: the recorded client closed its side, so anything still pending was
    // given up by the client (cancelled), not failed by the server.
    print(&recorder.close(last_ms, CloseReason::ClientEnded));
}

/// Prints finished records (JSON lines) in canonical JSON: keys sorted, numbers written the
/// same way in every host.
fn print(lines: &str) {
    for line in lines.lines() {
        let json = canonical_json(line.as_bytes()).expect("the core writes valid JSON");
        println!("{json}");
    }
}

/// Reports bad input on stderr and exits with status 1.
fn fail(message: String) -> ! {
    eprintln!("{message}");
    std::process::exit(1)
}
