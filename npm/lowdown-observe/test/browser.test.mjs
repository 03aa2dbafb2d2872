// A real page in headless Chromium uses the web build, makes calls, is unloaded before the
// batch timer fires, and lowdown-server receives every observation (sendBeacon on page hide).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { serve, lowdownServer, closeAll } from './helpers.mjs';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const root = new URL('..', import.meta.url);
const types = { '.js': 'text/javascript', '.html': 'text/html', '.wasm': 'application/wasm' };

after(closeAll);

/** Serves the package (page, src, wasm) and the routes the page calls, on one origin. */
function site() {
  return serve((req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    if (path === '/ok') return res.writeHead(200, { 'content-length': 2 }).end('ok');
    if (path === '/missing') return res.writeHead(404).end();
    if (path === '/broken') return res.writeHead(500).end();
    const file = new URL(`.${path === '/' ? '/test/page/index.html' : path}`, root);
    if (!file.pathname.startsWith(root.pathname) || !existsSync(file)) return res.writeHead(404).end();
    const ext = file.pathname.slice(file.pathname.lastIndexOf('.'));
    return res.writeHead(200, { 'content-type': types[ext] || 'application/octet-stream' }).end(readFileSync(file));
  });
}

test('a page in Chromium reports its fetches to lowdown-server, delivered on unload', async () => {
  assert.ok(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM} (make setup-observe installs it)`);
  const server = await lowdownServer();
  const page_site = await site();
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${page_site.url}/?api=${encodeURIComponent(server.url)}`);
    await page.waitForFunction(() => window.done, null, { timeout: 10000 });
    const done = await page.evaluate(() => window.done);
    assert.deepEqual(errors, []);
    assert.deepEqual(done.statuses, [200, 200, 404, 500, 'TypeError']);
    assert.equal(done.stats.queued, 5);
    assert.equal(done.stats.sent, 0, 'still queued: the batch timer has not fired');
    await page.goto('about:blank'); // page hide → sendBeacon
    let answer;
    for (let i = 0; i < 100; i++) {
      answer = await (await fetch(`${server.url}/api/reputation/127.0.0.1`)).json();
      if (answer.telemetry?.observations === 5) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(answer.telemetry?.observations, 5, JSON.stringify(answer));
    assert.deepEqual(answer.telemetry.status_codes, { 200: 2, 404: 1, 500: 1, none: 1 });
    assert.ok(!JSON.stringify(answer).includes('CANARY_browser'));
  } finally {
    await browser.close();
  }
});

test('a busy page sends 60 observations an hour anonymously, never more', async () => {
  const server = await lowdownServer();
  const page_site = await site();
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage();
    await page.goto(`${page_site.url}/?api=${encodeURIComponent(server.url)}&calls=95`);
    await page.waitForFunction(() => window.done, null, { timeout: 20000 });
    const done = await page.evaluate(() => window.done);
    assert.equal(done.stats.queued, 100);
    assert.equal(done.stats.failed, 0, JSON.stringify(done.stats));
    // The page sent two batches (50 and 10) while it ran: the anonymous budget is spent, so
    // page hide finds nothing it may send, and the other 40 are never sent this hour.
    await page.goto('about:blank');
    let answer;
    for (let i = 0; i < 100; i++) {
      answer = await (await fetch(`${server.url}/api/reputation/127.0.0.1`)).json();
      if (answer.telemetry?.observations >= 60) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(answer.telemetry?.observations, 60, JSON.stringify(answer.telemetry));
  } finally {
    await browser.close();
  }
});
