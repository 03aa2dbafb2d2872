//! `target_label`: the SPEC §3.2 label of an MCP server from its command line, used when
//! `--target` is absent. A package, file, artefact or remote host name, never the full
//! command line: arguments, environment values, URL paths and credentials never reach it.
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
//! | `python weather.py`, `node weather.js`, `bun weather.ts`, `deno run -A weather.ts` | `weather` |
//! | `node /srv/notes/dist/index.js`, `python ~/tools/main.py` (generic file names) | `notes/index`, `tools/main` |
//! | `uv run --with x weather.py`, `uv --directory /p/crm run main.py` | `weather`, `crm/main` |
//! | `uv run --with mcp[cli] mcp run x.py`, `fastmcp run x.py:app`, `uvx fastmcp run x.py` | `x` |
//! | `uv run mcp-tool` (a command of the project) | `mcp-tool` |
//! | `npx mcp-remote https://mcp.example.com/sse`, `uvx mcp-proxy URL`, `fastmcp run URL` | `url:mcp.example.com` |
//! | `deno run npm:pkg@1` / `deno run jsr:@std/x` | `npm:pkg` / `jsr:@std/x` |
//! | `docker run -i --rm -e KEY=val --ip 10.0.0.1 ghcr.io/org/img:tag` (also `podman`) | `oci:ghcr.io/org/img` |
//! | `docker run mcp/github@sha256:…`, `docker.io/library/nginx` | `oci:mcp/github`, `oci:nginx` |
//! | `java -jar weather.jar`, `java -m org.acme.mcp/org.acme.Main`, `java org.acme.Server` | `weather`, `org.acme.mcp`, `org.acme.Server` |
//! | `go run github.com/org/mcp-go@latest`, `go run ./cmd/weather` | `go:github.com/org/mcp-go`, `weather` |
//! | `cargo run -p weather-mcp`, `cargo run --bin weather` | `weather-mcp`, `weather` |
//! | `dotnet run --project src/Weather.Mcp/Weather.Mcp.csproj`, `dotnet Weather.dll` | `Weather.Mcp`, `Weather` |
//! | `/opt/servers/my-server.exe --port 1` (any other command) | `my-server` |
//! | `env A=1 npx pkg`, `cmd /c npx pkg` (wrappers) | as for `npx pkg` |
//!
//! # One server, one label
//!
//! The same server must not split its history in two however it is launched, so what the
//! core cannot see from the words alone a host resolves and passes as [`LabelFacts`]:
//! `node_modules/.bin/mcp-server-everything`, or `node …/node_modules/pkg/dist/index.js`,
//! is `npm:<its package.json name>`; a virtualenv's `bin/mcp-server-time` is
//! `pypi:<its distribution>`. A fact applies wherever the label would otherwise be a
//! file's name.
//!
//! # Decisions
//!
//! - A path becomes its basename without extension; a URL or git spec (`git+https://…`,
//!   `github:o/r`, `o/r`) given to a package runner becomes its last path segment without
//!   `.git` or extension, so no host, user or token can leak.
//! - Generic file names (`index`, `main`, `server`, `app`, `cli`) get the project folder in
//!   front: the nearest folder of the path, resolved against the host's working directory
//!   ([`LabelFacts::cwd`]) when relative, looking through build and source folders (`dist`,
//!   `build`, `out`, `lib`, `src`, `bin`, `cmd`, `target`, `release`, `debug`). Without a
//!   usable folder (none known, or a name with spaces or symbols) the file name stands alone.
//! - A remote bridge (`mcp-remote`, `supergateway`, `mcp-proxy`, `fastmcp run URL`) is
//!   labelled by the remote server's host, `url:<host>`: never its port, path, query or
//!   credentials, and nothing at all when the host is private (see
//!   [`crate::telemetry::is_private_name`]): an internal name never leaves the machine.
//! - A remote Go package is `go:<module path>`, its version dropped: the path is how the
//!   Go ecosystem names it. Local artefacts (a jar, a Go folder, a cargo binary, a .NET
//!   project) are named like files.
//! - Version pins (`@1.2.3`, `@latest`, `==1.2`, `>=1`, extras) are stripped; the npm scope
//!   is kept.
//! - `None` when there is no positional, when the target is inline code (`node -e`,
//!   `python -c`, `sh -c`, `npx -c`), or when the name is not a plausible package or file
//!   name.

