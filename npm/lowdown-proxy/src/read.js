// Copied from npm/lowdown-observe/src/read.js by `make contracts`: do not edit.
// Reading an answer's body without trusting its size: a hostile or misconfigured API URL
// could otherwise make the client buffer any amount (fetch's `res.text()` has no bound).
// lowdown-proxy ships this file as its src/read.js, copied by `make contracts`.

import { DELIVERY } from './contract.js';

/** Bytes of the API's answer to one batch read at most (the core's `DELIVERY`). */
export const ANSWER_MAX_BYTES = DELIVERY.ANSWER_MAX_BYTES;

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
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(bytes);
}
