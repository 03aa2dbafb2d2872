// Readable text for API answers. Facts only: every number says what it counts and where
// it came from; nothing here scores or ranks (the ranking comes from the API/core).

function pct(rate) {
  return typeof rate === 'number' ? `${(rate * 100).toFixed(1)}%` : 'n/a';
}

// A source's counts: a number, or counters per outcome class (zeros left out).
function sourceCounts(v) {
  if (v == null) return '0';
  if (typeof v !== 'object') return String(v);
  const parts = Object.entries(v).filter(([, n]) => n);
  return parts.length ? parts.map(([k, n]) => `${k} ${n}`).join(', ') : '0';
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * One line summarising a reputation answer, e.g.
 * `npm:x — 120 interactions, 100 rated, success rate 97.0% (organic), confidence high`.
 * @param {object} rep the API's reputation answer
 * @returns {string}
 */
export function reputationLine(rep) {
  if (!rep || typeof rep !== 'object') return 'no answer';
  if (Array.isArray(rep.candidates)) return `ambiguous name: ${rep.candidates.length} targets match (${rep.candidates.slice(0, 5).join(', ')})`;
  const name = rep.resolved_target || rep.target;
  const n = rep.interactions ?? 0;
  if (!n) return `${name} — no interactions recorded yet`;
  const rated = rep.rated_interactions ?? 0;
  const rate = rep.success_rate == null ? 'no success rate yet (no rated organic interactions)' : `success rate ${pct(rep.success_rate)} (organic)`;
  return `${name} — ${plural(n, 'interaction')}, ${rated} rated, ${rate}, confidence ${rep.confidence ?? 'none'}`;
}

/**
 * The full readable reputation answer for `get_lowdown`.
 * @param {string} asked the target as the agent asked for it
 * @param {object} rep the API's reputation answer
 * @returns {string}
 */
export function reputationText(asked, rep) {
  if (Array.isArray(rep.candidates)) {
    return [
      `"${asked}" matches more than one target; ask again with one of these exact names:`,
      ...rep.candidates.map((c) => `  - ${typeof c === 'string' ? c : c.target ?? JSON.stringify(c)}`),
    ].join('\n');
  }
  const lines = [`Lowdown for ${rep.resolved_target || rep.target}${rep.resolved_target && rep.resolved_target !== asked ? ` (asked as "${asked}")` : ''}`];
  if (rep.message) lines.push(rep.message);
  lines.push(reputationLine(rep));
  const bs = rep.by_source;
  if (bs) lines.push(`By source: ${['organic', 'seeded', 'synthetic'].map((k) => `${k} ${sourceCounts(bs[k])}`).join('; ')} (only organic counts in the success rate)`);
  lines.push(`Not in the success rate: ${rep.protocol_requests ?? 0} protocol requests, ${rep.rejected_requests ?? 0} rejected requests`);
  if (rep.task_breakdown && Object.keys(rep.task_breakdown).length) {
    lines.push('Per task (shown because your node contributes):');
    for (const [task, t] of Object.entries(rep.task_breakdown)) {
      const types = t.failure_types && Object.keys(t.failure_types).length ? ` (${Object.entries(t.failure_types).map(([k, v]) => `${k} ${v}`).join(', ')})` : '';
      lines.push(`  ${task}: ${t.success ?? 0} success, ${t.failure ?? 0} failure${types}`);
    }
  }
  if (Array.isArray(rep.recent_trends) && rep.recent_trends.length) {
    lines.push(`Recent days: ${rep.recent_trends.map((d) => `${d.date} ${d.count} (${pct(d.success_rate)})`).join('; ')}`);
  }
  lines.push(...breakdown('By server version:', rep.by_server_version), ...breakdown('By tool schema hash:', rep.by_schema_hash));
  if (rep.telemetry) lines.push(`Telemetry (reported apart, never mixed into the above): ${JSON.stringify(rep.telemetry)}`);
  if (rep.source) lines.push(`Source: ${typeof rep.source === 'object' ? Object.entries(rep.source).map(([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : v}`).join(', ') : rep.source}`);
  return lines.join('\n');
}

// One ranked candidate: only the numbers the ranking used.
function rankedLine(r) {
  const rated = r.rated_interactions ?? 0;
  if (r.success_rate == null) return `${r.target} — no rated organic interactions (confidence ${r.confidence ?? 'none'})`;
  return `${r.target} — success rate ${pct(r.success_rate)} over ${rated} rated organic interaction${rated === 1 ? '' : 's'}, confidence ${r.confidence ?? 'none'}`;
}

function breakdown(title, table) {
  if (!table || typeof table !== 'object' || !Object.keys(table).length) return [];
  return [
    title,
    ...Object.entries(table).map(([k, v]) => `  ${k}: ${v.interactions ?? 0} interactions, ${v.rated_interactions ?? 0} rated, success rate ${pct(v.success_rate)}`),
  ];
}

/**
 * Readable text for a comparison.
 * @param {{ranked: object[], recommendation: {target: string|null, reason: string}}} cmp
 * @returns {string}
 */
export function compareText(cmp) {
  const lines = ['Ranked by organic success rate (targets with no rated interactions last; scanner and telemetry data never change the order):'];
  cmp.ranked.forEach((r, i) => lines.push(`${i + 1}. ${rankedLine(r)}`));
  const rec = cmp.recommendation;
  lines.push(rec.target ? `Recommendation: ${rec.target}. ${rec.reason ?? ''}`.trim() : `No recommendation: ${rec.reason}`);
  return lines.join('\n');
}

/**
 * Readable text for `get_node_stats`.
 * @param {object} node the API's node answer
 * @returns {string}
 */
export function nodeText(node) {
  const net = node.network || {};
  const netLine = `Network: ${plural(net.total_nodes ?? 0, 'node')}, ${plural(net.total_interactions ?? 0, 'interaction')} in total.`;
  if (!node.contribution) return `Node ${node.node_id} has not contributed any interactions yet (status ${node.status}).\n${netLine}`;
  const c = node.contribution;
  const lines = [
    `Node ${node.node_id} (${node.status}): ${plural(c.interactions ?? 0, 'interaction')} on ${plural(c.targets_observed ?? 0, 'target')}, active on ${plural(c.active_days ?? 0, 'day')}, first ${c.first_seen}, last ${c.last_seen}.`,
    netLine,
  ];
  if (node.rank && node.rank.percentile != null) lines.push(`Contribution percentile: ${node.rank.percentile}.`);
  return lines.join('\n');
}
