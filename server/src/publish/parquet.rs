//! One month of Scanner observations as a Parquet file: the CSV's columns in the CSV's
//! order, typed (integers `INT64`, `latency_ms` `DOUBLE`, `observed_at` a UTC timestamp in
//! milliseconds, text `STRING`), `OPTIONAL` exactly where the database allows a null,
//! rows in `id` order in one row group, Snappy-compressed with dictionary pages.
//!
//! Text is written as stored: the `'` a CSV cell gets before a spreadsheet formula
//! (`crate::export::csv`) is a CSV matter, and a Parquet reader runs no formula.
//!
//! Same rows, same bytes: the writer (parquet-rs without its Arrow layer) writes no
//! timestamp or random id of its own; `created_by` names its version, which readers use to
//! work around known writer bugs.

use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use crate::db::export::ExportRow;

/// The schema, in the CSV's column order (`crate::export::HEADER`).
pub const SCHEMA: &str = "message scanner_observations {
  REQUIRED INT64 id;
  REQUIRED BYTE_ARRAY scan_run_id (STRING);
  REQUIRED BYTE_ARRAY target_id (STRING);
  REQUIRED INT64 observed_at (TIMESTAMP(MILLIS,true));
  REQUIRED BYTE_ARRAY remote_url (STRING);
  OPTIONAL INT64 http_status;
  REQUIRED INT64 reached_level;
  OPTIONAL DOUBLE latency_ms;
  OPTIONAL BYTE_ARRAY error_type (STRING);
  OPTIONAL INT64 tool_count;
  OPTIONAL BYTE_ARRAY server_version (STRING);
  OPTIONAL BYTE_ARRAY schema_hash (STRING);
}";

/// One column's values: present ones, and a definition level per row (1 present, 0 null).
struct Column<T> {
    values: Vec<T>,
    levels: Vec<i16>,
}

impl<T> Column<T> {
    fn new(rows: usize) -> Self {
        Column {
            values: Vec::with_capacity(rows),
            levels: Vec::with_capacity(rows),
        }
    }

    fn push(&mut self, v: Option<T>) {
        self.levels.push(i16::from(v.is_some()));
        self.values.extend(v);
    }
}

fn required<T>(v: Option<T>, column: &str, id: Option<i64>) -> Result<T, ParquetError> {
    v.ok_or_else(|| {
        ParquetError::General(format!(
            "observation {id:?}: {column} is null where the schema requires a value"
        ))
    })
}

fn text(v: Option<String>) -> Option<ByteArray> {
    v.map(|s| ByteArray::from(s.into_bytes()))
}

/// The Parquet file of `rows` (one month, in `id` order).
pub fn month(rows: Vec<ExportRow>) -> Result<Vec<u8>, ParquetError> {
    let n = rows.len();
    let (mut id, mut run, mut target, mut observed, mut url) = (
        Column::<i64>::new(n),
        Column::<ByteArray>::new(n),
        Column::<ByteArray>::new(n),
        Column::<i64>::new(n),
        Column::<ByteArray>::new(n),
    );
    let (mut status, mut level, mut latency, mut error) = (
        Column::<i64>::new(n),
        Column::<i64>::new(n),
        Column::<f64>::new(n),
        Column::<ByteArray>::new(n),
    );
    let (mut tools, mut version, mut hash) = (
        Column::<i64>::new(n),
        Column::<ByteArray>::new(n),
        Column::<ByteArray>::new(n),
    );
    for r in rows {
        let at = r.id;
        id.push(Some(required(r.id, "id", at)?));
        run.push(Some(required(text(r.scan_run_id), "scan_run_id", at)?));
        target.push(Some(required(text(r.target_id), "target_id", at)?));
        observed.push(Some(r.observed_at));
        url.push(Some(required(text(r.remote_url), "remote_url", at)?));
        status.push(r.http_status);
        level.push(Some(required(r.reached_level, "reached_level", at)?));
        latency.push(r.latency_ms);
        error.push(text(r.error_type));
        tools.push(r.tool_count);
        version.push(text(r.server_version));
        hash.push(text(r.schema_hash));
    }

    let schema = Arc::new(parse_message_type(SCHEMA)?);
    let props = Arc::new(
        WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build(),
    );
    let mut out = Vec::new();
    let mut file = SerializedFileWriter::new(&mut out, schema, props)?;
    let mut group = file.next_row_group()?;
    // Columns in schema order; definition levels only for OPTIONAL ones.
    macro_rules! column {
        ($ty:ty, $col:expr, $optional:expr) => {{
            let mut w = group
                .next_column()?
                .ok_or_else(|| ParquetError::General("schema has fewer columns".into()))?;
            let levels = $optional.then_some($col.levels.as_slice());
            w.typed::<$ty>().write_batch(&$col.values, levels, None)?;
            w.close()?;
        }};
    }
    column!(Int64Type, id, false);
    column!(ByteArrayType, run, false);
    column!(ByteArrayType, target, false);
    column!(Int64Type, observed, false);
    column!(ByteArrayType, url, false);
    column!(Int64Type, status, true);
    column!(Int64Type, level, false);
    column!(DoubleType, latency, true);
    column!(ByteArrayType, error, true);
    column!(Int64Type, tools, true);
    column!(ByteArrayType, version, true);
    column!(ByteArrayType, hash, true);
    group.close()?;
    file.close()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    fn row(id: i64, status: Option<i64>, error: Option<&str>) -> ExportRow {
        ExportRow {
            id: Some(id),
            scan_run_id: Some("sr_1".into()),
            target_id: Some("mcp:io.x/y".into()),
            observed_at: 1_796_020_496_123,
            remote_url: Some("=HYPERLINK(\"x\")".into()),
            http_status: status,
            reached_level: Some(if status.is_some() { 2 } else { 0 }),
            latency_ms: status.map(|_| 12.5),
            error_type: error.map(str::to_owned),
            tool_count: status.map(|_| 3),
            server_version: None,
            schema_hash: status.map(|_| "ab".repeat(32)),
        }
    }

    #[test]
    fn rows_read_back_typed_with_nulls_and_the_same_bytes_twice() {
        let rows = || vec![row(1, Some(200), None), row(2, None, Some("timeout"))];
        let bytes = month(rows()).unwrap();
        assert_eq!(bytes, month(rows()).unwrap(), "same rows, same bytes");
        let path =
            std::env::temp_dir().join(format!("lowdown-parquet-{}.parquet", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(reader.metadata().file_metadata().num_rows(), 2);
        let read: Vec<Vec<(String, Field)>> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| {
                r.unwrap()
                    .get_column_iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .collect();
        let names: Vec<&str> = read[0].iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names.join(","), crate::export::HEADER);
        assert_eq!(read[0][0].1, Field::Long(1));
        assert_eq!(read[0][3].1, Field::TimestampMillis(1_796_020_496_123));
        assert_eq!(
            read[0][4].1,
            Field::Str("=HYPERLINK(\"x\")".into()),
            "text as stored"
        );
        assert_eq!(read[0][5].1, Field::Long(200));
        assert_eq!(read[0][7].1, Field::Double(12.5));
        assert_eq!(read[1][5].1, Field::Null);
        assert_eq!(read[1][8].1, Field::Str("timeout".into()));
        assert_eq!(read[1][10].1, Field::Null);
    }

    #[test]
    fn a_null_where_the_schema_requires_a_value_is_an_error() {
        let mut r = row(1, None, None);
        r.target_id = None;
        let e = month(vec![r]).unwrap_err().to_string();
        assert!(e.contains("target_id is null"), "{e}");
    }
}
