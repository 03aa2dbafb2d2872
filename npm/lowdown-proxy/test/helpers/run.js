// Helpers shared by the proxy tests: run a command directly or through the proxy, feed it
// chunks, collect every stdout byte, and temp dirs.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

/** The proxy's bin. */
export const PROXY = fileURLToPath(new URL('../../bin/lowdown-proxy.js', import.meta.url));
/** The fixture child. */
export const CHILD = fileURLToPath(new URL('../fixtures/child.js', import.meta.url));
/** server-everything's stdio entry point. */
export const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
/** A small SDK-built MCP server with failing and crashing tools. */
export const SDK_SERVER = fileURLToPath(new URL('../fixtures/mcp-server.js', import.meta.url));

/** A fresh temp dir, removed by the caller's `t.after`. */
export function tempDir(t, prefix = 'lowdown-proxy-test-') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t?.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Runs `cmd args`, writing `chunks` to its stdin (with `gapMs` between them), then closing
 * stdin unless `keepOpen`. Resolves with all stdout bytes, stderr text, exit code and signal.
 * @param {string} cmd
 * @param {string[]} args
 * @param {{chunks?: (Buffer|string)[], gapMs?: number, env?: object, cwd?: string, keepOpen?: boolean, onSpawn?: (child) => void, timeoutMs?: number}} [o]
 */
export function run(cmd, args, o = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: o.env ?? process.env, cwd: o.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const out = [];
    let err = '';
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => (err += c));
    child.stdin.on('error', () => {});
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`timed out: ${cmd} ${args.join(' ')}\nstderr: ${err}`));
    }, o.timeoutMs ?? 20000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ stdout: Buffer.concat(out), stderr: err, code, signal, pid: child.pid });
    });
    o.onSpawn?.(child);
    (async () => {
      for (const c of o.chunks ?? []) {
        child.stdin.write(c);
        if (o.gapMs) await new Promise((r) => setTimeout(r, o.gapMs));
      }
      if (!o.keepOpen) child.stdin.end();
    })();
  });
}

/** Runs `node script args` through the proxy (`lowdown-proxy [proxyArgs] -- node script args`). */
export function viaProxy(args, o = {}, proxyArgs = []) {
  return run(process.execPath, [PROXY, ...proxyArgs, '--', process.execPath, ...args], o);
}

/** Runs `node script args` directly. */
export function direct(args, o = {}) {
  return run(process.execPath, args, o);
}

/** True while a process with this pid runs (a zombie awaiting its reaper counts as ended). */
export function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return true;
  }
}
