// lowdown-core for Node.js: which build to load.
//
// 1. `LOWDOWN_CORE=wasm` forces the WebAssembly build; `LOWDOWN_CORE=native` forbids it.
// 2. The native binding for this platform: napi's loader (native.js) tries a `.node` file
//    beside it (a local build), then the platform package (`lowdown-core-linux-x64-gnu`, ...)
//    that npm installed from `optionalDependencies`.
// 3. Otherwise the WebAssembly build of the same core (`lowdown-core-wasm`): same exports,
//    same results, a little slower; it works on every platform Node runs on.
//
// `kind` says which one loaded; `nativeError` why the native one did not, if it did not.

'use strict';

const choice = process.env.LOWDOWN_CORE;
let binding = null;
let kind = null;
let nativeError = null;

if (choice !== 'wasm') {
  try {
    binding = require('./native.js');
    kind = 'native';
  } catch (err) {
    nativeError = err;
    if (choice === 'native') throw err;
  }
}
if (!binding) {
  binding = require('lowdown-core-wasm');
  kind = 'wasm';
}

module.exports = { ...binding, kind, nativeError };
