// What the npm package weighs, read back from `node tools/package-size.mjs` (npm pack of pkg/, gzip
// by Node's zlib at level 9). Sizes are not timings: one sample, exact. Writes
// bench/results/package.json.
//
//   node bench/package.mjs
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { ROOT, writeResults } from './results.mjs';

const started = performance.now();
const out = execFileSync(process.execPath, ['tools/package-size.mjs', 'pkg'], { cwd: ROOT, encoding: 'utf8' });
process.stdout.write(out);
const num = (s) => Number(s.replaceAll(',', ''));
const line = (label) => {
  const m = new RegExp(`^${label.replace(/[()]/g, '\\$&')}\\s+([\\d,]+) bytes(?:, ([\\d,]+) gzip -9)?`, 'm').exec(out);
  if (!m) throw new Error(`tools/package-size.mjs printed no "${label}" line:\n${out}`);
  return { value: num(m[1]), ...(m[2] && { gzip: num(m[2]) }) };
};
const files = Number(/: (\d+) files$/m.exec(out)?.[1]);
const figures = {
  tarball: { name: `tarball (\`npm pack\`, ${files} files)`, unit: 'bytes', ...line('tarball (npm pack)'), files },
  unpacked: { name: 'unpacked', unit: 'bytes', ...line('unpacked') },
  wasm: { name: '`runvil_bg.wasm` (what Vite, webpack and browsers download)', unit: 'bytes', ...line('runvil_bg.wasm') },
  inline: { name: '`wasm-inline.js` (base64; only `runvil/inline`, Deno and server bundles load it)', unit: 'bytes', ...line('wasm-inline.js') },
  js: { name: 'the JS modules a page loads (all but `cli.js`, `cli/` and `wasm-inline.js`)', unit: 'bytes', ...line('JS modules (no cli, inline)') },
};
writeResults('package', 'node bench/package.mjs', figures, started);
