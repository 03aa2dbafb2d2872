// The pages in a real browser (headless Chromium), with JavaScript off: a real MCP session
// (server-everything through lowdown-proxy, the official SDK client) and a Scanner run
// against fixtures recorded at a real lowdown-server; then `/`, a search, the target's page,
// whose charts must carry the numbers of the API answer, the daily record and its feeds
// (parsed as XML and as JSON Feed 1.1), and the export run twice. On SQLite, and on
// PostgreSQL when LOWDOWN_TEST_DATABASE_URL names a server (`make test-pages` starts one).
// Nothing installed by hand: `make test-pages` builds and sets up what this needs.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { ROOT, startLowdownServer } from '../../npm/lowdown-proxy/test/helpers/lowdown-server.js';
import {
  EVERYTHING_VERSION, registryEntry, runExport, runScan, startEverything, startNpm, startPypi, startRegistry,
} from '../../npm/lowdown-proxy/test/helpers/scan-fixtures.js';

// playwright-core as lowdown-observe declares it (the npm workspace installs it).
const { chromium } = createRequire(path.join(ROOT, 'npm', 'lowdown-observe', 'package.json'))('playwright-core');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const ENTRY = 'mcp:io.github.modelcontextprotocol/server-everything';
const NPM_NAME = 'npm:@modelcontextprotocol/server-everything';

function run(cmd, args, env) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { env: { ...process.env, ...env } }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)));
  });
}

const PG_ADMIN = process.env.LOWDOWN_TEST_DATABASE_URL;
if (!PG_ADMIN) {
  assert.ok(process.env.CI !== 'true', 'CI=true but LOWDOWN_TEST_DATABASE_URL is not set: run `make test-pages`');
  console.log('LOWDOWN_TEST_DATABASE_URL unset: the pages run on SQLite only (make test-pages sets it)');
}

