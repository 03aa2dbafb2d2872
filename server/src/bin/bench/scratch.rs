//! Scratch databases: created fresh for one measurement and deleted after it.

use sqlx::Connection;

/// A fresh, empty database (no tables until the server opens it).
pub struct Scratch {
    /// Its URL.
    pub url: String,
    /// For PostgreSQL: the URL the database was created from, and its name.
    pg: Option<(String, String)>,
}

impl Scratch {
    /// A fresh database beside `url`: the SQLite file itself (any old copy removed), or a
    /// new PostgreSQL database on the server `url` names.
    pub async fn create(url: &str) -> anyhow::Result<Scratch> {
        sqlx::any::install_default_drivers();
        if url.starts_with("postgres") {
            let mut suffix = [0u8; 4];
            getrandom::fill(&mut suffix).map_err(|e| anyhow::anyhow!("{e}"))?;
            let name = format!("lowdown_bench_{}", hex::encode(suffix));
            let mut conn = sqlx::AnyConnection::connect(url).await?;
            sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                .execute(&mut conn)
                .await?;
            let root = url.rsplit_once('/').map_or(url, |(r, _)| r);
            Ok(Scratch {
                url: format!("{root}/{name}"),
                pg: Some((url.to_owned(), name)),
            })
        } else {
            remove_sqlite(url);
            Ok(Scratch {
                url: url.to_owned(),
                pg: None,
            })
        }
    }

    /// Deletes the database (every connection to it must be closed).
    pub async fn delete(self) -> anyhow::Result<()> {
        match self.pg {
            Some((admin, name)) => {
                let mut conn = sqlx::AnyConnection::connect(&admin).await?;
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                )))
                .execute(&mut conn)
                .await?;
            }
            None => remove_sqlite(&self.url),
        }
        Ok(())
    }
}

fn remove_sqlite(url: &str) {
    if let Some(path) = url
        .strip_prefix("sqlite://")
        .and_then(|p| p.split('?').next())
    {
        // The database and its roll-ups file, each with its WAL and shared memory.
        for file in [path.to_owned(), lowdown_server::db::rollups_path(path)] {
            for ext in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{file}{ext}"));
            }
        }
    }
}
