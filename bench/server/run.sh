#!/usr/bin/env bash
# Server benchmarks (make bench-server): ingest records/s over HTTP with batches of 100 on
# SQLite and PostgreSQL, and reputation p50/p99 at 10k and 1M stored records.
# Needs the release bench binary (cargo build --release -p lowdown-server --bin lowdown-server-bench).
# PostgreSQL runs when LOWDOWN_BENCH_PG_URL is set (make bench-server sets it).
# Results are printed and appended to target/bench-server.txt.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BIN="$ROOT/target/release/lowdown-server-bench"
OUT="$ROOT/target/bench-server.txt"
DIR="$(mktemp -d /tmp/lowdown-bench.XXXXXX)"
trap 'rm -rf "$DIR"' EXIT
SQLITE="sqlite://$DIR/bench.db?mode=rwc"
RECORDS="${BENCH_INGEST_RECORDS:-200000}"
BIG="${BENCH_QUERY_RECORDS:-1000000}"

run() { echo "+ ${*##*/}" >&2; "$@" | tee -a "$OUT"; }
echo "# $(date -u +%FT%TZ) $(nproc) cores" >>"$OUT"
# 4 and 16 concurrent clients (proxies), each sending batches of 100 records.
for clients in 4 16; do
  run "$BIN" ingest --db "$SQLITE" --records "$RECORDS" --batch 100 --clients "$clients"
  if [ -n "${LOWDOWN_BENCH_PG_URL:-}" ]; then
    run "$BIN" ingest --db "$LOWDOWN_BENCH_PG_URL" --records "$RECORDS" --batch 100 --clients "$clients"
  fi
done
# SQLite with 4 more clients asking for answers meanwhile (reads roll up at most every 100 ms).
run "$BIN" ingest --db "$SQLITE" --records "$RECORDS" --batch 100 --clients 4 --readers 4
run "$BIN" query --db "$SQLITE" --records 10000 --requests 2000
run "$BIN" query --db "$SQLITE" --records "$BIG" --requests 2000
if [ -n "${LOWDOWN_BENCH_PG_URL:-}" ]; then
  run "$BIN" query --db "$LOWDOWN_BENCH_PG_URL" --records 10000 --requests 2000
  run "$BIN" query --db "$LOWDOWN_BENCH_PG_URL" --records "$BIG" --requests 2000
fi
