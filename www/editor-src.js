// The playground's editor: CodeMirror 6 with Markdown and Lua inside ```lua fences, and error
// markers. Bundled by tools/build-site.mjs (esbuild) into site/editor.js: no CDN at run time.
import { EditorView, basicSetup } from 'codemirror';
import { EditorState, StateEffect, StateField, RangeSet } from '@codemirror/state';
import { Decoration, keymap, gutter, GutterMarker } from '@codemirror/view';
import { markdown } from '@codemirror/lang-markdown';
import { yamlFrontmatter } from '@codemirror/lang-yaml';
import { StreamLanguage } from '@codemirror/language';
import { lua } from '@codemirror/legacy-modes/mode/lua';

const luaLanguage = StreamLanguage.define(lua);

const setError = StateEffect.define();

class ErrorMarker extends GutterMarker {
  toDOM() {
    const el = document.createElement('span');
    el.className = 'cm-error-marker';
    el.textContent = '●';
    return el;
  }
}
const marker = new ErrorMarker();
const lineMark = Decoration.line({ class: 'cm-error-line' });

/** The line the last run's error points at: a line decoration and a gutter dot. */
const errorField = StateField.define({
  create: () => ({ line: null, message: '' }),
  update(value, tr) {
    for (const effect of tr.effects) if (effect.is(setError)) return effect.value;
    return tr.docChanged ? { line: null, message: '' } : value;
  },
  provide: (field) => [
    EditorView.decorations.from(field, (v) => {
      return v.line ? Decoration.set([lineMark.range(v.from)]) : Decoration.none;
    }),
  ],
});

const errorGutter = gutter({
  class: 'cm-error-gutter',
  markers: (view) => {
    const v = view.state.field(errorField);
    return v.line ? RangeSet.of([marker.range(v.from)]) : RangeSet.empty;
  },
});

/**
 * @param {HTMLElement} parent
 * @param {{ doc: string, onRun: () => void, onCancel: () => void, onChange?: () => void }} options
 */
export function createEditor(parent, { doc, onRun, onCancel, onChange }) {
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
        yamlFrontmatter({ content: markdown({ codeLanguages: (info) => (/^lua\b/.test(info) ? luaLanguage : null) }) }),
        errorField,
        errorGutter,
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({ 'aria-label': 'Prompt source' }),
        EditorView.updateListener.of((update) => { if (update.docChanged) onChange?.(); }),
      ],
    }),
  });
  return {
    view,
    get value() { return view.state.doc.toString(); },
    set value(text) { view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }); },
    /** Marks 1-based `line` (or clears the marker with null) and scrolls to it. */
    markError(line, message = '') {
      if (!line || line < 1 || line > view.state.doc.lines) {
        view.dispatch({ effects: setError.of({ line: null, message: '' }) });
        return;
      }
      const from = view.state.doc.line(line).from;
      view.dispatch({ effects: [setError.of({ line, from, message }), EditorView.scrollIntoView(from, { y: 'center' })] });
    },
    focus: () => view.focus(),
  };
}
