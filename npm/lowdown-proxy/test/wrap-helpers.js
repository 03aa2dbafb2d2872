// Shared setup for the wrap tests: a throwaway home and project with each client's real
// config file in its real place.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const FIXTURES = new URL('./fixtures/configs/', import.meta.url).pathname;

/** Each client's fixture and where that client keeps it on Linux (relative to home or project). */
export const PLACES = [
  { client: 'claude-desktop', fixture: 'claude_desktop_config.json', base: 'home', rel: '.config/Claude/claude_desktop_config.json' },
  { client: 'claude-code', fixture: 'claude-code-mcp.json', base: 'cwd', rel: '.mcp.json' },
  { client: 'claude-code', fixture: 'claude-code-user.claude.json', base: 'home', rel: '.claude.json' },
  { client: 'cursor', fixture: 'cursor-mcp.json', base: 'home', rel: '.cursor/mcp.json' },
  { client: 'cline', fixture: 'cline_mcp_settings.json', base: 'home', rel: '.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json' },
  { client: 'vscode', fixture: 'vscode-mcp.json', base: 'cwd', rel: '.vscode/mcp.json' },
  { client: 'windsurf', fixture: 'windsurf-mcp_config.json', base: 'home', rel: '.codeium/windsurf/mcp_config.json' },
  { client: 'continue', fixture: 'continue-config.yaml', base: 'home', rel: '.continue/config.yaml' },
  { client: 'continue', fixture: 'continue-tools-odd.yaml', base: 'home', rel: '.continue/mcpServers/tools.yaml' },
  { client: 'continue', fixture: 'continue-playwright-mcp.json', base: 'home', rel: '.continue/mcpServers/playwright-mcp.json' },
  { client: 'continue', fixture: 'continue-playwright-mcp.yaml', base: 'cwd', rel: '.continue/mcpServers/playwright-mcp.yaml' },
  { client: 'continue', fixture: 'continue-mcp.json', base: 'cwd', rel: '.continue/mcpServers/mcp.json' },
];

/**
 * A temp home and project directory holding every fixture in its client's place.
 * @returns {{home: string, cwd: string, root: string, files: {client: string, fixture: string, file: string, original: string}[], where: object, cleanup: () => void}}
 */
export function makeWorld(places = PLACES) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-wrap-'));
  const home = path.join(root, 'home');
  const cwd = path.join(root, 'project');
  fs.mkdirSync(home);
  fs.mkdirSync(cwd);
  const files = places.map((p) => {
    const file = path.join(p.base === 'home' ? home : cwd, p.rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const original = fs.readFileSync(path.join(FIXTURES, p.fixture), 'utf8');
    fs.writeFileSync(file, original, { mode: 0o640 });
    fs.chmodSync(file, 0o640);
    return { ...p, file, original };
  });
  return {
    root,
    home,
    cwd,
    files,
    where: { home, cwd, platform: 'linux', env: {} },
    cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

/** A deterministic label so the tests do not depend on which core build is installed. */
export const testLabel = async (command, args) => `test:${[command, ...args].join(' ').length}`;

/** Collects what the CLI writes. */
export function sink() {
  const chunks = [];
  return { write: (s) => chunks.push(String(s)), text: () => chunks.join('') };
}
