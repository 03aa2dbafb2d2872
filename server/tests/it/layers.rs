//! The server's layers point one way (STYLE.md, "Shape"): HTTP handlers → services and
//! jobs → `db`, and `db` imports nothing above it and holds every query. This reads every
//! file under `server/src` and fails on a `crate::`/`super::` path into a higher layer, on
//! the sampling gateway and provider mode importing each other or `routes`, on SQL outside `db/`,
//! and on a column read by position in `db/` (rows are read by name, SQL aliased where needed).

use std::path::{Path, PathBuf};

/// Module path prefix → layer (the longest prefix wins). Every module must match one.
const LAYERS: &[(&str, Layer)] = &[
    ("clock", Layer::Base),
    ("names", Layer::Base),
    ("caller", Layer::Base),
    ("files", Layer::Base),
    ("db", Layer::Db),
    ("error", Layer::Service),
    ("state", Layer::Service),
    ("services", Layer::Service),
    ("scanner", Layer::Service),
    ("daily", Layer::Service),
    ("export", Layer::Service),
    ("publish", Layer::Service),
    ("retention", Layer::Service),
    ("gateway", Layer::Service),
    ("gateway::api", Layer::Handler),
    ("gateway::proxy", Layer::Handler),
    ("gateway::openapi", Layer::Handler),
    ("gateway::cli", Layer::App),
    ("provider", Layer::Handler),
    ("provider::agree", Layer::Service),
    ("provider::verify", Layer::Service),
    ("scanner::cli", Layer::App),
    ("extract", Layer::Handler),
    ("routes", Layer::Handler),
    ("pages", Layer::Handler),
    // The one escaping function: pure, shared by the pages and the daily feeds.
    ("pages::escape", Layer::Base),
    ("openapi", Layer::Handler),
    ("listen", Layer::App),
    ("serve", Layer::App),
    ("config", Layer::App),
    ("", Layer::App),
];

/// (from, to): module families that must not import the other, whatever their layers.
/// Helpers both need live in `services` (or `extract`, for request input).
const NEVER: &[(&str, &str)] = &[
    ("gateway", "provider"),
    ("provider", "gateway"),
    ("gateway", "routes"),
    ("provider", "routes"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Layer {
    /// Pure helpers (time formatting, names, address keys, files).
    Base,
    /// Storage: every query.
    Db,
    /// Services and jobs (scanner, daily record, export, gateway rules), the state and the
    /// one error type.
    Service,
    /// HTTP handlers and what only they use.
    Handler,
    /// The binary's wiring: listeners, CLI, `serve`, the crate root.
    App,
}

fn layer_of(module: &str) -> Layer {
    LAYERS
        .iter()
        .filter(|(prefix, _)| {
            prefix.is_empty() || module == *prefix || module.starts_with(&format!("{prefix}::"))
        })
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, l)| *l)
        .expect("the empty prefix matches every module")
}

fn in_family(module: &str, family: &str) -> bool {
    module == family || module.starts_with(&format!("{family}::"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `gateway/api.rs` → `gateway::api`, `db/mod.rs` → `db`, `lib.rs` → ``.
fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_owned());
    }
    parts.join("::")
}

/// The code of a file without comment lines and without its `#[cfg(test)]` module (unit
/// tests may set up rows by hand).
fn code(text: &str) -> Vec<(usize, &str)> {
    text.lines()
        .enumerate()
        .take_while(|(_, l)| l.trim() != "#[cfg(test)]")
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, l))
        .collect()
}

fn ident_path(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
        .collect::<String>()
        .trim_end_matches(':')
        .to_owned()
}

/// Every crate module path a line names: `crate::a::b`, `crate::{a, b::c}`, `super::x`.
fn paths_named(module: &str, line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (anchor, base) in [("crate::", String::new()), ("super::", parent(module))] {
        let mut rest = line;
        while let Some(i) = rest.find(anchor) {
            let before = rest[..i].chars().last();
            rest = &rest[i + anchor.len()..];
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let tails: Vec<String> = if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                group[..end]
                    .split(',')
                    .map(|s| ident_path(s.trim()))
                    .collect()
            } else {
                vec![ident_path(rest)]
            };
            for t in tails.into_iter().filter(|t| !t.is_empty() && t != "self") {
                out.push(if base.is_empty() {
                    t
                } else {
                    format!("{base}::{t}")
                });
            }
        }
    }
    out
}

