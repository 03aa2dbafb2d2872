// The extension's three commands, written against a small `ui` object instead of the
// editor API so they run (and are tested) under plain Node. All config work is done by
// lowdown-proxy's wrap module, the same code as `lowdown-proxy wrap|unwrap|status`, bundled
// into dist/commands.js with the WebAssembly core (scripts/build.mjs).

const lib = require('lowdown-proxy/wrap');

/**
 * What the commands show and ask through (the editor's UI, or a test's).
 * @typedef {{show: (text: string) => void, confirm: (message: string, action: string) => Promise<boolean>,
 *   info: (message: string) => void, error: (message: string) => void}} Ui
 */

/**
 * The commands.
 * @param {{lib: typeof import('lowdown-proxy/wrap'), ui: Ui, where: {home?: string, cwd?: string, platform?: string, env?: Record<string, string|undefined>}}} deps
 * @returns {{wrap: () => Promise<object>, unwrap: () => Promise<object>, status: () => Promise<object>}}
 */
function createCommands({ lib, ui, where }) {
  // Shows what would change, asks, then applies it to exactly the files shown.
  /** @param {'wrap'|'unwrap'} mode */
  async function change(mode) {
    const preview = await lib.run(mode, { ...where, dryRun: true });
    const pending = preview.filter((r) => r.status === 'would_change');
    const count = pending.reduce((n, r) => n + r.servers.filter((s) => s.action === mode).length, 0);
    ui.show(lib.formatReports(mode, preview, { dryRun: true }));
    if (count === 0) {
      const failed = preview.some((r) => r.status === 'error');
      (failed ? ui.error : ui.info)(failed ? 'Lowdown: some config files could not be read; see the Lowdown output.' : `Lowdown: no MCP server to ${mode}.`);
      return { applied: false, reports: preview };
    }
    const files = pending.length === 1 ? '1 config file' : `${pending.length} config files`;
    const ok = await ui.confirm(`${mode === 'wrap' ? 'Wrap' : 'Unwrap'} ${count} MCP server${count === 1 ? '' : 's'} in ${files}? The diff is in the Lowdown output; each file keeps a .bak.`, mode === 'wrap' ? 'Wrap' : 'Unwrap');
    if (!ok) {
      ui.info('Lowdown: nothing was changed.');
      return { applied: false, reports: preview };
    }
    const reports = await lib.run(mode, { ...where, configs: pending.map((r) => r.path) });
    ui.show(lib.formatReports(mode, reports));
    if (reports.some((r) => r.status === 'error')) ui.error(`Lowdown: some files could not be ${mode}ped and were left as they were; see the Lowdown output.`);
    else ui.info(`Lowdown: ${mode === 'wrap' ? 'wrapped' : 'unwrapped'} ${count} MCP server${count === 1 ? '' : 's'}. Restart your MCP clients to apply.`);
    return { applied: true, reports };
  }

  return {
    wrap: () => change('wrap'),
    unwrap: () => change('unwrap'),
    async status() {
      const reports = await lib.run('status', where);
      const labels = reports.flatMap((r) => r.servers.flatMap((s) => (s.label ? [s.label] : [])));
      const env = where.env ?? process.env;
      const { lines, note } = await lib.reputationLines(labels, env);
      // Then, as `lowdown-proxy status` ends: where records go (the deployment, or the local
      // node and whether it runs), what waits in the spool, and what it has of this node.
      const dest = [...lib.destinationLines(env), ...(await lib.contributionLines(env))];
      ui.show(lib.formatReports('status', reports, { reputation: lines }) + (note ? `${note}\n` : '') + `\n${dest.join('\n')}\n`);
      return { reports, note };
    },
  };
}

module.exports = { lib, createCommands };
