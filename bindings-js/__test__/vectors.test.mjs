// The golden vectors of every operation the binding exposes, on both builds.

import { describe } from 'node:test';
import { runVectors } from '../../tests/vectors/js/run.mjs';
import { BUILDS } from './builds.mjs';

for (const [host, api] of BUILDS) describe(`${host} build`, () => runVectors(host, api));
