// Runs the golden vectors of every operation the JavaScript binding exposes against one build
// (`node` = napi, `wasm` = wasm-bindgen) with node:test: one suite per vector file, one test
// per case. A case listed for the host in xfail.json must fail (reported by name, never
// hidden; once it passes the run fails until the entry goes). An operation in NOT_EXPOSED
// must really be absent from the build; one in neither table, or an xfail entry naming no
// case, fails.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expand, loadVectorFiles, loadXfail, plain } from './load.mjs';
import { NOT_EXPOSED, operations } from './operations.mjs';

/** Compares one case's outcome with its `expected` value or `error` kind. */
function check(op, api, c) {
  const input = expand(c.input);
  let got;
  try {
    got = op(api, input);
  } catch (err) {
    if (!('error' in c)) throw new Error(`expected a result, got error ${err?.code}: ${err?.message}`, { cause: err });
    assert.equal(err?.code, c.error, `wanted error ${c.error}, got ${err?.code}: ${err?.message}`);
    return;
  }
  if ('error' in c) assert.fail(`wanted error ${c.error}, got ${JSON.stringify(plain(got)).slice(0, 300)}`);
  assert.deepEqual(plain(got), c.expected);
}

/** Registers the vector tests of `host` (a key of xfail.json) against its `api`. */
export function runVectors(host, api) {
  const xfail = loadXfail(host);
  const files = loadVectorFiles();
  it('there are vector files to run', () => assert.ok(files.length > 0));
  for (const { file, operation, cases } of files) {
    describe(file, () => {
      const op = operations[operation];
      if (!op && NOT_EXPOSED[operation]) {
        const [name, why] = NOT_EXPOSED[operation];
        it(`not exposed to JavaScript (${why}): ${cases.length} cases run in Rust`, () =>
          assert.equal(api[name], undefined, `${name} is exported: move "${operation}" into operations`));
        return;
      }
      if (!op) {
        it(`operation "${operation}" is known to the ${host} runner`, () =>
          assert.fail(`tests/vectors/js/operations.mjs has no entry for "${operation}"`));
        return;
      }
      const known = xfail.get(file) ?? new Map();
      for (const name of known.keys()) {
        it(`xfail entry "${name}" names a case`, () => assert.ok(cases.some((c) => c.name === name)));
      }
      for (const c of cases) {
        const reason = known.get(c.name);
        if (reason === undefined) it(c.name, () => check(op, api, c));
        // A known gap must still fail: once it passes, its xfail entry has to go.
        else it(`${c.name} [xfail: ${reason}]`, () => assert.throws(() => check(op, api, c), 'passes now: remove it from xfail.json'));
      }
    });
  }
}
