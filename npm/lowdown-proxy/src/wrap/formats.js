// The two config formats: JSON (with comments) and YAML (Continue). Each reads a file into
// position-carrying nodes and edits one server entry by splices; everything above this
// (which entries, what to change, writing) is the same for both.

import { parseJsonc } from './jsonc.js';
import { inspectEntry, wrapEdits, unwrapEdits } from './entry.js';
import { parseYaml } from './yamlsrc.js';
import { entryProblem, yamlWrapEdits, yamlUnwrapEdits } from './yamlentry.js';

/** JSON and JSONC: every client but Continue, and Continue's JSON files. */
export const JSON_FORMAT = {
  name: 'JSON',
  errorType: /** @type {'malformed_json'|'malformed_yaml'} */ ('malformed_json'),
  parse: parseJsonc,
  inspect: inspectEntry,
  wrapEdits,
  unwrapEdits,
};

/**
 * YAML: block mappings are edited line-wise (yamlentry.js); a flow mapping
 * (`{command: x, args: [y]}`) is JSON-like, and JSON text is valid YAML there.
 */
export const YAML_FORMAT = {
  name: 'YAML',
  errorType: /** @type {'malformed_json'|'malformed_yaml'} */ ('malformed_yaml'),
  parse: parseYaml,
  /** @param {import('./jsonc.js').SrcNode | null | undefined} node */
  inspect(node) {
    const problem = node && node.kind === 'object' ? entryProblem(node) : null;
    return problem ? { state: 'invalid', reason: problem } : inspectEntry(node);
  },
  /** @type {(text: string, node: import('./jsonc.js').ObjectNode, opts: {label?: string|null, actor?: string}) => import('./entry.js').Edit[]} */
  wrapEdits: (text, node, opts) => (node.flow ? wrapEdits(text, node, opts) : yamlWrapEdits(text, node, opts)),
  /** @type {(text: string, node: import('./jsonc.js').ObjectNode) => import('./entry.js').Edit[]} */
  unwrapEdits: (text, node) => (node.flow ? unwrapEdits(text, node) : yamlUnwrapEdits(text, node)),
};

/**
 * The format of a config file, from its name: `.yaml`/`.yml` are YAML, anything else JSON.
 * @param {string} file
 * @returns {typeof JSON_FORMAT}
 */
export function formatOf(file) {
  return /\.ya?ml$/i.test(file) ? YAML_FORMAT : JSON_FORMAT;
}
