//! Turning one command-line word into a namespaced name: npm, PyPI, OCI, JSR or a file name.

/// Longest label emitted.
const MAX_LABEL: usize = 214;

/// Whether `label` is safe to record: short, printable, no spaces, no URL or credentials.
pub(super) fn safe(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= MAX_LABEL
        && !label.contains("://")
        && !label.chars().any(|c| {
            c.is_whitespace() || c.is_control() || matches!(c, '?' | '#' | '"' | '\'' | '\\' | '=')
        })
}

/// Whether a word is a file path rather than a name.
pub(super) fn is_path(s: &str) -> bool {
    let b = s.as_bytes();
    s.starts_with(['.', '/', '~'])
        || s.contains('\\')
        || s.starts_with("file:")
        || (b.len() > 1 && b[1] == b':' && b[0].is_ascii_alphabetic())
}

/// Whether a word is a URL or git spec.
pub(super) fn is_url(s: &str) -> bool {
    s.contains("://")
        || [
            "git+",
            "git:",
            "github:",
            "gitlab:",
            "bitbucket:",
            "gist:",
            "http:",
            "https:",
        ]
        .iter()
        .any(|p| s.starts_with(p))
}

/// A file path or command: its basename without the last extension.
pub(super) fn path(p: &str) -> Option<String> {
    let p = p.strip_prefix("file:").unwrap_or(p);
    let base = p.trim_end_matches(['/', '\\']).rsplit(['/', '\\']).next()?;
    let stem = match base.rfind('.') {
        Some(dot) if dot > 0 => &base[..dot],
        _ => base,
    };
    (!stem.is_empty() && stem != "." && stem != "..").then(|| stem.to_owned())
}

/// A URL or git spec: its last path segment without `.git`/archive extension. Scheme,
/// host, user, password, query and fragment are all dropped.
fn url(u: &str) -> Option<String> {
    let u = u.split(['?', '#']).next()?;
    let after_scheme = u.split_once("://").map_or(u, |(_, r)| r);
    let after_scheme = after_scheme
        .split_once(':')
        .filter(|(s, _)| !s.contains('/'))
        .map_or(after_scheme, |(s, r)| {
            // `github:o/r` style: drop the scheme word; `host:port/...` keeps working below.
            if s.contains('.') || s.contains('@') {
                after_scheme
            } else {
                r
            }
        });
    let last = after_scheme.trim_end_matches('/').rsplit('/').next()?;
    let last = last.rsplit('@').next()?;
    let last = [".git", ".tar.gz", ".tgz", ".zip", ".whl"]
        .iter()
        .find_map(|e| last.strip_suffix(e))
        .unwrap_or(last);
    path(last)
}

/// `npm:<name>` of an npm package spec (scope kept, version, tag or range dropped).
pub(super) fn npm(spec: &str) -> Option<String> {
    let spec = spec.strip_prefix("npm:").unwrap_or(spec);
    if is_path(spec) {
        return path(spec);
    }
    if is_url(spec) {
        return url(spec);
    }
    let name = match spec.strip_prefix('@') {
        Some(scoped) => {
            let (scope, rest) = scoped.split_once('/')?;
            let pkg = rest.split('@').next()?;
            format!("@{scope}/{pkg}")
        }
        // `owner/repo` is GitHub shorthand for npm.
        None if spec.contains('/') => return url(spec),
        None => spec.split('@').next()?.to_owned(),
    };
    npm_name_ok(&name).then(|| format!("npm:{name}"))
}

fn npm_name_ok(name: &str) -> bool {
    let bare = name.strip_prefix('@').unwrap_or(name);
    let parts: Vec<&str> = bare.split('/').collect();
    !bare.is_empty()
        && parts.len() <= 2
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~'))
        })
}

/// `pypi:<name>` of a Python requirement (extras and version specifiers dropped, PEP 503
/// normalised: lowercase, runs of `-`, `_`, `.` become one `-`).
pub(super) fn pypi(spec: &str) -> Option<String> {
    let spec = spec.strip_prefix("pypi:").unwrap_or(spec);
    if is_path(spec) {
        return path(spec);
    }
    if is_url(spec) && !spec.contains(" @ ") {
        return url(spec);
    }
    let name = spec
        .split(['[', '=', '<', '>', '!', '~', ';', '@', ' ', ','])
        .next()?;
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return None;
    }
    let mut out = String::with_capacity(name.len() + 5);
    out.push_str("pypi:");
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
        } else {
            if sep && out.len() > 5 {
                out.push('-');
            }
            sep = false;
            out.push(c.to_ascii_lowercase());
        }
    }
    (out.len() > 5).then_some(out)
}

/// `oci:<image>` of a container image reference, without tag or digest; Docker Hub's
/// implicit `docker.io/` and `library/` prefixes are dropped so both spellings agree. An
/// image from a private registry (`localhost:5000/…`, `registry.corp.internal/…`) has no
/// public name: `None`, so the registry's name never leaves the machine.
pub(super) fn oci(image: &str) -> Option<String> {
    let image = image.strip_prefix("docker://").unwrap_or(image);
    if image.contains("://") {
        return None;
    }
    // The first component names a registry when it has a dot or a port, or is localhost.
    if let Some((first, _)) = image.split_once('/') {
        let host = first.split(':').next().unwrap_or(first);
        let registry = first.contains(['.', ':']) || first.eq_ignore_ascii_case("localhost");
        if registry && crate::telemetry::is_private_name(host) {
            return None;
        }
    }
    let image = image.split('@').next()?;
    let slash = image.rfind('/').map_or(0, |s| s + 1);
    let image = match image[slash..].find(':') {
        Some(colon) => &image[..slash + colon],
        None => image,
    };
    let mut image = image.to_ascii_lowercase();
    for hub in ["docker.io/", "index.docker.io/", "registry-1.docker.io/"] {
        if let Some(rest) = image.strip_prefix(hub) {
            image = rest.to_owned();
        }
    }
    if let Some(rest) = image.strip_prefix("library/") {
        image = rest.to_owned();
    }
    let ok = !image.is_empty()
        && image
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | ':'));
    ok.then(|| format!("oci:{image}"))
}

/// A `deno run` specifier: `npm:`, `jsr:`, a URL or a path.
pub(super) fn deno(spec: &str) -> Option<String> {
    if let Some(rest) = spec.strip_prefix("npm:") {
        // `npm:pkg@1/bin/cli` and `npm:@s/pkg/sub`: drop the subpath after the name.
        let name: String = match rest.strip_prefix('@') {
            Some(scoped) => {
                let mut parts = scoped.splitn(3, '/');
                format!("@{}/{}", parts.next()?, parts.next()?)
            }
            None => rest.split('/').next()?.to_owned(),
        };
        return npm(&name);
    }
    if let Some(rest) = spec.strip_prefix("jsr:") {
        let rest = rest.strip_prefix('/').unwrap_or(rest);
        let scoped = rest.strip_prefix('@')?;
        let mut parts = scoped.splitn(3, '/');
        let (scope, pkg) = (parts.next()?, parts.next()?.split('@').next()?);
        let name = format!("@{scope}/{pkg}");
        return npm_name_ok(&name).then(|| format!("jsr:{name}"));
    }
    if is_url(spec) {
        return url(spec);
    }
    path(spec)
}
