// Node entry: the `nodejs` wasm-bindgen build, loaded synchronously, and process.env.
import { createRequire } from 'node:module';
import { makeObserve } from './observe.js';

const wasm = createRequire(import.meta.url)('../wasm/nodejs/lowdown.js');
const core = { ready: () => true, prepareObservation: wasm.prepareObservation, HostPolicy: wasm.HostPolicy, TelemetryBudget: wasm.TelemetryBudget, decide: wasm.decide };

/** Wraps `fetch` so each call reports `{host, method, status, latency_ms, response_bytes, source}`. */
export const observe = makeObserve(core, (name) => process.env[name]);
export { DEFAULT_API_URL } from './observe.js';

/** Node loads the core synchronously at import; `init` exists so portable code can call it. */
export async function init() {}
/** See {@link init}. */
export function initSync() {}
