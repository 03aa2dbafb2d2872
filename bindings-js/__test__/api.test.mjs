// The binding's own promises (tests/vectors/js/api.mjs), on both builds.

import { describe } from 'node:test';
import { runApiTests } from '../../tests/vectors/js/api.mjs';
import { BUILDS } from './builds.mjs';

for (const [host, api] of BUILDS) describe(`${host} build`, () => runApiTests(api));
