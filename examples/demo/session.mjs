// The demo's MCP session: a real SDK client talks to @modelcontextprotocol/server-everything
// through lowdown-proxy, exactly as an MCP client configured with
// `lowdown-proxy --target X -- npx @modelcontextprotocol/server-everything` would.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(path.join(root, 'npm', 'lowdown-proxy', 'package.json'));
const { Client } = await import(require.resolve('@modelcontextprotocol/sdk/client/index.js'));
const { StdioClientTransport } = await import(require.resolve('@modelcontextprotocol/sdk/client/stdio.js'));
const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const target = process.argv[2] ?? 'npm:@modelcontextprotocol/server-everything';

const transport = new StdioClientTransport({
  command: process.execPath,
  args: [path.join(root, 'npm', 'lowdown-proxy', 'bin', 'lowdown-proxy.js'), '--target', target, '--', process.execPath, everything, 'stdio'],
  env: process.env,
  stderr: 'ignore',
});
const client = new Client({ name: 'lowdown-demo', version: '1.0.0' });
await client.connect(transport);
const { tools } = await client.listTools();
console.log(`connected through lowdown-proxy: ${client.getServerVersion().name} ${client.getServerVersion().version}, ${tools.length} tools`);
for (let i = 0; i < 5; i += 1) {
  const r = await client.callTool({ name: 'get-sum', arguments: { a: i, b: 10 } });
  console.log(`  get-sum(${i}, 10) → ${r.content[0].text}`);
}
const echo = await client.callTool({ name: 'echo', arguments: { message: 'hello from the demo' } });
console.log(`  echo → ${echo.content[0].text}`);
const bad = await client.callTool({ name: 'echo', arguments: { message: 42 } });
console.log(`  echo(42) → isError ${bad.isError} (a rejected request, not counted in success_rate)`);
await client.close();
