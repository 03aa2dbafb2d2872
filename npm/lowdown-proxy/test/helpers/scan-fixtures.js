// What a Scanner run needs from the internet, served on loopback in the real formats: an
// MCP Registry (GET /v0.1/servers, the v0.1 shape), an npm registry (GET /{name}, the
// abbreviated package document) and a PyPI (PEP 691 Index API with the PEP 792 status, and
// the JSON API); plus the real @modelcontextprotocol/server-everything in streamable-HTTP
// mode as a remote, and `lowdown-server scan` run against a test server's database.
// Shared by the lowdown-mcp tests and the browser test (tests/pages).
import { spawn, execFile } from 'node:child_process';
import http from 'node:http';
import { createRequire } from 'node:module';
import { SERVER_BIN, freePort } from './lowdown-server.js';

const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
/** The version of server-everything that answers (what a Registry entry would declare). */
export const EVERYTHING_VERSION = require('@modelcontextprotocol/server-everything/package.json').version;

function serve(handler) {
  return new Promise((resolve) => {
    const server = http.createServer(handler);
    server.listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
      });
    });
  });
}

function json(res, status, body, type = 'application/json') {
  res.writeHead(status, { 'content-type': type }).end(JSON.stringify(body));
}

/**
 * A Registry entry in the v0.1 shape.
 * @param {{name: string, version: string, remotes?: {type: string, url: string}[], packages?: [string, string, string][], status?: string}} e
 */
export function registryEntry({ name, version, remotes = [], packages = [], status = 'active' }) {
  return {
    server: {
      $schema: 'https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json',
      name,
      description: 'a fixture entry',
      version,
      remotes,
      packages: packages.map(([registryType, identifier, v]) => ({ registryType, identifier, version: v, transport: { type: 'stdio' } })),
    },
    _meta: { 'io.modelcontextprotocol.registry/official': { status, publishedAt: '2026-09-01T10:00:00Z', updatedAt: '2026-09-02T10:00:00Z', isLatest: true } },
  };
}

/** A Registry serving `entries` on one page. */
export function startRegistry(entries) {
  return serve((req, res) => {
    const u = new URL(req.url, 'http://x');
    if (u.pathname !== '/v0.1/servers') return json(res, 404, { error: 'not found' });
    return json(res, 200, { servers: entries, metadata: { nextCursor: null, count: entries.length } });
  });
}

/**
 * An npm registry: `docs` maps a name to [latest, {version: deprecation message or ''}].
 * @param {Record<string, [string, Record<string, string>]>} docs
 */
export function startNpm(docs) {
  return serve((req, res) => {
    const name = decodeURIComponent(new URL(req.url, 'http://x').pathname.slice(1));
    const doc = docs[name];
    if (!doc) return json(res, 404, { error: 'Not found' });
    const [latest, versions] = doc;
    return json(res, 200, {
      name,
      modified: '2026-11-02T10:00:00.000Z',
      'dist-tags': { latest },
      versions: Object.fromEntries(Object.entries(versions).map(([v, deprecated]) => [v, {
        name, version: v, dist: { tarball: `https://registry.example/${name}/-/${v}.tgz`, shasum: '00' }, ...(deprecated ? { deprecated } : {}),
      }])),
    }, 'application/vnd.npm.install-v1+json');
  });
}

/**
 * A PyPI: `projects` maps a normalised name to {status, versions, latest, yanked}.
 * @param {Record<string, {status?: string, versions: string[], latest: string, yanked?: boolean}>} projects
 */
export function startPypi(projects) {
  return serve((req, res) => {
    const p = new URL(req.url, 'http://x').pathname;
    let m = p.match(/^\/simple\/([^/]+)\/$/);
    if (m && projects[m[1]]) {
      const pr = projects[m[1]];
      return json(res, 200, {
        meta: { 'api-version': '1.4', '_last-serial': 1 },
        name: m[1],
        ...(pr.status ? { 'project-status': { status: pr.status } } : {}),
        versions: pr.versions,
        files: pr.versions.map((v) => ({ filename: `${m[1].replace(/-/g, '_')}-${v}.tar.gz`, url: `https://files.example/${m[1]}-${v}.tar.gz`, hashes: { sha256: '00' }, yanked: false })),
      }, 'application/vnd.pypi.simple.v1+json');
    }
    m = p.match(/^\/pypi\/([^/]+)\/json$/);
    if (m && projects[m[1]]) {
      const pr = projects[m[1]];
      return json(res, 200, { info: { name: m[1], version: pr.latest, yanked: !!pr.yanked, yanked_reason: null }, urls: [], releases: {}, last_serial: 1 });
    }
    return json(res, 404, { message: 'Not Found' });
  });
}

/** The real server-everything in streamable-HTTP mode; its MCP endpoint is `${url}/mcp`. */
export async function startEverything() {
  // It is told a port picked free a moment before, which another socket can take in between,
  // and it prints its ready line even when its listen failed: a start counts once the port
  // answers as server-everything does, and a lost race starts it again on another port.
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const started = await startEverythingOnce();
    if (started) return started;
  }
  throw new Error('server-everything printed its ready line five times but never listened');
}

/** One start on a free port; null when the port answered as something else. */
async function startEverythingOnce() {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server-everything did not start: ${out}`)), 30000);
    const onData = (d) => {
      out += d;
      if (out.includes('listening on port')) { clearTimeout(timer); resolve(); }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server-everything exited ${code}: ${out}`)));
  });
  const exited = new Promise((r) => child.once('exit', r));
  const close = async () => { child.kill('SIGTERM'); await exited; };
  // Its answer to a GET without a session, which only a listening server-everything gives.
  const answer = await fetch(`http://127.0.0.1:${port}/mcp`).then(async (r) => [r.status, await r.text()]).catch(() => [0, '']);
  if (answer[0] !== 400 || !answer[1].includes('No valid session ID')) {
    await close();
    return null;
  }
  return { url: `http://127.0.0.1:${port}`, close };
}

/**
 * Runs `lowdown-server scan` on the database of a server started by startLowdownServer
 * (its `db`), against fixtures on loopback. Resolves with the summary.
 * @param {string} db the server's database (a SQLite path or a postgres:// URL)
 * @param {{registry: string, npm: string, pypi: string}} urls
 * @param {Record<string, string>} [env] extra environment
 */
export function runScan(db, urls, env = {}) {
  const args = ['scan', '--db', db, '--registry-url', urls.registry, '--unsafe-allow-loopback',
    '--npm-registry-url', urls.npm, '--pypi-url', urls.pypi];
  return new Promise((resolve, reject) => {
    execFile(SERVER_BIN, args, { env: { ...process.env, RUST_LOG: 'off', ...env } }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`lowdown-server scan failed: ${err.message}\n${stderr}\n${stdout}`));
      return resolve(JSON.parse(stdout));
    });
  });
}

/**
 * Runs `lowdown-server export --out DIR` on a server's database.
 * @param {string} db the server's database (a SQLite path or a postgres:// URL)
 * @param {string} out
 */
export function runExport(db, out) {
  return new Promise((resolve, reject) => {
    execFile(SERVER_BIN, ['export', '--db', db, '--out', out], { env: { ...process.env, RUST_LOG: 'off' } }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`lowdown-server export failed: ${err.message}\n${stderr}`));
      return resolve(JSON.parse(stdout));
    });
  });
}
