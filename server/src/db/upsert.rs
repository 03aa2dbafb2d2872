//! Owned rows of bound values ([`Val`]) written through the one multi-row writer,
//! [`super::batch::Rows`] ([`write`] and its conflict forms), and `IN (...)` lists
//! ([`where_in`]): the SQL text holds only placeholders, every value is bound.

use sqlx::any::AnyArguments;
use sqlx::any::AnyRow;
use sqlx::query::Query;
use sqlx::Arguments;
use sqlx::{Any, AnyConnection, AssertSqlSafe};

use super::batch::{Cell, Col, Rows};

/// One bound value of a key or payload column.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Val {
    /// A TEXT value.
    Text(String),
    /// A nullable TEXT value.
    OptText(Option<String>),
    /// A BIGINT value.
    Int(i64),
    /// A nullable BIGINT value.
    OptInt(Option<i64>),
    /// A nullable DOUBLE PRECISION value, kept as bits so rows can be ordered and hashed.
    OptFloat(Option<u64>),
}

impl Val {
    /// A nullable float.
    pub fn float(v: Option<f64>) -> Val {
        Val::OptFloat(v.map(f64::to_bits))
    }
}

/// Whether `conn` is SQLite, whose multi-row statements use anonymous `?` placeholders:
/// SQLite looks numbered ones (`$n`) up by a linear scan per parameter, which makes a
/// 1,900-parameter insert quadratic. PostgreSQL needs `$n`.
pub fn is_sqlite(conn: &AnyConnection) -> bool {
    conn.backend_name().eq_ignore_ascii_case("sqlite")
}

/// `($1, $2), ($3, $4), ...` (or `(?, ?), ...` on SQLite) for `rows` rows of `cols` columns.
pub fn placeholders(sqlite: bool, rows: usize, cols: usize) -> String {
    let mut s = String::with_capacity(rows * cols * 5);
    for r in 0..rows {
        if r > 0 {
            s.push(',');
        }
        s.push('(');
        for c in 0..cols {
            if c > 0 {
                s.push(',');
            }
            if sqlite {
                s.push('?');
            } else {
                s.push('$');
                s.push_str(&(r * cols + c + 1).to_string());
            }
        }
        s.push(')');
    }
    s
}

/// Largest number of rows per statement: keeps every statement under SQLite's 32766 and
/// PostgreSQL's 65535 bound parameters.
pub const MAX_PARAMS: usize = 30_000;

/// Bound values for one multi-row statement, sized up front: a batch binds thousands of
/// values, and growing the buffer by doubling copies it a dozen times into fresh pages.
pub struct Binds(AnyArguments);

impl Binds {
    /// Room for `n` values.
    pub fn with_capacity(n: usize) -> Binds {
        let mut args = AnyArguments::default();
        args.reserve(n, 0);
        Binds(args)
    }

    /// Appends one value.
    pub fn add<'t, T>(&mut self, v: T) -> Result<(), sqlx::Error>
    where
        T: sqlx::Encode<'t, Any> + sqlx::Type<Any>,
    {
        self.0.add(v).map_err(sqlx::Error::Encode)
    }

    /// The statement `sql` with these values bound.
    pub fn query<'q>(self, sql: String) -> Query<'q, Any, AnyArguments> {
        sqlx::query_with(AssertSqlSafe(sql), self.0)
    }
}

/// Runs `sql`, where `{}` stands for the list of `ids` (`... WHERE id IN {}`); returns
/// every row it gave. The ids are bound as one JSON array, so a statement is prepared
/// once however many ids it is given (a list of placeholders made each length a
/// statement of its own).
pub async fn where_in(
    conn: &mut AnyConnection,
    sql: &str,
    ids: &[&str],
) -> Result<Vec<AnyRow>, sqlx::Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let list = match is_sqlite(conn) {
        true => "(SELECT value FROM json_each($1))",
        false => "(SELECT json_array_elements_text(CAST($1 AS json)))",
    };
    let json = serde_json::to_string(ids).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    sqlx::query(AssertSqlSafe(sql.replace("{}", list)))
        .bind(json)
        .fetch_all(&mut *conn)
        .await
}

/// `INSERT INTO table (cols) <rows> tail` through [`Rows`], the one multi-row writer (each
/// column's type is its values' variant); returns the rows a `RETURNING` in `tail` gave.
pub async fn write(
    conn: &mut AnyConnection,
    table: &str,
    cols: &[&str],
    rows: &[Vec<Val>],
    tail: &str,
) -> Result<Vec<AnyRow>, sqlx::Error> {
    let Some(first) = rows.first() else {
        return Ok(Vec::new());
    };
    let types = first.iter().map(|v| match v {
        Val::Text(_) | Val::OptText(_) => "text",
        Val::Int(_) | Val::OptInt(_) => "bigint",
        Val::OptFloat(_) => "double precision",
    });
    let cols: Vec<Col<'_>> = cols.iter().copied().zip(types).collect();
    let mut batch = Rows::new(&cols, rows.len());
    for v in rows.iter().flatten() {
        batch.push(match v {
            Val::Text(s) => Cell::Text(s),
            Val::OptText(s) => Cell::OptText(s.as_deref()),
            Val::Int(i) => Cell::Int(*i),
            Val::OptInt(i) => Cell::OptInt(*i),
            Val::OptFloat(f) => Cell::OptFloat(f.map(f64::from_bits)),
        });
    }
    batch.insert(conn, table, tail).await
}

/// Adds counts into a rollup table: `INSERT ... ON CONFLICT (keys) DO UPDATE SET n = n + excluded.n`.
///
/// `rows` must have unique keys (a `BTreeMap` guarantees it, and its order gives every
/// transaction the same lock order on PostgreSQL, so concurrent writers never deadlock).
pub async fn add_counts(
    conn: &mut AnyConnection,
    table: &str,
    keys: &[&str],
    rows: impl IntoIterator<Item = (Vec<Val>, i64)>,
) -> Result<(), sqlx::Error> {
    let rows: Vec<Vec<Val>> = rows
        .into_iter()
        .map(|(mut k, n)| {
            k.push(Val::Int(n));
            k
        })
        .collect();
    let cols = [keys, &["n"]].concat();
    let keys = keys.join(", ");
    let tail = format!("ON CONFLICT ({keys}) DO UPDATE SET n = {table}.n + excluded.n");
    write(conn, table, &cols, &rows, &tail).await?;
    Ok(())
}

/// Inserts rows, skipping those whose primary key already exists; returns the values of
/// `returning` for the rows actually inserted.
pub async fn insert_new(
    conn: &mut AnyConnection,
    table: &str,
    cols: &[&str],
    conflict: &str,
    returning: &str,
    rows: Vec<Vec<Val>>,
) -> Result<Vec<String>, sqlx::Error> {
    use sqlx::Row;
    let tail = format!("ON CONFLICT ({conflict}) DO NOTHING RETURNING {returning}");
    let returned = write(conn, table, cols, &rows, &tail).await?;
    returned
        .iter()
        .map(|r| r.try_get::<String, _>(returning))
        .collect()
}

/// Inserts rows, ignoring those that already exist.
pub async fn insert_ignore(
    conn: &mut AnyConnection,
    table: &str,
    cols: &[&str],
    conflict: &str,
    rows: &[Vec<Val>],
) -> Result<(), sqlx::Error> {
    let tail = format!("ON CONFLICT ({conflict}) DO NOTHING");
    write(conn, table, cols, rows, &tail).await?;
    Ok(())
}
