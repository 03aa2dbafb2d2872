// `lowdown-mcp`: a stdio MCP server agents use to ask Lowdown before they choose a tool.

import { readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { apiClient } from '../api.js';
import { registerTools } from './tools.js';
import { RECORDERS } from '../contract.js';

/** The package version (`serverInfo.version`). */
export const VERSION = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

/**
 * Builds the MCP server with its four tools.
 * @param {import('../api.js').ApiOptions} [opts] see apiClient
 * @returns {McpServer}
 */
export function createServer(opts = {}) {
  const server = new McpServer(
    { name: 'lowdown', version: VERSION },
    { instructions: 'Before choosing or calling an unfamiliar tool, call get_lowdown (or compare_tools for alternatives) to see what other agents recorded. After using one, record_interaction.' },
  );
  // Nothing configured and nothing answering: the local node is started for the first
  // question, so an agent learns about its own sessions from the first minute.
  registerTools(server, apiClient({ autostart: true, ...opts }), { recorderVersion: RECORDERS.MCP_RECORDER });
  return server;
}

/**
 * Serves the tools over stdin/stdout until stdin closes. Diagnostics go to stderr only.
 * @returns {Promise<void>}
 */
export async function main() {
  const server = createServer();
  await server.connect(new StdioServerTransport());
  // The client closing our stdin is the end of the session; don't linger on idle sockets.
  process.stdin.on('end', () => process.exit(0));
}
