// Where each MCP client keeps its config, per operating system.

import path from 'node:path';

/** Client ids accepted by `--client`. */
export const CLIENT_IDS = ['claude-desktop', 'claude-code', 'cursor', 'cline', 'vscode', 'windsurf', 'continue'];

/** Display names of the clients, by id. @type {Record<string, string>} */
export const CLIENT_NAMES = {
  'claude-desktop': 'Claude Desktop',
  'claude-code': 'Claude Code',
  cursor: 'Cursor',
  cline: 'Cline',
  vscode: 'VS Code',
  windsurf: 'Windsurf',
  continue: 'Continue',
  custom: 'Config file',
};

// Editors whose user-data folder can hold Cline's globalStorage (VS Code and its forks).
const EDITORS = ['Code', 'Code - Insiders', 'Cursor', 'VSCodium', 'Windsurf'];

/** @param {{home: string, platform: string, env: Record<string, string|undefined>}} where */
function appData({ home, platform, env }) {
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support');
  if (platform === 'win32') return env.APPDATA || path.join(home, 'AppData', 'Roaming');
  return env.XDG_CONFIG_HOME || path.join(home, '.config');
}

/**
 * Every config file each client may read, most specific first.
 * @param {{home: string, platform: string, env?: Record<string, string|undefined>, cwd: string}} where the user's home
 *   directory, `process.platform`-style platform, environment and project directory
 * @returns {{client: string, path: string, scope: string, folder?: boolean}[]} `scope` is `user` or
 *   `project`; `folder` marks a folder whose files the caller lists
 */
export function configLocations({ home, platform, env = {}, cwd }) {
  const data = appData({ home, platform, env });
  /** @type {{client: string, path: string, scope: string, folder?: boolean}[]} */
  const out = [
    { client: 'claude-desktop', path: path.join(data, 'Claude', 'claude_desktop_config.json'), scope: 'user' },
    { client: 'claude-code', path: path.join(cwd, '.mcp.json'), scope: 'project' },
    { client: 'claude-code', path: path.join(home, '.claude.json'), scope: 'user' },
    { client: 'cursor', path: path.join(cwd, '.cursor', 'mcp.json'), scope: 'project' },
    { client: 'cursor', path: path.join(home, '.cursor', 'mcp.json'), scope: 'user' },
  ];
  for (const editor of EDITORS) {
    out.push({
      client: 'cline',
      path: path.join(data, editor, 'User', 'globalStorage', 'saoudrizwan.claude-dev', 'settings', 'cline_mcp_settings.json'),
      scope: 'user',
    });
  }
  out.push({ client: 'vscode', path: path.join(cwd, '.vscode', 'mcp.json'), scope: 'project' });
  for (const editor of ['Code', 'Code - Insiders']) {
    out.push({ client: 'vscode', path: path.join(data, editor, 'User', 'mcp.json'), scope: 'user' });
  }
  out.push({ client: 'windsurf', path: path.join(home, '.codeium', 'windsurf', 'mcp_config.json'), scope: 'user' });
  // Continue: config.yaml's `mcpServers` list, and every YAML or JSON file in the
  // mcpServers folders (`folder: true`: the caller lists the folder).
  const continueHome = env.CONTINUE_GLOBAL_DIR || path.join(home, '.continue');
  out.push({ client: 'continue', path: path.join(cwd, '.continue', 'mcpServers'), scope: 'project', folder: true });
  out.push({ client: 'continue', path: path.join(continueHome, 'config.yaml'), scope: 'user' });
  out.push({ client: 'continue', path: path.join(continueHome, 'mcpServers'), scope: 'user', folder: true });
  // A project directory that is the home directory would list the same file twice.
  const seen = new Set();
  return out.filter((l) => !seen.has(l.path) && seen.add(l.path));
}

/** The files of a Continue mcpServers folder that Continue reads. */
export const FOLDER_FILE = /\.(ya?ml|json)$/i;

