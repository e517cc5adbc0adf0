// The third-party crates the engine builds from a changed copy (vendor/README.md says why each).
// Cargo.toml's [patch.crates-io] points at the copies under .build/; this script makes them from
// the registry sources and the inputs in vendor/, driven by the OVERLAYS table. Versions come from
// one place, tools/crate-fetch/Cargo.toml (whose only job is to make `cargo fetch` download them).
//
//   node tools/vendor.mjs prepare [CRATE...]   make every copy (or the named ones) up to date
//   node tools/vendor.mjs workspace CRATE      a git repository of the pristine crate with one
//                                              commit per patch, to refresh patches against a
//                                              new upstream (vendor/README.md)
//   node tools/vendor.mjs export CRATE         write that repository's commits back as patches
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = '.runvil-overlay';

/**
 * Each overlay: where the copy goes, what it is made from (every file under `inputs` is hashed
 * into the copy's stamp, so a changed input makes the copy again and cargo recompiles the crate),
 * and the steps that turn the registry source into the copy, in order.
 */
const OVERLAYS = {
  'lua-src': {
    dest: '.build/lua-src',
    inputs: ['vendor/lua-src', 'wasm-support/wasm-cc'],
    // lua-src 551.1.0 is the first release that knows wasm32-unknown-unknown; mlua-sys asks for
    // <551.1.0, so the copy is relabelled.
    relabel: '551.0.99',
    // The io, os, debug and package libraries never enter the sandbox: stubs replace them.
    copy: [['vendor/lua-src/stubs', 'lua-5.5.1']],
    patches: 'vendor/lua-src/patches',
    after: luaUnity,
  },
  'pulldown-cmark': {
    dest: '.build/pulldown-cmark',
    inputs: ['vendor/pulldown-cmark'],
    // The HTML entity table, which the engine never needs (vendor/pulldown-cmark/entities.rs).
    replace: [['vendor/pulldown-cmark/entities.rs', 'src/entities.rs']],
    // Link labels matched with ASCII case folding, without unicase's tables.
    patches: 'vendor/pulldown-cmark/patches',
  },
  mlua: {
    dest: '.build/mlua',
    inputs: ['vendor/mlua'],
    patches: 'vendor/mlua/patches',
  },
};

/** Lua's hot core as one translation unit (vendor/lua-src/unity/lcore.c says why). */
function luaUnity(dir) {
  const unit = readFileSync(join(ROOT, 'vendor/lua-src/unity/lcore.c'), 'utf8');
  const lua = join(dir, 'lua-5.5.1');
  mkdirSync(join(lua, 'core'));
  for (const [, file] of unit.matchAll(/^#include "core\/(.*\.c)"$/gm)) {
    if (!existsSync(join(lua, file))) fail(`lcore.c includes ${file}, which Lua does not have`);
    renameSync(join(lua, file), join(lua, 'core', file));
  }
  writeFileSync(join(lua, 'lcore.c'), unit);
}

function fail(message) {
  console.error(`vendor: ${message}`);
  process.exit(1);
}

function run(command, args, options = {}) {
  return execFileSync(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...options });
}

/** The pinned version of `crate` in tools/crate-fetch/Cargo.toml (`name = "=V"` or `{ version = "=V" }`). */
export function pinnedVersion(manifest, crate) {
  const line = manifest.split('\n').find((l) => l.startsWith(`${crate} =`));
  const version = line?.match(/"=([^"]+)"/)?.[1];
  if (!version) fail(`tools/crate-fetch/Cargo.toml pins no exact version of ${crate} ("=X.Y.Z")`);
  return version;
}

/** The version Cargo.lock records for `crate`, if any. */
function lockedVersion(crate) {
  const lock = readFileSync(join(ROOT, 'Cargo.lock'), 'utf8');
  return lock.match(new RegExp(`\\nname = "${crate}"\\nversion = "([^"]+)"`))?.[1];
}

function filesUnder(path) {
  const full = join(ROOT, path);
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full).sort().flatMap((name) => filesUnder(join(path, name)));
}

function stampOf(crate, overlay, version) {
  const hash = createHash('sha256').update(`${crate} ${version} ${overlay.relabel ?? ''}\n`);
  // Notes (*.md) change no byte of the copy, so they do not make it again.
  const inputs = overlay.inputs.flatMap(filesUnder).filter((file) => !file.endsWith('.md'));
  for (const file of inputs) hash.update(`${file}\n`).update(readFileSync(join(ROOT, file)));
  return hash.digest('hex');
}

function patchesOf(overlay) {
  if (!overlay.patches) return [];
  return readdirSync(join(ROOT, overlay.patches)).filter((f) => f.endsWith('.patch')).sort().map((f) => join(overlay.patches, f));
}

let fetched = false;
/** The registry source of `crate` `version`, fetched through tools/crate-fetch. */
function registrySource(crate, version) {
  if (!fetched) {
    run('cargo', ['fetch', '--manifest-path', 'tools/crate-fetch/Cargo.toml'], { stdio: 'inherit' });
    fetched = true;
  }
  const registry = join(process.env.CARGO_HOME ?? join(homedir(), '.cargo'), 'registry', 'src');
  for (const index of existsSync(registry) ? readdirSync(registry) : []) {
    const dir = join(registry, index, `${crate}-${version}`);
    if (existsSync(dir)) return dir;
  }
  fail(`${crate}-${version} is not in the cargo registry after cargo fetch`);
}

function applyPatch(dir, patch, extra = []) {
  execFileSync('patch', ['-s', '-p1', '--no-backup-if-mismatch', ...extra, '-d', dir, '-i', join(ROOT, patch)], { stdio: 'inherit' });
}

