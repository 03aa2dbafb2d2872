#!/usr/bin/env bash
# Server benchmarks (make bench-server): ingest records/s over HTTP with batches of 100 on
# SQLite and PostgreSQL, beside the build before the write quotas and the independence
# bookkeeping (BENCH_BEFORE_REV, 675dca5) in the same loop, and reputation p50/p99 at 10k
# and 1M stored records, and bytes on disk per record before and after retention.
# Needs the release bench binary (cargo build --release -p lowdown-server --features bench --bin lowdown-server-bench).
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

# Ingest now and before the quotas and independence bookkeeping (SPEC §4, §5), 4 clients,
# three rounds interleaved so both meet the same machine; the median of each is compared.
BEFORE_REV="${BENCH_BEFORE_REV:-675dca5}"
BEFORE="$ROOT/target/bench-before-$BEFORE_REV"
before_bin() {
  local bin="$BEFORE/target/release/lowdown-server-bench"
  if [ ! -x "$bin" ]; then
    git -C "$ROOT" cat-file -e "$BEFORE_REV^{commit}" 2>/dev/null \
      || { echo "bench: $BEFORE_REV is not in this clone (shallow?); no before-and-after" >&2; return 1; }
    rm -rf "$BEFORE/src" && mkdir -p "$BEFORE/src"
    git -C "$ROOT" archive "$BEFORE_REV" | tar -x -C "$BEFORE/src"
    echo "+ building lowdown-server-bench at $BEFORE_REV (once)" >&2
    CARGO_TARGET_DIR="$BEFORE/target" cargo build -q --release \
      --manifest-path "$BEFORE/src/Cargo.toml" -p lowdown-server --bin lowdown-server-bench >&2
  fi
  echo "$bin"
}
# Records/s until an answer counts every record (` records_per_sec`, not `acked_…`).
rate() {
  "$1" ingest --db "$2" --records "$RECORDS" --batch 100 --clients 4 \
    | sed -n 's/.*what=http_store.* records_per_sec=\([0-9]*\).*/\1/p'
}
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
# Prints `ingest_vs_before backend=… before=… now=… ratio=…` (records/s, medians).
versus() {
  local db="$1" backend="$2" old="$3" round b n
  local -a was=() now=()
  for round in 1 2 3; do
    was+=("$(rate "$old" "$db")")
    now+=("$(rate "$BIN" "$db")")
  done
  b="$(median "${was[@]}")" n="$(median "${now[@]}")"
  [ -n "$b" ] && [ -n "$n" ] || { echo "bench: an ingest run printed no http_store line" >&2; return 1; }
  echo "ingest_vs_before backend=$backend clients=4 records=$RECORDS before_rev=$BEFORE_REV" \
    "before=$b now=$n ratio=$(awk -v n="$n" -v b="$b" 'BEGIN { printf "%.2f", n / b }')" \
    "runs_before=$(IFS=,; echo "${was[*]}") runs_now=$(IFS=,; echo "${now[*]}")" | tee -a "$OUT"
}
if OLD="$(before_bin)"; then
  versus "$SQLITE" sqlite "$OLD"
  if [ -n "${LOWDOWN_BENCH_PG_URL:-}" ]; then
    versus "$LOWDOWN_BENCH_PG_URL" postgres "$OLD"
  fi
fi
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
# Bytes on disk per raw row, per kept record id and of the roll-ups, before and after the
# retention job removes half of the days (BENCH_STORAGE_RECORDS over 10 days; the README's
# numbers are 10,000,000, 1,000,000 a day).
STORED="${BENCH_STORAGE_RECORDS:-1000000}"
run "$BIN" storage --db "$SQLITE" --records "$STORED"
if [ -n "${LOWDOWN_BENCH_PG_URL:-}" ]; then
  run "$BIN" storage --db "$LOWDOWN_BENCH_PG_URL" --records "$STORED"
fi
