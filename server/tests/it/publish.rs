//! Publishing the dataset (issue 26): the git repository gets one commit per UTC day whose
//! bytes depend on the database only, the Hugging Face layout sits beside it, a DIR that
//! cannot be used is refused before anything is written, and a publish that fails never
//! touches the scan or the server. Scans on past days use a shifted clock; the daily job
//! runs in real `lowdown-server serve` processes whose clock is moved to the scan minute
//! (`LOWDOWN_UNSAFE_TEST_CLOCK_OFFSET_MS`), never slept towards.

use crate::common;
use crate::scanner_fixtures;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{day, TestDb};
use lowdown_server::publish::{self, Action, PublishError};
use lowdown_server::scanner::{run, schedule};
use scanner_fixtures::mcp::Mcp;
use scanner_fixtures::registry::{streamable, Registry};
use scanner_fixtures::{closed_port, config, on_day, MapLookup};

/// A fresh directory path under the temp dir (not created), with a space in its name.
fn fresh(name: &str) -> PathBuf {
    let mut b = [0u8; 4];
    getrandom::fill(&mut b).unwrap();
    std::env::temp_dir().join(format!(
        "lowdown publish {name} {}-{}",
        std::process::id(),
        hex::encode(b)
    ))
}

/// `git ARGS` in `dir` as a user runs it (no user or system configuration), stdout trimmed.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=User", "-c", "user.email=user@example.org"])
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
}

/// Every file under `dir` (`.git` aside) with its bytes, sorted by path.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Fixtures with four remotes (two reach level 2, one answers 401, one is refused).
async fn fixtures() -> (Mcp, Registry) {
    let mcp = Mcp::start(false).await;
    let registry = Registry::start().await;
    let refused = closed_port().await;
    registry.set_entries(
        vec![
            streamable("io.fixture/weather", &mcp.url("ok", "weather")),
            streamable("io.fixture/comma", &mcp.url("ok", "a,b\"c")),
            streamable("io.fixture/auth", &mcp.url("auth", "")),
            streamable(
                "io.fixture/down",
                &format!("http://127.0.0.1:{refused}/mcp"),
            ),
        ],
        3,
    );
    (mcp, registry)
}

/// The end of the latest run, unix ms.
async fn latest_end(t: &TestDb) -> i64 {
    t.row::<(i64,)>(
        "SELECT COALESCE(finished_at, started_at) FROM scan_runs ORDER BY started_at DESC LIMIT 1",
    )
    .await
    .0
}

/// `git log` of HEAD: (subject, author date in seconds, author name <email>) newest first.
fn log(dir: &Path) -> Vec<(String, i64, String)> {
    git(
        dir,
        &["log", "--format=%s%x09%at%x09%an <%ae>%x09%cn <%ce> %ct"],
    )
    .lines()
    .map(|l| {
        let f: Vec<&str> = l.split('\t').collect();
        let at: i64 = f[1].parse().unwrap();
        assert_eq!(
            f[3],
            format!("{} {at}", f[2]),
            "committer is the author, at the same time"
        );
        (f[0].to_owned(), at, f[2].to_owned())
    })
    .collect()
}

