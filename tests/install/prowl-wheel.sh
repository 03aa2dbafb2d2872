#!/usr/bin/env bash
# prowl and lowdown-server as a user installs them: the wheels `make package` wrote to dist/
# are copied out of the repository and installed into a brand-new venv (prowl's dependencies
# from PyPI), as `pipx`/`uvx` do, and run on a PATH with no Rust toolchain. The server is the
# venv's `lowdown-server` (the prebuilt binary of the wheel); three lines of Python make a
# real httpx client report to it, and the reputation answer for that host shows the
# telemetry block. Then, with nothing configured, prowl starts the venv's lowdown-server as
# the user's local node (`prowl[node]`) and its records reach it.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/prowl-install.XXXXXX")"
SERVER_PID=""
cleanup() {
  [ -n "$SERVER_PID" ] && kill -TERM "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  NODE_PID="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$WORK/node-home/local-node.json" 2>/dev/null || true)"
  [ -n "$NODE_PID" ] && kill -TERM "$NODE_PID" 2>/dev/null
  for _ in $(seq 1 100); do [ -e "$WORK/node-home/local-node.json" ] || break; sleep 0.1; done
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
# `prowl[node]`: the server wheel comes with it, found beside prowl's (as on an index).
"$WORK/venv/bin/pip" install --quiet --disable-pip-version-check --find-links "$WORK" "$WORK/$(basename "$WHEEL")[node]"
# The wheel, not a source tree: prowl is imported from the venv, with its compiled core.
"$WORK/venv/bin/python" -c 'import prowl, prowl._native, sys; assert prowl.__file__.startswith(sys.prefix), prowl.__file__'
# The server is the wheel's binary, on the venv's PATH as pipx puts it; and `uvx` runs it
# straight from the wheel (uv itself from the repo's tools; its cache here, nothing fetched).
[ "$("$WORK/venv/bin/lowdown-server" --version)" = "lowdown-server 0.2.0" ]
[ "$(UV_CACHE_DIR="$WORK/uv-cache" UV_TOOL_DIR="$WORK/uv-tools" "$ROOT/.venv/bin/uvx" --quiet --offline \
  --from "$WORK/$(basename "$SERVER_WHEEL")" lowdown-server --version)" = "lowdown-server 0.2.0" ]

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

# The drop-in telemetry hook: the file the installed server serves is the one the wheel
# ships, and it runs on the standard library alone (python3 -I -S, outside the venv).
HOOK="$("$WORK/venv/bin/python" -c 'import prowl.prowl_telemetry_hook as h; print(h.__file__)')"
curl -sf "http://127.0.0.1:$PORT/hooks/prowl_telemetry_hook.py" -o "$WORK/hook.py"
cmp "$HOOK" "$WORK/hook.py"
echo '{"hook_event_name":"PostToolUse","tool_name":"WebFetch","tool_input":{"url":"https://hook-install.example.org/x?q=CANARY_hook"},"tool_response":{"code":200,"bytes":5},"duration_ms":42}' \
  | PROWL_API_URL="http://127.0.0.1:$PORT" python3 -I -S "$WORK/hook.py"
curl -sf "http://127.0.0.1:$PORT/api/reputation/hook-install.example.org" | python3 -c '
import json, sys
a = json.load(sys.stdin)
assert (a.get("telemetry") or {}).get("observations") == 1, a
assert "CANARY_hook" not in json.dumps(a)
print("the downloaded prowl_telemetry_hook.py, on the standard library alone: 1 observation of", a["target"])
'
# The drop-in provider hook: the file the server serves is the wheel's too; on the standard
# library alone it makes an agent a provider, and a Stop event starts one scout pass.
PHOOK="$("$WORK/venv/bin/python" -c 'import prowl.prowl_provider_hook as h; print(h.__file__)')"
curl -sf "http://127.0.0.1:$PORT/hooks/prowl_provider_hook.py" -o "$WORK/provider_hook.py"
cmp "$PHOOK" "$WORK/provider_hook.py"
AK="$(curl -sf -X POST "http://127.0.0.1:$PORT/v1/auth/agents/register" -H 'Content-Type: application/json' \
  -d '{"name":"install-test","model_provider":"anthropic","model_id":"claude","environment":"test"}' \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["agent_key"])')"
PROWL_API_URL="http://127.0.0.1:$PORT" PROWL_AGENT_KEY="$AK" python3 -I -S "$WORK/provider_hook.py" register >/dev/null
echo '{"session_id":"install","hook_event_name":"Stop"}' | XDG_CONFIG_HOME="$WORK/xdg" PROWL_API_URL="http://127.0.0.1:$PORT" \
  PROWL_AGENT_KEY="$AK" PROWL_PROVIDER_MODE=1 python3 -I -S "$WORK/provider_hook.py"
