// Copies the wasm-bindgen output of bindings-wasm (built by `make build-wasm-binding`)
// into this package, so it is self-contained when packed.
import { cpSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const from = fileURLToPath(new URL('../../../bindings-wasm/pkg/', import.meta.url));
const to = fileURLToPath(new URL('../wasm/', import.meta.url));
for (const target of ['nodejs', 'web']) {
  if (!existsSync(`${from}${target}/lowdown_bg.wasm`)) {
    console.error(`lowdown-observe: ${from}${target} is missing; run \`make build-wasm-binding\` first`);
    process.exit(1);
  }
}
rmSync(to, { recursive: true, force: true });
cpSync(from, to, { recursive: true });
// The nodejs build is CommonJS inside this ESM package.
writeFileSync(`${to}nodejs/package.json`, '{ "type": "commonjs" }\n');
