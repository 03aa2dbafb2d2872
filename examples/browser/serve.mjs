// Serves the example page and the lowdown-observe package on http://127.0.0.1:8080.
// Run `make build` first, then `node examples/browser/serve.mjs` and open the printed URL.
import http from 'node:http';
import { readFileSync, existsSync } from 'node:fs';

const here = new URL('./', import.meta.url);
const pkg = new URL('../../npm/lowdown-observe/', import.meta.url);
const types = { '.js': 'text/javascript', '.html': 'text/html', '.wasm': 'application/wasm' };

http
  .createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    const file = path.startsWith('/lowdown-observe/')
      ? new URL(path.slice('/lowdown-observe/'.length), pkg)
      : new URL(path === '/' ? 'index.html' : `.${path}`, here);
    const inside = file.pathname.startsWith(pkg.pathname) || file.pathname.startsWith(here.pathname);
    if (!inside || !existsSync(file)) return res.writeHead(404).end();
    const ext = file.pathname.slice(file.pathname.lastIndexOf('.'));
    res.writeHead(200, { 'content-type': types[ext] || 'application/octet-stream' }).end(readFileSync(file));
  })
  .listen(8080, '127.0.0.1', () => console.log('open http://127.0.0.1:8080/'));