/** A fresh PostgreSQL database on the server LOWDOWN_TEST_DATABASE_URL names. */
async function pgDatabase() {
  const admin = PG_ADMIN;
  const name = `lowdown_pages_${Math.random().toString(16).slice(2, 10)}`;
  const url = new URL(admin);
  await run('psql', [admin, '-qc', `CREATE DATABASE ${name}`]);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run('psql', [admin, '-qc', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`]) };
}

for (const engine of PG_ADMIN ? ['sqlite', 'postgres'] : ['sqlite']) {
  describe(`pages on ${engine}`, () => {
    let server;
    let nodeId;
    let browser;
    const closers = [];

    async function api(target, headers = {}) {
      const r = await fetch(`${server.url}/api/reputation/${target}`, { headers });
      return r.json();
    }

    before(async () => {
      assert.ok(fs.existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM} (make setup-chromium installs it)`);
      let db;
      if (engine === 'postgres') {
        const pg = await pgDatabase();
        closers.push(pg.drop);
        db = pg.url;
      }
      server = await startLowdownServer('lowdown-pages-', { db });
      closers.push(() => server.stop());
      // A real session through the proxy, recorded under the Registry name of the server.
      await run(process.execPath, [path.join(ROOT, 'examples', 'demo', 'session.mjs'), ENTRY], { LOWDOWN_API_URL: server.url, LOWDOWN_HOME: server.dir });
      nodeId = JSON.parse(fs.readFileSync(path.join(server.dir, 'node.json'), 'utf8')).node_id;
      for (let i = 0; i < 100 && (await api(ENTRY)).interactions < 7; i++) await new Promise((r) => setTimeout(r, 100));
      // The Scanner's day: the Registry declares the server with its remote and its packages.
      const everything = await startEverything();
      const registry = await startRegistry([
        registryEntry({
          name: ENTRY.slice(4),
          version: EVERYTHING_VERSION,
          remotes: [{ type: 'streamable-http', url: `${everything.url}/mcp` }],
          packages: [['npm', NPM_NAME.slice(4), EVERYTHING_VERSION], ['pypi', 'Fixture_Everything', '0.1.0']],
        }),
      ]);
      const npm = await startNpm({ [NPM_NAME.slice(4)]: [EVERYTHING_VERSION, { [EVERYTHING_VERSION]: '' }] });
      const pypi = await startPypi({ 'fixture-everything': { versions: ['0.1.0'], latest: '0.1.0' } });
      closers.push(everything.close, registry.close, npm.close, pypi.close);
      const summary = await runScan(server.db, { registry: registry.url, npm: npm.url, pypi: pypi.url });
      assert.equal(summary.status, 'completed', JSON.stringify(summary));
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      });
      closers.push(() => browser.close());
    });

    after(async () => {
      for (const c of closers.reverse()) await c();
    });

    /** A page with JavaScript off that records every request it makes. */
    async function noScriptPage() {
      const context = await browser.newContext({ javaScriptEnabled: false });
      const page = await context.newPage();
      const requests = [];
      page.on('request', (r) => requests.push({ url: r.url(), type: r.resourceType() }));
      return { page, requests, close: () => context.close() };
    }

    /** Every `<g class="bar">` of a figure as its data attributes. */
    function bars(page, id) {
      return page.locator(`figure#${id} g.bar`).evaluateAll((gs) => gs.map((g) => ({ ...g.dataset })));
    }

    test('search from / leads to the page, and its charts carry the API answer', async () => {
      const { page, requests, close } = await noScriptPage();
      try {
        await page.goto(`${server.url}/`);
        assert.equal(await page.getAttribute('html', 'lang'), 'en');
        assert.ok((await page.locator('table').first().textContent()).includes(ENTRY), 'the home page lists the recorded target');
        await page.getByLabel('Tool, MCP server or service:').fill('server-everything');
        await Promise.all([page.waitForURL(/\/t\//), page.getByRole('button', { name: 'Look up' }).click()]);
        assert.equal(decodeURIComponent(new URL(page.url()).pathname), `/t/${ENTRY}`);
        assert.equal(await page.locator('h1').textContent(), ENTRY);

        const a = await api(ENTRY, { 'x-lowdown-node-id': nodeId });
        assert.ok(a.interactions >= 7, JSON.stringify(a));
        assert.equal(await page.locator('#message').textContent(), a.message);
        assert.ok((await page.locator('#summary').textContent()).includes(`${a.interactions}interactions`));

        const day = await bars(page, 'by-day');
        assert.deepEqual(day.map((b) => [b.label, Number(b.n), Number(b.rate)]), a.recent_trends.map((t) => [t.date, t.count, t.success_rate]));
        for (const [id, key] of [['by-version', 'by_server_version'], ['by-schema', 'by_schema_hash']]) {
          const got = await bars(page, id);
          assert.deepEqual(
            Object.fromEntries(got.map((b) => [b.label, { interactions: Number(b.interactions), rated_interactions: Number(b.n), success_rate: b.rate === '' ? null : Number(b.rate) }])),
            a[key],
            id,
          );
        }
        const lat = await bars(page, 'latency');
        assert.deepEqual(lat.map((b) => [b.label, Number(b.value)]), [['p50', a.latency_ms.p50], ['average', a.latency_ms.avg], ['p95', a.latency_ms.p95]]);

        // The Scanner's strip is the answer's 30 days, cell by cell.
        const cells = await page.locator('figure#strip g.day').evaluateAll((gs) => gs.map((g) => ({ ...g.dataset })));
        const expected = [
          ...a.scanner.daily_30d.map((d) => ({ day: d.day, level: String(d.reached_level), status: String(d.http_status ?? ''), missing: '', changed: String(d.tools_changed) })),
          ...a.scanner.missing_days.map((m) => ({ day: m.day, level: '', status: '', missing: m.reason, changed: 'false' })),
        ].sort((x, y) => x.day.localeCompare(y.day));
        assert.deepEqual(cells, expected);
        assert.equal(cells.at(-1).level, '2');
        const packages = await page.locator('#packages + table').textContent();
        assert.ok(packages.includes(`${NPM_NAME}`) && packages.includes('pypi:Fixture_Everything'), packages);
        const registryTable = await page.locator('#registry + table').textContent();
        assert.ok(registryTable.includes(a.registry.declared_version), registryTable);

        // No script, no asset: the page is one document from this server.
        assert.equal(await page.locator('script').count(), 0);
        const foreign = requests.filter((r) => !r.url.startsWith(server.url) || r.type !== 'document');
        assert.deepEqual(foreign, [], 'only documents from the server were requested');

        if (process.env.LOWDOWN_SCREENSHOT && engine === 'sqlite') {
          await page.setViewportSize({ width: 1100, height: 900 });
          await page.screenshot({ path: process.env.LOWDOWN_SCREENSHOT, fullPage: true });
        }
      } finally {
        await close();
      }
    });

    test('the pages are accessible: labels, headings, a text equivalent for every chart, contrast', async () => {
      const { page, close } = await noScriptPage();
      try {
        for (const url of ['/', `/t/${ENTRY}`, `/t/${NPM_NAME}`, '/daily/latest']) {
          await page.goto(`${server.url}${url}`);
          assert.equal(await page.getAttribute('html', 'lang'), 'en', url);
          assert.equal(await page.locator('h1').count(), 1, `${url}: one h1`);
          const report = await page.evaluate(() => {
            const problems = [];
            for (const svg of document.querySelectorAll('svg')) {
              const ids = (svg.getAttribute('aria-labelledby') || '').split(' ').filter(Boolean);
              if (svg.getAttribute('role') !== 'img' || ids.length !== 2 || !ids.every((i) => svg.querySelector(`#${CSS.escape(i)}`)?.textContent.trim())) problems.push(`svg without title/desc: ${svg.outerHTML.slice(0, 80)}`);
              const fig = svg.closest('figure');
              if (!fig || !fig.querySelector('figcaption')?.textContent.includes('Source:') || !fig.querySelector('table')) problems.push(`chart without caption, source or table: ${fig?.id}`);
            }
            for (const input of document.querySelectorAll('input')) {
              if (!document.querySelector(`label[for="${input.id}"]`)) problems.push(`input ${input.id} without a label`);
            }
            // WCAG contrast of every text against the background it sits on.
            const rgb = (c) => (c.match(/[\d.]+/g) || []).map(Number);
            const lum = ([r, g, b]) => {
              const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
              return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
            };
            const ratio = (x, y) => { const [a, b] = [lum(x), lum(y)].sort((p, q) => q - p); return (a + 0.05) / (b + 0.05); };
            const bg = (el) => {
              for (let e = el; e; e = e.parentElement) {
                const c = rgb(getComputedStyle(e).backgroundColor);
                if (c.length === 3 || (c.length === 4 && c[3] > 0)) return c.slice(0, 3);
              }
              return [255, 255, 255];
            };
            let checked = 0;
            for (const el of document.querySelectorAll('body *:not(svg):not(svg *)')) {
              if (![...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
              const r = ratio(rgb(getComputedStyle(el).color).slice(0, 3), bg(el));
              checked += 1;
              if (r < 4.5) problems.push(`contrast ${r.toFixed(2)} for "${el.textContent.trim().slice(0, 30)}"`);
            }
            for (const g of document.querySelectorAll('g.day')) {
              const r = ratio(rgb(getComputedStyle(g.querySelector('text')).fill), rgb(g.querySelector('rect').getAttribute('fill').replace('#', '').match(/../g).map((h) => parseInt(h, 16)).join(',')));
              if (r < 4.5) problems.push(`strip cell contrast ${r.toFixed(2)}`);
            }
            return { problems, checked };
          });
          assert.deepEqual(report.problems, [], url);
          assert.ok(report.checked > 5, url);
        }
      } finally {
        await close();
      }
    });

    test('an npm name without records of its own opens the Registry entry declaring it', async () => {
      const { page, close } = await noScriptPage();
      try {
        await page.goto(`${server.url}/t/${NPM_NAME}`);
        assert.equal(await page.locator('h1').textContent(), ENTRY);
        assert.ok((await page.locator('main').textContent()).includes(`Asked as ${NPM_NAME}.`));
      } finally {
        await close();
      }
    });

    test('the daily record and its feeds: RSS 2.0 parses as XML, JSON Feed 1.1 has unique ids', async () => {
      const { page, close } = await noScriptPage();
      try {
        await page.goto(`${server.url}/daily/latest`);
        const today = new Date().toISOString().slice(0, 10);
        assert.equal(await page.locator('h1').textContent(), `Daily record: ${today}`);
        const summary = await page.locator('#summary').textContent();
        assert.ok(summary.includes('Observations: 1 = 1 probe attempts on 1 servers + 0 blocked URLs'), summary);
        assert.ok(!/healthy|dead|score|rank/i.test(await page.locator('main').textContent()));
      } finally {
        await close();
      }
      const rss = await (await fetch(`${server.url}/daily/feed.xml`)).text();
      const feed = await (await fetch(`${server.url}/daily/feed.json`)).json();
      // A real XML parser: the browser's.
      const xmlPage = await browser.newPage();
      try {
        const parsed = await xmlPage.evaluate((text) => {
          const doc = new DOMParser().parseFromString(text, 'application/xml');
          if (doc.querySelector('parsererror')) return { error: doc.querySelector('parsererror').textContent };
          const channel = doc.documentElement.querySelector(':scope > channel');
          const child = (el, name) => [...el.children].find((c) => c.localName === name && !c.prefix)?.textContent;
          return {
            root: doc.documentElement.localName,
            version: doc.documentElement.getAttribute('version'),
            channel: ['title', 'link', 'description'].map((n) => child(channel, n)),
            items: [...channel.querySelectorAll(':scope > item')].map((i) => ({
              title: child(i, 'title'), link: child(i, 'link'), guid: child(i, 'guid'), pubDate: child(i, 'pubDate'), description: child(i, 'description'),
            })),
          };
        }, rss);
        assert.equal(parsed.error, undefined, parsed.error);
        assert.equal(parsed.root, 'rss');
        assert.equal(parsed.version, '2.0');
        assert.ok(parsed.channel.every(Boolean), JSON.stringify(parsed.channel));
        assert.equal(parsed.items.length, 1);
        const item = parsed.items[0];
        assert.equal(item.guid, `lowdown-daily:${new Date().toISOString().slice(0, 10)}`);
        assert.ok(item.title && item.link.endsWith(`/daily/${item.guid.slice(14)}`) && item.description.includes('<p>'));
        assert.ok(!Number.isNaN(Date.parse(item.pubDate)), item.pubDate);
      } finally {
        await xmlPage.close();
      }
      assert.equal(feed.version, 'https://jsonfeed.org/version/1.1');
      assert.ok(feed.title && Array.isArray(feed.items) && feed.items.length === 1);
      const ids = feed.items.map((i) => i.id);
      assert.equal(new Set(ids).size, ids.length);
      for (const i of feed.items) {
        assert.equal(typeof i.id, 'string');
        assert.ok(i.content_text || i.content_html, 'JSON Feed 1.1 items need content');
        assert.ok(!Number.isNaN(Date.parse(i.date_published)));
      }
    });

    test('the export, run twice, gives the same bytes', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-export-'));
      try {
        const read = (d) => {
          const out = {};
          const walk = (p) => {
            for (const e of fs.readdirSync(p, { withFileTypes: true })) {
              const f = path.join(p, e.name);
              if (e.isDirectory()) walk(f);
              else out[path.relative(d, f)] = fs.readFileSync(f).toString('base64');
            }
          };
          walk(d);
          return out;
        };
        const first = await runExport(server.db, path.join(dir, 'a'));
        await new Promise((r) => setTimeout(r, 1100));
        await runExport(server.db, path.join(dir, 'b'));
        const [a, b] = [read(path.join(dir, 'a')), read(path.join(dir, 'b'))];
        assert.deepEqual(Object.keys(a).sort(), ['REPORT.md', ...first.files].sort());
        assert.deepEqual(a, b);
        const csv = fs.readFileSync(path.join(dir, 'a', first.files[0]), 'utf8');
        assert.ok(csv.startsWith('id,scan_run_id,target_id,observed_at,remote_url,http_status,reached_level,latency_ms,error_type,tool_count,server_version,schema_hash\n'));
        assert.ok(csv.includes(`,${ENTRY},`));
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
