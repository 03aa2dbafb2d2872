// The WASM binding's own promises (see tests/vectors/js/api.mjs), shared with the napi runner.

import { createRequire } from 'node:module';
import { runApiTests } from '../../tests/vectors/js/api.mjs';

runApiTests(createRequire(import.meta.url)('../pkg/nodejs/lowdown.js'));
