// Where each MCP client keeps its config, per operating system.

import path from 'node:path';

/** Client ids accepted by `--client`. */
export const CLIENT_IDS = ['claude-desktop', 'claude-code', 'cursor', 'cline', 'vscode', 'windsurf'];

/** Display names of the clients, by id. */
export const CLIENT_NAMES = {
  'claude-desktop': 'Claude Desktop',
  'claude-code': 'Claude Code',
  cursor: 'Cursor',
  cline: 'Cline',
  vscode: 'VS Code',
  windsurf: 'Windsurf',
  custom: 'Config file',
};

// Editors whose user-data folder can hold Cline's globalStorage (VS Code and its forks).
const EDITORS = ['Code', 'Code - Insiders', 'Cursor', 'VSCodium', 'Windsurf'];

function appData({ home, platform, env }) {
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support');
  if (platform === 'win32') return env.APPDATA || path.join(home, 'AppData', 'Roaming');
  return env.XDG_CONFIG_HOME || path.join(home, '.config');
}

/**
 * Every config file each client may read, most specific first.
 * @param {{home: string, platform: string, env: object, cwd: string}} where the user's home
 *   directory, `process.platform`-style platform, environment and project directory
 * @returns {{client: string, path: string, scope: 'user'|'project'}[]}
 */
export function configLocations({ home, platform, env = {}, cwd }) {
  const data = appData({ home, platform, env });
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
  // A project directory that is the home directory would list the same file twice.
  const seen = new Set();
  return out.filter((l) => !seen.has(l.path) && seen.add(l.path));
}

/**
 * The server tables in a parsed config: `mcpServers` (Claude, Cursor, Cline, Windsurf),
 * `servers` (VS Code) and Claude Code's per-project `projects[dir].mcpServers`.
 * @param {object} root the parsed file's root node (see jsonc.js)
 * @returns {{scope: string, node: object}[]} each table's object node and a scope label
 */
export function serverTables(root) {
  const tables = [];
  if (root.kind !== 'object') return tables;
  for (const m of root.members) {
    if ((m.key === 'mcpServers' || m.key === 'servers') && m.value.kind === 'object') tables.push({ scope: m.key, node: m.value });
    if (m.key === 'projects' && m.value.kind === 'object') {
      for (const p of m.value.members) {
        if (p.value.kind !== 'object') continue;
        for (const pm of p.value.members) {
          if (pm.key === 'mcpServers' && pm.value.kind === 'object') tables.push({ scope: `project ${p.key}`, node: pm.value });
        }
      }
    }
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
  return 'custom';
}
