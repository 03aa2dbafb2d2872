// TEMPORARY (issue 22): home.js is being rewritten on the `plans` branch, which owns it, and
// does not pass tsc's noImplicitAny yet. tsc reads this declaration in its place (a `.d.ts`
// beside a `.js` wins the import), so home.js itself is not checked; the proxy's tsconfig
// excludes it too. Delete this file once home.js carries its own JSDoc types.

/** The state directory: `$LOWDOWN_HOME`, else `~/.lowdown`. */
export function lowdownHome(env?: Record<string, string | undefined>): string;
/** Reads `<home>/node.json`, creating it (mode 0600, atomically) on first use. */
export function loadNodeIdentity(home: string): { node_id: string; created_at: string; created: boolean };
/** The user's home directory, as the core joins `.lowdown` to it. */
export const userHome: () => string;
