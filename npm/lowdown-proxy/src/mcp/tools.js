// The four lowdown-mcp tools (SPEC §6): schemas an agent can act on, and handlers that turn
// every API failure into an `isError` result instead of an exception.

import { z } from './zod.js';
import { ApiError } from '../api.js';
import { reputationText, compareText, nodeText, pagePath } from './format.js';
import { compareTargets } from './compare.js';
import { InteractionRecord as RECORD_FIELDS } from '../contract.js';

/**
 * The zod schema of one field of the core's contract (its limits and values, never typed
 * again here), described for the agent by `describe`.
 * @param {{kind: string, max?: number, min?: number, values?: string[], pattern?: string, required: boolean}} f
 * @param {string} describe
 */
function fieldSchema(f, describe) {
  let s;
  if (f.kind === 'text') s = z.string().min(1).max(f.max);
  else if (f.kind === 'enum') s = z.enum(f.values);
  else if (f.kind === 'number') s = z.number().min(f.min).max(f.max);
  else if (f.kind === 'integer') s = z.number().int().min(f.min).max(f.max);
  else s = z.boolean();
  if (f.pattern) s = s.regex(new RegExp(f.pattern));
  return (f.required ? s : s.optional()).describe(describe);
}

const TARGET = fieldSchema(
  RECORD_FIELDS.target,'The tool, service or agent as Lowdown names it: an npm:/pypi:/mcp: name (e.g. "npm:@modelcontextprotocol/server-filesystem"), a label from a lowdown-proxy --target, or a short name such as "server-filesystem".',
);

// Output schemas are open objects (passed whole, never as a raw shape, which the SDK would close):
// a client checks every structuredContent against them, and the API's answers carry more
// fields than are described here, more with each release.
const REPUTATION = z
  .looseObject({
    target: z.string().describe('The target as asked.'),
    resolved_target: z.string().nullable().optional().describe('The target the answer is about, after short-name resolution.'),
    candidates: z.array(z.unknown()).optional().describe('Present when a short name matched several targets: ask again with one of them.'),
    message: z.string().optional(),
    interactions: z.number().optional().describe('Tool interactions of every source.'),
    rated_interactions: z.number().optional().describe('Organic interactions that count in success_rate.'),
    capped: z.number().optional().describe('Rated organic calls past their network\'s daily cap (20 per target): in interactions, not rated.'),
    contributors: z.number().optional().describe('Distinct node ids or agent keys behind the rated interactions.'),
    networks: z.number().optional().describe('Distinct client networks (IPv4 /24, IPv6 /48) behind the rated interactions.'),
    top_network_share: z.number().nullable().optional().describe('The largest share of the rated interactions one network holds, 0..1.'),
    success_rate: z.number().nullable().optional().describe('Organic successes / rated, 0..1; null when nothing is rated.'),
    confidence: z.string().optional().describe('none (0 rated), low (<10 rated or <3 networks), medium (<100 rated or <10 networks), high.'),
  })
  .describe('The Lowdown API reputation answer.');

const RANKED = z.looseObject({
  target: z.string(),
  success_rate: z.number().nullable().optional(),
  rated_interactions: z.number().optional(),
  interactions: z.number().optional(),
  confidence: z.string().optional(),
});

const COMPARE = z.looseObject({
  ranked: z.array(RANKED).describe('The candidates, best organic success rate first; no rated interactions last.'),
  recommendation: z.looseObject({
    target: z.string().nullable().describe('The recommended candidate, or null when the best has fewer than 5 rated interactions.'),
    reason: z.string(),
  }),
  task_type: z.string().nullable().describe('The task every number was narrowed to, if any.'),
  source: z.looseObject({}).optional().describe('Which deployment answered, and when.'),
});

const NODE = z.looseObject({
  node_id: z.string(),
  status: z.string().describe('"active" once the node has contributed, else "unknown".'),
  contribution: z.looseObject({}).nullable().optional(),
  network: z.looseObject({}).optional(),
});

const RECORD = z.looseObject({
  ok: z.boolean(),
  accepted: z.number().describe('Records the API accepted (a repeated record_id is acknowledged, never counted twice).'),
  record: z.looseObject({}).describe('The record as sent.'),
});

/**
 * What a tool handler returns (the SDK's CallToolResult).
 * @typedef {import('@modelcontextprotocol/sdk/types.js').CallToolResult} ToolResult
 */

/**
 * Runs a handler, turning any failure into an `isError` tool result with a clear message.
 * @param {() => Promise<ToolResult>} fn
 * @returns {Promise<ToolResult>}
 */
export async function guarded(fn) {
  try {
    return await fn();
  } catch (e) {
    const message = e && typeof e === 'object' && 'message' in e ? e.message : undefined;
    const text = e instanceof ApiError ? e.message : `lowdown-mcp could not answer: ${message ? message : String(e)}`;
    return { isError: true, content: [{ type: 'text', text }] };
  }
}

/** @param {string} s */
const enc = (s) => encodeURIComponent(s);

/**
 * Registers get_lowdown, compare_tools, record_interaction and get_node_stats.
 * @param {import('@modelcontextprotocol/sdk/server/mcp.js').McpServer} server
 * @param {Pick<import('../api.js').ApiClient, 'request' | 'nodeId'>} api an apiClient
 * @param {{recorderVersion: string}} meta `recorderVersion`: what records say made them (`lowdown-mcp/<version>`)
 */
