// Where the prebuilt lowdown-server binary of this machine is: in the platform package
// (`lowdown-server-<platform>`, an optional dependency npm installs only where it fits),
// found by module resolution, never on PATH (`LOWDOWN_SERVER_BIN` names a build from source
// instead).

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The platforms a binary is built for, by Node's names. */
export const PLATFORMS = Object.freeze(['linux-x64-gnu', 'linux-x64-musl', 'linux-arm64-gnu']);

/** Whether this Linux runs on musl rather than glibc. */
function isMusl() {
  try {
    return readFileSync('/usr/bin/ldd', 'utf8').includes('musl');
  } catch {
    const report = /** @type {{ header?: { glibcVersionRuntime?: string } }} */ (process.report?.getReport() ?? {});
    return !report.header?.glibcVersionRuntime;
  }
}

/**
 * This machine's platform name (`linux-x64-gnu`, …), whether or not a binary is built for it.
 * @returns {string}
 */
export function platform() {
  const libc = process.platform === 'linux' ? (isMusl() ? '-musl' : '-gnu') : '';
  return `${process.platform}-${process.arch}${libc}`;
}

/**
 * The path of this machine's lowdown-server binary: `$LOWDOWN_SERVER_BIN` when set (a build
 * from source), else the platform package's.
 * @returns {string}
 * @throws {Error} saying which package is missing, or that no binary is built for this platform.
 */
export function binaryPath() {
  if (process.env.LOWDOWN_SERVER_BIN) return process.env.LOWDOWN_SERVER_BIN;
  const here = platform();
  if (!PLATFORMS.includes(here)) {
    throw new Error(
      `no prebuilt lowdown-server for ${here} (built for ${PLATFORMS.join(', ')}); build it from source with \`cargo install --path server\` in a checkout`,
    );
  }
  try {
    return require.resolve(`lowdown-server-${here}/lowdown-server`);
  } catch {
    throw new Error(
      `lowdown-server-${here} is not installed (npm skips optional dependencies with --omit=optional or --no-optional); install it with \`npm install lowdown-server-${here}\``,
    );
  }
}