async fn one_commit_per_utc_day_and_none_without_a_change(t: &TestDb) {
    let (_mcp, registry) = fixtures().await;
    let cfg = config(&registry.url, MapLookup::default());
    let dir = fresh("days");
    let who = "lowdown-test <lowdown-test@lowdown.invalid>";

    assert_eq!(
        run(&t.db, &on_day(&cfg, -1)).await.unwrap().status,
        "completed"
    );
    let p = publish::publish(&t.db, &dir, "lowdown-test").await.unwrap();
    assert_eq!(
        (p.day.as_str(), p.action),
        (day(-1).as_str(), Action::Committed)
    );
    let yesterday = p.commit.clone();
    let end = latest_end(t).await;
    assert_eq!(
        log(&dir),
        [(
            format!("Lowdown Scanner observations {}", day(-1)),
            end / 1000,
            who.to_owned()
        )],
        "dated by the run's end, by the deployment"
    );
    assert_eq!(git(&dir, &["branch", "--show-current"]), "main");

    // Today's first run: a second commit; its second run replaces it.
    assert_eq!(run(&t.db, &cfg).await.unwrap().status, "completed");
    let p = publish::publish(&t.db, &dir, "lowdown-test").await.unwrap();
    assert_eq!(
        (p.day.as_str(), p.action),
        (day(0).as_str(), Action::Committed)
    );
    let first_today = p.commit.clone();
    assert_eq!(git(&dir, &["rev-parse", "HEAD^"]), yesterday);
    assert_eq!(run(&t.db, &cfg).await.unwrap().status, "completed");
    let p = publish::publish(&t.db, &dir, "lowdown-test").await.unwrap();
    assert_eq!(p.action, Action::Replaced);
    assert_ne!(p.commit, first_today);
    let end = latest_end(t).await;
    let history = log(&dir);
    assert_eq!(history.len(), 2, "one commit per day: {history:?}");
    assert_eq!(
        history[0],
        (
            format!("Lowdown Scanner observations {}", day(0)),
            end / 1000,
            who.to_owned()
        )
    );
    assert_eq!(git(&dir, &["rev-parse", "HEAD^"]), yesterday);
    // Today's commit holds both of today's runs.
    let report = git(&dir, &["show", "HEAD:REPORT.md"]);
    assert_eq!(
        report.matches(&format!("| {} | `sr_", day(0))).count(),
        2,
        "{report}"
    );

    // Nothing new: no commit.
    let p = publish::publish(&t.db, &dir, "lowdown-test").await.unwrap();
    assert_eq!(
        (p.action, p.commit.as_str()),
        (
            Action::Unchanged,
            git(&dir, &["rev-parse", "HEAD"]).as_str()
        )
    );
    assert_eq!(log(&dir).len(), 2);

    // The tree: the export and the notice; the Hugging Face layout is beside it, not in it.
    let tree = git(&dir, &["ls-tree", "-r", "--name-only", "HEAD"]);
    let mut expected = vec!["LICENSE".to_owned(), "REPORT.md".to_owned()];
    let mut months: Vec<String> = [day(-1), day(0)]
        .iter()
        .map(|d| format!("scanner_observations/{}.csv", &d[..7]))
        .collect();
    months.dedup();
    expected.extend(months.clone());
    assert_eq!(tree.lines().collect::<Vec<_>>(), expected);
    assert_eq!(
        git(&dir, &["status", "--porcelain", "--untracked-files=all"]),
        ""
    );
    let license = std::fs::read_to_string(dir.join("LICENSE")).unwrap();
    let retrieved = lowdown_server::clock::iso(end);
    let cite = format!("Lowdown records: lowdown-test, Scanner observations, retrieved {retrieved}. CC BY 4.0, https://creativecommons.org/licenses/by/4.0/");
    assert!(license.contains(&format!("\n    {cite}\n")), "{license}");
    assert!(
        report.contains(&format!("- Cite: {cite}")),
        "the report cites the same way"
    );
    let hf = dir.join("huggingface");
    let card = std::fs::read_to_string(hf.join("README.md")).unwrap();
    assert!(card.starts_with("---\nlicense: cc-by-4.0\n"), "{card}");
    assert!(
        card.contains("    path: data/scanner_observations/*.parquet\n"),
        "{card}"
    );
    assert!(card.contains(&cite));
    let parquet: Vec<String> = files(&hf.join("data/scanner_observations"))
        .into_iter()
        .map(|(p, bytes)| {
            assert_eq!(&bytes[..4], b"PAR1");
            p
        })
        .collect();
    let csv_months: Vec<String> = months
        .iter()
        .map(|m| m[21..].replace(".csv", ".parquet"))
        .collect();
    assert_eq!(parquet, csv_months);
    let _ = std::fs::remove_dir_all(&dir);
}
on_both!(one_commit_per_utc_day_and_none_without_a_change);

/// `lowdown-server publish --out DIR` as an operator runs it.
async fn publish_cli(t: &TestDb, dir: &Path, path: Option<&str>) -> std::process::Output {
    let (url, dir) = (t.url.clone(), dir.to_owned());
    let path = path.map(str::to_owned);
    tokio::task::spawn_blocking(move || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_lowdown-server"));
        c.args(["publish", "--db", &url, "--name", "lowdown-test", "--out"])
            .arg(&dir)
            .env("RUST_LOG", "off");
        if let Some(p) = path {
            c.env("PATH", p);
        }
        c.output().unwrap()
    })
    .await
    .unwrap()
}

