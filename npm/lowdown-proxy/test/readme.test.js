// The README's proxy quick start runs: its shell line and its client-config JSON are taken
// from README.md, `npx lowdown-proxy` / `npx -y @modelcontextprotocol/server-everything`
// are pointed at this checkout and the locally installed server (no network), and a real
// SDK client talks through the result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PROXY, EVERYTHING, tempDir } from './helpers/run.js';
import { connect } from './helpers/scenario.js';

const README = fs.readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
const section = README.slice(README.indexOf('<!-- BEGIN lowdown-proxy'), README.indexOf('<!-- END lowdown-proxy'));
const blocks = (lang) => [...section.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]);

/** Maps the documented words onto this checkout: the proxy bin and the installed server. */
function local(argv) {
  const out = [];
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === 'npx' && (argv[i + 1] === 'lowdown-proxy' || (argv[i + 1] === '-y' && argv[i + 2] === 'lowdown-proxy'))) {
      i += argv[i + 1] === '-y' ? 2 : 1;
      out.push(process.execPath, PROXY);
    } else if (argv[i] === 'npx' && argv[i + 1] === '-y' && argv[i + 2] === '@modelcontextprotocol/server-everything') {
      i += 2;
      out.push(process.execPath, EVERYTHING);
    } else out.push(argv[i]);
  }
  return out;
}

async function talk(t, argv) {
  const home = tempDir(t);
  const [command, ...args] = local(argv);
  const { client } = await connect(command, args, { ...process.env, LOWDOWN_HOME: home, LOWDOWN_API_URL: 'http://127.0.0.1:9' });
  const r = await client.callTool({ name: 'echo', arguments: { message: 'readme' } });
  await client.close();
  return r;
}

test('the README quick-start command works as documented', async (t) => {
  const line = blocks('sh')[0].split('\n').find((l) => l.startsWith('npx lowdown-proxy'));
  assert.ok(line, 'quick-start line present');
  const r = await talk(t, line.split(/\s+/).filter(Boolean));
  assert.equal(r.content[0].text, 'Echo: readme');
});

test('the README client config works as documented', async (t) => {
  const config = JSON.parse(blocks('json')[0]);
  const entry = config.mcpServers.everything;
  const r = await talk(t, [entry.command, ...entry.args]);
  assert.equal(r.content[0].text, 'Echo: readme');
});
