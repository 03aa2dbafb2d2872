// The target label a wrapped entry records under: the same label the proxy derives from
// the command when `--target` is absent (SPEC §3.2). The rule lives in lowdown-core; this
// asks the package's binding module (../core.js) for it, with the same file-system facts
// the proxy gathers (../label-facts.js), and never re-implements it.

import { labelFacts } from '../label-facts.js';

/** @type {typeof import('../core.js') | null | undefined} the binding module once asked for; null when it did not load */
let binding;

async function core() {
  if (binding === undefined) {
    try {
      binding = await import('../core.js');
    } catch {
      binding = null;
    }
  }
  return binding;
}

/**
 * The label for a command line, or null when the core binding is not available (the
 * wrapped entry then has no `--target` and the proxy derives the label when it runs).
 * @param {string} command
 * @param {string[]} args
 * @param {{cwd?: string, env?: Record<string, string|undefined>}} [where] where the command would run
 * @returns {Promise<string|null>}
 */
export async function targetLabel(command, args, where = {}) {
  const b = await core();
  const fn = b && b.targetLabel;
  if (typeof fn !== 'function') return null;
  try {
    const argv = [command, ...args];
    const out = fn(argv, JSON.stringify(labelFacts(argv, { cwd: where.cwd, env: where.env ?? process.env })));
    return typeof out === 'string' && out ? out : null;
  } catch {
    return null;
  }
}

/**
 * The `--target` value written in a wrapped entry's args, if any.
 * @param {string[]|undefined} args
 * @returns {string|null}
 */
export function labelInArgs(args) {
  if (!Array.isArray(args)) return null;
  const end = args.indexOf('--');
  const opts = end < 0 ? args : args.slice(0, end);
  const i = opts.indexOf('--target');
  if (i >= 0 && typeof opts[i + 1] === 'string') return opts[i + 1];
  const eq = opts.find((a) => typeof a === 'string' && a.startsWith('--target='));
  return eq ? eq.slice('--target='.length) : null;
}
