#!/usr/bin/env bash
# `make package`: every package a user installs, packed into dist/ as it is published.
#
#   lowdown-core-<v>.tgz                  the JavaScript binding's loader, with optionalDependencies
#                                         on every platform package built here (napi-rs convention)
#   lowdown-core-<platform>-<v>.tgz       one native binding per target (x64 gnu, arm64 gnu, x64 musl)
#   lowdown-core-wasm-<v>.tgz             the WebAssembly fallback, loaded where no native one fits
#   lowdown-proxy-<v>.tgz                 the proxy, lowdown-mcp and wrap
#   lowdown-server-<v>.tgz                `npx lowdown-server`: a launcher, with optionalDependencies
#                                         on every platform package built here
#   lowdown-server-<platform>-<v>.tgz     one prebuilt server binary per target
#   lowdown_server-<v>-py3-none-*.whl     the same binary as a PyPI wheel per target (`pipx run`,
#                                         `uvx`; maturin's bin bindings)
#   lowdown-observe-<v>.tgz               observe(fetch)
#   lowdown-mcp-wrap.vsix                 the editor extension (bundles the WebAssembly core)
#   prowl-<v>-cp39-abi3-*.whl, prowl-<v>.tar.gz   the Python package (maturin)
#
# The native targets come from TARGETS (default: all three); mk/npm.mk installs their rustup
# targets, zig and cargo-zigbuild first. The server's come from SERVER_TARGETS (default:
# TARGETS; `host` is this machine's), built in SERVER_PROFILE (default: release; `make test`
# packs the dev build its other tests already ran, for this machine only: mk/npm.mk). Nothing published holds a `file:` dependency.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DIST="$ROOT/dist"
TARGETS="${TARGETS:-x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-unknown-linux-musl}"
SERVER_TARGETS="${SERVER_TARGETS:-$TARGETS}"
SERVER_PROFILE="${SERVER_PROFILE:-release}"
STAGE="$(mktemp -d "${TMPDIR:-/tmp}/lowdown-package.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
rm -rf "$DIST"
mkdir -p "$DIST"

pack() { (cd "$1" && npm pack --silent --pack-destination "$DIST" >/dev/null); }

# napi's platform name of a Rust target (its .node files and package directories use it).
platform() {
  case "$1" in
    x86_64-unknown-linux-gnu) echo linux-x64-gnu ;;
    aarch64-unknown-linux-gnu) echo linux-arm64-gnu ;;
    x86_64-unknown-linux-musl) echo linux-x64-musl ;;
    *) echo "unknown target $1" >&2; return 1 ;;
  esac
}

# Other targets than this machine's are cross-compiled with zig as the linker (napi's -x:
# cargo-zigbuild, which also links a musl addon dynamically, as Node itself is there).
cross() {
  [ "$1" = "$(rustc -vV | sed -n 's/^host: //p')" ] || echo "-x"
}

echo "== native bindings: $TARGETS"
optional="{}"
for target in $TARGETS; do
  p="$(platform "$target")"
  out="$STAGE/native/$target"
  mkdir -p "$out"
  (cd bindings-js && npx napi build --platform --release --target "$target" $(cross "$target") \
    --output-dir "$out" --no-js >/dev/null)
  cp -r "bindings-js/npm/$p" "$STAGE/$p"
  cp "$out/lowdown-core.$p.node" "$STAGE/$p/"
  pack "$STAGE/$p"
  optional="$(node -e 'const o = JSON.parse(process.argv[1]); o[process.argv[2]] = process.argv[3]; console.log(JSON.stringify(o))' \
    "$optional" "lowdown-core-$p" "$(node -p 'require("./bindings-js/package.json").version')")"
done

echo "== lowdown-core (loader, optionalDependencies: $optional)"
mkdir -p "$STAGE/lowdown-core"
cp bindings-js/package.json bindings-js/index.js bindings-js/index.mjs bindings-js/index.d.ts bindings-js/native.js bindings-js/native.d.ts "$STAGE/lowdown-core/"
node -e '
  const fs = require("fs"); const file = process.argv[1];
  const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
  pkg.optionalDependencies = JSON.parse(process.argv[2]);
  delete pkg.devDependencies;
  fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
' "$STAGE/lowdown-core/package.json" "$optional"
pack "$STAGE/lowdown-core"

echo "== lowdown-core-wasm, lowdown-proxy, lowdown-observe"
pack bindings-js/wasm
pack npm/lowdown-proxy
pack npm/lowdown-observe

# maturin builds each binary once, for the wheel; the npm platform package takes the same file.
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
HOST="$(rustc -vV | sed -n 's/^host: //p')"
SERVER_TARGETS="${SERVER_TARGETS//host/$HOST}"
echo "== lowdown-server ($SERVER_PROFILE): $SERVER_TARGETS"
profile_dir="$SERVER_PROFILE"
[ "$profile_dir" = dev ] && profile_dir=debug
optional="{}"
for target in $SERVER_TARGETS; do
  p="$(platform "$target")"
  if [ "$target" = "$HOST" ]; then
    wheel_args=() bin="$TARGET_DIR/$profile_dir/lowdown-server"
  else
    wheel_args=(--target "$target" --zig) bin="$TARGET_DIR/$target/$profile_dir/lowdown-server"
  fi
  "$ROOT/.venv/bin/maturin" build --profile "$SERVER_PROFILE" -m server/Cargo.toml "${wheel_args[@]}" \
    --out "$DIST" >/dev/null 2>&1
  cp -r "npm/lowdown-server/npm/$p" "$STAGE/server-$p"
  cp "$bin" "$STAGE/server-$p/lowdown-server"
  pack "$STAGE/server-$p"
  optional="$(node -e 'const o = JSON.parse(process.argv[1]); o[process.argv[2]] = process.argv[3]; console.log(JSON.stringify(o))' \
    "$optional" "lowdown-server-$p" "$(node -p 'require("./npm/lowdown-server/package.json").version')")"
done
mkdir -p "$STAGE/lowdown-server"
cp -r npm/lowdown-server/package.json npm/lowdown-server/index.js npm/lowdown-server/index.d.ts \
  npm/lowdown-server/bin "$STAGE/lowdown-server/"
node -e '
  const fs = require("fs"); const file = process.argv[1];
  const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
  pkg.optionalDependencies = JSON.parse(process.argv[2]);
  fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
' "$STAGE/lowdown-server/package.json" "$optional"
pack "$STAGE/lowdown-server"

echo "== editor extension"
(cd npm/vscode-extension && npm run --silent package >/dev/null)
cp npm/vscode-extension/lowdown-mcp-wrap.vsix "$DIST/"

echo "== prowl (abi3 wheel and sdist)"
"$ROOT/.venv/bin/maturin" build --release -m bindings-python/Cargo.toml --out "$DIST" >/dev/null 2>&1
"$ROOT/.venv/bin/maturin" sdist -m bindings-python/Cargo.toml --out "$DIST" >/dev/null 2>&1

# Nothing published may point into this repository.
for tgz in "$DIST"/*.tgz; do
  if tar -xOzf "$tgz" package/package.json | grep -q '"file:'; then
    echo "$tgz has a file: dependency" >&2
    exit 1
  fi
done
ls -1 "$DIST"
