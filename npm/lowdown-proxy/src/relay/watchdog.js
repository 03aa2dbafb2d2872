// Orphan protection for the one case the proxy cannot handle itself: being SIGKILLed.
//
// A killed proxy runs no code, so something else must notice. The watchdog is a tiny
// `/bin/sh` (about 1 MB, no Node) whose stdin is a pipe from the proxy. The kernel closes
// that pipe when the proxy dies for any reason; `read` then returns and the watchdog sends
// the child's process group SIGTERM, then SIGKILL 2 s later. On a normal exit the proxy kills the watchdog
// first. The watchdog runs in its own process group, so a terminal's Ctrl-C or a client
// killing the proxy's group does not take it down before it has done its job.
//
// Not available on Windows (no /bin/sh): there the child's stdin closes when the proxy
// dies, which ends every stdio MCP server that honours EOF.

import { spawn } from 'node:child_process';

const SCRIPT =
  'while read -r _; do :; done; ' +
  'kill -TERM "-$1" 2>/dev/null || exit 0; ' +
  'i=0; while [ $i -lt 20 ] && kill -0 "-$1" 2>/dev/null; do sleep 0.1; i=$((i+1)); done; ' +
  'kill -KILL "-$1" 2>/dev/null; exit 0';

/**
 * Starts a watchdog that kills the process group led by `childPid` (the relay starts the
 * child as a group leader) if this process dies without stopping it.
 * @param {number} childPid
 * @returns {{stop: () => void}} call `stop` once the child has exited
 */
export function startWatchdog(childPid) {
  if (process.platform === 'win32' || !childPid) return { stop() {} };
  /** @type {import('node:child_process').ChildProcessByStdio<import('node:stream').Writable, null, null>} */
  let dog;
  try {
    dog = spawn('/bin/sh', ['-c', SCRIPT, 'lowdown-watchdog', String(childPid)], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
    });
  } catch {
    return { stop() {} };
  }
  dog.on('error', () => {});
  dog.stdin.on('error', () => {});
  dog.unref();
  // A pipe's stdin is a net.Socket, with Node's own (untyped) pipe handle inside.
  const pipe = /** @type {any} */ (dog.stdin);
  pipe.unref?.();
  // The pipe's write end must stay open for as long as we live; unref'd so it never
  // keeps the event loop alive.
  if (pipe._handle?.unref) pipe._handle.unref();
  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        dog.kill('SIGKILL');
      } catch {
        // already gone
      }
    },
  };
}