for _ in $(seq 1 100); do grep -q '"open"' "$WORK/xdg/prowl/provider_state.json" 2>/dev/null && break; sleep 0.1; done
python3 - "$WORK/xdg/prowl/provider_state.json" "$AK" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
st = json.loads(text)
assert (st["mode"], st["open"], st.get("last_error")) == ("scout", 0, None), st
assert sys.argv[2] not in text, "the agent key never reaches the state"
print("the downloaded prowl_provider_hook.py, on the standard library alone: registered, one scout pass of", st["api_url"])
PY
# The preflight hook: the file the server serves is the wheel's; the installed console script
# stays silent for a server Lowdown knows nothing bad of, and prints Claude Code's `ask`
# decision when the API answers `ask`.
FHOOK="$("$WORK/venv/bin/python" -c 'import prowl.prowl_preflight_hook as h; print(h.__file__)')"
curl -sf "http://127.0.0.1:$PORT/hooks/prowl_preflight_hook.py" -o "$WORK/preflight_hook.py"
cmp "$FHOOK" "$WORK/preflight_hook.py"
PAYLOAD='{"hook_event_name":"PreToolUse","tool_name":"mcp__hook-install__search","tool_input":{"q":"CANARY_input"}}'
out="$(echo "$PAYLOAD" | LOWDOWN_HOME="$WORK/pf-home" PROWL_API_URL="http://127.0.0.1:$PORT" "$WORK/venv/bin/prowl-claude-hook" preflight)"
[ -z "$out" ] || { echo "preflight printed for a server with nothing against it: $out" >&2; exit 1; }
"$WORK/venv/bin/python" - "$WORK" <<'PY'
import http.server, json, os, subprocess, sys, threading
class Ask(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        body = json.dumps({"target": "hook-install", "resolved_target": "mcp:io.x/hook-install", "decision": "ask",
                           "reasons": ["the MCP Registry marks mcp:io.x/hook-install deleted"]}).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
srv = http.server.HTTPServer(("127.0.0.1", 0), Ask)
threading.Thread(target=srv.serve_forever, daemon=True).start()
env = dict(os.environ, LOWDOWN_HOME=sys.argv[1] + "/pf-home2", PROWL_API_URL=f"http://127.0.0.1:{srv.server_port}")
cmd = [os.path.join(os.path.dirname(sys.executable), "prowl-claude-hook"), "preflight"]
r = subprocess.run(cmd, input=b'{"hook_event_name":"PreToolUse","tool_name":"mcp__hook-install__search","tool_input":{}}', env=env, capture_output=True, timeout=30)
out = json.loads(r.stdout)["hookSpecificOutput"]
assert (r.returncode, out["permissionDecision"]) == (0, "ask"), r
assert "deleted" in out["permissionDecisionReason"], out
print("the installed prowl-claude-hook preflight: silent for a known-good server, asks when the API says ask")
PY

# The daemon's console script: without an agent key it says so and exits 2.
rc=0; env -u PROWL_AGENT_KEY "$WORK/venv/bin/prowl-provider" daemon 2>"$WORK/daemon.err" || rc=$?
[ "$rc" = 2 ] && grep -q "PROWL_AGENT_KEY is not set" "$WORK/daemon.err" || { echo "prowl-provider daemon: exit $rc" >&2; cat "$WORK/daemon.err" >&2; exit 1; }

# LOWDOWN_AUTOSTART=0 (before any node runs here): as before, nothing is started and the
# records wait in the spool.
env -u PROWL_API_URL -u LOWDOWN_API_URL LOWDOWN_HOME="$WORK/off-home" LOWDOWN_AUTOSTART=0 "$WORK/venv/bin/python" - <<'PY'
import os, prowl
from prowl.sender import SENDER
assert not prowl.configure().may_start
SENDER.submit_record({"actor": "a", "target": "npm:off", "target_type": "tool", "task_type": "t", "outcome": "success", "source": "organic"})
PY
[ ! -e "$WORK/off-home/local-node.json" ] && ls "$WORK/off-home/spool/"*.jsonl >/dev/null \
  || { echo "LOWDOWN_AUTOSTART=0 started a node or lost the record" >&2; exit 1; }
echo "LOWDOWN_AUTOSTART=0: no node, the record waits in the spool"

# Nothing configured: prowl starts the venv's lowdown-server as the local node (no
# LOWDOWN_SERVER_BIN, no PATH entry: found beside the interpreter) and delivers to it.
cat >"$WORK/first.py" <<'PY'
import json, os, sys, time, urllib.request
import prowl
from prowl.sender import SENDER
home, tag = os.environ["LOWDOWN_HOME"], sys.argv[1]
assert prowl.configure().may_start
for i in range(3):
    SENDER.submit_record({"actor": "agent:install", "target": "npm:install-target", "target_type": "tool",
                          "task_type": "t", "outcome": "success", "source": "organic", "record_id": f"install-{tag}-{i}"})
prowl.flush(2.0)
want = int(sys.argv[2])
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    prowl.flush(1.0)
    try:
        node = json.load(open(os.path.join(home, "local-node.json")))
        with urllib.request.urlopen(node["url"] + "/api/reputation/npm:install-target", timeout=5) as r:
            a = json.load(r)
        if a.get("interactions") == want:
            break
    except (OSError, ValueError):
        pass
    time.sleep(0.2)
else:
    raise SystemExit(f"the local node never had the {want} records")
exe = os.path.realpath(f"/proc/{node['pid']}/exe")
assert exe == os.path.realpath(os.path.join(os.environ["VENV"], "bin", "lowdown-server")), exe
print(node["pid"])
PY
first() { env -u PROWL_API_URL -u LOWDOWN_API_URL -u LOWDOWN_SERVER_BIN LOWDOWN_HOME="$WORK/node-home" VENV="$WORK/venv" \
  PATH="/usr/bin:/bin" "$WORK/venv/bin/python" "$WORK/first.py" "$@"; }
# Two processes at once start one node; both their records reach it; a third reuses it.
first a 6 >"$WORK/a.pid" & A=$!
first b 6 >"$WORK/b.pid"
wait "$A"
[ "$(cat "$WORK/a.pid")" = "$(cat "$WORK/b.pid")" ] || { echo "two nodes: $(cat "$WORK/a.pid") $(cat "$WORK/b.pid")" >&2; exit 1; }
[ "$(first c 9)" = "$(cat "$WORK/a.pid")" ] || { echo "a third process did not reuse the node" >&2; exit 1; }
echo "prowl with nothing configured: two processes at once started one venv lowdown-server, a third reused it, all 9 records reached it"
