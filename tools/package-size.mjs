// What the npm package weighs: the tarball `npm pack` makes of pkg/, unpacked, and what each kind of
// consumer downloads of the engine (docs/performance.md, "The npm package").
//
//   node tools/package-size.mjs [pkg-dir]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

// An explicit path: a bare 'pkg' would be read as a package name.
const pkg = resolve(process.argv[2] ?? 'pkg');
const out = mkdtempSync(join(tmpdir(), 'runvil-size-'));
try {
  const [info] = JSON.parse(execFileSync('npm', ['pack', pkg, '--pack-destination', out, '--json', '--ignore-scripts'], { encoding: 'utf8' }));
  const gz = (file) => gzipSync(readFileSync(join(pkg, file)), { level: 9 }).length;
  const js = info.files.filter((f) => f.path.endsWith('.js') && !['wasm-inline.js', 'cli.js'].includes(f.path) && !f.path.startsWith('cli/'));
  const fmt = (n) => n.toLocaleString('en-US');
  console.log(`runvil ${info.version}: ${info.files.length} files`);
  console.log(`tarball (npm pack)          ${fmt(info.size)} bytes`);
  console.log(`unpacked                    ${fmt(info.unpackedSize)} bytes`);
  console.log(`runvil_bg.wasm              ${fmt(readFileSync(join(pkg, 'runvil_bg.wasm')).length)} bytes, ${fmt(gz('runvil_bg.wasm'))} gzip -9 (browser, webpack, Vite)`);
  console.log(`wasm-inline.js              ${fmt(readFileSync(join(pkg, 'wasm-inline.js')).length)} bytes, ${fmt(gz('wasm-inline.js'))} gzip -9 (runvil/inline, Deno)`);
  console.log(`JS modules (no cli, inline) ${fmt(js.reduce((n, f) => n + f.size, 0))} bytes, ${fmt(js.reduce((n, f) => n + gz(f.path), 0))} gzip -9 each`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
