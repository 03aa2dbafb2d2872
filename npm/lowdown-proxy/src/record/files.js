// The file IO the core's plans ask for (the spool's and node.json's; lowdown-core
// `files::Step`): each step is done here and what happened is fed back, until a step this
// file does not perform (deliver, identity, done, failed). Which file, and what an error or
// a race means, is the plan's.

import fs from 'node:fs';
import path from 'node:path';

/**
 * @typedef {{step: 'list'} | {step: 'read', name: string} | {step: 'write', name: string, text: string}
 *   | {step: 'rename' | 'claim' | 'link', from: string, to: string} | {step: 'delete', name: string}
 *   | {step: 'deliver', records: string[]} | {step: 'identity', node_id: string, created_at: string, created: boolean}
 *   | {step: 'done'} | {step: 'failed'}} Step
 * @typedef {{start(): string, feed(result: string, text: string | null): string,
 *   listed?: (names: string[], mtimesMs: number[]) => string}} Plan
 */

/**
 * What an IO error was, as a plan reads it.
 * @param {unknown} err
 * @returns {'missing' | 'exists' | 'failed'}
 */
function result(err) {
  const code = /** @type {NodeJS.ErrnoException} */ (err)?.code;
  return code === 'ENOENT' ? 'missing' : code === 'EEXIST' ? 'exists' : 'failed';
}

/**
 * Runs `plan` in `dir` from `first` (its first step by default) until a step this file
 * does not perform; returns that step and the last IO error seen (for a `failed` step).
 * @param {string} dir
 * @param {Plan} plan
 * @param {string} [first] a step as JSON text
 * @returns {{step: Step, error: unknown}}
 */
export function run(dir, plan, first = plan.start()) {
  let error = null;
  let step = /** @type {Step} */ (JSON.parse(first));
  for (;;) {
    let next;
    try {
      next = perform(dir, plan, step);
    } catch (err) {
      error = err;
      next = plan.feed(result(err), null);
    }
    if (next === null) return { step, error };
    step = JSON.parse(next);
  }
}

/**
 * Does one step; the plan's next step as JSON text, or null when the step is not IO.
 * @param {string} dir
 * @param {Plan} plan
 * @param {Step} step
 * @returns {string | null}
 */
function perform(dir, plan, step) {
  /** @param {string} name */
  const at = (name) => path.join(dir, name);
  switch (step.step) {
    case 'list': {
      const names = fs.readdirSync(dir);
      const mtimes = names.map((n) => {
        try {
          return fs.statSync(at(n)).mtimeMs;
        } catch {
          return NaN; // gone meanwhile
        }
      });
      if (!plan.listed) throw new Error('this plan takes no listing');
      return plan.listed(names, mtimes);
    }
    case 'read':
      return plan.feed('ok', fs.readFileSync(at(step.name), 'utf8'));
    case 'write':
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      fs.writeFileSync(at(step.name), step.text, { mode: 0o600 });
      fs.chmodSync(at(step.name), 0o600);
      break;
    case 'rename':
      fs.renameSync(at(step.from), at(step.to));
      break;
    case 'claim':
      fs.renameSync(at(step.from), at(step.to));
      fs.utimesSync(at(step.to), new Date(), new Date());
      break;
    case 'link':
      fs.linkSync(at(step.from), at(step.to));
      break;
    case 'delete':
      try {
        fs.rmSync(at(step.name), { force: true });
      } catch {
        // whatever happened, the plan goes on
      }
      break;
    default:
      return null;
  }
  return plan.feed('ok', null);
}
