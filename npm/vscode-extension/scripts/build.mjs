// Builds dist/ for the .vsix: src/commands.js bundled with lowdown-proxy's wrap module and the
// WebAssembly build of lowdown-core (esbuild resolves what they import; nothing is copied by
// hand), the editor entry point beside it, and the core's .wasm file, which the wasm-bindgen
// glue reads from the bundle's own directory.

import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const dist = join(root, 'dist');
const require = createRequire(import.meta.url);

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
await build({
  entryPoints: [join(root, 'src', 'commands.js')],
  outfile: join(dist, 'commands.js'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node18',
  // The editor runs the WebAssembly core: one build for every platform, no native binary.
  alias: { 'lowdown-core': 'lowdown-core-wasm' },
  logLevel: 'warning',
});
copyFileSync(join(root, 'src', 'extension.js'), join(dist, 'extension.js'));
copyFileSync(join(dirname(require.resolve('lowdown-core-wasm')), 'lowdown_bg.wasm'), join(dist, 'lowdown_bg.wasm'));
process.stdout.write(`built ${dist}\n`);
