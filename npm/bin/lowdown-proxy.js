#!/usr/bin/env node
// `lowdown-proxy`: `wrap`, `unwrap` and `status` edit MCP client configs (src/wrap/);
// everything else is the stdio proxy (src/proxy.js).

const argv = process.argv.slice(2);
const CONFIG_COMMANDS = new Set(['wrap', 'unwrap', 'status']);

if (CONFIG_COMMANDS.has(argv[0])) {
  await (await import('../src/wrap/cli.js')).main(argv.slice(1));
} else {
  const { main } = await import('../src/proxy.js');
  const code = await main(argv);
  // Exit only once stdout has taken everything the child wrote.
  process.stdout.write('', () => process.exit(code));
}