// The entries of an `mcpServers`/`servers` table: an object keyed by name (JSON clients), or
// Continue's list of blocks named by their `name` (a Hub block by what it `uses`).
/**
 * @param {import('./jsonc.js').ObjectNode | import('./jsonc.js').ArrayNode} node
 * @returns {{name: string, node: import('./jsonc.js').SrcNode}[]}
 */
function entries(node) {
  if (node.kind === 'object') return node.members.map((m) => ({ name: m.key, node: m.value }));
  return node.items.map((item, i) => {
    const v = item.value && typeof item.value === 'object' ? item.value : {};
    const name = typeof v.name === 'string' ? v.name : typeof v.uses === 'string' ? v.uses : `#${i + 1}`;
    return { name, node: item };
  });
}

/** @typedef {{scope: string, entries: {name: string, node: import('./jsonc.js').SrcNode}[]}} ServerTable */

/**
 * The server tables in a parsed config: `mcpServers` (Claude, Cursor, Cline, Windsurf; a
 * list in Continue's YAML), `servers` (VS Code) and Claude Code's per-project
 * `projects[dir].mcpServers`. A JSON file in a Continue mcpServers folder may also be one
 * server by itself, named after the file (as Continue reads it).
 * @param {import('./jsonc.js').SrcNode} root the parsed file's root node (jsonc.js or yamlsrc.js)
 * @param {{client?: string, path?: string}} [loc] where the file is
 * @returns {ServerTable[]} each table's entries and a scope label
 */
export function serverTables(root, loc = {}) {
  /** @type {ServerTable[]} */
  const tables = [];
  if (root.kind !== 'object') return tables;
  // Lists of blocks are Continue's YAML shape; no JSON client keeps servers in an array.
  const lists = loc.client === 'continue' || /\.ya?ml$/i.test(loc.path ?? '');
  /** @type {(v: import('./jsonc.js').SrcNode) => v is import('./jsonc.js').ObjectNode | import('./jsonc.js').ArrayNode} */
  const isTable = (v) => v.kind === 'object' || (v.kind === 'array' && lists);
  for (const m of root.members) {
    if ((m.key === 'mcpServers' || m.key === 'servers') && isTable(m.value)) tables.push({ scope: m.key, entries: entries(m.value) });
    if (m.key === 'projects' && m.value.kind === 'object') {
      for (const p of m.value.members) {
        if (p.value.kind !== 'object') continue;
        for (const pm of p.value.members) {
          if (pm.key === 'mcpServers' && pm.value.kind === 'object') tables.push({ scope: `project ${p.key}`, entries: entries(pm.value) });
        }
      }
    }
  }
  const single = root.value && (typeof root.value.command === 'string' || typeof root.value.url === 'string');
  if (tables.length === 0 && single && loc.client === 'continue' && /\.json$/i.test(loc.path ?? '')) {
    tables.push({ scope: 'file', entries: [{ name: path.basename(loc.path ?? '').replace(/\.json$/i, ''), node: root }] });
  }
  return tables;
}

/**
 * Which client a config file belongs to, from its name (for `--config PATH`); `custom` if unknown.
 * @param {string} file
 * @returns {string}
 */
export function clientOfPath(file) {
  const parts = file.split(/[\\/]/);
  const base = parts.at(-1);
  const dir = parts.at(-2);
  if (base === 'claude_desktop_config.json') return 'claude-desktop';
  if (base === '.claude.json' || base === '.mcp.json') return 'claude-code';
  if (base === 'cline_mcp_settings.json') return 'cline';
  if (base === 'mcp_config.json' && dir === 'windsurf') return 'windsurf';
  if (base === 'mcp.json' && dir === '.cursor') return 'cursor';
  if (base === 'mcp.json' && (dir === '.vscode' || dir === 'User')) return 'vscode';
  if ((base === 'config.yaml' && dir === '.continue') || (dir === 'mcpServers' && parts.at(-3) === '.continue')) return 'continue';
  return 'custom';
}
