//! Writes the contracts each host reads (see `lowdown_core::contract`), and the proxy's copy
//! of lowdown-observe's bounded answer reader (one source, two packages); with `--check`,
//! fails when a committed copy differs from what would be written, or when a package's
//! manifest says another version than the release every recorder writes
//! (`lowdown_core::record::provenance::RELEASE`, the workspace's version).
//!
//!     cargo run -q -p lowdown-core --example contracts [-- --check]

// core/clippy.toml bans IO in the core's own code; this example is a host program.
#![allow(clippy::disallowed_methods, reason = "an example writes files")]

use lowdown_core::contract;
use lowdown_core::record::provenance::RELEASE;

/// Every manifest that carries a package version of its own; the crates inherit the workspace's.
const MANIFESTS: &[&str] = &[
    "bindings-python/pyproject.toml",
    "server/pyproject.toml",
    "bindings-js/package.json",
    "bindings-js/wasm/package.json",
    "bindings-js/npm/linux-arm64-gnu/package.json",
    "bindings-js/npm/linux-x64-gnu/package.json",
    "bindings-js/npm/linux-x64-musl/package.json",
    "npm/lowdown-proxy/package.json",
    "npm/lowdown-observe/package.json",
    "npm/lowdown-server/package.json",
    "npm/lowdown-server/npm/linux-arm64-gnu/package.json",
    "npm/lowdown-server/npm/linux-x64-gnu/package.json",
    "npm/lowdown-server/npm/linux-x64-musl/package.json",
    "npm/vscode-extension/package.json",
    // The provider hook runs alone (stdlib only, no prowl): it carries the release as text.
    "bindings-python/python/prowl/prowl_provider_hook.py",
];

/// The packages of this repository, as another manifest names them in a pin.
fn ours(name: &str) -> bool {
    name.starts_with("lowdown-") || name == "prowl"
}

/// What in `rel` says another version than [`RELEASE`]: its own version, and its pins of
/// this repository's packages.
fn version_drift(root: &str, rel: &str) -> Vec<String> {
    let text = std::fs::read_to_string(format!("{root}/{rel}")).unwrap_or_default();
    let mut found = Vec::new();
    if !rel.ends_with(".json") {
        // `[project]`'s `version = "..."` (the only such line of these files), or a Python
        // module's `VERSION = "..."`.
        let key = if rel.ends_with(".py") {
            "VERSION"
        } else {
            "version"
        };
        let own = text.lines().find_map(|l| {
            let v = l.strip_prefix(key)?.trim_start();
            Some(v.strip_prefix('=')?.trim().trim_matches('"').to_owned())
        });
        found.push(("version".to_owned(), own));
    } else {
        let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        found.push((
            "version".to_owned(),
            json["version"].as_str().map(str::to_owned),
        ));
        for deps in ["dependencies", "optionalDependencies", "devDependencies"] {
            for (name, v) in json[deps].as_object().into_iter().flatten() {
                if ours(name) {
                    found.push((format!("{deps}.{name}"), v.as_str().map(str::to_owned)));
                }
            }
        }
    }
    found
        .into_iter()
        .filter(|(_, v)| v.as_deref() != Some(RELEASE))
        .map(|(k, v)| format!("{rel}: {k} is {v:?}, not {RELEASE:?}"))
        .collect()
}

/// The one source of the bounded answer reader both npm packages ship.
const READER: &str = "npm/lowdown-observe/src/read.js";

/// The drop-in hooks: the telemetry hook holds the one port of the core's host rules, between
/// these lines, and the provider hook gets the same block.
const TELEMETRY_HOOK: &str = "bindings-python/python/prowl/prowl_telemetry_hook.py";
const PROVIDER_HOOK: &str = "bindings-python/python/prowl/prowl_provider_hook.py";
const BLOCK_BEGIN: &str = "# --- BEGIN host rules";
const BLOCK_END: &str = "# --- END host rules";

/// `target`'s text with its host-rules block replaced by `source`'s.
fn spliced(root: &str, source: &str, target: &str) -> String {
    let read = |rel: &str| {
        std::fs::read_to_string(format!("{root}/{rel}")).unwrap_or_else(|e| {
            eprintln!("{rel}: {e}");
            std::process::exit(1)
        })
    };
    let block = |text: &str, rel: &str| {
        let begin = text.find(BLOCK_BEGIN);
        let end = text
            .find(BLOCK_END)
            .and_then(|e| text[e..].find('\n').map(|n| e + n + 1));
        match (begin, end) {
            (Some(b), Some(e)) if b < e => (b, e),
            _ => {
                eprintln!("{rel}: no host-rules block ({BLOCK_BEGIN} … {BLOCK_END})");
                std::process::exit(1)
            }
        }
    };
    let (src, dst) = (read(source), read(target));
    let (sb, se) = block(&src, source);
    let (db, de) = block(&dst, target);
    format!("{}{}{}", &dst[..db], &src[sb..se], &dst[de..])
}

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
        (PROVIDER_HOOK, spliced(root, TELEMETRY_HOOK, PROVIDER_HOOK)),
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
    if check {
        let drift: Vec<String> = MANIFESTS
            .iter()
            .flat_map(|rel| version_drift(root, rel))
            .collect();
        if !drift.is_empty() {
            eprintln!(
                "every package carries the workspace version (Cargo.toml), which recorders write as recorder_version:\n  {}",
                drift.join("\n  ")
            );
            std::process::exit(1);
        }
    }
    if !stale.is_empty() {
        eprintln!(
            "out of date with its source (core/src/contract.rs, or the file it is copied from: run `make contracts` and commit): {}",
            stale.join(", ")
        );
        std::process::exit(1);
    }
}
