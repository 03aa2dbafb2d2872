// What an editor uses of `wrap` (the editor extension bundles this module): the same code as
// `lowdown-proxy wrap|unwrap|status`, never a second implementation.

export { run } from './index.js';
export { formatReports } from './report.js';
export { contributionLines, reputationLines } from './cli.js';
export { destinationLines } from '../record/node.js';
