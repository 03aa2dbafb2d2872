#!/usr/bin/env bash
# Scanner benchmark (make bench-scanner): `lowdown-server scan` against local fixtures
# (server/examples/scanner_fixtures.rs: 85 % answering at once, 10 % after 1 s, 3 % hanging,
# 2 % refusing) with the default concurrency: wall time, peak memory (max RSS of the scan
# process, /usr/bin/time) and probes/s, for 1,000 and 5,000 targets on SQLite, and on
# PostgreSQL when LOWDOWN_BENCH_PG_URL is set (a fresh database per run).
# Needs the release binaries:
#   cargo build --release -p lowdown-server --bin lowdown-server --example scanner_fixtures
# Results are printed and appended to target/bench-scanner.txt.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
SCAN="$ROOT/target/release/lowdown-server"
FIXTURES="$ROOT/target/release/examples/scanner_fixtures"
OUT="$ROOT/target/bench-scanner.txt"
DIR="$(mktemp -d /tmp/lowdown-scanner-bench.XXXXXX)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$DIR"; }
trap cleanup EXIT
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "bench-scanner: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }

# bench TARGETS ENGINE DB_URL
bench() {
  local targets="$1" engine="$2" db="$3" url
  "$FIXTURES" --targets "$targets" >"$DIR/url.$targets.$engine" &
  PIDS+=($!)
  for _ in $(seq 100); do url="$(head -1 "$DIR/url.$targets.$engine" 2>/dev/null || true)"; [ -n "$url" ] && break; sleep 0.1; done
  [ -n "$url" ] || { echo "bench-scanner: the fixtures did not start" >&2; exit 1; }
  if ! "$TIME" -f '%e %M' -o "$DIR/time" "$SCAN" scan --db "$db" --registry-url "$url" --unsafe-allow-loopback --skip-packages \
    >"$DIR/summary.json" 2>"$DIR/progress.txt"; then
    echo "bench-scanner: the scan failed:" >&2; cat "$DIR/progress.txt" "$DIR/summary.json" >&2; exit 1
  fi
  kill "${PIDS[-1]}" 2>/dev/null || true
  read -r wall rss <"$DIR/time"
  local probed by_level
  probed="$(sed -n 's/^  "probed": \([0-9]*\),$/\1/p' "$DIR/summary.json")"
  by_level="$(tr -d ' \n' <"$DIR/summary.json" | sed -n 's/.*"by_level":\({[^}]*}\).*/\1/p')"
  printf 'scanner %-10s targets=%-5s concurrency=16 wall=%6.1fs peak_rss=%6.1fMiB probes/s=%6.1f levels=%s\n' \
    "$engine" "$targets" "$wall" "$(echo "$rss / 1024" | bc -l)" "$(echo "$probed / $wall" | bc -l)" "$by_level" | tee -a "$OUT"
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT"
bench 1000 sqlite "sqlite://$DIR/bench-1000.db?mode=rwc"
bench 5000 sqlite "sqlite://$DIR/bench-5000.db?mode=rwc"
if [ -n "${LOWDOWN_BENCH_PG_URL:-}" ]; then
  for targets in 1000 5000; do
    name="scanner_bench_$$_$targets"
    psql -q "$LOWDOWN_BENCH_PG_URL" -c "CREATE DATABASE $name"
    bench "$targets" postgres "${LOWDOWN_BENCH_PG_URL%/*}/$name"
    psql -q "$LOWDOWN_BENCH_PG_URL" -c "DROP DATABASE $name WITH (FORCE)"
  done
fi
