//! Build tools that run an artefact: `java -jar X.jar`, `go run PKG`, `cargo run -p X`,
//! `dotnet run --project X`. The label is that artefact, never the tool.

use super::flags::{first_positional, flag_value};
use super::Resolver;

/// Options of `java` that take a value (the launcher's `--opt value` forms).
const JAVA_VALUES: &[&str] = &[
    "-cp",
    "-classpath",
    "--class-path",
    "-p",
    "--module-path",
    "--upgrade-module-path",
    "--add-modules",
    "--limit-modules",
    "--add-reads",
    "--add-exports",
    "--add-opens",
    "--patch-module",
    "--enable-native-access",
    "--source",
];

/// Flags of `go run` that take a value (the build flags of `go help build`).
const GO_VALUES: &[&str] = &[
    "-C",
    "-exec",
    "-p",
    "-asmflags",
    "-buildmode",
    "-buildvcs",
    "-compiler",
    "-covermode",
    "-coverpkg",
    "-gccgoflags",
    "-gcflags",
    "-installsuffix",
    "-ldflags",
    "-mod",
    "-modfile",
    "-o",
    "-overlay",
    "-pgo",
    "-pkgdir",
    "-tags",
    "-toolexec",
];

/// Options of `cargo` before its subcommand that take a value.
const CARGO_GLOBAL_VALUES: &[&str] = &["--config", "-Z", "-C", "--color", "--explain"];

/// Options of `cargo run` that take a value.
const CARGO_RUN_VALUES: &[&str] = &[
    "-p",
    "--package",
    "--bin",
    "--example",
    "-F",
    "--features",
    "-j",
    "--jobs",
    "--profile",
    "--target",
    "--target-dir",
    "--manifest-path",
    "--message-format",
    "--color",
    "--config",
    "-Z",
    "--lockfile-path",
    "--artifact-dir",
];

/// Options of `dotnet run` that take a value.
const DOTNET_RUN_VALUES: &[&str] = &[
    "--project",
    "-p",
    "--file",
    "-c",
    "--configuration",
    "-f",
    "--framework",
    "-r",
    "--runtime",
    "-a",
    "--arch",
    "--os",
    "--launch-profile",
    "-lp",
    "-v",
    "--verbosity",
    "-e",
    "--environment",
    "--artifacts-path",
];

/// Options of `dotnet exec` that take a value.
const DOTNET_EXEC_VALUES: &[&str] = &[
    "--runtimeconfig",
    "--depsfile",
    "--additionalprobingpath",
    "--additional-deps",
    "--fx-version",
    "--roll-forward",
];

/// A name made of the characters of a crate, a Java module or a class.
fn plain(name: &str, extra: &[char]) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || extra.contains(&c))
}

/// The parent folder of a file path (`.` when it has none).
fn parent(p: &str) -> &str {
    p.rsplit_once(['/', '\\']).map_or(".", |(d, _)| d)
}