mod bridges;
mod builds;
mod containers;
mod facts;
mod files;
mod flags;
mod lookup;
mod names;

pub use facts::{LabelFacts, PackageFact, Registry};

use flags::{
    first_positional, flag_value, BUN_VALUES, DENO_VALUES, NODE_VALUES, NPX_VALUES, PIPX_VALUES,
    PYTHON_VALUES, UV_VALUES,
};

pub use lookup::lookup_form;

/// How many wrapper commands (`env`, `cmd /c`, `uv run python`) are looked through.
const MAX_WRAPPERS: usize = 4;

/// The target label of the command line `argv` (the command first), with what the host
/// resolved about it (`LabelFacts::default()` when nothing), or `None`.
///
/// ```
/// use lowdown_core::target_label::{target_label, LabelFacts, PackageFact, Registry};
/// let argv = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
/// let none = LabelFacts::default();
/// assert_eq!(target_label(&argv("npx -y @modelcontextprotocol/server-everything"), &none).as_deref(),
///            Some("npm:@modelcontextprotocol/server-everything"));
/// let bin = "/p/node_modules/.bin/mcp-server-everything";
/// let facts = LabelFacts {
///     packages: vec![PackageFact { arg: bin.into(), registry: Registry::Npm,
///                                  name: "@modelcontextprotocol/server-everything".into() }],
///     cwd: None,
/// };
/// assert_eq!(target_label(&argv(bin), &facts).as_deref(),
///            Some("npm:@modelcontextprotocol/server-everything"));
/// ```
pub fn target_label(argv: &[String], facts: &LabelFacts) -> Option<String> {
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let r = Resolver {
        facts,
        cwd: facts.cwd.clone(),
    };
    r.label(&argv, 0).filter(|l| names::safe(l))
}

/// Works out labels for one command line, with the host's facts.
pub(super) struct Resolver<'a> {
    facts: &'a LabelFacts,
    /// The working directory of the command being read (`uv --directory` changes it).
    cwd: Option<String>,
}

