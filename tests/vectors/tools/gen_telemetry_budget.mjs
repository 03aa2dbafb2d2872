// telemetry_budget.json: a client's own count of what it may send (SPEC §4), scripted.
// The expectations come from this independent model of the rule: 60 an hour anonymously,
// 600 with a key, in a window that starts with the first observation sent; a refusal pauses
// for Retry-After clamped to 1 s..1 h (NaN: 1 s).
import { writeVectors } from "./common.mjs";

const HOUR = 3_600_000;

function model(withKey, steps) {
  const limit = withKey ? 600 : 60;
  let used = 0;
  let start = null;
  let paused = 0;
  const out = [];
  for (const s of steps) {
    if ("take" in s) {
      const [now, want] = s.take;
      if (now < paused) { out.push(0); continue; }
      if (start !== null && now >= start + HOUR) { start = null; used = 0; }
      const n = Math.min(want, limit - used);
      if (n > 0 && start === null) start = now;
      used += n;
      out.push(n);
    } else if ("refused" in s) {
      const [now, retry] = s.refused;
      const wait = Number.isFinite(retry) ? Math.min(Math.max(retry, 1), 3600) : 1;
      paused = now + wait * 1000;
    } else if ("wait" in s) {
      const now = s.wait;
      const pause = Math.max(paused - now, 0);
      const window = start !== null && used >= limit ? Math.max(start + HOUR - now, 0) : 0;
      out.push(Math.max(pause, window));
    }
  }
  return out;
}

const cases = [
  ["anonymous: 60 of 200 now, none more this hour", false, [{ take: [1000, 200] }, { take: [2000, 1] }, { wait: 2000 }]],
  ["anonymous: a new window an hour after the first send", false, [{ take: [1000, 60] }, { take: [1000 + HOUR - 1, 1] }, { take: [1000 + HOUR, 5] }]],
  ["with a key: 600", true, [{ take: [0, 1000] }, { take: [1, 1] }]],
  ["small sends add up to the limit", false, [{ take: [0, 25] }, { take: [10, 25] }, { take: [20, 25] }, { wait: 20 }]],
  ["nothing to send uses nothing and starts no window", false, [{ take: [0, 0] }, { wait: 0 }, { take: [HOUR * 2, 60] }]],
  ["a refusal pauses for Retry-After, then sending resumes", true, [{ take: [0, 10] }, { refused: [500, 30] }, { take: [1000, 1] }, { wait: 1000 }, { take: [30500, 1] }]],
  ["Retry-After below a second waits a second", false, [{ refused: [0, 0] }, { wait: 0 }, { take: [999, 1] }, { take: [1000, 1] }]],
  ["Retry-After over an hour waits an hour", false, [{ refused: [0, 86400] }, { wait: 0 }]],
  ["an unreadable Retry-After waits a second", false, [{ refused: [0, "NaN"] }, { wait: 10 }]],
  ["the longer of the pause and the spent window", false, [{ take: [0, 60] }, { refused: [10, 5] }, { wait: 10 }]],
].map(([name, withKey, steps]) => ({
  name,
  input: { with_agent_key: withKey, steps },
  expected: model(withKey, steps.map((s) => ("refused" in s ? { refused: [s.refused[0], Number(s.refused[1])] } : s))),
}));

writeVectors("telemetry_budget.json", "telemetry_budget", "Budget::new(with_agent_key) driven by steps: take [now_ms, want] → how many may be sent; refused [now_ms, retry_after_s] (the string NaN allowed) → pauses; wait now_ms → ms until one may be sent. Expected: the take and wait results in order.", cases);