export function registerTools(server, api, meta) {
  server.registerTool(
    'get_lowdown',
    {
      title: 'What has the network seen of this tool?',
      description: 'Look up what Lowdown knows of a tool, MCP server, service or agent before you choose or call it, even one no agent has used yet: its MCP Registry declaration (version, remotes, packages), the npm or PyPI status of those packages (latest version, deprecations, yanks, recent changes), what the Lowdown Scanner observed connecting to it each day (reachable or not, tool count, tool-definition changes; tools are never called), and the interactions agents reported (organic success rate with its confidence, failures by kind, latency). Each part says where it came from. Names: mcp:<Registry name> (mcp:io.github.user/server), npm:<package>, pypi:<package>, a short name (server-filesystem) or a host (api.stripe.com). Facts, not a score. If the answer lists candidates, call again with one exact name.',
      inputSchema: { target: TARGET },
      outputSchema: REPUTATION,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    ({ target }) =>
      guarded(async () => {
        const rep = await api.request('GET', `/api/reputation/${enc(target)}`);
        // The change feed's recent items; an older server without it (or any failure) only
        // leaves them out.
        const name = /** @type {{resolved_target?: string | null}} */ (rep).resolved_target;
        const feed = name ? await api.request('GET', `${pagePath(name)}/changes.json`).catch(() => null) : null;
        return { content: [{ type: 'text', text: reputationText(target, rep, undefined, feed) }], structuredContent: { ...rep, target: rep.target ?? target } };
      }),
  );

  server.registerTool(
    'compare_tools',
    {
      title: 'Compare 2 to 5 tools',
      description: 'Compare 2 to 5 candidate tools or services side by side by the interactions agents reported, ranked by organic success rate (no rated interactions last). Names as for get_lowdown: mcp:<Registry name>, npm:<package>, pypi:<package>, short names or hosts. A recommendation is given only when the best candidate has at least 5 rated interactions; otherwise recommendation.target is null. Scanner, Registry, package and telemetry facts never change the order: ask get_lowdown for them.',
      inputSchema: {
        candidates: z
          .array(TARGET.regex(/^[^,]*$/, 'a target name cannot contain a comma'))
          .min(2)
          .max(5)
          .describe('2 to 5 distinct target names, as for get_lowdown.'),
        task_type: fieldSchema({ ...RECORD_FIELDS.task_type, required: false }, 'Narrow every candidate to one task (a tool name such as "read_file").'),
      },
      outputSchema: COMPARE,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    ({ candidates, task_type }) =>
      guarded(async () => {
        const cmp = await compareTargets(api, candidates, task_type);
        return { content: [{ type: 'text', text: compareText(cmp) }], structuredContent: cmp };
      }),
  );

  server.registerTool(
    'record_interaction',
    {
      title: 'Record what happened',
      description: 'Record the outcome of using a tool, service or agent, so the next agent knows. Send facts only: never arguments, results or error text.',
      inputSchema: {
        actor: fieldSchema({ ...RECORD_FIELDS.actor, required: true }, 'Who acted: your agent name, or "anonymous".'),
        target: TARGET,
        target_type: fieldSchema(RECORD_FIELDS.target_type, 'What the target is.'),
        task_type: fieldSchema(RECORD_FIELDS.task_type, 'What was attempted, e.g. the tool name called.'),
        outcome: fieldSchema(RECORD_FIELDS.outcome, 'How it went (cancelled: you gave up on it; never counted against the target).'),
        failure_type: fieldSchema(RECORD_FIELDS.failure_type, 'For a failure: what kind.'),
        latency_ms: fieldSchema(RECORD_FIELDS.latency_ms, 'How long it took, in milliseconds.'),
        source: fieldSchema(RECORD_FIELDS.source, 'organic (default) for real use; synthetic for tests.'),
      },
      outputSchema: RECORD,
      annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: true },
    },
    (input) =>
      guarded(async () => {
        /** @type {import('lowdown-core').InteractionRecord} */
        const record = { ...input, source: input.source ?? 'organic', request_kind: 'tool', recorder_version: meta.recorderVersion };
        if (api.nodeId) record.node_id = api.nodeId;
        const res = await api.request('POST', '/api/interactions', record);
        const accepted = typeof res?.accepted === 'number' ? res.accepted : 0;
        const text = `Recorded: ${record.actor} → ${record.target} (${record.task_type}): ${record.outcome}${record.failure_type ? ` (${record.failure_type})` : ''}. Accepted: ${accepted}.`;
        return { content: [{ type: 'text', text }], structuredContent: { ok: res?.ok === true, accepted, record } };
      }),
  );

  server.registerTool(
    'get_node_stats',
    {
      title: 'Your node\'s contribution',
      description: 'Show what this machine\'s Lowdown node has contributed (interactions, targets, active days, percentile) and the network totals. Contributing nodes get per-task detail in get_lowdown.',
      inputSchema: {},
      outputSchema: NODE,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    () =>
      guarded(async () => {
        if (!api.nodeId) throw new Error('this machine has no node id (LOWDOWN_HOME is not writable)');
        const node = await api.request('GET', `/api/node/${enc(api.nodeId)}`);
        return { content: [{ type: 'text', text: nodeText(node) }], structuredContent: node };
      }),
  );
}
