// Reading an API answer's body without trusting its size: a hostile or misconfigured
// LOWDOWN_API_URL could otherwise make the proxy buffer any amount (fetch's `res.text()` has
// no bound). lowdown-observe reads its answers the same way (its src/read.js).

/**
 * The body of `res` as UTF-8 text (as `res.text()` decodes it), or null when it is longer
 * than `maxBytes`: then no more of it is read and the rest is cancelled. Rejects as
 * `res.text()` would when the body fails.
 * @param {Response} res
 * @param {number} maxBytes
 * @returns {Promise<string | null>}
 */
export async function readBounded(res, maxBytes) {
  const announced = Number(res.headers.get('content-length') ?? NaN);
  if (announced > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    return null;
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  /** @type {Uint8Array[]} */
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks, size)); // drops a BOM, as res.text() does
}
