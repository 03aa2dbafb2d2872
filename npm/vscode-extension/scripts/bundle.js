// Copies the package's wrap module (and the small API client it uses for `status`) into
// lib/, so the extension ships the very same code as `lowdown-proxy wrap`: no second
// implementation. lib/ is generated; edit ../src instead.

const fs = require('node:fs');
const path = require('node:path');

const SRC = path.join(__dirname, '..', '..', 'src');
const LIB = path.join(__dirname, '..', 'lib');
// The files the wrap module imports, relative to ../src.
const FILES = ['mcp/api.js', 'mcp/format.js', 'record/home.js'];

fs.rmSync(LIB, { recursive: true, force: true });
fs.mkdirSync(path.join(LIB, 'wrap'), { recursive: true });
for (const name of fs.readdirSync(path.join(SRC, 'wrap'))) {
  if (name.endsWith('.js')) fs.copyFileSync(path.join(SRC, 'wrap', name), path.join(LIB, 'wrap', name));
}
for (const rel of FILES) {
  fs.mkdirSync(path.dirname(path.join(LIB, rel)), { recursive: true });
  fs.copyFileSync(path.join(SRC, rel), path.join(LIB, rel));
}
fs.writeFileSync(path.join(LIB, 'package.json'), '{ "type": "module" }\n');
process.stdout.write(`bundled ${path.relative(process.cwd(), LIB)} from ${path.relative(process.cwd(), SRC)}\n`);