async fn the_same_database_gives_the_same_commits_and_files(t: &TestDb) {
    let (_mcp, registry) = fixtures().await;
    let cfg = config(&registry.url, MapLookup::default());
    for days in [-40, -1, 0] {
        assert_eq!(
            run(&t.db, &on_day(&cfg, days)).await.unwrap().status,
            "completed"
        );
    }
    let (a, b) = (fresh("a"), fresh("b"));
    // `b` exists, empty, and has a space in its path (as every `fresh` one has).
    std::fs::create_dir_all(&b).unwrap();
    for dir in [&a, &b] {
        let out = publish_cli(t, dir, None).await;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let said: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(said["action"], "committed");
        assert_eq!(said["day"], day(0));
        assert_eq!(said["commit"], git(dir, &["rev-parse", "HEAD"]));
    }
    assert_eq!(
        git(&a, &["rev-parse", "HEAD", "HEAD^{tree}"]),
        git(&b, &["rev-parse", "HEAD", "HEAD^{tree}"]),
        "same commit and tree"
    );
    assert_eq!(files(&a), files(&b), "same files, the Parquet ones too");
    // Whoever runs it: another identity or signing in the user's configuration changes
    // nothing, as git is run without it.
    let home = fresh("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join(".gitconfig"),
        "[user]\n\tname = Someone Else\n\temail = else@example.org\n[commit]\n\tgpgSign = true\n[core]\n\tautocrlf = true\n[i18n]\n\tcommitEncoding = ISO-8859-1\n",
    )
    .unwrap();
    let c = fresh("c");
    let (url, c2, home2) = (t.url.clone(), c.clone(), home.clone());
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_lowdown-server"))
            .args(["publish", "--db", &url, "--name", "lowdown-test", "--out"])
            .arg(&c2)
            .env("HOME", &home2)
            .env("GIT_AUTHOR_NAME", "Env Name")
            .env("RUST_LOG", "off")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        git(&c, &["rev-parse", "HEAD"]),
        git(&a, &["rev-parse", "HEAD"])
    );
    // The CSV files are the export's.
    let export = fresh("export");
    lowdown_server::export::export(&t.db, &export, "lowdown-test")
        .await
        .unwrap();
    let in_repo: Vec<_> = files(&a)
        .into_iter()
        .filter(|(p, _)| p.starts_with("scanner_observations/") || p == "REPORT.md")
        .collect();
    assert_eq!(in_repo, files(&export));
    for d in [a, b, c, home, export] {
        let _ = std::fs::remove_dir_all(d);
    }
}
on_both!(the_same_database_gives_the_same_commits_and_files);

/// A DIR that cannot be used gets an error naming it and the reason, and keeps every byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dir_that_cannot_be_used_is_refused_and_loses_nothing() {
    let t = TestDb::new(common::Kind::Sqlite).await.unwrap();
    let (_mcp, registry) = fixtures().await;
    let cfg = config(&registry.url, MapLookup::default());
    let empty = fresh("empty");
    // No scan yet: nothing to publish, and nothing made.
    match publish::publish(&t.db, &empty, "lowdown-test").await {
        Err(PublishError::NoRun) => {}
        other => panic!("{other:?}"),
    }
    assert!(!empty.exists());
    run(&t.db, &cfg).await.unwrap();

    // A file.
    let file = fresh("file");
    std::fs::write(&file, "precious").unwrap();
    let e = publish::publish(&t.db, &file, "lowdown-test")
        .await
        .unwrap_err();
    assert!(matches!(e, PublishError::NotADirectory(_)), "{e}");
    assert!(e.to_string().ends_with(": not a directory"), "{e}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious");

    // A directory with files that is no repository.
    let notes = fresh("notes");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(notes.join("REPORT.md"), "mine").unwrap();
    let e = publish::publish(&t.db, &notes, "lowdown-test")
        .await
        .unwrap_err();
    assert!(matches!(e, PublishError::NotARepository(_)), "{e}");
    assert_eq!(files(&notes), [("REPORT.md".to_owned(), b"mine".to_vec())]);
    // ... nor is a subdirectory of one.
    let repo = fresh("repo");
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("sub/keep.txt"), "x").unwrap();
    let e = publish::publish(&t.db, &repo.join("sub"), "lowdown-test")
        .await
        .unwrap_err();
    assert!(matches!(e, PublishError::NotARepository(_)), "{e}");

    // A repository with the user's uncommitted work: a modified file we would overwrite,
    // a staged file and an untracked one.
    let dir = fresh("dirty");
    publish::publish(&t.db, &dir, "lowdown-test").await.unwrap();
    let head = git(&dir, &["rev-parse", "HEAD"]);
    std::fs::write(dir.join("REPORT.md"), "my edit").unwrap();
    std::fs::write(dir.join("staged.txt"), "staged").unwrap();
    git(&dir, &["add", "staged.txt"]);
    std::fs::write(dir.join("notes.txt"), "untracked").unwrap();
    let before = files(&dir);
    let index = git(&dir, &["ls-files", "--stage"]);
    run(&t.db, &cfg).await.unwrap();
    let e = publish::publish(&t.db, &dir, "lowdown-test")
        .await
        .unwrap_err();
    let said = e.to_string();
    assert!(matches!(e, PublishError::Uncommitted { .. }), "{said}");
    for part in [
        "uncommitted changes",
        "M REPORT.md",
        "A  staged.txt",
        "?? notes.txt",
        "nothing was written",
    ] {
        assert!(said.contains(part), "{part:?} in {said}");
    }
    assert_eq!(files(&dir), before, "every byte of the work tree kept");
    assert_eq!(git(&dir, &["ls-files", "--stage"]), index, "the index kept");
    assert_eq!(git(&dir, &["rev-parse", "HEAD"]), head);
    // Once the user has committed, the next publish goes on top of their commit.
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "my notes"]);
    let p = publish::publish(&t.db, &dir, "lowdown-test").await.unwrap();
    assert_eq!(p.action, Action::Committed);
    assert_eq!(
        git(&dir, &["log", "-2", "--format=%s"]).lines().nth(1),
        Some("my notes")
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "untracked"
    );

    // No git: said so, nothing made.
    let nogit = fresh("nogit");
    let out = publish_cli(&t, &nogit, Some("/nonexistent")).await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("publishing needs the `git` command, which was not found on PATH"),
        "{stderr}"
    );
    assert!(!nogit.exists());

    // serve refuses a --publish that can never work, and --publish without --scan-at.
    let out = common::lowdown_server(
        [
            "serve",
            "--scan-at",
            "04:00",
            "--db",
            &t.url,
            "--publish",
            file.to_str().unwrap(),
        ]
        .map(str::to_owned),
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--publish") && stderr.contains("not a directory"),
        "{stderr}"
    );
    let out = common::lowdown_server(
        [
            "serve",
            "--db",
            &t.url,
            "--publish",
            empty.to_str().unwrap(),
        ]
        .map(str::to_owned),
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--scan-at"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious");
    for d in [notes, repo, dir] {
        let _ = std::fs::remove_dir_all(d);
    }
    let _ = std::fs::remove_file(file);
    t.cleanup().await;
}

