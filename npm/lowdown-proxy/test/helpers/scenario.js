// One MCP session driven by the real SDK client, against any stdio command: the same
// steps run directly and through the proxy, and their outcomes are compared.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  EmptyResultSchema,
} from '@modelcontextprotocol/sdk/types.js';

/** Canary strings: they appear in arguments and results and must never leave the machine. */
export const CANARY = {
  arg: 'CANARY-ARGUMENT-7f3a9c',
  root: 'CANARY-ROOT-51be02',
  sampling: 'CANARY-SAMPLING-0d44e1',
};

/** Connects an SDK client with roots, sampling and elicitation to `command args`. */
export async function connect(command, args, env) {
  const client = new Client({ name: 'lowdown-test', version: '1.0.0' }, { capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: {} } });
  const seen = { roots: 0, sampling: 0, elicitation: 0 };
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    seen.roots += 1;
    return { roots: [{ uri: `file:///tmp/${CANARY.root}`, name: CANARY.root }] };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    seen.sampling += 1;
    return { role: 'assistant', model: 'test-model', content: { type: 'text', text: CANARY.sampling } };
  });
  client.setRequestHandler(ElicitRequestSchema, async () => {
    seen.elicitation += 1;
    return { action: 'decline' };
  });
  const transport = new StdioClientTransport({ command, args, env, stderr: 'pipe' });
  await client.connect(transport);
  return { client, transport, seen };
}

/** Runs `fn` and returns its result or a comparable description of its error. */
async function outcome(fn) {
  try {
    return { result: await fn() };
  } catch (err) {
    return { error: { code: err.code ?? null, name: err.name, message: String(err.message).slice(0, 200) } };
  }
}

/**
 * The everything-server session: success, unknown tool, invalid arguments, unknown method,
 * roots/sampling/elicitation (server→client), progress and cancellation.
 * @returns {Promise<object>} comparable outcomes
 */
export async function everythingSession(command, args, env) {
  const { client, transport, seen } = await connect(command, args, env);
  const out = {};
  out.serverVersion = client.getServerVersion();
  out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
  out.echo = await outcome(() => client.callTool({ name: 'echo', arguments: { message: CANARY.arg } }));
  out.sum = await outcome(() => client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } }));
  out.unknownTool = await outcome(() => client.callTool({ name: 'no-such-tool', arguments: {} }));
  out.invalidArgs = await outcome(() => client.callTool({ name: 'echo', arguments: { message: 42 } }));
  out.unknownMethod = await outcome(() => client.request({ method: 'lowdown/no-such-method', params: {} }, EmptyResultSchema));
  out.roots = await outcome(() => client.callTool({ name: 'get-roots-list', arguments: {} }));
  out.sampling = await outcome(() => client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: CANARY.arg, maxTokens: 5 } }));
  out.elicitation = await outcome(() => client.callTool({ name: 'trigger-elicitation-request', arguments: {} }));
  const progress = [];
  out.progressResult = await outcome(() =>
    client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, undefined, {
      onprogress: (p) => progress.push([p.progress, p.total]),
    }),
  );
  out.progress = progress;
  const ac = new AbortController();
  setTimeout(() => ac.abort('test cancels'), 300);
  out.cancelled = await outcome(() =>
    client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 5, steps: 5 } }, undefined, { signal: ac.signal }),
  );
  out.seen = { ...seen };
  await client.close();
  return { out, pid: transport.pid };
}
