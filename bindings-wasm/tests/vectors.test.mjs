// Every golden vector in tests/vectors/*.json, run against the WASM build for Node
// (bindings-wasm/pkg/nodejs, made by `make build-wasm-binding`).

import { createRequire } from 'node:module';
import { runVectors } from '../../tests/vectors/js/run.mjs';

runVectors('wasm', createRequire(import.meta.url)('../pkg/nodejs/lowdown.js'));