impl Resolver<'_> {
    /// `java [options] (-jar FILE.jar | -m MODULE[/CLASS] | CLASS | FILE.java)`.
    pub(super) fn java(&self, args: &[&str]) -> Option<String> {
        let mut i = 0;
        while i < args.len() {
            let a = args[i];
            match a {
                "-jar" => return self.file(args.get(i + 1)?),
                "-m" | "--module" => return module(args.get(i + 1)?),
                _ if a.starts_with("--module=") => return module(&a["--module=".len()..]),
                // `@argfiles` hold more options; the core cannot read them.
                _ if a.starts_with('-') || a.starts_with('@') => {
                    i += if JAVA_VALUES.contains(&a) { 2 } else { 1 };
                }
                _ if a.ends_with(".java") => return self.file(a),
                _ => return plain(a, &['.', '$']).then(|| a.to_owned()),
            }
        }
        None
    }

    /// `go run [build flags] (PACKAGE[@version] | FILE.go...)`: a remote package is
    /// `go:<module path>`, a local one its folder, Go files their file.
    pub(super) fn go_run(&self, args: &[&str]) -> Option<String> {
        // The flag package accepts `--flag` for `-flag`.
        let norm: Vec<String> = args
            .iter()
            .map(|a| match a.strip_prefix("--") {
                Some(rest) if !rest.is_empty() => format!("-{rest}"),
                _ => (*a).to_owned(),
            })
            .collect();
        let args: Vec<&str> = norm.iter().map(String::as_str).collect();
        let at = first_positional(&args, GO_VALUES, &[])?;
        // `-C dir` runs in another directory.
        let cwd = match (flag_value(&args, "-C", GO_VALUES), self.cwd()) {
            (Some(dir), Some(cwd)) if !dir.starts_with('/') => Some(format!("{cwd}/{dir}")),
            (Some(dir), _) => Some(dir.to_owned()),
            (None, cwd) => cwd.map(str::to_owned),
        };
        let cwd = cwd.as_deref();
        let pkg = args[at];
        if pkg.ends_with(".go") {
            return super::files::file(pkg, cwd);
        }
        let local = pkg.starts_with(['.', '/', '\\']) || !pkg.split('/').next()?.contains('.');
        if local {
            return super::files::folder(pkg, cwd);
        }
        let path = pkg.split('@').next()?;
        let ok =
            plain(path, &['.', '/', '~']) && !path.split('/').any(|s| s.is_empty() || s == "..");
        ok.then(|| format!("go:{path}"))
    }

    /// `cargo [+toolchain] [options] run [options]`: the binary, example or package run,
    /// else the project folder.
    pub(super) fn cargo(&self, args: &[&str]) -> Option<String> {
        let args: Vec<&str> = args
            .iter()
            .copied()
            .filter(|a| !a.starts_with('+'))
            .collect();
        let at = first_positional(&args, CARGO_GLOBAL_VALUES, &[])?;
        if !matches!(args[at], "run" | "r") {
            return None;
        }
        let run = &args[at + 1..];
        let end = run.iter().position(|a| *a == "--").unwrap_or(run.len());
        let run = &run[..end];
        for flag in ["--bin", "--example", "-p", "--package"] {
            if let Some(name) = flag_value(run, flag, CARGO_RUN_VALUES) {
                return plain(name, &[]).then(|| self.file(name)).flatten();
            }
        }
        match flag_value(run, "--manifest-path", CARGO_RUN_VALUES) {
            Some(manifest) => super::files::folder(parent(manifest), self.cwd()),
            None => super::files::folder(".", self.cwd()),
        }
    }

    /// `dotnet run [--project X | FILE.cs]`, `dotnet X.dll`, `dotnet exec X.dll`.
    pub(super) fn dotnet(&self, args: &[&str]) -> Option<String> {
        let (sub, rest) = args.split_first()?;
        match *sub {
            "run" => {
                let project = flag_value(rest, "--project", DOTNET_RUN_VALUES)
                    .or_else(|| flag_value(rest, "-p", DOTNET_RUN_VALUES))
                    .or_else(|| flag_value(rest, "--file", DOTNET_RUN_VALUES))
                    .or_else(|| {
                        let at = first_positional(rest, DOTNET_RUN_VALUES, &[])?;
                        rest[at].ends_with(".cs").then_some(rest[at])
                    });
                match project {
                    Some(p) if is_project_file(p) => self.file(p),
                    Some(p) => super::files::folder(p, self.cwd()),
                    None => super::files::folder(".", self.cwd()),
                }
            }
            "exec" => {
                let at = first_positional(rest, DOTNET_EXEC_VALUES, &[])?;
                self.file(rest[at])
            }
            dll if dll.ends_with(".dll") => self.file(dll),
            _ => None,
        }
    }
}

fn is_project_file(p: &str) -> bool {
    [".csproj", ".fsproj", ".vbproj", ".cs"]
        .iter()
        .any(|ext| p.to_ascii_lowercase().ends_with(ext))
}

/// `MODULE[/CLASS]` of `java -m`: the module.
fn module(spec: &str) -> Option<String> {
    let m = spec.split('/').next()?;
    plain(m, &['.']).then(|| m.to_owned())
}
