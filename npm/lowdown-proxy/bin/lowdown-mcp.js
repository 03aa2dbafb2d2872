#!/usr/bin/env node
// `lowdown-mcp`: the Lowdown query tools as a stdio MCP server.
import { main } from '../src/mcp/server.js';

main().catch((e) => {
  process.stderr.write(`lowdown-mcp: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
