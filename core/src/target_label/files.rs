//! Files and folders as labels: a file's name without its extension, and, for the generic
//! names every project uses (`index`, `main`, `server`, `app`, `cli`), the project folder
//! in front of it, so two unrelated `index.js` servers never share a history.

/// File names too common to tell servers apart.
const GENERIC: &[&str] = &["index", "main", "server", "app", "cli"];

/// Folders that hold build output or sources rather than name a project: looked through
/// when finding the project folder (`/srv/weather/dist/index.js` is `weather/index`).
const LOOKED_THROUGH: &[&str] = &[
    "dist", "build", "out", "lib", "src", "bin", "cmd", "target", "release", "debug",
];

/// Longest folder name put in a label.
const MAX_FOLDER: usize = 100;

fn is_generic(name: &str) -> bool {
    GENERIC.iter().any(|g| g.eq_ignore_ascii_case(name))
}

/// The folders leading to `p` (all of them when `whole`, else all but the last segment),
/// resolved against `cwd` when `p` is relative: `.` dropped, `..` steps back.
fn folders(p: &str, cwd: Option<&str>, whole: bool) -> Vec<String> {
    let p = p.strip_prefix("file:").unwrap_or(p);
    let rooted = p.starts_with(['/', '\\', '~'])
        || (p.len() > 1 && p.as_bytes()[1] == b':' && p.as_bytes()[0].is_ascii_alphabetic());
    let mut parts: Vec<&str> = p.split(['/', '\\']).filter(|s| !s.is_empty()).collect();
    if !whole {
        parts.pop();
    }
    let mut out: Vec<String> = Vec::new();
    if !rooted {
        if let Some(cwd) = cwd {
            out = folders(cwd, None, true);
        }
    }
    for part in parts {
        match part {
            "." | "~" => {}
            ".." => {
                out.pop();
            }
            // A Windows drive (`C:`) is a root, not a folder.
            d if d.len() == 2 && d.ends_with(':') => {}
            d => out.push(d.to_owned()),
        }
    }
    out
}

/// The project folder among `folders`: the nearest one that is not looked through, when
/// its name is safe to publish.
fn project(folders: &[String]) -> Option<&str> {
    let dir = folders
        .iter()
        .rev()
        .find(|d| !LOOKED_THROUGH.iter().any(|l| l.eq_ignore_ascii_case(d)))?;
    let safe = dir.len() <= MAX_FOLDER
        && !dir.starts_with('.')
        && dir
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    safe.then_some(dir.as_str())
}

/// `name`, or `<project folder>/name` when `name` is generic and a folder is known.
fn with_project(name: String, folders: &[String]) -> Option<String> {
    if name.contains(':') {
        // `npm:x.js` must not pass itself off as a namespaced label.
        return None;
    }
    if !is_generic(&name) {
        return Some(name);
    }
    Some(match project(folders) {
        Some(dir) => format!("{dir}/{name}"),
        None => name,
    })
}

/// The label of a file path or command: its basename without the last extension, with
/// the project folder in front of a generic name.
pub(super) fn file(p: &str, cwd: Option<&str>) -> Option<String> {
    with_project(super::names::path(p)?, &folders(p, cwd, false))
}

/// The label of a folder (a Go package directory, a .NET project folder): its name, with
/// the project folder in front of a generic one; `.` is the working directory.
pub(super) fn folder(p: &str, cwd: Option<&str>) -> Option<String> {
    let mut all = folders(p, cwd, true);
    let name = all.pop()?;
    with_project(name, &all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_names_get_their_project_folder() {
        let cases = [
            ("/srv/weather/dist/index.js", None, Some("weather/index")),
            (
                "index.js",
                Some("/home/me/notes-server"),
                Some("notes-server/index"),
            ),
            (
                "./build/main.py",
                Some("/home/me/tools"),
                Some("tools/main"),
            ),
            (
                "../api/server.ts",
                Some("/home/me/mono/web"),
                Some("api/server"),
            ),
            ("C:\\work\\crm\\src\\app.js", None, Some("crm/app")),
            ("index.js", None, Some("index")),
            ("/My Projects/index.js", None, Some("index")),
            ("/opt/weather-server.js", None, Some("weather-server")),
            ("npm:evil.js", None, None),
        ];
        for (p, cwd, want) in cases {
            assert_eq!(file(p, cwd).as_deref(), want, "{p}");
        }
        assert_eq!(
            folder(".", Some("/home/me/weather")).as_deref(),
            Some("weather")
        );
        assert_eq!(
            folder("./cmd/server", Some("/home/me/weather")).as_deref(),
            Some("weather/server")
        );
        assert_eq!(folder(".", None), None);
    }
}
