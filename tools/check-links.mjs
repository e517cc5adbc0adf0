// Fails when a doc points at something the repository does not have: a relative Markdown link
// (`[text](docs/store.md)`, `![img](docs/x.png)`, `[text](#anchor)`) or a backticked repository
// path (`src/lua/values.rs`, `docs/store.md#claims`, `spec-tests/*.cases`) that names no file or
// directory, leaves the repository, or names a heading (`file.md#anchor`, GitHub's slugs) the file
// does not have. A reader of the repository has nothing else to follow.
//
// What counts as a path reference, so that nothing else is flagged: a word (split at whitespace and
// `=`) of an inline code span that
// - starts with a directory at the repository root (`src/`, `docs/`, `pkg-tests/`, ...), or
// - starts with `./` or `../`, read from the root, where the docs' commands run (so
//   `../shared/x` leaves the repository), or
// - is an absolute path starting where the repository's own path starts (`/work/...` for a
//   checkout under /work: a path on one machine, never a URL's `/v1`).
// Words under what the repository's .gitignore files exclude (`pkg/`, `target/`, `bench/results/`)
// are build output and not checked. A word with a placeholder (`<suite>`, `…`, `...`, `{`, `$`) is
// checked up to the directory before it; a `*` segment must match at least one entry; a
// `:LINE[:COL]` suffix is dropped. Fenced code blocks are skipped: they hold commands and examples.
// Names are matched exactly, case included, whatever the file system.
//
//   node tools/check-links.mjs [--root DIR] [FILE...]
// FILEs are relative to the root (default: the docs in DOCS). Prints `file:line: reference (why)`
// for each broken one and exits 1; exits 0 when everything resolves.
import { readFileSync, existsSync, statSync, readdirSync } from 'node:fs';
import { join, dirname, relative, resolve, isAbsolute, sep, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

const DOCS = ['README.md', 'js/README.md', 'bench/README.md', 'spec-tests/README.md', 'docs/*.md', 'vendor/*.md', 'vendor/lua-src/README.md'];

// ---- the Markdown we read ------------------------------------------------------------------

/** The text with fenced code blocks blanked (line numbers kept). */
function withoutFences(text) {
  const lines = text.split('\n');
  let fence = null;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (fence) {
      const close = l.match(/^\s*(`{3,}|~{3,})\s*$/);
      if (close && close[1][0] === fence[0] && close[1].length >= fence.length) fence = null;
      lines[i] = '';
      continue;
    }
    // A backtick fence's info string has no backtick: "```` ```lua ```` and" is inline code.
    const open = l.match(/^\s*(`{3,})[^`]*$/) || l.match(/^\s*(~{3,})/);
    if (open) {
      fence = open[1];
      lines[i] = '';
    }
  }
  return lines.join('\n');
}

/** Inline code spans (CommonMark: a run of n backticks up to the next run of exactly n). */
function codeSpans(text) {
  const spans = [];
  const runs = [...text.matchAll(/`+/g)];
  for (let i = 0; i < runs.length; i++) {
    const open = runs[i];
    const close = runs.slice(i + 1).findIndex((r) => r[0].length === open[0].length);
    if (close < 0) continue;
    const end = runs[i + 1 + close];
    const start = open.index + open[0].length;
    const body = text.slice(start, end.index);
    // A span does not cross a blank line (the end of a paragraph).
    if (/\n[ \t]*\n/.test(body)) continue;
    spans.push({ start: open.index, end: end.index + end[0].length, body, bodyStart: start });
    i += 1 + close;
  }
  return spans;
}

const lineAt = (text, offset) => text.slice(0, offset).split('\n').length;

/** GitHub's anchor for a heading's text (github-slugger, after the inline markup renders). */
function slug(heading) {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/`+/g, '')
    .replace(/(\*\*|__|\*|(?<![\p{L}\p{N}])_(?=\S)|(?<=\S)_(?![\p{L}\p{N}]))/gu, '');
  return rendered.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor a Markdown file's headings make, duplicates numbered as GitHub numbers them. */
function anchors(text) {
  const seen = new Map();
  const out = new Set();
  const add = (h) => {
    const base = slug(h);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  };
  const lines = withoutFences(text).split('\n');
  for (let i = 0; i < lines.length; i++) {
    const atx = lines[i].match(/^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/);
    if (atx) add(atx[1] ?? '');
    else if (i > 0 && /^ {0,3}(=+|-+)[ \t]*$/.test(lines[i]) && /\S/.test(lines[i - 1]) && !/^ {0,3}(#|[-*+>|]|\d+[.)])/.test(lines[i - 1])) {
      add(lines[i - 1].trim());
    }
  }
  return out;
}

// ---- the repository ------------------------------------------------------------------------

class Repo {
  constructor(root) {
    this.root = resolve(root);
    this.topDirs = new Set(readdirSync(this.root, { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== '.git').map((d) => d.name));
    this.ignores = [];
    this.anchorCache = new Map();
    this.listings = new Map();
    this.loadIgnores('');
  }

  /** .gitignore patterns, each with the directory it was found in (only directories git tracks). */
  loadIgnores(dir) {
    const abs = join(this.root, dir);
    const file = join(abs, '.gitignore');
    if (existsSync(file)) {
      for (let p of readFileSync(file, 'utf8').split('\n')) {
        p = p.trim();
        if (!p || p.startsWith('#') || p.startsWith('!')) continue;
        const dirOnly = p.endsWith('/');
        p = p.replace(/\/+$/, '');
        const anchored = p.includes('/');
        this.ignores.push({ dir, parts: p.replace(/^\//, '').split('/'), anchored, dirOnly });
      }
    }
    for (const d of readdirSync(abs, { withFileTypes: true })) {
      if (!d.isDirectory() || d.name === '.git') continue;
      const sub = dir ? `${dir}/${d.name}` : d.name;
      if (!this.ignored(sub.split('/'), true)) this.loadIgnores(sub);
    }
  }

  /** Whether the path (segments from the root) is, or is under, something .gitignore excludes. */
  ignored(segments, isDir = false) {
    for (let n = 1; n <= segments.length; n++) {
      const prefix = segments.slice(0, n);
      const prefixIsDir = n < segments.length || isDir;
      for (const ig of this.ignores) {
        const base = ig.dir ? ig.dir.split('/') : [];
        if (prefix.length < base.length || base.some((s, i) => prefix[i] !== s)) continue;
        const rest = prefix.slice(base.length);
        if (ig.dirOnly && !prefixIsDir) continue;
        const m = ig.anchored
          ? rest.length === ig.parts.length && ig.parts.every((p, i) => globSegment(p, rest[i]))
          : rest.length > 0 && ig.parts.length === 1 && globSegment(ig.parts[0], rest[rest.length - 1]);
        if (m) return true;
      }
    }
    return false;
  }

  /** The names in a repository directory ([] for a file or nothing). */
  list(rel) {
    if (!this.listings.has(rel)) {
      const abs = join(this.root, rel);
      this.listings.set(rel, isDir(abs) ? readdirSync(abs) : []);
    }
    return this.listings.get(rel);
  }

  /** Why `rel` (a repository path, `/`-separated, maybe with `*` segments) names nothing, or null. */
  missing(rel) {
    const segments = rel.split('/').filter((s) => s && s !== '.');
    let paths = [''];
    for (const s of segments) {
      const next = [];
      for (const p of paths) {
        for (const e of this.list(p)) if (s.includes('*') ? globSegment(s, e) : e === s) next.push(p ? `${p}/${e}` : e);
      }
      paths = next;
      if (!paths.length) return rel.includes('*') ? 'matches nothing' : 'no such file or directory';
    }
    return null;
  }

  anchorsOf(rel) {
    if (!this.anchorCache.has(rel)) this.anchorCache.set(rel, anchors(readFileSync(join(this.root, rel), 'utf8')));
    return this.anchorCache.get(rel);
  }
}

const isDir = (p) => existsSync(p) && statSync(p).isDirectory();
const globSegment = (pattern, name) =>
  new RegExp(`^${pattern.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*')}$`).test(name);

// ---- checking ------------------------------------------------------------------------------

/** The repository path `target` (relative to the doc in `docDir`) names, or why it names none. */
function resolveTarget(repo, docDir, target) {
  const abs = resolve(repo.root, docDir, target);
  const rel = relative(repo.root, abs);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return { error: 'outside the repository' };
  return { rel: rel.split(sep).join('/') };
}

/** Checks `path#anchor` (repository-relative); answers why it is broken, or null. */
function checkPath(repo, rel, anchor) {
  const why = repo.missing(rel);
  if (why) return why;
  if (anchor !== undefined && rel.endsWith('.md') && !isDir(join(repo.root, rel)) && !repo.anchorsOf(rel).has(anchor.toLowerCase())) {
    return `no heading makes #${anchor} in ${rel}`;
  }
  return null;
}

/** The path a code-span word refers to, or null when the word is not a path reference. */
function pathWord(repo, word) {
  word = word.replace(/^[("'[]+|[)"',;.\]]+$/g, '');
  if (!word.includes('/') || /^[a-z][a-z0-9+.-]*:/i.test(word)) return null; // a URL, `node:fs`
  if (word.startsWith('/')) return word.split('/')[1] === repo.root.split(sep)[1] ? { outside: true } : null;
  const dotted = word.startsWith('./') || word.startsWith('../');
  if (!dotted && !repo.topDirs.has(word.split('/')[0])) return null;
  let [path, anchor] = word.split('#');
  path = path.replace(/(:\d+)+$/, '');
  // Up to the directory before a placeholder (`bench/results/<suite>.json`, `pkg-tests/…`).
  const hole = path.search(/<|>|…|\.\.\.|\{|\}|\$|\[|\]/);
  if (hole >= 0) {
    path = path.slice(0, path.lastIndexOf('/', hole) + 1);
    anchor = undefined;
  }
  return { path, anchor };
}

function checkFile(repo, file) {
  const broken = [];
  const text = readFileSync(join(repo.root, file), 'utf8');
  const body = withoutFences(text);
  const docDir = dirname(file);
  const spans = codeSpans(body);
  const report = (offset, ref, why) => broken.push({ line: lineAt(body, offset), text: `${ref} (${why})` });

  for (const s of spans) {
    for (const m of s.body.matchAll(/[^\s=]+/g)) {
      const ref = pathWord(repo, m[0]);
      if (!ref) continue;
      const r = ref.outside ? { error: 'outside the repository' } : resolveTarget(repo, '.', ref.path);
      if (r.rel !== undefined && repo.ignored(r.rel.split('/').filter(Boolean), ref.path.endsWith('/'))) continue;
      const why = r.error ?? checkPath(repo, r.rel, ref.anchor);
      if (why) report(s.bodyStart + m.index, m[0], why);
    }
  }

  // Links outside code spans: blank the spans (offsets kept), then find `](target)` and `[label]: target`.
  let prose = body;
  for (const s of spans) prose = prose.slice(0, s.start) + ' '.repeat(s.end - s.start) + prose.slice(s.end);
  const links = [
    ...[...prose.matchAll(/\]\(\s*(<[^>\n]*>|[^\s)]+)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g)].map((m) => [m.index + 2, m[1]]),
    ...[...prose.matchAll(/^ {0,3}\[[^\]\n]+\]:[ \t]*(<[^>\n]*>|\S+)/gm)].map((m) => [m.index, m[1]]),
  ];
  for (const [offset, raw] of links) {
    const target = raw.replace(/^<|>$/g, '');
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // http:, mailto:
    const [path, anchor] = target.split('#');
    let why;
    if (!path) {
      why = anchor && !repo.anchorsOf(file).has(decodeURIComponent(anchor).toLowerCase()) ? `no heading makes #${anchor} here` : null;
    } else {
      const r = resolveTarget(repo, docDir, decodeURIComponent(path));
      why = r.error ?? checkPath(repo, r.rel, anchor === undefined ? undefined : decodeURIComponent(anchor));
    }
    if (why) report(offset, target, why);
  }
  return broken.sort((a, b) => a.line - b.line).map((b) => `${file}:${b.line}: ${b.text}`);
}

/** The docs to check: each entry of `patterns` (`docs/*.md` style) expanded under the root. */
function docFiles(repo, patterns, explicit) {
  const out = [];
  for (const p of patterns) {
    const dir = posix.dirname(p);
    const name = posix.basename(p);
    if (!name.includes('*')) {
      if (explicit && !existsSync(join(repo.root, p))) {
        console.error(`check-links: no such doc: ${p}`);
        process.exit(2);
      }
      if (existsSync(join(repo.root, p))) out.push(p);
      continue;
    }
    if (!isDir(join(repo.root, dir))) continue;
    for (const e of readdirSync(join(repo.root, dir)).sort()) if (globSegment(name, e)) out.push(dir === '.' ? e : `${dir}/${e}`);
  }
  return out;
}

function main(argv) {
  let root = fileURLToPath(new URL('..', import.meta.url));
  const files = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--root') root = argv[++i];
    else files.push(argv[i]);
  }
  const repo = new Repo(root);
  const docs = files.length ? docFiles(repo, files, true) : docFiles(repo, DOCS, false);
  const broken = docs.flatMap((f) => checkFile(repo, f));
  if (broken.length) {
    console.error(`${broken.length} broken reference(s) in the docs:`);
    for (const b of broken) console.error(b);
    process.exit(1);
  }
  console.log(`links OK: ${docs.length} docs, every link and repository path resolves`);
}

main(process.argv.slice(2));