/// A publish cut off between its first write and its commit (its marker left in the git
/// directory) is finished by the next one, which writes its files again; anything else
/// changed beside them is still refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_publish_cut_off_is_finished_by_the_next_one() {
    let t = TestDb::new(common::Kind::Sqlite).await.unwrap();
    let (_mcp, registry) = fixtures().await;
    let cfg = config(&registry.url, MapLookup::default());
    assert_eq!(
        run(&t.db, &on_day(&cfg, -1)).await.unwrap().status,
        "completed"
    );
    let dir = fresh("cut");
    let first = publish::publish(&t.db, &dir, "lowdown-test").await.unwrap();
    let marker = dir.join(".git").join(publish::MARKER);
    assert!(!marker.exists(), "a finished publish leaves no marker");
    run(&t.db, &cfg).await.unwrap();
    // Cut off: the report half written, a month's temporary file, the marker.
    let month = &day(0)[..7];
    let tmp = dir.join(format!("scanner_observations/{month}.tmp"));
    std::fs::write(dir.join("REPORT.md"), "# Lowdown Scan").unwrap();
    std::fs::write(&tmp, "id,scan").unwrap();
    std::fs::write(&marker, "").unwrap();
    // A file of the user's beside them: refused, all kept.
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    let e = publish::publish(&t.db, &dir, "lowdown-test")
        .await
        .unwrap_err();
    assert!(e.to_string().contains("?? notes.txt"), "{e}");
    assert_eq!(std::fs::read_to_string(&tmp).unwrap(), "id,scan");
    std::fs::remove_file(dir.join("notes.txt")).unwrap();
    let p = publish::publish(&t.db, &dir, "lowdown-test").await.unwrap();
    assert_eq!((p.day, p.action), (day(0), Action::Committed));
    assert_eq!(git(&dir, &["rev-parse", "HEAD^"]), first.commit);
    assert_eq!(
        git(&dir, &["status", "--porcelain", "--untracked-files=all"]),
        ""
    );
    assert!(!tmp.exists() && !marker.exists());
    let tree = git(&dir, &["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(!tree.contains(".tmp"), "{tree}");
    assert!(git(&dir, &["show", "HEAD:REPORT.md"]).contains("## Source"));
    let _ = std::fs::remove_dir_all(dir);
    t.cleanup().await;
}

/// The daily job publishes after the day's scan; a publish that fails leaves the scan
/// and the answers as they would be without it.
async fn a_failing_publish_never_touches_the_scan(t: &TestDb) {
    let (_mcp, registry) = fixtures().await;
    let cfg = config(&registry.url, MapLookup::default());
    let file = fresh("not-a-dir");
    std::fs::write(&file, "precious").unwrap();
    let to = schedule::PublishTo {
        dir: file.clone(),
        deployment: "lowdown-test".into(),
    };
    let tried = schedule::attempt(&t.db, &cfg, &day(0)).await;
    let schedule::Attempt::Ran(summary) = &tried else {
        panic!("{tried:?}");
    };
    assert_eq!(summary.status, "completed");
    match schedule::publish_after(&t.db, &tried, &to).await {
        Some(Err(PublishError::NotADirectory(_))) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious");
    let a = common::mcp_answer(t, "io.fixture/weather").await;
    assert_eq!(a["scanner"]["observations_30d"], 1, "{a}");
    assert_eq!(a["scanner"]["latest"]["reached_level"], 2);
    // The next attempt finds the day done and publishes it where it can.
    let good = fresh("good");
    let to = schedule::PublishTo {
        dir: good.clone(),
        deployment: "lowdown-test".into(),
    };
    let again = schedule::attempt(&t.db, &cfg, &day(0)).await;
    assert!(matches!(again, schedule::Attempt::Done), "{again:?}");
    let p = schedule::publish_after(&t.db, &again, &to)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((p.day, p.action), (day(0), Action::Committed));
    assert_eq!(t.count("scan_runs").await, 1);
    let _ = std::fs::remove_file(file);
    let _ = std::fs::remove_dir_all(good);
}
on_both!(a_failing_publish_never_touches_the_scan);

/// `serve --scan-at HH:MM --publish DIR` as a process, its clock moved to a few seconds
/// before HH:MM: the scan runs, the dataset is published (or, into a repository with
/// uncommitted changes, refused and logged) and the server answers all along.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_publishes_after_the_daily_scan_and_a_refused_publish_is_only_logged() {
    let (_mcp, registry) = fixtures().await;
    const DAY: i64 = 86_400_000;
    let now = lowdown_server::clock::now_ms();
    let at = (now.div_euclid(DAY) + 7) * DAY + 4 * 3_600_000;
    let scan_day = lowdown_server::clock::day_of(at);
    let dirty = fresh("served dirty");
    std::fs::create_dir_all(&dirty).unwrap();
    git(&dirty, &["init", "-q"]);
    std::fs::write(dirty.join("draft.md"), "draft").unwrap();
    for (dir, ok) in [(fresh("served"), true), (dirty, false)] {
        let t = TestDb::new(common::Kind::Sqlite).await.unwrap();
        let port = common::free_port();
        let log = fresh("served-log");
        let mut child = Command::new(env!("CARGO_BIN_EXE_lowdown-server"))
            .args([
                "serve",
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--db",
                &t.url,
            ])
            .args(["--scan-at", "04:00", "--registry-url", &registry.url])
            .args([
                "--unsafe-allow-loopback",
                "--skip-packages",
                "--name",
                "lowdown-test",
            ])
            .arg("--publish")
            .arg(&dir)
            .env("RUST_LOG", "lowdown_server=info")
            .env(
                lowdown_server::clock::TEST_OFFSET_ENV,
                (at - lowdown_server::clock::now_ms() - 4_000).to_string(),
            )
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let said = if ok {
            "dataset published"
        } else {
            "dataset not published"
        };
        let deadline = Instant::now() + Duration::from_secs(90);
        let stderr = loop {
            let s = std::fs::read_to_string(&log).unwrap_or_default();
            if s.contains(said) {
                break s;
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("exited ({status}): {s}");
            }
            assert!(Instant::now() < deadline, "no {said:?}: {s}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert!(stderr.contains("scan finished"), "{stderr}");
        let answer: serde_json::Value = reqwest::get(format!(
            "http://127.0.0.1:{port}/api/reputation/mcp:io.fixture/weather"
        ))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
        assert_eq!(answer["scanner"]["observations_30d"], 1, "{answer}");
        if ok {
            assert_eq!(
                git(&dir, &["log", "--format=%s"]),
                format!("Lowdown Scanner observations {scan_day}")
            );
        } else {
            assert!(stderr.contains("uncommitted changes"), "{stderr}");
            assert_eq!(
                std::fs::read_to_string(dir.join("draft.md")).unwrap(),
                "draft"
            );
            assert_eq!(files(&dir).len(), 1, "nothing written");
        }
        let _ = child.kill();
        let _ = child.wait();
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_file(&log);
        t.cleanup().await;
    }
}
