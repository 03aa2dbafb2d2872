#!/usr/bin/env bash
# Scanner benchmark (make bench-scanner): `lowdown-server scan` against local fixtures
# (server/examples/scanner_fixtures.rs: 85 % answering at once, 10 % after 1 s, 3 % hanging,
# 2 % refusing): wall time, peak memory (max RSS of the scan process, /usr/bin/time) and
# probes/s. Each shape is scanned twice in the same run: with the old defaults (16 probes in
# flight, no per-host limit: --concurrency 16 --per-host-concurrency 16) and with the
# current ones.
#   one:  5,000 remotes, all on one host (127.0.0.1)
#   many: 25,000 remotes on 253 hosts, three of them holding 10,000, 5,000 and 2,500,
#         scanned with --cohort all (the default cohort is the first 5,000)
# On SQLite; the 5,000 case also on PostgreSQL when LOWDOWN_BENCH_PG_URL is set (a fresh
# database per run). LOWDOWN_BENCH_SHAPES="one" (or "many") runs only that shape.
# Needs the release binaries:
#   cargo build --release -p lowdown-server --bin lowdown-server --example scanner_fixtures
# Results are printed and appended to target/bench-scanner.txt.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
SCAN="$TARGET/release/lowdown-server"
FIXTURES="$TARGET/release/examples/scanner_fixtures"
OUT="$TARGET/bench-scanner.txt"
DIR="$(mktemp -d /tmp/lowdown-scanner-bench.XXXXXX)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$DIR"; }
trap cleanup EXIT
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "bench-scanner: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
OLD=(--concurrency 16 --per-host-concurrency 16)

# bench TARGETS HOSTS ENGINE DB_URL LABEL [SCAN OPTIONS...]
bench() {
  local targets="$1" hosts="$2" engine="$3" db="$4" label="$5" url
  shift 5
  "$FIXTURES" --targets "$targets" --hosts "$hosts" >"$DIR/url" 2>/dev/null &
  PIDS+=($!)
  for _ in $(seq 300); do url="$(head -1 "$DIR/url" 2>/dev/null || true)"; [ -n "$url" ] && break; sleep 0.1; done
  [ -n "$url" ] || { echo "bench-scanner: the fixtures did not start" >&2; exit 1; }
  if ! "$TIME" -f '%e %M' -o "$DIR/time" "$SCAN" scan --db "$db" --registry-url "$url" --unsafe-allow-loopback --skip-packages "$@" \
    >"$DIR/summary.json" 2>"$DIR/progress.txt"; then
    echo "bench-scanner: the scan failed:" >&2; cat "$DIR/progress.txt" "$DIR/summary.json" >&2; exit 1
  fi
  kill "${PIDS[-1]}" 2>/dev/null || true
  wait "${PIDS[-1]}" 2>/dev/null || true
  read -r wall rss <"$DIR/time"
  local probed nhosts by_level
  probed="$(sed -n 's/^  "probed": \([0-9]*\),$/\1/p' "$DIR/summary.json")"
  nhosts="$(sed -n 's/^  "hosts": \([0-9]*\),$/\1/p' "$DIR/summary.json")"
  by_level="$(tr -d ' \n' <"$DIR/summary.json" | sed -n 's/.*"by_level":\({[^}]*}\).*/\1/p')"
  printf 'scanner %-8s targets=%-6s hosts=%-4s %-44s wall=%6.1fs peak_rss=%6.1fMiB probes/s=%6.1f levels=%s\n' \
    "$engine" "$targets" "$nhosts" "$label" "$wall" "$(echo "$rss / 1024" | bc -l)" "$(echo "$probed / $wall" | bc -l)" "$by_level" | tee -a "$OUT"
}

# pair TARGETS HOSTS [SCAN OPTIONS...]: the old defaults, then the current ones, on SQLite.
pair() {
  local targets="$1" hosts="$2"
  shift 2
  bench "$targets" "$hosts" sqlite "sqlite://$DIR/$hosts-old.db?mode=rwc" "old: --concurrency 16, no per-host limit" "${OLD[@]}" "$@"
  bench "$targets" "$hosts" sqlite "sqlite://$DIR/$hosts-new.db?mode=rwc" "new defaults: --concurrency 128, 32 per host" "$@"
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT"
SHAPES="${LOWDOWN_BENCH_SHAPES:-one many}"
for shape in $SHAPES; do
  case "$shape" in
    one) pair 5000 one ;;
    many) pair 25000 many --cohort all ;;
    *) echo "bench-scanner: unknown shape $shape (one, many)" >&2; exit 2 ;;
  esac
done
if [ -n "${LOWDOWN_BENCH_PG_URL:-}" ] && [[ " $SHAPES " == *" one "* ]]; then
  for which in old new; do
    name="scanner_bench_$$_$which"
    psql -q "$LOWDOWN_BENCH_PG_URL" -c "CREATE DATABASE $name"
    if [ "$which" = old ]; then
      bench 5000 one postgres "${LOWDOWN_BENCH_PG_URL%/*}/$name" "old: --concurrency 16, no per-host limit" "${OLD[@]}"
    else
      bench 5000 one postgres "${LOWDOWN_BENCH_PG_URL%/*}/$name" "new defaults: --concurrency 128, 32 per host"
    fi
    psql -q "$LOWDOWN_BENCH_PG_URL" -c "DROP DATABASE $name WITH (FORCE)"
  done
fi
