// The two builds of the binding, loaded directly (not through index.js): the native one for
// this platform (napi's loader, native.js) and the WebAssembly one (wasm/lowdown.js).

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** `[host name in xfail.json, build]` for both builds. */
export const BUILDS = [
  ['node', require('../native.js')],
  ['wasm', require('../wasm/lowdown.js')],
];
