//! Multi-row statements built at run time: the SQL text holds only placeholders, every
//! value is bound.

use sqlx::any::AnyArguments;
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

/// Binds `vals` in order.
pub fn bind_all<'q>(
    mut q: Query<'q, Any, AnyArguments>,
    vals: impl IntoIterator<Item = Val>,
) -> Query<'q, Any, AnyArguments> {
    for v in vals {
        q = match v {
            Val::Text(s) => q.bind(s),
            Val::OptText(s) => q.bind(s),
            Val::Int(i) => q.bind(i),
            Val::OptInt(i) => q.bind(i),
            Val::OptFloat(f) => q.bind(f.map(f64::from_bits)),
        };
    }
    q
}

/// Largest number of rows per statement: keeps every statement under SQLite's 32766 and
/// PostgreSQL's 65535 bound parameters.
pub const MAX_PARAMS: usize = 30_000;

/// `INSERT ... ON CONFLICT DO UPDATE SET n = n + excluded.n` for `rows` rows of `keys`
/// plus `n`: the statement of [`add_counts`] ([`add_text_counts`] writes through
/// [`super::batch`]).
fn add_counts_sql(sqlite: bool, table: &str, keys: &[&str], rows: usize) -> String {
    let values = placeholders(sqlite, rows, keys.len() + 1);
    let keys = keys.join(", ");
    format!(
        "INSERT INTO {table} ({keys}, n) VALUES {values} ON CONFLICT ({keys}) DO UPDATE SET n = {table}.n + excluded.n"
    )
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
    let rows: Vec<(Vec<Val>, i64)> = rows.into_iter().collect();
    let cols = keys.len() + 1;
    for chunk in rows.chunks((MAX_PARAMS / cols).max(1)) {
        let sql = add_counts_sql(is_sqlite(conn), table, keys, chunk.len());
        let vals = chunk
            .iter()
            .flat_map(|(k, n)| k.iter().cloned().chain(std::iter::once(Val::Int(*n))));
        bind_all(sqlx::query(AssertSqlSafe(sql)), vals)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

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

/// [`add_counts`] for keys of `N` text columns, borrowed (a [`super::batch`] write).
///
/// `rows` must have unique keys (a `BTreeMap` guarantees it, and its order gives every
/// transaction the same lock order on PostgreSQL, so concurrent writers never deadlock).
pub async fn add_text_counts<const N: usize>(
    conn: &mut AnyConnection,
    table: &str,
    keys: &[&str; N],
    rows: &std::collections::BTreeMap<[&str; N], i64>,
) -> Result<(), sqlx::Error> {
    let cols: Vec<Col<'_>> = keys
        .iter()
        .map(|k| (*k, "text"))
        .chain([("n", "bigint")])
        .collect();
    let mut batch = Rows::new(&cols, rows.len());
    for (key, n) in rows {
        for k in key {
            batch.push(Cell::Text(k));
        }
        batch.push(Cell::Int(*n));
    }
    let keys = keys.join(", ");
    batch
        .insert(
            conn,
            table,
            &format!("ON CONFLICT ({keys}) DO UPDATE SET n = {table}.n + excluded.n"),
        )
        .await?;
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
    let mut inserted = Vec::with_capacity(rows.len());
    for chunk in rows.chunks((MAX_PARAMS / cols.len()).max(1)) {
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES {} ON CONFLICT ({conflict}) DO NOTHING RETURNING {returning}",
            cols.join(", "),
            placeholders(is_sqlite(conn), chunk.len(), cols.len()),
        );
        let q = bind_all(
            sqlx::query(AssertSqlSafe(sql)),
            chunk.iter().flatten().cloned(),
        );
        for row in q.fetch_all(&mut *conn).await? {
            inserted.push(row.try_get::<String, _>(0)?);
        }
    }
    Ok(inserted)
}

/// Inserts rows, ignoring those that already exist.
pub async fn insert_ignore(
    conn: &mut AnyConnection,
    table: &str,
    cols: &[&str],
    conflict: &str,
    rows: Vec<Vec<Val>>,
) -> Result<(), sqlx::Error> {
    let per_statement = (MAX_PARAMS / cols.len()).max(1);
    insert_ignore_in(conn, table, cols, conflict, &rows, per_statement, true).await
}

/// [`insert_ignore`] in statements of at most `per_statement` rows; `cached: false` keeps
/// the statements out of sqlx's prepared-statement cache.
pub async fn insert_ignore_in(
    conn: &mut AnyConnection,
    table: &str,
    cols: &[&str],
    conflict: &str,
    rows: &[Vec<Val>],
    per_statement: usize,
    cached: bool,
) -> Result<(), sqlx::Error> {
    for chunk in rows.chunks(per_statement) {
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES {} ON CONFLICT ({conflict}) DO NOTHING",
            cols.join(", "),
            placeholders(is_sqlite(conn), chunk.len(), cols.len()),
        );
        bind_all(
            sqlx::query(AssertSqlSafe(sql)),
            chunk.iter().flatten().cloned(),
        )
        .persistent(cached)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Inserts keys of `N` text columns, borrowed, skipping those already stored (`ON
/// CONFLICT DO NOTHING`): for tables that only record that a key exists.
pub async fn insert_text_keys<const N: usize>(
    conn: &mut AnyConnection,
    table: &str,
    keys: &[&str; N],
    rows: &std::collections::BTreeSet<[&str; N]>,
) -> Result<(), sqlx::Error> {
    let cols: Vec<Col<'_>> = keys.iter().map(|k| (*k, "text")).collect();
    let mut batch = Rows::new(&cols, rows.len());
    for key in rows {
        for k in key {
            batch.push(Cell::Text(k));
        }
    }
    let tail = format!("ON CONFLICT ({}) DO NOTHING", keys.join(", "));
    batch.insert(conn, table, &tail).await?;
    Ok(())
}
