// The editor as the page sees it: a plain textarea at once (the prompt is readable and editable
// while the CodeMirror chunk downloads), replaced by CodeMirror (editor-src.js) when it arrives, with
// the text, the cursor and any marks carried over. Both sides have the same small interface.

/**
 * @param {HTMLElement} parent
 * @param {{ doc: string, onRun: () => void, onCancel: () => void, onChange?: () => void }} options
 */
export function createEditorShell(parent, options) {
  const area = document.createElement('textarea');
  area.className = 'editor-fallback';
  area.spellcheck = false;
  area.value = options.doc;
  area.setAttribute('aria-label', 'Prompt source');
  area.addEventListener('input', () => options.onChange?.());
  area.addEventListener('keydown', (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === 'Enter') {
      event.preventDefault();
      event.stopPropagation();
      options.onRun();
    }
  });
  parent.replaceChildren(area);
  parent.dataset.editor = 'plain';

  let rich = null;
  let marks = [];

  const shell = {
    get value() { return rich ? rich.value : area.value; },
    set value(text) {
      if (rich) rich.value = text;
      else area.value = text;
      marks = [];
    },
    /** Marks lines `[{ line, severity, message }]`; an empty list clears them. */
    mark(list, how) {
      marks = list;
      if (rich) return rich.mark(list, how);
      const first = list.find((m) => Number.isInteger(m.line));
      area.title = list.map((m) => `line ${m.line}: ${m.message}`).join('\n');
      if (first && how?.scroll !== false) selectLine(first.line);
    },
    goTo(line) {
      if (rich) return rich.goTo(line);
      selectLine(line);
    },
    focus() { (rich ?? area).focus(); },
    get ready() { return rich !== null; },
    /** Loads CodeMirror and swaps it in; resolves when it is there (rejects if it cannot load). */
    async upgrade(load) {
      const { createEditor } = await load();
      const doc = area.value;
      const hadFocus = document.activeElement === area;
      const cursor = area.selectionStart;
      const host = document.createElement('div');
      host.className = 'editor-rich';
      const next = createEditor(host, { ...options, doc });
      parent.replaceChildren(host);
      parent.dataset.editor = 'rich';
      rich = next;
      if (marks.length) rich.mark(marks, { scroll: false });
      if (hadFocus) {
        rich.view.dispatch({ selection: { anchor: Math.min(cursor, doc.length) } });
        rich.focus();
      }
      return shell;
    },
  };

  function selectLine(line) {
    const lines = area.value.split('\n');
    if (!Number.isInteger(line) || line < 1 || line > lines.length) return;
    const from = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
    area.focus();
    area.setSelectionRange(from, from + lines[line - 1].length);
  }

  return shell;
}
