//! Multi-row writes in the form each engine runs fastest.
//!
//! SQLite gets `INSERT ... VALUES (?, ...), ...` with every value bound: preparing is
//! cheap in-process, and a statement per length is cached.
//!
//! PostgreSQL gets one array per column, `INSERT ... SELECT * FROM UNNEST($1::text[], ...)`,
//! each bound as an array literal: the statement text is the same for any number of rows,
//! so each connection parses and plans it once. A `VALUES` list of a new length is a new
//! statement, parsed and planned on every batch (a 240-row upsert plans in about 0.4 ms
//! and runs in 1.4), and every one of them would also push an older statement out of the
//! driver's cache. `UNNEST` keeps the rows' order, so locks are still taken in key order.

use std::fmt::Write;

use sqlx::any::AnyRow;
use sqlx::AnyConnection;

use super::upsert::{is_sqlite, placeholders, Binds, MAX_PARAMS};

/// A column of a batch: its name and its PostgreSQL type (`text`, `bigint`,
/// `double precision`).
pub type Col<'c> = (&'c str, &'static str);

/// One value of a row, borrowed from the records being written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell<'a> {
    /// TEXT.
    Text(&'a str),
    /// Nullable TEXT.
    OptText(Option<&'a str>),
    /// BIGINT.
    Int(i64),
    /// Nullable BIGINT.
    OptInt(Option<i64>),
    /// Nullable DOUBLE PRECISION (always finite).
    OptFloat(Option<f64>),
}

/// The rows of one write: `cols.len()` cells per row, in column order.
pub struct Rows<'c, 'a> {
    cols: &'c [Col<'c>],
    cells: Vec<Cell<'a>>,
}

impl<'c, 'a> Rows<'c, 'a> {
    /// No rows yet, room for `rows`.
    pub fn new(cols: &'c [Col<'c>], rows: usize) -> Self {
        Rows {
            cols,
            cells: Vec::with_capacity(rows * cols.len()),
        }
    }

    /// Appends the next cell (rows are filled left to right, one after another).
    pub fn push(&mut self, cell: Cell<'a>) {
        self.cells.push(cell);
    }

    /// `INSERT INTO table (cols) <rows> tail`, where `tail` is the conflict clause (and
    /// `RETURNING`); returns the rows `RETURNING` gave.
    pub async fn insert(
        &self,
        conn: &mut AnyConnection,
        table: &str,
        tail: &str,
    ) -> Result<Vec<AnyRow>, sqlx::Error> {
        let sqlite = is_sqlite(conn);
        let mut out = Vec::new();
        for chunk in self.chunks(sqlite) {
            let (sql, binds) = self.statement(sqlite, table, tail, chunk)?;
            out.extend(binds.query(sql).fetch_all(&mut *conn).await?);
        }
        Ok(out)
    }

    /// [`Rows::insert`] without `RETURNING`; returns how many rows were written.
    pub async fn execute(
        &self,
        conn: &mut AnyConnection,
        table: &str,
        tail: &str,
    ) -> Result<u64, sqlx::Error> {
        let sqlite = is_sqlite(conn);
        let mut written = 0;
        for chunk in self.chunks(sqlite) {
            let (sql, binds) = self.statement(sqlite, table, tail, chunk)?;
            written += binds.query(sql).execute(&mut *conn).await?.rows_affected();
        }
        Ok(written)
    }

    /// The cells of each statement: every row in one on PostgreSQL, as many rows as fit
    /// [`MAX_PARAMS`] on SQLite. Each statement is built only when it runs, so a large
    /// write holds one statement's copy of its values at a time.
    fn chunks(&self, sqlite: bool) -> std::slice::Chunks<'_, Cell<'a>> {
        let width = self.cols.len().max(1);
        let per = if sqlite {
            (MAX_PARAMS / width).max(1) * width
        } else {
            self.cells.len().max(1)
        };
        self.cells.chunks(per)
    }

    /// The statement that writes `chunk`, with its values.
    fn statement(
        &self,
        sqlite: bool,
        table: &str,
        tail: &str,
        chunk: &[Cell<'a>],
    ) -> Result<(String, Binds), sqlx::Error> {
        let width = self.cols.len();
        let names = self
            .cols
            .iter()
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join(", ");
        if !sqlite {
            // PostgreSQL: one array per column of every row (the only chunk).
            let arrays = self
                .cols
                .iter()
                .enumerate()
                .map(|(i, (_, ty))| format!("${}::{ty}[]", i + 1))
                .collect::<Vec<_>>()
                .join(", ");
            let sql =
                format!("INSERT INTO {table} ({names}) SELECT * FROM UNNEST({arrays}) {tail}");
            let mut b = Binds::with_capacity(width);
            for col in 0..width {
                b.add(self.array(col))?;
            }
            return Ok((sql, b));
        }
        let sql = format!(
            "INSERT INTO {table} ({names}) VALUES {} {tail}",
            placeholders(true, chunk.len() / width, width)
        );
        let mut b = Binds::with_capacity(chunk.len());
        for cell in chunk {
            match *cell {
                Cell::Text(s) => b.add(s)?,
                Cell::OptText(s) => b.add(s)?,
                Cell::Int(i) => b.add(i)?,
                Cell::OptInt(i) => b.add(i)?,
                Cell::OptFloat(f) => b.add(f)?,
            }
        }
        Ok((sql, b))
    }

    /// Column `col` of every row as a PostgreSQL array literal (`{"a","b",NULL}`).
    fn array(&self, col: usize) -> String {
        let width = self.cols.len();
        let mut out = String::with_capacity(self.cells.len() / width * 16);
        out.push('{');
        for (i, cell) in self.cells.iter().skip(col).step_by(width).enumerate() {
            if i > 0 {
                out.push(',');
            }
            match *cell {
                Cell::Text(s) | Cell::OptText(Some(s)) => {
                    // Quoted, with `"` and `\` escaped: any text reads back as itself.
                    out.push('"');
                    for c in s.chars() {
                        if c == '"' || c == '\\' {
                            out.push('\\');
                        }
                        out.push(c);
                    }
                    out.push('"');
                }
                Cell::Int(i) | Cell::OptInt(Some(i)) => {
                    let _ = write!(out, "{i}");
                }
                // Finite by validation; Rust writes the shortest form that reads back exact.
                Cell::OptFloat(Some(f)) => {
                    let _ = write!(out, "{f:?}");
                }
                Cell::OptText(None) | Cell::OptInt(None) | Cell::OptFloat(None) => {
                    out.push_str("NULL");
                }
            }
        }
        out.push('}');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_quote_text_escape_quotes_and_backslashes_and_write_nulls() {
        let cols = [("a", "text"), ("n", "bigint"), ("ms", "double precision")];
        let mut rows = Rows::new(&cols, 2);
        for cell in [
            Cell::Text("x\"y\\,{NULL}"),
            Cell::Int(-3),
            Cell::OptFloat(Some(0.1)),
            Cell::OptText(None),
            Cell::OptInt(Some(7)),
            Cell::OptFloat(None),
        ] {
            rows.push(cell);
        }
        assert_eq!(rows.array(0), r#"{"x\"y\\,{NULL}",NULL}"#);
        assert_eq!(rows.array(1), "{-3,7}");
        assert_eq!(rows.array(2), "{0.1,NULL}");
    }
}
