#!/usr/bin/env bash
# prowl and lowdown-server as a user installs them: the wheels `make package` wrote to dist/
# are copied out of the repository and installed into a brand-new venv (prowl's dependencies
# from PyPI), as `pipx`/`uvx` do, and run on a PATH with no Rust toolchain. The server is the
# venv's `lowdown-server` (the prebuilt binary of the wheel); three lines of Python make a
# real httpx client report to it, and the reputation answer for that host shows the
# telemetry block.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/prowl-install.XXXXXX")"
SERVER_PID=""
cleanup() {
  [ -n "$SERVER_PID" ] && kill -TERM "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

WHEEL="$(ls "$ROOT"/dist/prowl-*-abi3-*.whl 2>/dev/null | head -1)"
SERVER_WHEEL="$(ls "$ROOT/dist/lowdown_server-"*"-py3-none-manylinux_"*"_$(uname -m).whl" 2>/dev/null | head -1)"
[ -n "$WHEEL" ] && [ -n "$SERVER_WHEEL" ] || { echo "no prowl or lowdown-server wheel in dist/: run make package" >&2; exit 1; }
cp "$WHEEL" "$SERVER_WHEEL" "$WORK/"
# Nothing below may need Rust: every directory holding cargo leaves the PATH.
PATH="$(tr ':' '\n' <<<"$PATH" | while read -r d; do [ -e "$d/cargo" ] || printf '%s:' "$d"; done)"
export PATH="${PATH%:}"
! command -v cargo >/dev/null || { echo "cargo is still on PATH" >&2; exit 1; }
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install --quiet --disable-pip-version-check "$WORK/$(basename "$WHEEL")" "$WORK/$(basename "$SERVER_WHEEL")"
# The wheel, not a source tree: prowl is imported from the venv, with its compiled core.
"$WORK/venv/bin/python" -c 'import prowl, prowl._native, sys; assert prowl.__file__.startswith(sys.prefix), prowl.__file__'
# The server is the wheel's binary, on the venv's PATH as pipx puts it; and `uvx` runs it
# straight from the wheel (uv itself from the repo's tools; its cache here, nothing fetched).
[ "$("$WORK/venv/bin/lowdown-server" --version)" = "lowdown-server 0.1.0" ]
[ "$(UV_CACHE_DIR="$WORK/uv-cache" UV_TOOL_DIR="$WORK/uv-tools" "$ROOT/.venv/bin/uvx" --quiet --offline \
  --from "$WORK/$(basename "$SERVER_WHEEL")" lowdown-server --version)" = "lowdown-server 0.1.0" ]

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
# The called server is on loopback, which lowdown-server refuses to store unless told (tests only).
LOWDOWN_HOME="$WORK/home" "$WORK/venv/bin/lowdown-server" --listen "127.0.0.1:$PORT" --db "$WORK/db.sqlite" --unsafe-allow-private-hosts 2>"$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done

# The thing being called: a local HTTP server (private hosts are reported only when allowed).
cd "$WORK"
PROWL_API_URL="http://127.0.0.1:$PORT" PROWL_TELEMETRY_ALLOW_PRIVATE=1 "$WORK/venv/bin/python" - <<'PY'
import http.server, threading
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args): pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
threading.Thread(target=srv.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{srv.server_address[1]}/?q=CANARY_install"

import httpx, prowl
client = prowl.observe(httpx.Client())
for _ in range(3): client.get(url)

assert prowl.flush(5.0), prowl.stats()
srv.shutdown()
PY

ANSWER="$(curl -sf "http://127.0.0.1:$PORT/api/reputation/127.0.0.1")"
echo "$ANSWER" | python3 -c '
import json, sys
a = json.load(sys.stdin)
t = a.get("telemetry") or {}
assert t.get("observations") == 3, a
assert "CANARY_install" not in json.dumps(a)
print("prowl and lowdown-server from a fresh venv: 3 observations in the telemetry block of", a["target"])
'
