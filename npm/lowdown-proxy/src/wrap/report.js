// Human-readable output of wrap / unwrap / status, shared by the CLI and the editor extension.

import { CLIENT_NAMES } from './clients.js';

/** @type {Record<string, string>} */
const STATE_TEXT = {
  wrapped: 'wrapped',
  unwrapped: 'not wrapped',
  manual: 'wrapped by hand',
  remote: 'not wrappable',
  invalid: 'skipped',
};

/**
 * @param {'wrap'|'unwrap'|'status'} mode
 * @param {import('./index.js').ServerRow} row
 * @param {boolean} [dryRun]
 */
function actionText(mode, row, dryRun) {
  if (row.action === 'wrap') return dryRun ? 'would wrap' : 'wrapped now';
  if (row.action === 'unwrap') return dryRun ? 'would unwrap' : 'unwrapped now';
  if (mode === 'wrap' && row.state === 'wrapped') return 'already wrapped';
  if (mode === 'unwrap' && row.state === 'unwrapped') return 'not wrapped';
  if (mode === 'unwrap' && row.state === 'manual') return 'wrapped by hand (edit it yourself)';
  return STATE_TEXT[row.state] ?? row.state;
}

/**
 * Formats run() reports as text.
 * @param {'wrap'|'unwrap'|'status'} mode
 * @param {import('./index.js').ConfigReport[]} reports from run()
 * @param {{dryRun?: boolean, reputation?: Map<string, string>}} [opts] reputation lines by label (status)
 * @returns {string}
 */
export function formatReports(mode, reports, opts = {}) {
  const out = [];
  const found = reports.filter((r) => r.status !== 'missing');
  for (const r of found) {
    out.push(`${CLIENT_NAMES[r.client] ?? r.client} (${r.scope}): ${r.path}`);
    if (r.status === 'error') {
      out.push(`  error: ${r.error.message}`);
      continue;
    }
    if (r.servers.length === 0) out.push('  no MCP servers in this file');
    const multiTable = new Set(r.servers.map((s) => s.table)).size > 1;
    for (const s of r.servers) {
      const name = multiTable ? `${s.name} [${s.table}]` : s.name;
      let line = `  ${name.padEnd(24)} ${actionText(mode, s, opts.dryRun).padEnd(16)}`;
      if (s.label) line += ` ${s.label}`;
      if ((s.state === 'remote' || s.state === 'invalid') && s.reason) line += ` ${s.reason}`;
      out.push(line.trimEnd());
      if (mode === 'status' && s.label && opts.reputation?.has(s.label)) out.push(`      ${opts.reputation.get(s.label)}`);
    }
    if (r.status === 'would_change' && mode !== 'status') out.push('', r.diff.trimEnd(), '');
    if (r.status === 'written') out.push(`  saved; the previous contents are in ${r.backup}`);
  }
  if (found.length === 0) out.push(`No MCP client config found (looked in ${reports.length} places). Use --config PATH for another file.`);
  else if (opts.dryRun && mode !== 'status') out.push('Dry run: nothing was written.');
  return `${out.join('\n')}\n`;
}
