/** The platforms a binary is built for, by Node's names. */
export const PLATFORMS: readonly string[];
/** This machine's platform name (`linux-x64-gnu`, …), whether or not a binary is built for it. */
export function platform(): string;
/** The path of this machine's lowdown-server binary (`$LOWDOWN_SERVER_BIN` when set); throws saying what is missing. */
export function binaryPath(): string;