/// The command's file name, lowercase, without directory or Windows executable extension.
pub(super) fn command_name(cmd: &str) -> String {
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

impl Resolver<'_> {
    fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    /// The package the host found `word` belongs to, as a label.
    fn fact(&self, word: &str) -> Option<String> {
        let f = self.facts.package(word)?;
        match f.registry {
            Registry::Npm => names::npm(&f.name).filter(|l| l.starts_with("npm:")),
            Registry::Pypi => names::pypi(&f.name).filter(|l| l.starts_with("pypi:")),
        }
    }

    /// A file or command word: its package when the host resolved one, else its name.
    fn file(&self, word: &str) -> Option<String> {
        self.fact(word).or_else(|| files::file(word, self.cwd()))
    }

    /// An npm package spec, or a path given to an npm runner.
    fn npm_spec(&self, spec: &str) -> Option<String> {
        let bare = spec.strip_prefix("npm:").unwrap_or(spec);
        if names::is_path(bare) {
            return self.file(bare);
        }
        names::npm(spec)
    }

    /// A Python requirement, or a path given to a Python runner.
    fn pypi_spec(&self, spec: &str) -> Option<String> {
        let bare = spec.strip_prefix("pypi:").unwrap_or(spec);
        if names::is_path(bare) {
            return self.file(bare);
        }
        names::pypi(spec)
    }

    fn label(&self, argv: &[&str], depth: usize) -> Option<String> {
        let (cmd, args) = argv.split_first()?;
        if depth > MAX_WRAPPERS {
            return None;
        }
        let name = command_name(cmd);
        let sub = args.first().copied();
        let rest = args.get(1..).unwrap_or(&[]);
        match name.as_str() {
            "npx" | "bunx" => self.npm_runner(args, true),
            "pnpx" => self.npm_runner(args, false),
            "npm" if matches!(sub, Some("exec" | "x")) => self.npm_runner(rest, true),
            "pnpm" | "yarn" if sub == Some("dlx") => self.npm_runner(rest, false),
            "bun" => match sub {
                Some("x") => self.npm_runner(rest, true),
                Some("run") => self.script(rest, BUN_VALUES, &[]),
                _ => self.script(args, BUN_VALUES, &[]),
            },
            "uvx" => self.python_runner(args, UV_VALUES, "--from"),
            "uv" => {
                let at = first_positional(args, UV_VALUES, &[])?;
                match (args[at], args.get(at + 1).copied()) {
                    ("run", _) => self.uv_run(&args[..at], &args[at + 1..], depth),
                    ("tool", Some("run")) => {
                        self.python_runner(&args[at + 2..], UV_VALUES, "--from")
                    }
                    _ => None,
                }
            }
            "pipx" if sub == Some("run") => self.python_runner(rest, PIPX_VALUES, "--spec"),
            "node" | "nodejs" | "tsx" | "ts-node" => {
                self.script(args, NODE_VALUES, &["-e", "--eval", "-p", "--print"])
            }
            "deno" if sub == Some("run") => {
                let at = first_positional(rest, DENO_VALUES, &["--eval"])?;
                let spec = rest[at];
                let named =
                    spec.starts_with("npm:") || spec.starts_with("jsr:") || names::is_url(spec);
                let label = if named {
                    names::deno(spec)
                } else {
                    self.file(spec)
                };
                bridges::bridged(label, &rest[at + 1..])
            }
            "docker" | "podman" | "nerdctl" => match (sub, args.get(1).copied()) {
                (Some("run"), _) => self.container(rest),
                (Some("container"), Some("run")) => self.container(&args[2..]),
                _ => None,
            },
            "mcp" | "fastmcp" if sub == Some("run") => self.mcp_run(rest),
            "java" | "javaw" => self.java(args),
            "go" if sub == Some("run") => self.go_run(rest),
            "cargo" => self.cargo(args),
            "dotnet" => self.dotnet(args),
            // Runners with another subcommand (`npm start`, `uv pip`, `deno task`) name no target.
            "npm" | "pnpm" | "yarn" | "pipx" | "deno" | "go" => None,
            "env" => self.wrapped_by_env(args, depth),
            "cmd" => {
                let at = args
                    .iter()
                    .position(|a| a.eq_ignore_ascii_case("/c") || a.eq_ignore_ascii_case("/k"))?;
                let inner = &args[at + 1..];
                if inner.len() == 1 {
                    let words: Vec<&str> = inner[0].split_whitespace().collect();
                    return self.label(&words, depth + 1);
                }
                self.label(inner, depth + 1)
            }
            "sh" | "bash" | "zsh" | "dash" | "fish" | "pwsh" | "powershell" => self.script(
                args,
                &[],
                &["-c", "-command", "-Command", "-EncodedCommand"],
            ),
            n if is_python(n) => self.python(args),
            _ => bridges::bridged(self.file(cmd), args),
        }
    }

    /// `npx`-like: the package from `-p/--package`, else the first positional. A runner that
    /// runs the project's own bins first (`local`: npx, `npm exec`, bunx) labels a bare name
    /// the host found in `node_modules/.bin` by the package that owns it, as it would run it;
    /// `pnpm dlx` and `yarn dlx` always fetch the registry's package of that name.
    fn npm_runner(&self, args: &[&str], local: bool) -> Option<String> {
        let at = first_positional(args, NPX_VALUES, &["-c", "--call"]);
        let from_flag = flag_value(args, "--package", NPX_VALUES)
            .or_else(|| flag_value(args, "-p", NPX_VALUES));
        let spec = from_flag.or_else(|| at.map(|at| args[at]))?;
        let local_bin = from_flag.is_none() && local;
        let label = local_bin
            .then(|| self.fact(spec))
            .flatten()
            .or_else(|| self.npm_spec(spec));
        let after = at.map_or(&[][..], |at| &args[at + 1..]);
        bridges::bridged(label, after)
    }

    /// `uvx`/`pipx run`-like: the package from `from_flag`, else the first positional.
    /// A `from_flag` naming no usable package (`--from .`) falls back to the command.
    fn python_runner(&self, args: &[&str], values: &[&str], from_flag: &str) -> Option<String> {
        let at = first_positional(args, values, &[])?;
        if let Some(label) = self.python_cli_run(&args[at..]) {
            return label;
        }
        let label = flag_value(args, from_flag, values)
            .and_then(|spec| self.pypi_spec(spec))
            .or_else(|| self.pypi_spec(args[at]));
        bridges::bridged(label, &args[at + 1..])
    }

    /// `uv [options] run [options] …`: a script path, a module (`-m`), `python …`, `mcp run
    /// FILE`, or a command of the project. `--directory` before or after `run` is where the
    /// command runs.
    fn uv_run(&self, before: &[&str], args: &[&str], depth: usize) -> Option<String> {
        let dir = flag_value(args, "--directory", UV_VALUES)
            .or_else(|| flag_value(before, "--directory", UV_VALUES));
        let inner = Resolver {
            facts: self.facts,
            cwd: match (dir, self.cwd()) {
                (Some(d), Some(cwd)) if !d.starts_with(['/', '\\', '~']) => {
                    Some(format!("{cwd}/{d}"))
                }
                (Some(d), _) => Some(d.to_owned()),
                (None, cwd) => cwd.map(str::to_owned),
            },
        };
        let module = args
            .iter()
            .take_while(|a| **a != "--")
            .any(|a| *a == "-m" || *a == "--module");
        let at = first_positional(args, UV_VALUES, &[])?;
        if module {
            return names::pypi(args[at].split('.').next()?);
        }
        if let Some(label) = inner.python_cli_run(&args[at..]) {
            return label;
        }
        let command = command_name(args[at]);
        if is_python(&command) || matches!(command.as_str(), "node" | "npx" | "uvx") {
            return inner.label(&args[at..], depth + 1);
        }
        bridges::bridged(inner.file(args[at]), &args[at + 1..])
    }

    /// `python [flags] (-m MOD | script.py)`.
    fn python(&self, args: &[&str]) -> Option<String> {
        let mut i = 0;
        while i < args.len() {
            match args[i] {
                "-c" => return None,
                "-m" => return names::pypi(args.get(i + 1)?.split('.').next()?),
                a if a.starts_with("-m") && a.len() > 2 => {
                    return names::pypi(a[2..].split('.').next()?)
                }
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
        if script == "-" {
            return None;
        }
        bridges::bridged(self.file(script), &args[i + 1..])
    }

    /// A runner whose first positional is a script file.
    fn script(&self, args: &[&str], values: &[&str], inline_code: &[&str]) -> Option<String> {
        let at = first_positional(args, values, inline_code)?;
        bridges::bridged(self.file(args[at]), &args[at + 1..])
    }

    /// `docker run [options] IMAGE [command]` (also podman, nerdctl).
    fn container(&self, args: &[&str]) -> Option<String> {
        let (at, rootfs) = containers::image(args)?;
        if rootfs {
            return self.file(args[at]);
        }
        names::oci(args[at])
    }

    /// `env [-i] [-u NAME] [NAME=VALUE]... command`.
    fn wrapped_by_env(&self, args: &[&str], depth: usize) -> Option<String> {
        let mut i = 0;
        while i < args.len() {
            match args[i] {
                "-u" | "--unset" | "-C" | "--chdir" => i += 2,
                "-S" | "--split-string" => return None,
                a if a.starts_with('-') || (a.contains('=') && !a.starts_with('=')) => i += 1,
                _ => break,
            }
        }
        self.label(args.get(i..)?, depth + 1)
    }
}