/** The registry source copied to `dir` with every step but the patches applied. */
function pristineCopy(crate, overlay, version, dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dirname(dir), { recursive: true });
  cpSync(registrySource(crate, version), dir, { recursive: true });
  run('chmod', ['-R', 'u+w', dir]);
  if (overlay.relabel) {
    const manifest = join(dir, 'Cargo.toml');
    const text = readFileSync(manifest, 'utf8');
    const relabelled = text.replace(`\nversion = "${version}"\n`, `\nversion = "${overlay.relabel}"\n`);
    if (relabelled === text) fail(`could not relabel ${crate} ${version} as ${overlay.relabel}`);
    writeFileSync(manifest, relabelled);
  }
  for (const [from, to] of overlay.copy ?? []) {
    for (const file of readdirSync(join(ROOT, from))) cpSync(join(ROOT, from, file), join(dir, to, file));
  }
  for (const [from, to] of overlay.replace ?? []) {
    if (!existsSync(join(dir, to))) fail(`${crate} ${version} has no ${to} to replace`);
    cpSync(join(ROOT, from), join(dir, to));
  }
}

function checkVersions(crate, overlay, version) {
  const locked = lockedVersion(crate);
  const want = overlay.relabel ?? version;
  if (locked && locked !== want) {
    fail(`Cargo.lock has ${crate} ${locked}, tools/crate-fetch/Cargo.toml pins ${version}${overlay.relabel ? ` (relabelled ${want})` : ''}: run cargo update -p ${crate}`);
  }
}

function prepare(crate, overlay, version) {
  checkVersions(crate, overlay, version);
  const dest = join(ROOT, overlay.dest);
  const stamp = stampOf(crate, overlay, version);
  if (existsSync(join(dest, STAMP)) && readFileSync(join(dest, STAMP), 'utf8').trim() === stamp) return;
  console.error(`vendor: preparing ${overlay.dest} (${crate} ${version}${overlay.relabel ? ` as ${overlay.relabel}` : ''})`);
  const tmp = `${dest}.tmp`;
  pristineCopy(crate, overlay, version, tmp);
  for (const patch of patchesOf(overlay)) {
    try {
      applyPatch(tmp, patch);
    } catch {
      fail(`${patch} does not apply to ${crate} ${version} (vendor/README.md: refreshing a patch)`);
    }
  }
  overlay.after?.(tmp);
  writeFileSync(join(tmp, STAMP), `${stamp}\n`);
  rmSync(dest, { recursive: true, force: true });
  renameSync(tmp, dest);
}

function git(dir, args) {
  return run('git', ['-c', 'user.name=vendor', '-c', 'user.email=vendor@localhost', '-C', dir, ...args]);
}

/** .build/work/CRATE: the pristine source, then one commit per patch, stopping at one that fails. */
function workspace(crate, overlay, version) {
  const dir = join(ROOT, '.build/work', crate);
  pristineCopy(crate, overlay, version, dir);
  git(dir, ['init', '-q']);
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-qm', 'pristine']);
  for (const patch of patchesOf(overlay)) {
    try {
      applyPatch(dir, patch, ['--merge']);
    } catch {
      console.error(`vendor: ${patch} left conflicts in ${dir}: resolve them, commit with the subject '${basename(patch)}', apply the remaining patches the same way, then run: node tools/vendor.mjs export ${crate}`);
      return;
    }
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-qm', basename(patch)]);
  }
  console.error(`vendor: ${dir} holds ${crate} ${version} and one commit per patch; edit, commit (or amend), then: node tools/vendor.mjs export ${crate}`);
}

/** Writes each commit of .build/work/CRATE after the pristine one as the patch its subject names. */
function exportPatches(crate, overlay) {
  const dir = join(ROOT, '.build/work', crate);
  if (!existsSync(join(dir, '.git'))) fail(`no ${dir}: run node tools/vendor.mjs workspace ${crate} first`);
  const commits = git(dir, ['rev-list', '--reverse', 'HEAD']).trim().split('\n').slice(1);
  const out = join(ROOT, overlay.patches);
  for (const file of readdirSync(out).filter((f) => f.endsWith('.patch'))) rmSync(join(out, file));
  for (const commit of commits) {
    const name = git(dir, ['log', '-1', '--format=%s', commit]).trim();
    if (!/^[\w.-]+\.patch$/.test(name)) fail(`commit ${commit} is named '${name}', not a patch file name`);
    // Plain unified diffs with a/ and b/ prefixes, which `patch -p1` applies.
    writeFileSync(join(out, name), git(dir, ['diff', '--no-color', '--no-renames', `${commit}^`, commit]));
  }
  console.error(`vendor: wrote ${commits.length} patches to ${overlay.patches}`);
}

function main(argv) {
  const [command = 'prepare', ...names] = argv;
  const manifest = readFileSync(join(ROOT, 'tools/crate-fetch/Cargo.toml'), 'utf8');
  const pick = (name) => OVERLAYS[name] ?? fail(`no overlay named '${name}' (overlays: ${Object.keys(OVERLAYS).join(', ')})`);
  if (command === 'prepare') {
    for (const crate of names.length ? names : Object.keys(OVERLAYS)) prepare(crate, pick(crate), pinnedVersion(manifest, crate));
  } else if ((command === 'workspace' || command === 'export') && names.length === 1) {
    const [crate] = names;
    const overlay = pick(crate);
    if (!overlay.patches) fail(`${crate} has no patches to refresh`);
    if (command === 'workspace') workspace(crate, overlay, pinnedVersion(manifest, crate));
    else exportPatches(crate, overlay);
  } else {
    fail('usage: node tools/vendor.mjs prepare [CRATE...] | workspace CRATE | export CRATE');
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main(process.argv.slice(2));
