//! `target_label`: the SPEC §3.2 label of an MCP server from its command line, used when
//! `--target` is absent. A package or file name, never the full command line: arguments,
//! environment values and URLs (which may hold credentials) are never part of it.
//!
//! Runner words and their flags are skipped, the first positional is the target:
//!
//! | command line | label |
//! |---|---|
//! | `npx -y @scope/pkg@1.2.3 /Users/me` | `npm:@scope/pkg` |
//! | `npx -p pkg@2 pkg-bin --flag` (also `--package=pkg`) | `npm:pkg` |
//! | `npm exec`/`npm x`, `pnpm dlx`, `pnpx`, `yarn dlx`, `bunx`, `bun x` + package | `npm:pkg` |
//! | `uvx mcp-server-fetch==1.2` / `uv tool run`, `pipx run` | `pypi:mcp-server-fetch` (PEP 503) |
//! | `uvx --from Some_Pkg[extra]>=1 cmd`, `pipx run --spec X cmd` | `pypi:some-pkg` |
//! | `python -m mcp_server_git.cli` | `pypi:mcp-server-git` (top-level module, PEP 503) |
//! | `python server.py`, `node server.js`, `bun server.ts`, `deno run -A server.ts` | `server` |
//! | `uv run --with x server.py`, `uv --directory /p run server.py` | `server` |
//! | `uv run mcp-tool` (a command of the project) | `mcp-tool` |
//! | `deno run npm:pkg@1` / `deno run jsr:@std/x` | `npm:pkg` / `jsr:@std/x` |
//! | `docker run -i --rm -e KEY=val ghcr.io/org/img:tag` (also `podman`) | `oci:ghcr.io/org/img` |
//! | `docker run mcp/github@sha256:…`, `docker.io/library/nginx` | `oci:mcp/github`, `oci:nginx` |
//! | `/opt/servers/my-server.exe --port 1` (any other command) | `my-server` |
//! | `env A=1 npx pkg`, `cmd /c npx pkg` (wrappers) | as for `npx pkg` |
//!
//! A path becomes its basename without extension; a URL or git spec (`git+https://…`,
//! `github:o/r`, `o/r`) becomes its last path segment without `.git` or extension, so no host,
//! user or token can leak. Version pins (`@1.2.3`, `@latest`, `==1.2`, `>=1`, extras) are
//! stripped; the npm scope is kept. `None` when there is no positional, when the target is
//! inline code (`node -e`, `python -c`, `sh -c`, `npx -c`), or when the name is not a plausible
//! package or file name.

mod flags;
mod lookup;
mod names;

use flags::{
    first_positional, flag_value, BUN_VALUES, DENO_VALUES, DOCKER_VALUES, NODE_VALUES, NPX_VALUES,
    PIPX_VALUES, PYTHON_VALUES, UV_VALUES,
};
use names::{npm, oci, path, pypi};

pub use lookup::lookup_form;

/// How many wrapper commands (`env`, `cmd /c`, `uv run python`) are looked through.
const MAX_WRAPPERS: usize = 4;

/// The target label of the command line `argv` (the command first), or `None`.
pub fn target_label(argv: &[String]) -> Option<String> {
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    label(&argv, 0).filter(|l| names::safe(l))
}

fn label(argv: &[&str], depth: usize) -> Option<String> {
    let (cmd, args) = argv.split_first()?;
    if depth > MAX_WRAPPERS {
        return None;
    }
    let name = command_name(cmd);
    let sub = args.first().copied();
    let rest = args.get(1..).unwrap_or(&[]);
    match name.as_str() {
        "npx" | "pnpx" | "bunx" => npm_runner(args),
        "npm" if matches!(sub, Some("exec" | "x")) => npm_runner(rest),
        "pnpm" | "yarn" if sub == Some("dlx") => npm_runner(rest),
        "bun" => match sub {
            Some("x") => npm_runner(rest),
            Some("run") => script(rest, BUN_VALUES, &[]),
            _ => script(args, BUN_VALUES, &[]),
        },
        "uvx" => python_runner(args, UV_VALUES, "--from"),
        "uv" => {
            let at = first_positional(args, UV_VALUES, &[])?;
            match (args[at], args.get(at + 1).copied()) {
                ("run", _) => uv_run(&args[at + 1..], depth),
                ("tool", Some("run")) => python_runner(&args[at + 2..], UV_VALUES, "--from"),
                _ => None,
            }
        }
        "pipx" if sub == Some("run") => python_runner(rest, PIPX_VALUES, "--spec"),
        "node" | "nodejs" | "tsx" | "ts-node" => {
            script(args, NODE_VALUES, &["-e", "--eval", "-p", "--print"])
        }
        "deno" if sub == Some("run") => {
            let spec = args[1 + first_positional(rest, DENO_VALUES, &["--eval"])?];
            names::deno(spec)
        }
        "docker" | "podman" | "nerdctl" => match (sub, args.get(1).copied()) {
            (Some("run"), _) => docker(rest),
            (Some("container"), Some("run")) => docker(&args[2..]),
            _ => None,
        },
        // Runners with another subcommand (`npm start`, `uv pip`, `deno task`) name no target.
        "npm" | "pnpm" | "yarn" | "pipx" | "deno" => None,
        "env" => wrapped_by_env(args, depth),
        "cmd" => {
            let at = args
                .iter()
                .position(|a| a.eq_ignore_ascii_case("/c") || a.eq_ignore_ascii_case("/k"))?;
            let inner = &args[at + 1..];
            if inner.len() == 1 {
                let words: Vec<&str> = inner[0].split_whitespace().collect();
                return label(&words, depth + 1);
            }
            label(inner, depth + 1)
        }
        "sh" | "bash" | "zsh" | "dash" | "fish" | "pwsh" | "powershell" => script(
            args,
            &[],
            &["-c", "-command", "-Command", "-EncodedCommand"],
        ),
        n if is_python(n) => python(args),
        _ => path(cmd),
    }
}

