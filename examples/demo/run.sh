#!/usr/bin/env bash
# Lowdown end to end: build, start lowdown-server on SQLite in a temp LOWDOWN_HOME, run an
# MCP session through lowdown-proxy against @modelcontextprotocol/server-everything, print
# the reputation answer for it, and end with the URL of its page (on a terminal the server
# stays up until Enter, so the page can be opened; otherwise it stops with the demo).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
TARGET="npm:@modelcontextprotocol/server-everything"

echo "== build"
cargo build -q -p lowdown-server
compgen -G "bindings-js/*.node" >/dev/null || make --no-print-directory build-js-binding

export LOWDOWN_HOME="$(mktemp -d "${TMPDIR:-/tmp}/lowdown-demo.XXXXXX")"
PORT="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
export LOWDOWN_API_URL="http://127.0.0.1:$PORT"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$LOWDOWN_HOME"
}
trap cleanup EXIT

echo "== lowdown-server on $LOWDOWN_API_URL (SQLite in $LOWDOWN_HOME)"
target/debug/lowdown-server --listen "127.0.0.1:$PORT" --db "$LOWDOWN_HOME/lowdown.db" 2>"$LOWDOWN_HOME/server.log" &
SERVER_PID=$!
for _ in $(seq 1 100); do
  if node -e 'fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "$LOWDOWN_API_URL/healthz"; then break; fi
  sleep 0.1
done

echo "== MCP session through lowdown-proxy"
node examples/demo/session.mjs "$TARGET"

echo "== GET /api/reputation/$TARGET"
# The proxy sends records in the background; give the last batch a moment to land.
sleep 0.5
node -e '
  const [url, node] = process.argv.slice(1);
  fetch(url, { headers: { "x-lowdown-node-id": node } })
    .then((r) => r.json())
    .then((j) => console.log(JSON.stringify(j, null, 2)));
' "$LOWDOWN_API_URL/api/reputation/$(node -p 'encodeURIComponent(process.argv[1])' "$TARGET")" \
  "$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).node_id' "$LOWDOWN_HOME/node.json")"

PAGE_URL="$LOWDOWN_API_URL/t/$TARGET"
echo "== the page for $TARGET (charts of the answer above; no JavaScript needed)"
node -e 'fetch(process.argv[1]).then((r) => { if (r.status !== 200) { console.error(`the page answered ${r.status}`); process.exit(1); } })' "$PAGE_URL"
if [ -t 0 ] && [ -t 1 ]; then
  echo "lowdown-server stays up until you press Enter (the demo's data is removed then). Open:"
  echo "$PAGE_URL"
  read -r _ || true
else
  echo "(not on a terminal: the server stops with the demo; run \`make demo\` in a terminal to keep it up while you look)"
  echo "$PAGE_URL"
fi
