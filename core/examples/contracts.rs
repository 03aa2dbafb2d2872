//! Writes the contracts each host reads (see `lowdown_core::contract`), and the proxy's copy
//! of lowdown-observe's bounded answer reader (one source, two packages); with `--check`,
//! fails when a committed copy differs from what would be written.
//!
//!     cargo run -q -p lowdown-core --example contracts [-- --check]

// core/clippy.toml bans IO in the core's own code; this example is a host program.
#![allow(clippy::disallowed_methods, reason = "an example writes files")]

use lowdown_core::contract;

/// The one source of the bounded answer reader both npm packages ship.
const READER: &str = "npm/lowdown-observe/src/read.js";

/// `rel`'s text under a line naming it as the source.
fn copied(root: &str, rel: &str) -> String {
    let text = std::fs::read_to_string(format!("{root}/{rel}")).unwrap_or_else(|e| {
        eprintln!("{rel}: {e}");
        std::process::exit(1)
    });
    format!("// Copied from {rel} by `make contracts`: do not edit.\n{text}")
}

fn main() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let files = [
        ("bindings-js/contract.d.ts", contract::typescript()),
        (
            "bindings-python/python/prowl/_contract.py",
            contract::python_module(),
        ),
        ("npm/lowdown-proxy/src/contract.js", contract::js_module()),
        ("npm/lowdown-observe/src/contract.js", contract::js_module()),
        ("npm/lowdown-proxy/src/read.js", copied(root, READER)),
    ];
    let check = std::env::args().any(|a| a == "--check");
    let mut stale = Vec::new();
    for (rel, text) in files {
        let path = format!("{root}/{rel}");
        if check {
            if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                stale.push(rel);
            }
        } else if let Err(e) = std::fs::write(&path, text) {
            eprintln!("{rel}: {e}");
            std::process::exit(1);
        }
    }
    if !stale.is_empty() {
        eprintln!(
            "out of date with core/src/contract.rs (run `make contracts` and commit): {}",
            stale.join(", ")
        );
        std::process::exit(1);
    }
}
