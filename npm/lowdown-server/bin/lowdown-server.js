#!/usr/bin/env node
// `npx lowdown-server …`: runs this platform's prebuilt binary with the same arguments and
// standard streams, passes SIGINT and SIGTERM (on which the server stops gracefully) and
// SIGHUP on, and ends as the server ended: its exit code, or the signal that stopped it.

import { spawn } from 'node:child_process';
import { binaryPath } from '../index.js';

let bin;
try {
  bin = binaryPath();
} catch (e) {
  console.error(`lowdown-server: ${/** @type {Error} */ (e).message}`);
  process.exit(1);
}
const child = spawn(bin, process.argv.slice(2), { stdio: 'inherit' });
/** @type {NodeJS.Signals[]} */
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];
for (const signal of SIGNALS) process.on(signal, () => child.kill(signal));
child.on('error', (e) => {
  console.error(`lowdown-server: cannot run ${bin}: ${e.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
