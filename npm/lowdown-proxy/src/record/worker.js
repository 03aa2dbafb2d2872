// The recording thread. Messages from the main thread:
//   {type: 'items', items, bytes} queued work for RecordPipeline.apply, in order; byte
//                                 items carry [start, end) ranges of `bytes`
//   {type: 'shutdown', budgetMs}  deliver or spool within the budget, then answer {type: 'done'}
// It answers {type: 'unavailable', message} once, instead, when the core does not load.

import { parentPort as maybeParent, workerData } from 'node:worker_threads';

// This module only ever runs as the recording thread, which always has a parent.
const parentPort = /** @type {import('node:worker_threads').MessagePort} */ (maybeParent);

const { debugOn, ...opts } = workerData;
const debug = debugOn ? (/** @type {string} */ m) => process.stderr.write(`[lowdown-proxy] ${m}\n`) : () => {};
let pipeline = null;
try {
  const { RecordPipeline } = await import('./pipeline.js');
  pipeline = new RecordPipeline({ ...opts, debug });
} catch (err) {
  parentPort.postMessage({ type: 'unavailable', message: /** @type {Error} */ (err).message.split('\n')[0] });
}

parentPort.on('message', async (msg) => {
  if (msg.type === 'items' && pipeline) {
    const bytes = Buffer.from(msg.bytes.buffer, msg.bytes.byteOffset, msg.bytes.byteLength);
    for (const item of msg.items) if (item[0] === 'c') item[2] = bytes.subarray(item[2][0], item[2][1]);
    pipeline.apply(msg.items);
  } else if (msg.type === 'shutdown') {
    await pipeline?.shutdown(msg.budgetMs);
    parentPort.postMessage({ type: 'done' });
  }
});
