// The README's code blocks run against the built binding (through the package's own name),
// and print what their comments say, so the quick start cannot rot.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);

it('the README has a code block', () => assert.ok(blocks.length > 0));

for (const [i, code] of blocks.entries()) {
  it(`README code block ${i + 1} prints what its comments say`, () => {
    const want = [...code.matchAll(/console\.log\(.*\); \/\/ (.*)$/gm)].map((m) => m[1]);
    const out = execFileSync(process.execPath, ['--input-type=commonjs', '-e', code], {
      cwd: new URL('..', import.meta.url),
      encoding: 'utf8',
    });
    assert.deepEqual(out.trim().split('\n'), want);
  });
}
