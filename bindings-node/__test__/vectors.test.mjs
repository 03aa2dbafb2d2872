// Every golden vector in tests/vectors/*.json, run against the napi build (index.js).

import { createRequire } from 'node:module';
import { runVectors } from '../../tests/vectors/js/run.mjs';

runVectors('node', createRequire(import.meta.url)('../index.js'));