/// The command's file name, lowercase, without directory or Windows executable extension.
fn command_name(cmd: &str) -> String {
    let base = cmd
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(cmd)
        .to_ascii_lowercase();
    for ext in [".exe", ".cmd", ".bat", ".ps1"] {
        if let Some(stem) = base.strip_suffix(ext) {
            return stem.to_owned();
        }
    }
    base
}

fn is_python(name: &str) -> bool {
    let rest = name
        .strip_prefix("python")
        .or_else(|| name.strip_prefix("pythonw"));
    name == "py" || rest.is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// `npx`-like: the package from `-p/--package`, else the first positional.
fn npm_runner(args: &[&str]) -> Option<String> {
    if let Some(pkg) =
        flag_value(args, "--package", NPX_VALUES).or_else(|| flag_value(args, "-p", NPX_VALUES))
    {
        return npm(pkg);
    }
    npm(args[first_positional(args, NPX_VALUES, &["-c", "--call"])?])
}

/// `uvx`/`pipx run`-like: the package from `from_flag`, else the first positional.
/// A `from_flag` naming no usable package (`--from .`) falls back to the command.
fn python_runner(args: &[&str], values: &[&str], from_flag: &str) -> Option<String> {
    flag_value(args, from_flag, values)
        .and_then(pypi)
        .or_else(|| pypi(args[first_positional(args, values, &[])?]))
}

/// `uv run`: a script path, a module (`-m`), `python …`, or a command of the project.
fn uv_run(args: &[&str], depth: usize) -> Option<String> {
    let module = args
        .iter()
        .take_while(|a| **a != "--")
        .any(|a| *a == "-m" || *a == "--module");
    let at = first_positional(args, UV_VALUES, &[])?;
    if module {
        return pypi(args[at].split('.').next()?);
    }
    if is_python(&command_name(args[at]))
        || matches!(command_name(args[at]).as_str(), "node" | "npx" | "uvx")
    {
        return label(&args[at..], depth + 1);
    }
    path(args[at])
}

/// `python [flags] (-m MOD | script.py)`.
fn python(args: &[&str]) -> Option<String> {
    let mut i = 0;
    while i < args.len() {
        match args[i] {
            "-c" => return None,
            "-m" => return pypi(args.get(i + 1)?.split('.').next()?),
            a if a.starts_with("-m") && a.len() > 2 => return pypi(a[2..].split('.').next()?),
            _ => {}
        }
        if !args[i].starts_with('-') || args[i] == "-" {
            break;
        }
        i += if PYTHON_VALUES.contains(&args[i]) {
            2
        } else {
            1
        };
    }
    let script = *args.get(i)?;
    (script != "-").then(|| path(script)).flatten()
}

/// A runner whose first positional is a script file.
fn script(args: &[&str], values: &[&str], inline_code: &[&str]) -> Option<String> {
    path(args[first_positional(args, values, inline_code)?])
}

/// `docker run [flags] IMAGE [command]`, with combined short flags such as `-it`.
fn docker(args: &[&str]) -> Option<String> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        // Combined short flags (`-it`) and `-eKEY=v`/`--env=X` forms take no separate value.
        let takes_value = !a.contains('=') && DOCKER_VALUES.contains(&a);
        i += if takes_value { 2 } else { 1 };
    }
    oci(args.get(i)?)
}

/// `env [-i] [-u NAME] [NAME=VALUE]... command`.
fn wrapped_by_env(args: &[&str], depth: usize) -> Option<String> {
    let mut i = 0;
    while i < args.len() {
        match args[i] {
            "-u" | "--unset" | "-C" | "--chdir" => i += 2,
            "-S" | "--split-string" => return None,
            a if a.starts_with('-') || (a.contains('=') && !a.starts_with('=')) => i += 1,
            _ => break,
        }
    }
    label(args.get(i..)?, depth + 1)
}
