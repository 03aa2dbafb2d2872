//! SQLite keeps its roll-ups in a second file beside the database (`db/rollups_file.rs`),
//! written by a roller of its own while ingest writes the raw rows. What a user relies on:
//! the file is derived (deleted, it comes back with the same answers; an upgraded database
//! gets its roll-ups from its raw rows), the per-network cap still applies, and ingest and
//! rolls running at once lose and double-count nothing.

use crate::common;

use common::{empty_database, post, Kind, TestDb};
use serde_json::{json, Value};

use crate::migrate_rollups::{answers, records, TARGETS};
use crate::roll_up::{from_peer, raw_rows_in};

/// `n` rated organic records for `target` on one day, ids prefixed `prefix`.
fn rated(target: &str, prefix: &str, n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let mut r = common::record(target, if i % 4 == 0 { "failure" } else { "success" });
            r["record_id"] = json!(format!("{prefix}-{i}"));
            r
        })
        .collect()
}

/// The roll-ups file of `t` and its WAL and shared memory.
fn rollups_files(t: &TestDb) -> Vec<std::path::PathBuf> {
    let main = t.sqlite_file().unwrap();
    let file = lowdown_server::db::rollups_path(&main.display().to_string());
    ["", "-wal", "-shm"]
        .iter()
        .map(|ext| format!("{file}{ext}").into())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_rollups_file_comes_back_with_the_same_answers() {
    let t = TestDb::new(Kind::Sqlite).await.unwrap();
    let app = t.app();
    for batch in records().chunks(40) {
        let r = post(&app, "/api/interactions", &Value::Array(batch.to_vec())).await;
        assert_eq!(r.status, 201, "{}", r.text);
    }
    // Past the per-network cap too: its marks live in the file that goes.
    let (status, body) = from_peer(&app, "127.5.0.1", &json!(rated(TARGETS[0], "busy", 30))).await;
    assert_eq!(status, 201, "{body}");
    let before = answers(&t).await;
    assert_eq!(common::reputation(&app, TARGETS[0]).await["capped"], 10);
    let files = rollups_files(&t);
    assert!(
        files[0].exists(),
        "{} is where the roll-ups live",
        files[0].display()
    );

    let t = t
        .reopen(|| {
            for f in &files {
                let _ = std::fs::remove_file(f);
            }
        })
        .await;
    assert!(files[0].exists(), "made again at open");
    assert_eq!(answers(&t).await, before);
    assert_eq!(common::reputation(&t.app(), TARGETS[0]).await["capped"], 10);
    common::assert_rollups_match_raw(&t).await;
    t.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cap_holds_with_the_raw_rows_left_as_they_arrived() {
    let t = TestDb::new(Kind::Sqlite).await.unwrap();
    let app = t.app();
    // 25 rated records on one target and day from one untrusted network, in two requests.
    let busy = rated("npm:busy", "busy", 25);
    for half in [&busy[..12], &busy[12..]] {
        let (status, body) = from_peer(&app, "127.5.0.1", &json!(half)).await;
        assert_eq!(status, 201, "{body}");
    }
    let a = common::reputation(&app, "npm:busy").await;
    assert_eq!(a["interactions"], 25, "{a}");
    assert_eq!(a["capped"], 5, "the last 5: {a}");
    assert_eq!(a["rated_interactions"], 20, "{a}");
    // The roll never writes the main file: the marks are the second file's.
    let (raw_capped,): (i64,) = t
        .row("SELECT COUNT(*) FROM main.interactions WHERE outcome_class = 'capped'")
        .await;
    assert_eq!(raw_capped, 0);
    let (marked,): (i64,) = t.row("SELECT COUNT(*) FROM rollups.capped_rows").await;
    assert_eq!(marked, 5);
    common::assert_rollups_match_raw(&t).await;
    t.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingest_and_rolls_at_once_lose_and_double_count_nothing() {
    let t = TestDb::new(Kind::Sqlite).await.unwrap();
    let app = t.app();
    let (clients, batches, per) = (4usize, 25usize, 100usize);
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Two servers' rollers (the app's and the checking pool's) rolling without pause, and
    // answers read meanwhile, while four clients ingest.
    let mut rollers = Vec::new();
    for db in [t.db.clone(), t.check.clone()] {
        let done = done.clone();
        rollers.push(tokio::spawn(async move {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                db.roll_up().await.unwrap();
            }
        }));
    }
    let mut senders = Vec::new();
    for c in 0..clients {
        let app = app.clone();
        senders.push(tokio::spawn(async move {
            for b in 0..batches {
                let batch = rated(&format!("npm:t{}", b % 3), &format!("c{c}-b{b}"), per);
                let r = post(&app, "/api/interactions", &json!(batch)).await;
                assert_eq!(r.status, 201, "{}", r.text);
                common::reputation(&app, "npm:t0").await;
            }
        }));
    }
    for s in senders {
        s.await.unwrap();
    }
    // Asked right after the last acknowledgement: every record counts, once.
    let total: i64 = answered_total(&app).await;
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in rollers {
        r.await.unwrap();
    }
    assert_eq!(total, (clients * batches * per) as i64);
    let (rolled,): (i64,) = t
        .row("SELECT CAST(SUM(n) AS BIGINT) FROM rollup_targets")
        .await;
    assert_eq!(rolled, (clients * batches * per) as i64);
    common::assert_rollups_match_raw(&t).await;
    t.cleanup().await;
}

/// The interactions the answers of `npm:t0`..`npm:t2` count.
async fn answered_total(app: &axum::Router) -> i64 {
    let mut total = 0;
    for i in 0..3 {
        let a = common::reputation(app, &format!("npm:t{i}")).await;
        total += a["interactions"].as_i64().unwrap();
    }
    total
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgraded_database_gets_its_rollups_from_its_raw_rows() {
    // What version 12 left: raw rows, roll-ups in the main file (these ones wrong, to show
    // they are not carried over) behind a watermark, and rows past it whose target only
    // the roll would have registered.
    let (url, dir, _) = empty_database(Kind::Sqlite).await.unwrap();
    let old =
        common::migrated_as_before(&url, &lowdown_server::db::migrations_through(true, 12)).await;
    raw_rows_in(&old, "npm:upgraded", 1000).await;
    // The version-12 cap stored its class in the raw rows.
    sqlx::query(
        "UPDATE interactions SET outcome_class = 'capped' \
         WHERE record_id IN ('npm:upgraded-1', 'npm:upgraded-2', 'npm:upgraded-3')",
    )
    .execute(&old)
    .await
    .unwrap();
    raw_rows_in(&old, "npm:late", 300).await;
    for sql in [
        "DELETE FROM targets WHERE target = 'npm:late'",
        "UPDATE rollup_watermark SET rolled = 600",
        "INSERT INTO rollup_targets (target, source, outcome_class, n) \
         VALUES ('npm:upgraded', 'organic', 'success', 7)",
    ] {
        sqlx::query(sql).execute(&old).await.unwrap();
    }
    old.close().await;

    let t = TestDb::open(Kind::Sqlite, url, dir, None).await;
    let app = t.app();
    let a = common::reputation(&app, "npm:upgraded").await;
    assert_eq!(a["interactions"], 1000, "{a}");
    assert_eq!(a["capped"], 3, "{a}");
    let late = common::reputation(&app, "npm:late").await;
    assert_eq!(late["interactions"], 300, "{late}");
    let (left,): (i64,) = t
        .row("SELECT COUNT(*) FROM main.sqlite_master WHERE name LIKE 'rollup%' OR name LIKE 'node%'")
        .await;
    assert_eq!(left, 0, "the main file keeps no roll-ups");
    common::assert_rollups_match_raw(&t).await;
    t.cleanup().await;
}

/// What opening a database of `dir/name` does, with its roll-ups path holding what `plant`
/// put there.
async fn open_beside(
    name: &str,
    plant: impl FnOnce(&std::path::Path),
) -> (std::path::PathBuf, Result<(), String>) {
    let dir = std::env::temp_dir().join(format!(
        "lowdown-rollups-{}-{}",
        std::process::id(),
        name.len()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let main = dir.join(name).join("lowdown.db");
    std::fs::create_dir_all(main.parent().unwrap()).unwrap();
    plant(std::path::Path::new(&lowdown_server::db::rollups_path(
        &main.display().to_string(),
    )));
    // The URL's path as sqlx reads it: percent-encoded.
    let encoded: String = main
        .display()
        .to_string()
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    let opened = lowdown_server::db::Db::open(&format!("sqlite://{encoded}?mode=rwc"), 4).await;
    let result = match opened {
        Ok(db) => {
            db.close().await;
            Ok(())
        }
        Err(e) => Err(e.to_string()),
    };
    (dir, result)
}

#[tokio::test]
async fn another_database_or_a_link_where_the_rollups_file_goes_is_refused_never_emptied() {
    let victim = std::env::temp_dir().join(format!("lowdown-victim-{}.sqlite", std::process::id()));
    let _ = std::fs::remove_file(&victim);
    let keep = |path: &std::path::Path| {
        let c = std::process::Command::new("sqlite3")
            .arg(path)
            .arg("CREATE TABLE precious (x); INSERT INTO precious VALUES (42);")
            .status()
            .unwrap();
        assert!(c.success());
    };
    keep(&victim);
    let (dir, linked) = open_beside("link", |at| {
        std::os::unix::fs::symlink(&victim, at).unwrap()
    })
    .await;
    assert!(
        linked
            .as_ref()
            .is_err_and(|e| e.contains("is not a regular file")),
        "{linked:?}"
    );
    let (dir2, foreign) = open_beside("foreign", |at| keep(at)).await;
    assert!(
        foreign
            .as_ref()
            .is_err_and(|e| e.contains("holds another database")),
        "{foreign:?}"
    );
    for db in [
        victim.clone(),
        std::path::PathBuf::from(lowdown_server::db::rollups_path(
            &dir2.join("foreign/lowdown.db").display().to_string(),
        )),
    ] {
        let out = std::process::Command::new("sqlite3")
            .arg(&db)
            .arg("SELECT x FROM precious")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "42",
            "{} kept",
            db.display()
        );
    }
    for d in [dir, dir2] {
        let _ = std::fs::remove_dir_all(d);
    }
    let _ = std::fs::remove_file(&victim);
}

#[tokio::test]
async fn a_database_in_a_directory_named_with_url_characters_opens() {
    let (dir, opened) = open_beside("d?x%41 #", |_| {}).await;
    assert_eq!(opened, Ok(()));
    let file =
        lowdown_server::db::rollups_path(&dir.join("d?x%41 #/lowdown.db").display().to_string());
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&file).unwrap().permissions());
    assert_eq!(
        mode & 0o777,
        0o600,
        "the roll-ups file is the user's alone, as the main file is"
    );
    let _ = std::fs::remove_dir_all(dir);
}
