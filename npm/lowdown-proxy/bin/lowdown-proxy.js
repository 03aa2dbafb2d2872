#!/usr/bin/env node
// `lowdown-proxy`: `wrap`, `unwrap` and `status` edit MCP client configs (src/wrap/);
// `config` the stored setting (src/record/config-cli.js); everything else is the stdio
// proxy (src/proxy.js).

const argv = process.argv.slice(2);
const CONFIG_COMMANDS = new Set(['wrap', 'unwrap', 'status']);

if (argv[0] === 'config') {
  process.exitCode = (await import('../src/record/config-cli.js')).main(argv.slice(1));
} else if (CONFIG_COMMANDS.has(argv[0])) {
  process.exitCode = await (await import('../src/wrap/cli.js')).main(argv);
} else {
  const { main } = await import('../src/proxy.js');
  const code = await main(argv);
  // Exit once stdout has taken everything the child wrote; a client that stopped reading
  // gets 2 s, not forever.
  process.exitCode = code;
  setTimeout(() => process.exit(code), 2000).unref();
  process.stdout.write('', () => process.exit(code));
}
