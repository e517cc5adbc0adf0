// The playground's editor: CodeMirror 6 with Markdown and Lua inside ```lua fences, completion and
// hover docs for the Engine's globals (generated from docs/reference.md at build time), marks for
// a run's error and for diagnostics, and a dark theme that follows the system. A chunk of the
// page's bundle (tools/build-site.mjs), loaded after the wasm; editor-shell.js swaps it in.
import { EditorView, basicSetup } from 'codemirror';
import { EditorState, StateEffect, StateField, RangeSet, Compartment } from '@codemirror/state';
import { Decoration, keymap, gutter, GutterMarker, hoverTooltip } from '@codemirror/view';
import { markdown } from '@codemirror/lang-markdown';
import { yamlFrontmatter } from '@codemirror/lang-yaml';
import { StreamLanguage, HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { autocompletion } from '@codemirror/autocomplete';
import { tags as t } from '@lezer/highlight';
import { lua } from '@codemirror/legacy-modes/mode/lua';
import reference from 'runvil-reference';

const luaLanguage = StreamLanguage.define(lua);

// ---- marks: the run's error and diagnostics ------------------------------------------------

const setMarks = StateEffect.define();

class Dot extends GutterMarker {
  constructor(severity, message) {
    super();
    this.severity = severity;
    this.message = message;
  }

  eq(other) {
    return other.severity === this.severity && other.message === this.message;
  }

  toDOM() {
    const el = document.createElement('span');
    el.className = `cm-mark-dot cm-mark-${this.severity}`;
    el.textContent = '●';
    el.title = this.message;
    return el;
  }
}

/**
 * The marked lines: `{ line, from, severity, message }[]`, sorted by position. Cleared when the
 * text changes, since the positions no longer mean what the run or the check saw.
 */
const marksField = StateField.define({
  create: () => [],
  update(value, tr) {
    for (const effect of tr.effects) if (effect.is(setMarks)) return effect.value;
    return tr.docChanged ? [] : value;
  },
  provide: (field) => [
    EditorView.decorations.from(field, (marks) =>
      Decoration.set(
        marks.map((m) =>
          Decoration.line({ class: `cm-mark-line cm-mark-${m.severity}`, attributes: { title: m.message } }).range(m.from),
        ),
      ),
    ),
  ],
});

const marksGutter = gutter({
  class: 'cm-mark-gutter',
  markers: (view) =>
    RangeSet.of(view.state.field(marksField).map((m) => new Dot(m.severity, m.message).range(m.from)), true),
});

/** The message of a marked line, as a hover tooltip (the title attribute is the fallback). */
const marksHover = hoverTooltip((view, pos) => {
  const line = view.state.doc.lineAt(pos);
  const here = view.state.field(marksField).filter((m) => m.from === line.from);
  if (!here.length) return null;
  return {
    pos: line.from,
    end: line.to,
    above: true,
    create() {
      const dom = document.createElement('div');
      dom.className = 'cm-mark-tooltip';
      for (const m of here) {
        const p = document.createElement('p');
        p.className = `cm-mark-${m.severity}`;
        p.textContent = m.message;
        dom.append(p);
      }
      return { dom };
    },
  };
});

// ---- help: completion and hover from the reference ----------------------------------------

const byName = new Map(reference.map((e) => [e.name, e]));

/** Completion inside ```lua blocks: globals, and members after `name.` or `name:`. */
function complete(context) {
  const word = context.matchBefore(/[A-Za-z_][\w]*(?:[.:][A-Za-z_]?[\w]*)*/);
  if (!word || (word.from === word.to && !context.explicit)) return null;
  const text = word.text.replace(/:/g, '.');
  const dot = text.lastIndexOf('.');
  const owner = dot < 0 ? '' : text.slice(0, dot + 1);
  const options = [];
  for (const e of reference) {
    if (!e.global || !e.name.startsWith(owner)) continue;
    const rest = e.name.slice(owner.length);
    if (rest.includes('.') || rest === '') continue;
    options.push({
      label: rest,
      type: e.kind,
      detail: e.unavailable ? 'not available' : e.signature.slice(owner.length),
      info: e.doc,
      boost: e.doc.startsWith("Lua's own") ? -1 : 0,
    });
  }
  return { from: word.from + (dot < 0 ? 0 : word.text.length - (text.length - dot - 1)), options, validFor: /^[\w]*$/ };
}

/** The dotted name under `pos` (`store.write`, `messages:user`), or null. */
function nameAt(state, pos) {
  const line = state.doc.lineAt(pos);
  const text = line.text;
  let from = pos - line.from;
  let to = from;
  while (from > 0 && /[\w.:]/.test(text[from - 1])) from--;
  while (to < text.length && /\w/.test(text[to])) to++;
  const whole = text.slice(from, to).replace(/^[.:]+/, '');
  if (!whole) return null;
  // The longest documented prefix that reaches the hovered word.
  const parts = whole.replace(/:/g, '.').split('.');
  for (let n = parts.length; n > 0; n--) {
    const name = parts.slice(0, n).join('.');
    const entry = byName.get(name);
    if (entry && from + name.length >= pos - line.from) return { entry, from: line.from + from, to: line.from + from + name.length };
  }
  return null;
}

const helpHover = hoverTooltip((view, pos) => {
  const found = nameAt(view.state, pos);
  if (!found) return null;
  return {
    pos: found.from,
    end: found.to,
    above: true,
    create() {
      const dom = document.createElement('div');
      dom.className = 'cm-help-tooltip';
      const sig = document.createElement('code');
      sig.textContent = found.entry.signature;
      const doc = document.createElement('p');
      doc.textContent = found.entry.doc;
      dom.append(sig, doc);
      return { dom };
    },
  };
});

// ---- themes ---------------------------------------------------------------------------------

const darkTheme = [
  EditorView.theme(
    {
      '&': { color: '#d8dde5', backgroundColor: '#161a20' },
      '.cm-content': { caretColor: '#e8ecf2' },
      '.cm-cursor, .cm-dropCursor': { borderLeftColor: '#e8ecf2' },
      '&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection': { backgroundColor: '#2b3a55' },
      '.cm-gutters': { backgroundColor: '#1b2027', color: '#7d8795', borderRight: '1px solid #2a313b' },
      '.cm-activeLine': { backgroundColor: '#1e242d' },
      '.cm-activeLineGutter': { backgroundColor: '#222933' },
      '.cm-tooltip': { backgroundColor: '#20262f', color: '#d8dde5', border: '1px solid #333c48' },
    },
    { dark: true },
  ),
  syntaxHighlighting(
    HighlightStyle.define([
      { tag: t.keyword, color: '#c79bff' },
      { tag: [t.string, t.special(t.string)], color: '#9fd88c' },
      { tag: [t.number, t.bool, t.null, t.atom], color: '#f0a96b' },
      { tag: t.comment, color: '#7d8795', fontStyle: 'italic' },
      { tag: t.heading, color: '#8ab4ff', fontWeight: 'bold' },
      { tag: [t.variableName, t.propertyName], color: '#d8dde5' },
      { tag: [t.meta, t.processingInstruction], color: '#7d8795' },
      { tag: t.link, color: '#8ab4ff', textDecoration: 'underline' },
      { tag: t.emphasis, fontStyle: 'italic' },
      { tag: t.strong, fontWeight: 'bold' },
    ]),
  ),
];

// ---- the editor ---------------------------------------------------------------------------

/**
 * @param {HTMLElement} parent
 * @param {{ doc: string, onRun: () => void, onCancel: () => void, onChange?: () => void }} options
 */
export function createEditor(parent, { doc, onRun, onCancel, onChange }) {
  const theme = new Compartment();
  const dark = matchMedia('(prefers-color-scheme: dark)');
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        keymap.of([
          { key: 'Mod-Enter', run: () => { onRun(); return true; } },
          { key: 'Escape', run: () => { onCancel(); return false; } },
        ]),
        basicSetup,
        // YAML frontmatter, then Markdown whose ```lua fences are Lua.
        yamlFrontmatter({
          content: markdown({ codeLanguages: (info) => (/^lua\b/.test(info) ? luaLanguage : null), completeHTMLTags: false }),
        }),
        luaLanguage.data.of({ autocomplete: complete }),
        autocompletion({ activateOnTyping: true }),
        marksField,
        marksGutter,
        marksHover,
        helpHover,
        theme.of(dark.matches ? darkTheme : []),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({ 'aria-label': 'Prompt source' }),
        EditorView.updateListener.of((update) => { if (update.docChanged) onChange?.(); }),
      ],
    }),
  });
  dark.addEventListener('change', () => view.dispatch({ effects: theme.reconfigure(dark.matches ? darkTheme : []) }));

  /** Marks lines: `[{ line, severity, message }]` (1-based lines; others are skipped). */
  function mark(marks, { scroll = true } = {}) {
    const lines = view.state.doc.lines;
    const value = marks
      .filter((m) => Number.isInteger(m.line) && m.line >= 1 && m.line <= lines)
      .map((m) => ({ ...m, from: view.state.doc.line(m.line).from }))
      .sort((a, b) => a.from - b.from);
    const effects = [setMarks.of(value)];
    if (scroll && value.length) effects.push(EditorView.scrollIntoView(value[0].from, { y: 'center' }));
    view.dispatch({ effects });
  }

  return {
    view,
    get value() { return view.state.doc.toString(); },
    set value(text) { view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }); },
    mark,
    /** Puts the cursor at the start of 1-based `line` and scrolls it into view. */
    goTo(line) {
      if (!Number.isInteger(line) || line < 1 || line > view.state.doc.lines) return;
      const from = view.state.doc.line(line).from;
      view.dispatch({ selection: { anchor: from }, effects: EditorView.scrollIntoView(from, { y: 'center' }) });
      view.focus();
    },
    focus: () => view.focus(),
  };
}
