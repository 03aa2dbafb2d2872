// A minimal JSON-RPC stdio server for the benchmark: answers `initialize`, `tools/list`
// and `tools/call` at once (the call result is a ~1 KB text item, or echoes the argument
// size back for big messages), so the numbers measure the relay, not a server.
import readline from 'node:readline';

const PAD = 'x'.repeat(1000);
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  if (!line) return;
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  let result;
  if (msg.method === 'initialize') {
    result = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'bench', version: '1.0.0' } };
  } else if (msg.method === 'tools/list') {
    result = { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] };
  } else {
    const text = msg.params?.arguments?.big ?? PAD;
    result = { content: [{ type: 'text', text }] };
  }
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }) + '\n');
});
