// Browser and edge entry: the `web` wasm-bindgen build. Browsers call `await init()`
// (the .wasm is fetched beside this file); runtimes that forbid compiling from bytes
// (Cloudflare Workers) import the module and call `initSync({ module })`.
import wasmInit, { initSync as wasmInitSync, prepareObservation, HostPolicy, TelemetryBudget, Router } from '../wasm/web/lowdown.js';
import { makeObserve } from './observe.js';

let ready = false;
const core = { ready: () => ready, prepareObservation, HostPolicy, TelemetryBudget, Router };

/** Loads the WebAssembly core (fetching the .wasm next to this module unless given). */
/** @param {import('../wasm/web/lowdown.js').InitInput} [input] */
export async function init(input) {
  await wasmInit(input === undefined ? undefined : { module_or_path: input });
  ready = true;
}

/** Loads the WebAssembly core from an already compiled `WebAssembly.Module` (Workers). */
/** @param {WebAssembly.Module | {module: import('../wasm/web/lowdown.js').SyncInitInput}} input */
export function initSync(input) {
  wasmInitSync(input instanceof WebAssembly.Module ? { module: input } : input);
  ready = true;
}

/** Wraps `fetch`; call `init()` or `initSync()` first, or calls are passed through unreported. */
export const observe = makeObserve(core);
export { DEFAULT_API_URL } from './observe.js';
