//! Flags of the runner commands: which take a value, and where the first positional is.

/// Index of the first positional argument: flags are skipped, with the following argument
/// when they are listed in `values` (unless written `--flag=value`); `--` ends the flags.
/// `None` when a flag in `inline_code` appears first or there is no positional.
pub(super) fn first_positional(
    args: &[&str],
    values: &[&str],
    inline_code: &[&str],
) -> Option<usize> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "--" {
            return (i + 1 < args.len()).then_some(i + 1);
        }
        if a.len() > 1 && a.starts_with('-') {
            let flag = a.split('=').next().unwrap_or(a);
            if inline_code.contains(&flag) {
                return None;
            }
            if !a.contains('=') && values.contains(&flag) {
                i += 1;
            }
            i += 1;
            continue;
        }
        return Some(i);
    }
    None
}

/// The value of `flag` (`--flag X` or `--flag=X`), if given before the first positional.
pub(super) fn flag_value<'a>(args: &[&'a str], flag: &str, values: &[&str]) -> Option<&'a str> {
    let end = first_positional(args, values, &[]).unwrap_or(args.len());
    let mut i = 0;
    while i < end {
        if args[i] == flag {
            return args.get(i + 1).copied();
        }
        if let Some(v) = args[i].strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
            return Some(v);
        }
        i += 1;
    }
    None
}

/// Flags of `npx`-like runners that take a value.
pub(super) const NPX_VALUES: &[&str] = &[
    "-p",
    "--package",
    "--registry",
    "--cache",
    "--userconfig",
    "--prefix",
    "-w",
    "--workspace",
    "--node-options",
    "--shell",
    "--script-shell",
];
/// Flags of `uv`, `uvx` and `uv run` that take a value.
pub(super) const UV_VALUES: &[&str] = &[
    "--from",
    "--with",
    "--with-editable",
    "--with-requirements",
    "-p",
    "--python",
    "--index",
    "--index-url",
    "--extra-index-url",
    "--default-index",
    "-f",
    "--find-links",
    "-c",
    "--constraints",
    "--overrides",
    "--build-constraints",
    "--refresh-package",
    "--reinstall-package",
    "--upgrade-package",
    "-P",
    "--directory",
    "--project",
    "--package",
    "--extra",
    "--group",
    "--only-group",
    "--no-group",
    "--env-file",
    "--cache-dir",
    "--config-file",
    "--color",
    "--python-preference",
    "--exclude-newer",
    "--index-strategy",
    "--keyring-provider",
    "--resolution",
    "--prerelease",
    "--link-mode",
    "-C",
    "--config-setting",
    "--no-binary-package",
    "--no-build-package",
    "--allow-insecure-host",
];
/// Flags of `pipx run` that take a value.
pub(super) const PIPX_VALUES: &[&str] = &[
    "--spec",
    "--python",
    "--index-url",
    "-i",
    "--pip-args",
    "--backend",
    "--fetch-missing-python",
];
/// Flags of `node`, `tsx`, `ts-node` that take a value.
pub(super) const NODE_VALUES: &[&str] = &[
    "-r",
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
    "-C",
    "--conditions",
    "--input-type",
    "--title",
    "--env-file",
    "--tsconfig",
];
/// Flags of `bun` that take a value.
pub(super) const BUN_VALUES: &[&str] =
    &["--cwd", "--env-file", "-c", "--config", "-r", "--preload"];
/// Flags of `deno run` that take a value.
pub(super) const DENO_VALUES: &[&str] = &[
    "-c",
    "--config",
    "--import-map",
    "--location",
    "--seed",
    "--cert",
    "--lock",
    "--env-file",
    "--ext",
    "--v8-flags",
];
/// Flags of `python` that take a value.
pub(super) const PYTHON_VALUES: &[&str] = &["-X", "-W", "--check-hash-based-pycs"];
