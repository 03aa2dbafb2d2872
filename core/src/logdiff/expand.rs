//! Expanding `--watch-log` paths: `%VAR%`, `$VAR`, `${VAR}` and a leading `~`.

/// Expands `path` with `env` (a variable lookup supplied by the host) and `home` (the user's
/// home directory, for a leading `~`, `~/` or `~\`). Variables that `env` does not know, a
/// `~user` form, and a `~` without `home` are left exactly as written, so a mistake shows up
/// in the path rather than silently becoming an empty string. Values are not expanded again.
pub fn expand_path(path: &str, env: &dyn Fn(&str) -> Option<String>, home: Option<&str>) -> String {
    let mut out = String::with_capacity(path.len());
    let mut rest = path;
    if let Some(home) = home {
        if let Some(after) = path.strip_prefix('~') {
            if after.is_empty() || after.starts_with('/') || after.starts_with('\\') {
                out.push_str(home);
                rest = after;
            }
        }
    }
    while let Some(at) = rest.find(['$', '%']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let (name, len) = variable(tail).unwrap_or(("", 0));
        match (len > 0).then(|| env(name)).flatten() {
            Some(value) => {
                out.push_str(&value);
                rest = &tail[len..];
            }
            None => {
                out.push_str(&tail[..1]);
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The variable name at the start of `s` (which starts with `$` or `%`) and the length of
/// the whole reference, when it is one.
fn variable(s: &str) -> Option<(&str, usize)> {
    let is_name = |n: &str| {
        n.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if let Some(body) = s.strip_prefix("${") {
        let close = body.find('}')?;
        let name = &body[..close];
        return is_name(name).then_some((name, close + 3));
    }
    if let Some(body) = s.strip_prefix('$') {
        let n = body
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(body.len());
        let name = &body[..n];
        return is_name(name).then_some((name, n + 1));
    }
    let body = s.strip_prefix('%')?;
    let close = body.find('%')?;
    let name = &body[..close];
    // Windows names may hold spaces and parentheses (`%ProgramFiles(x86)%`), never separators.
    (!name.is_empty() && !name.contains(['/', '\\', '$'])).then_some((name, close + 2))
}
