#!/usr/bin/env bash
# Start lowdown-server on a scratch LOWDOWN_HOME, record with curl, read the answer back.
# Usage: examples/server/walkthrough.sh   (DATABASE_URL=postgres://... to use PostgreSQL)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PORT="${PORT:-17077}"
BASE="http://127.0.0.1:$PORT"
export LOWDOWN_HOME="$(mktemp -d /tmp/lowdown-walkthrough.XXXXXX)"
cargo build -q -p lowdown-server --manifest-path "$ROOT/Cargo.toml"
"$ROOT/target/debug/lowdown-server" --listen "127.0.0.1:$PORT" --catalog "$ROOT/examples/server/services.toml" 2>"$LOWDOWN_HOME/server.log" &
PID=$!
trap 'kill -TERM $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$LOWDOWN_HOME"' EXIT
for _ in $(seq 100); do curl -sf "$BASE/healthz" >/dev/null && break; sleep 0.1; done

say() { printf '\n$ %s\n' "$*"; }
say "record one interaction"
curl -s -X POST "$BASE/api/interactions" -H 'content-type: application/json' \
  -d '{"actor":"agent:my-bot","target":"npm:@modelcontextprotocol/server-brave-search","target_type":"tool","task_type":"web_search","outcome":"success","latency_ms":412,"node_id":"ld_0123456789ab"}'
say "record a batch (one bad item rejects the whole batch, naming it)"
curl -s -X POST "$BASE/api/interactions" \
  -d '[{"target":"npm:x","target_type":"tool","task_type":"t","outcome":"success"},{"target":"npm:x","target_type":"tool","task_type":"t","outcome":"meh"}]'
say "ask by short name"
curl -s "$BASE/api/reputation/server-brave-search"
say "ask as a contributor"
curl -s "$BASE/api/reputation/npm:@modelcontextprotocol%2Fserver-brave-search" -H 'x-lowdown-node-id: ld_0123456789ab'
say "report telemetry for a catalogued host"
curl -s -X POST "$BASE/v1/telemetry/observe" -d '{"host":"api.stripe.com","method":"GET","status":200,"latency_ms":312,"response_bytes":2048}'
say "the catalog: each service with its audit and probe health"
curl -s "$BASE/v1/services"
say "the host's answer carries a separate telemetry block"
curl -s "$BASE/api/reputation/api.stripe.com"
say "node stats"
curl -s "$BASE/api/node/ld_0123456789ab"
echo
