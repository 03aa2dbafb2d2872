// The zod the MCP SDK itself resolves. Descriptions live in zod's registry, and npm may
// install two copies of zod (one hoisted for another package): a schema built with a copy the
// SDK does not use reaches the agent without its descriptions.

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const sdkEntry = createRequire(import.meta.url).resolve('@modelcontextprotocol/sdk/server/mcp.js');
const zodPackage = createRequire(sdkEntry).resolve('zod/package.json');
const v4 = JSON.parse(fs.readFileSync(zodPackage, 'utf8')).exports['./v4'].import;

/** zod's v4 API (zod 4, or zod 3.25's `zod/v4`), the same module instance the SDK reads. */
export const z = await import(pathToFileURL(path.join(path.dirname(zodPackage), v4)).href);
