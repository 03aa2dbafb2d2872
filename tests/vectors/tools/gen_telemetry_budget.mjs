// telemetry_budget.json: a client's own count of what it may send (SPEC §4), scripted.
// The expectations come from this independent model of the rule: 60 an hour anonymously,
// 600 with a key, in a window that starts with the first observation sent; a refusal pauses
// for Retry-After clamped to 1 s..1 h (NaN: 1 s). An answer counts each observation sent
// once: delivered (the API's `accepted`), throttled (a 429, or its `rate_limited` count:
// pauses) or failed (no answer, another status, a 2xx without `accepted`, the rest).
import { writeVectors } from "./common.mjs";

const HOUR = 3_600_000;

function model(withKey, steps) {
  const limit = withKey ? 600 : 60;
  let used = 0;
  let start = null;
  let paused = 0;
  const out = [];
  const pause = (now, retry) => {
    const wait = Number.isFinite(retry) ? Math.min(Math.max(retry, 1), 3600) : 1;
    paused = now + wait * 1000;
  };
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
      pause(...s.refused);
    } else if ("answered" in s) {
      const [now, sent, status, retryAfter, body] = s.answered;
      const retry = retryAfter == null ? NaN : Number(retryAfter.trim() || "x");
      const count = (a, key) => (Number.isInteger(a?.[key]) && a[key] >= 0 ? Math.min(a[key], sent) : null);
      let answer = null;
      try { answer = JSON.parse(body); } catch { answer = null; }
      if (status === 429) { pause(now, retry); out.push({ delivered: 0, throttled: sent, failed: 0 }); }
      else if (status >= 200 && status < 300 && count(answer, "accepted") !== null) {
        const throttled = count(answer, "rate_limited") ?? 0;
        if (throttled > 0) pause(now, retry);
        const delivered = Math.min(count(answer, "accepted"), sent - throttled);
        out.push({ delivered, throttled, failed: sent - throttled - delivered });
      } else out.push({ delivered: 0, throttled: 0, failed: sent });
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
  ["an answer taking all delivers all and pauses nothing", false, [{ take: [0, 10] }, { answered: [5, 10, 200, null, '{"ok":true,"accepted":10,"rate_limited":0,"items":[]}'] }, { wait: 5 }]],
  ["an answer over the quota throttles the rest and pauses for Retry-After", true, [{ take: [0, 10] }, { answered: [5, 10, 200, "30", '{"ok":true,"accepted":6,"rate_limited":4,"items":[]}'] }, { wait: 5 }]],
  ["a 429 throttles every one", false, [{ answered: [0, 7, 429, "12", '{"error":"over"}'] }, { wait: 0 }]],
  ["items refused as invalid fail", false, [{ answered: [0, 5, 200, null, '{"ok":true,"accepted":3,"rate_limited":0,"items":[]}'] }]],
  ["no answer fails every one and pauses nothing", false, [{ answered: [0, 5, null, null, null] }, { wait: 0 }]],
  ["a mistyped URL's 404 fails every one", false, [{ answered: [0, 5, 404, "60", "<html>not found</html>"] }, { wait: 0 }]],
  ["a 5xx fails every one", false, [{ answered: [0, 5, 503, "60", '{"error":"down"}'] }, { wait: 0 }]],
  ["a 2xx that is not the API's answer fails every one", false, [{ answered: [0, 5, 200, null, "<html>welcome</html>"] }, { answered: [0, 5, 204, null, ""] }]],
  ["counts past the batch are capped to it", false, [{ answered: [0, 3, 200, "x", '{"accepted":9,"rate_limited":9}'] }, { wait: 0 }]],
  ["negative or fractional counts are not the API's answer", false, [{ answered: [0, 3, 200, null, '{"accepted":-1}'] }, { answered: [0, 3, 200, null, '{"accepted":1.5}'] }]],
].map(([name, withKey, steps]) => ({
  name,
  input: { with_agent_key: withKey, steps },
  expected: model(withKey, steps.map((s) => ("refused" in s ? { refused: [s.refused[0], Number(s.refused[1])] } : s))),
}));

writeVectors("telemetry_budget.json", "telemetry_budget", "Budget::new(with_agent_key) driven by steps: take [now_ms, want] → how many may be sent; refused [now_ms, retry_after_s] (the string NaN allowed) → pauses; answered [now_ms, sent, status|null, retry_after|null, body|null] → {delivered, throttled, failed} (and pauses on a refusal); wait now_ms → ms until one may be sent. Expected: the take, answered and wait results in order.", cases);
