// Node entry: the `nodejs` wasm-bindgen build, loaded synchronously, and process.env.
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { makeObserve } from './observe.js';

const wasm = createRequire(import.meta.url)('../wasm/nodejs/lowdown.js');
const core = { ready: () => true, prepareObservation: wasm.prepareObservation, HostPolicy: wasm.HostPolicy, TelemetryBudget: wasm.TelemetryBudget, Router: wasm.Router };

/** process.env as the core reads it (SPEC §2: PROWL_API_URL, then LOWDOWN_API_URL; PROWL_TELEMETRY). */
const coreSettings = () => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k, v]) => /^(PROWL|LOWDOWN)_/.test(k) && typeof v === 'string'));
  return JSON.parse(wasm.settingsFromEnv(JSON.stringify(env), homedir(), 'telemetry'));
};

/** Wraps `fetch` so each call reports `{host, method, status, latency_ms, response_bytes, source}`. */
export const observe = makeObserve(core, (name) => process.env[name], coreSettings);
export { DEFAULT_API_URL } from './observe.js';

/** Node loads the core synchronously at import; `init` exists so portable code can call it. */
export async function init() {}
/** See {@link init}. */
export function initSync() {}
