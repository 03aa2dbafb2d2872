#!/usr/bin/env bash
# Stop the PostgreSQL started by pg-start.sh (no-op when it is not running).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
if [ "$(id -u)" = "0" ]; then PGROOT="${PGROOT:-/tmp/lowdown-pg}"; else PGROOT="${PGROOT:-$ROOT/target/pg}"; fi
PG_CTL="$(command -v pg_ctl || ls /usr/lib/postgresql/*/bin/pg_ctl 2>/dev/null | head -1)"
[ -f "$PGROOT/data/PG_VERSION" ] || exit 0
if [ "$(id -u)" = "0" ]; then runuser -u postgres -- "$PG_CTL" -D "$PGROOT/data" -m fast stop >/dev/null 2>&1 || true
else "$PG_CTL" -D "$PGROOT/data" -m fast stop >/dev/null 2>&1 || true; fi
