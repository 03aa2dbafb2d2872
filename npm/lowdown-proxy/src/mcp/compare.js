// compare_tools asks the API to rank: the ranking and recommendation rule (SPEC §5) lives
// once, in lowdown-core's `aggregate::compare`, which the server runs. Nothing is re-ranked here.

import { ApiError } from '../api.js';

/** The API route that ranks candidates. */
export const COMPARE_PATH = '/api/compare';

/**
 * Ranks 2–5 targets through the API.
 * @param {Pick<import('../api.js').ApiClient, 'request'>} api an apiClient
 * @param {string[]} candidates target names
 * @param {string} [taskType] narrows every candidate to one task
 * @returns {Promise<import('./format.js').Comparison>}
 */
export async function compareTargets(api, candidates, taskType) {
  // The API takes the names comma-separated, so a name may not contain a comma.
  const q = new URLSearchParams({ targets: candidates.join(',') });
  if (taskType) q.set('task_type', taskType);
  let res;
  try {
    res = await api.request('GET', `${COMPARE_PATH}?${q}`);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404 && !(e.body && /** @type {{error?: unknown}} */ (e.body).error)) {
      throw new ApiError('http', `This Lowdown API has no ${COMPARE_PATH} endpoint; upgrade lowdown-server to compare tools.`, 404);
    }
    throw e;
  }
  if (!res || !Array.isArray(res.ranked) || !res.recommendation) {
    throw new ApiError('bad_response', 'The Lowdown API answered the comparison without "ranked" and "recommendation".');
  }
  return { ranked: res.ranked, recommendation: res.recommendation, task_type: res.task_type ?? taskType ?? null, ...(res.source ? { source: res.source } : {}) };
}
