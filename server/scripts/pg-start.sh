#!/usr/bin/env bash
# Start a throwaway PostgreSQL for the server tests and print its URL on stdout.
#
# Idempotent: installs PostgreSQL with apt when `initdb`/`postgres` are missing, creates
# the cluster once under $PGROOT, starts it on 127.0.0.1:$PGPORT (default 25432) unless a
# server already answers there, and creates the database `lowdown_test`.
# The default port lies below Linux's ephemeral range (32768-60999): a port in that range
# can be held for a minute by any earlier test's closed connection (TIME_WAIT), and the
# postmaster then cannot bind it. When the port is taken all the same, the next free one
# is used and remembered in $PGROOT/port; the URL printed always names the real port.
# When the server cannot start, the end of its log is printed.
# PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres` user
# and lives in /tmp/lowdown-pg (a directory that user can reach without opening up the
# checkout's parents); otherwise in <repo>/target/pg.
# Stop it with: server/scripts/pg-stop.sh. `pg-start.sh --install-only` only installs.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
if [ "$(id -u)" = "0" ]; then PGROOT="${PGROOT:-/tmp/lowdown-pg}"; else PGROOT="${PGROOT:-$ROOT/target/pg}"; fi
PORT_FILE="$PGROOT/port"
PGPORT="${PGPORT:-$(cat "$PORT_FILE" 2>/dev/null || echo 25432)}"
DB="${PGDATABASE_NAME:-lowdown_test}"
log() { echo "pg-start: $*" >&2; }
cd /  # the cluster owner may not be allowed into the caller's directory

# Debian keeps the server binaries out of PATH, under /usr/lib/postgresql/<version>/bin.
PG_LIBDIR="${PG_LIBDIR:-/usr/lib/postgresql}"
find_bin() {
  local name="$1" d
  if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return 0; fi
  for d in "$PG_LIBDIR"/*/bin; do
    if [ -x "$d/$name" ]; then echo "$d/$name"; return 0; fi
  done
  return 1
}

if ! find_bin initdb >/dev/null || ! find_bin postgres >/dev/null; then
  log "PostgreSQL not found; installing it with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
fi
if [ "${1:-}" = "--install-only" ]; then exit 0; fi
INITDB="$(find_bin initdb)"
PG_CTL="$(find_bin pg_ctl)"
BINDIR="$(dirname "$(readlink -f "$INITDB")")"
# Prefer the server's own client tools over Debian's /usr/bin wrappers.
PSQL="$BINDIR/psql"; [ -x "$PSQL" ] || PSQL="$(find_bin psql)"

# Run a command as the cluster owner.
if [ "$(id -u)" = "0" ]; then
  id postgres >/dev/null 2>&1 || useradd --system --home-dir "$PGROOT" --shell /bin/sh postgres
  OWNER=postgres
  as_owner() { runuser -u postgres -- "$@"; }
else
  OWNER="$(id -un)"
  as_owner() { "$@"; }
fi

PG_ISREADY="$BINDIR/pg_isready"; [ -x "$PG_ISREADY" ] || PG_ISREADY="$(find_bin pg_isready)"
DATA="$PGROOT/data"
if "$PG_ISREADY" -q -h 127.0.0.1 -p "$PGPORT"; then
  log "a server already answers on 127.0.0.1:$PGPORT; using it"
else
  mkdir -p "$PGROOT"
  chown "$OWNER" "$PGROOT"

  if [ ! -f "$DATA/PG_VERSION" ]; then
    log "initdb $DATA"
    as_owner "$INITDB" -D "$DATA" -U postgres --auth=trust --encoding=UTF8 --locale=C >/dev/null
  fi

  # Start on $PGPORT, or on the next port when something else holds it.
  if ! as_owner "$PG_CTL" -D "$DATA" status >/dev/null 2>&1; then
    LOG="$PGROOT/postgres.log"
    for try in 0 1 2 3 4 5 6 7; do
      port=$((PGPORT + try))
      log "starting on 127.0.0.1:$port"
      seen=0; if [ -f "$LOG" ]; then seen="$(wc -l < "$LOG")"; fi
      if as_owner "$PG_CTL" -D "$DATA" -l "$LOG" -w -t 60 \
          -o "-c listen_addresses=127.0.0.1 -p $port -k $PGROOT -c max_connections=300 -c fsync=off -c synchronous_commit=off" \
          start >/dev/null; then
        PGPORT="$port"
        echo "$PGPORT" > "$PORT_FILE"
        break
      fi
      if tail -n +"$((seen + 1))" "$LOG" | grep -q "already in use"; then
        log "127.0.0.1:$port is taken; trying the next port"
        continue
      fi
      log "PostgreSQL did not start; the end of $LOG:"
      tail -n +"$((seen + 1))" "$LOG" | tail -n 30 >&2
      exit 1
    done
    if [ "$PGPORT" != "$port" ]; then
      log "no free port in $PGPORT-$port; the end of $LOG:"; tail -n 30 "$LOG" >&2; exit 1
    fi
  elif [ -f "$PORT_FILE" ]; then
    PGPORT="$(cat "$PORT_FILE")"  # running already, on the port it was started on
  fi
fi

if ! as_owner "$PSQL" -h 127.0.0.1 -p "$PGPORT" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='$DB'" postgres | grep -q 1; then
  as_owner "$PSQL" -h 127.0.0.1 -p "$PGPORT" -U postgres -qc "CREATE DATABASE $DB" postgres
fi
echo "postgres://postgres@127.0.0.1:$PGPORT/$DB"
