//! The server's own files (`LOWDOWN_HOME` and the SQLite database, which holds today's salt,
//! the HMAC secret and private tool definitions): created for the user who runs the server
//! alone (0700 / 0600), and a warning for an existing one that others can read.

use std::path::Path;

/// Creates `home` as 0700 when it is missing; otherwise a warning when others can reach it.
pub fn prepare_home(home: &Path) -> std::io::Result<Option<String>> {
    if home.exists() {
        return Ok(open_to_others(home));
    }
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(home)?;
    Ok(None)
}

/// Creates the SQLite file of `url` as 0600 when it is missing (SQLite gives its `-wal`
/// and `-shm` files the same mode); otherwise a warning when others can read it.
pub fn prepare_sqlite(url: &str) -> std::io::Result<Option<String>> {
    let Some(path) = sqlite_path(url) else {
        return Ok(None);
    };
    create_private(&path)
}

/// Creates the SQLite file `path` as 0600 when it is missing; otherwise a warning when
/// others can read it.
fn create_private(path: &Path) -> std::io::Result<Option<String>> {
    if path.exists() {
        return Ok(open_to_others(path));
    }
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    match o.open(path) {
        Ok(_) => Ok(None),
        // Its directory is missing: SQLite will say so in its own words.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(open_to_others(path)),
        Err(e) => Err(e),
    }
}

/// Refuses a roll-ups file beside the SQLite file of `url` (`<file>-rollups`) that is a
/// symbolic link or not a regular file: the server makes it again when it does not match,
/// which must never reach a file somewhere else. A missing one is created 0600, as the
/// main file is.
pub fn prepare_rollups(url: &str) -> std::io::Result<()> {
    let Some(main) = sqlite_path(url) else {
        return Ok(());
    };
    let path = std::path::PathBuf::from(format!("{}-rollups", main.display()));
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_file() => Ok(()),
        Ok(_) => Err(std::io::Error::other(format!(
            "{} is not a regular file (a link or a directory); move it away: the server makes its roll-ups file there",
            path.display()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => create_private(&path).map(drop),
        Err(e) => Err(e),
    }
}

/// The file path of a `sqlite://PATH?…` or `sqlite:PATH` URL (none for `:memory:`),
/// percent-decoded as sqlx reads it.
fn sqlite_path(url: &str) -> Option<std::path::PathBuf> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or_default();
    if path.is_empty() || path.starts_with(":memory:") {
        return None;
    }
    let (bytes, mut out) = (path.as_bytes(), Vec::with_capacity(path.len()));
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    Some(std::path::PathBuf::from(
        String::from_utf8_lossy(&out).into_owned(),
    ))
}

/// A warning naming `path` and its mode when group or others have any access to it.
#[cfg(unix)]
fn open_to_others(path: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o777;
    (mode & 0o077 != 0).then(|| {
        format!(
            "{} is open to other users (mode {mode:o}); it holds the server's secrets: chmod {} {}",
            path.display(),
            if path.is_dir() { "700" } else { "600" },
            path.display()
        )
    })
}

#[cfg(not(unix))]
fn open_to_others(_: &Path) -> Option<String> {
    None
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_fresh_home_and_database_are_the_users_alone() {
        let root = std::env::temp_dir().join(format!("lowdown-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let home = root.join("home");
        assert_eq!(prepare_home(&home).unwrap(), None);
        assert_eq!(mode(&home), 0o700);
        let db = home.join("lowdown.db");
        let url = format!("sqlite://{}?mode=rwc", db.display());
        assert_eq!(prepare_sqlite(&url).unwrap(), None);
        assert_eq!(mode(&db), 0o600);

        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
        let w = prepare_home(&home).unwrap().unwrap();
        assert!(w.contains("mode 755") && w.contains("chmod 700"), "{w}");
        let w = prepare_sqlite(&url).unwrap().unwrap();
        assert!(w.contains("mode 644") && w.contains("chmod 600"), "{w}");
        assert_eq!(mode(&db), 0o644, "an existing file is left as it is");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn urls_without_a_file_are_left_alone() {
        assert_eq!(sqlite_path("sqlite::memory:"), None);
        assert_eq!(sqlite_path("postgres://u@h/db"), None);
        assert_eq!(
            sqlite_path("sqlite:///srv/l.db?mode=rwc"),
            Some(Path::new("/srv/l.db").to_owned())
        );
        // Percent-decoded, as sqlx reads the path.
        assert_eq!(
            sqlite_path("sqlite:///srv/a%3Fb%2541/l.db?mode=rwc"),
            Some(Path::new("/srv/a?b%41/l.db").to_owned())
        );
    }
}