fn parent(module: &str) -> String {
    module
        .rsplit_once("::")
        .map(|(p, _)| p.to_owned())
        .unwrap_or_default()
}

/// What looks like SQL: a query builder, or a string literal opening with a statement.
fn sql_in(line: &str) -> bool {
    const STATEMENTS: &[&str] = &[
        "\"SELECT ",
        "\"INSERT ",
        "\"UPDATE ",
        "\"DELETE ",
        "\"CREATE ",
        "\"WITH ",
        "\"PRAGMA ",
    ];
    line.contains("sqlx::query")
        || line.contains("QueryBuilder")
        || STATEMENTS.iter().any(|s| line.contains(s))
}

/// A row read by column position: `try_get(0)`, `get::<i64, _>(1)`, `get_u64(&row, 2)`, or
/// a tuple or scalar `query_as`, whose fields are positions too.
fn positional_read(line: &str) -> bool {
    let digit_after = |rest: &str| rest.trim_start().starts_with(|c: char| c.is_ascii_digit());
    let mut rest = line;
    while let Some(i) = rest.find("get") {
        rest = &rest[i + 3..];
        let args = if let Some(t) = rest.strip_prefix("::<") {
            t.find(">(").map(|e| &t[e + 2..])
        } else if let Some(t) = rest.strip_prefix("_u64(") {
            t.find(',').map(|e| &t[e + 1..])
        } else {
            rest.strip_prefix('(')
        };
        if args.is_some_and(digit_after) {
            return true;
        }
    }
    line.contains("query_as::<_, (") || line.contains("query_scalar")
}

/// Every violation in the files under `src`, as `file:line: what`.
fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).expect("under src");
        // The bench binaries are separate programs that set up scratch databases and count
        // rows directly; they are no layer of the server.
        if rel.starts_with("bin") {
            continue;
        }
        let module = module_of(rel);
        let layer = layer_of(&module);
        let text = std::fs::read_to_string(&file).expect("a source file");
        for (n, line) in code(&text) {
            let at = format!("src/{}:{n}", rel.display());
            if layer != Layer::Db && sql_in(line) {
                out.push(format!("{at}: SQL outside db/: {}", line.trim()));
            }
            // db/telemetry.rs reads through its own typed helper.
            if layer == Layer::Db && module != "db::telemetry" && positional_read(line) {
                out.push(format!("{at}: a column read by position: {}", line.trim()));
            }
            for target in paths_named(&module, line) {
                let to = layer_of(&target);
                if to > layer {
                    out.push(format!(
                        "{at}: {module} ({layer:?}) imports {target} ({to:?}), a layer above it"
                    ));
                }
                for (from, to) in NEVER {
                    if in_family(&module, from) && in_family(&target, to) {
                        out.push(format!(
                            "{at}: {module} imports {target}: {from} never imports {to}"
                        ));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_import_points_down_and_every_query_is_in_db() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = violations(&src);
    assert!(found.is_empty(), "layer violations:\n{}", found.join("\n"));
}

#[test]
fn the_checker_sees_a_violation() {
    // The parser itself: grouped imports, `super::`, SQL in a literal, and the table.
    assert_eq!(
        paths_named("db::lookup", "use crate::{routes::check, error::AppError};"),
        ["routes::check", "error::AppError"]
    );
    assert_eq!(
        paths_named("gateway::api", "use super::proxy::agent;"),
        ["gateway::proxy::agent"]
    );
    assert!(sql_in(r#"    let q = "SELECT 1 FROM t";"#));
    for read in [
        "let n: i64 = row.try_get(0)?;",
        "r.try_get::<String, _>(1)?,",
        "get_u64(&row, 2)?",
        "sqlx::query_as::<_, (String, i64)>(",
    ] {
        assert!(positional_read(read), "{read}");
    }
    assert!(!positional_read(
        r#"let n: i64 = row.try_get("n")?; get_u64(&r, "n")?"#
    ));
    assert!(!positional_read("senders[*job].draws.items.get(s.pos)"));
    assert!(layer_of("db::lookup") < layer_of("scanner::run"));
    assert!(layer_of("scanner::run") < layer_of("routes::reputation"));
    assert_eq!(layer_of("gateway::proxy"), Layer::Handler);
}
