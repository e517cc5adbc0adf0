// The Trace tab: a run's events as a nested, timed timeline (run › task › section › round ›
// tool, with logs and other events as leaves), each row with its start, duration and a bar on the
// run's time axis; filters by kind; a section row jumps to its heading in the editor. It keeps the
// last MAX_EVENTS events (a long run shows its end, and says how many came before), and draws at
// most a few times a second while a run streams.

export const MAX_EVENTS = 2000;
const KINDS = ['section', 'model', 'tool', 'log', 'store', 'other'];

export function kindOf(name) {
  if (name.startsWith('section_') || name.startsWith('task_') || name.startsWith('run_')) return 'section';
  if (name.startsWith('model_')) return 'model';
  if (name.startsWith('tool_') || name === 'assistant_tool_calls') return 'tool';
  if (name.startsWith('store_') || name.includes('commit')) return 'store';
  if (name === 'log') return 'log';
  return 'other';
}

function nameOf(event) {
  return String(event.event ?? event.type ?? 'event');
}

/** One line about a leaf event: its telling fields, short. */
function summary(event) {
  const parts = [];
  for (const key of ['message', 'tool', 'path', 'pattern', 'status', 'outcome', 'text', 'content']) {
    const value = event[key];
    if (value === undefined || value === null || typeof value === 'object') continue;
    const text = String(value);
    parts.push(text.length > 100 ? `${text.slice(0, 100)}…` : text);
  }
  return parts.join(' · ');
}

/** The tree of `events` ([{ event, time }]); pure, so it can be rebuilt from the kept window. */
export function buildTree(events) {
  const root = { key: 'run', kind: 'run', label: 'run', start: null, end: null, children: [], events: [] };
  const nodes = new Map([['run', root]]);
  const rounds = new Map(); // `${section}|${turn}` -> the latest round node
  const lastTool = new Map(); // entry -> the latest tool node
  let toolSeq = 0;
  const at = (node, time) => {
    node.start ??= time;
    node.last = Math.max(node.last ?? time, time);
  };
  const child = (parent, node) => {
    nodes.set(node.key, node);
    parent.children.push(node);
    return node;
  };
  const sectionNode = (event, time) => {
    const key = `e:${event.entry}`;
    // Its start fell out of the kept window: stand in with what this event knows.
    return nodes.get(key) ?? child(root, { key, kind: 'section', label: `## ${event.section ?? '?'}`, heading: null, start: time, end: null, children: [], events: [] });
  };
  for (const { event, time } of events) {
    const name = nameOf(event);
    at(root, time);
    if (name === 'run_started') {
      root.start = time;
      root.label = `run ${event.execution ?? ''}`.trim();
      continue;
    }
    if (name === 'run_finished') {
      root.end = time;
      root.failed = event.ok === false;
      continue;
    }
    if (name === 'task_started') {
      const parent = Number.isInteger(event.entry) ? sectionNode(event, time) : root;
      child(parent, { key: `t:${event.id}`, kind: 'task', label: `task ${event.id} › ${event.target ?? event.section}`, start: time, end: null, children: [], events: [] });
      continue;
    }
    if (name === 'task_finished') {
      const node = nodes.get(`t:${event.id}`);
      if (node) {
        node.end = time;
        node.outcome = event.status;
        node.failed = event.status !== 'done';
      }
      continue;
    }
    if (name === 'section_started') {
      const task = nodes.get(`t:${event.chain}`);
      const parent = task ?? (Number.isInteger(event.caller) ? nodes.get(`e:${event.caller}`) ?? root : root);
      child(parent, { key: `e:${event.entry}`, kind: 'section', label: event.heading ?? event.section, heading: event.heading ?? null, start: time, end: null, children: [], events: [] });
      continue;
    }
    if (name === 'section_finished') {
      const node = sectionNode(event, time);
      node.end = time;
      node.outcome = event.outcome;
      node.failed = event.outcome === 'failed';
      continue;
    }
    if (name === 'model_turn_started') {
      const parent = sectionNode(event, time);
      const node = child(parent, { key: `r:${event.entry}:${event.turn}:${time}`, kind: 'model', label: `round ${event.turn} · ${event.role}`, start: time, end: null, children: [], events: [], text: '' });
      rounds.set(`${event.section}|${event.turn}`, node);
      continue;
    }
    if (name === 'model_turn_completed') {
      const node = rounds.get(`${event.section}|${event.turn}`);
      if (node) node.end = time;
      continue;
    }
    if (name === 'model_usage' || name === 'model_delta') {
      const node = rounds.get(`${event.section}|${event.turn}`);
      if (node && name === 'model_usage') node.usage = event.usage;
      else if (node && typeof event.text === 'string') node.text += event.text;
      if (node) continue;
    }
    if (name.startsWith('tool_call_')) {
      const round = Number(event.turn) > 0 ? rounds.get(`${event.section}|${event.turn}`) : null;
      const parent = round ?? sectionNode(event, time);
      const node = child(parent, { key: `x:${toolSeq++}`, kind: 'tool', label: `${event.tool}${event.tool_call_id ? '' : ' (script)'}`, start: time, end: time, children: [], events: [event], failed: name !== 'tool_call_succeeded' });
      lastTool.set(event.entry, node);
      continue;
    }
    if (name === 'tool_result') {
      const node = lastTool.get(event.entry);
      if (node) {
        node.events.push(event);
        node.result = event.content;
        node.end = time;
        continue;
      }
    }
    // A leaf of a round (assistant_tool_calls, a retry) goes under it; others under their section.
    const round = Number(event.turn) > 0 ? rounds.get(`${event.section}|${event.turn}`) : null;
    const parent = round ?? (Number.isInteger(event.entry) ? sectionNode(event, time) : root);
    parent.children.push({ key: `l:${toolSeq++}`, kind: kindOf(name), label: name, leaf: true, start: time, end: null, children: [], events: [event], text: summary(event) });
  }
  return root;
}

export function createTrace(container, { onJump } = {}) {
  let events = [];
  let dropped = 0;
  let timer = 0;
  const hidden = new Set();

  const filters = document.createElement('div');
  filters.className = 'trace-filters';
  filters.setAttribute('aria-label', 'Show kinds');
  for (const kind of KINDS.filter((k) => k !== 'section')) {
    const label = document.createElement('label');
    const box = Object.assign(document.createElement('input'), { type: 'checkbox', checked: true, value: kind });
    box.addEventListener('change', () => {
      if (box.checked) hidden.delete(kind);
      else hidden.add(kind);
      draw();
    });
    label.append(box, ` ${kind}`);
    filters.append(label);
  }
  const note = document.createElement('p');
  note.className = 'trace-note';
  const tree = document.createElement('ol');
  tree.className = 'trace';
  tree.id = 'trace';
  container.append(filters, note, tree);

  function add(event) {
    events.push({ event, time: typeof event.time === 'number' ? event.time : Date.now() });
    if (events.length > MAX_EVENTS * 1.25) {
      dropped += events.length - MAX_EVENTS;
      events = events.slice(-MAX_EVENTS);
    }
    timer ||= setTimeout(draw, 250);
  }

  function clear() {
    events = [];
    dropped = 0;
    draw();
  }

  function count() {
    return dropped + events.length;
  }

  function draw() {
    clearTimeout(timer);
    timer = 0;
    if (events.length > MAX_EVENTS) {
      dropped += events.length - MAX_EVENTS;
      events = events.slice(-MAX_EVENTS);
    }
    note.textContent = dropped ? `The first ${dropped.toLocaleString('en-US')} events are not shown; these are the last ${events.length.toLocaleString('en-US')}.` : '';
    note.hidden = !dropped;
    if (!container.closest('[hidden]') || !events.length) render();
    else container.dataset.stale = 'yes';
  }

  function render() {
    delete container.dataset.stale;
    const root = buildTree(events);
    const t0 = root.start ?? 0;
    const t1 = Math.max(root.end ?? 0, root.last ?? 0, t0 + 1);
    const span = t1 - t0;
    const rowFor = (node) => {
      const li = document.createElement('li');
      li.dataset.kind = node.kind;
      if (node.failed) li.dataset.failed = 'yes';
      const row = document.createElement('div');
      row.className = 'trace-row';
      const label = document.createElement(node.heading ? 'button' : 'span');
      label.className = 'trace-label';
      label.textContent = node.label;
      if (node.heading) {
        label.type = 'button';
        label.title = 'Show this section in the editor';
        label.addEventListener('click', () => onJump?.(node.heading));
      }
      const meta = document.createElement('span');
      meta.className = 'trace-meta';
      const end = node.end ?? (node.leaf ? null : node.last);
      const bits = [`+${Math.round(node.start - t0)} ms`];
      if (end !== null && end !== undefined && !node.leaf) bits.push(`${Math.round(end - node.start)} ms`);
      if (node.outcome) bits.push(node.outcome);
      if (node.usage) bits.push(`${node.usage.input_tokens ?? 0} in / ${node.usage.output_tokens ?? 0} out`);
      if (node.text) bits.push(node.text.length > 100 ? `${node.text.slice(0, 100)}…` : node.text);
      if (node.result !== undefined) bits.push(`→ ${String(node.result).slice(0, 100)}`);
      meta.textContent = bits.join(' · ');
      const bar = document.createElement('span');
      bar.className = 'trace-bar';
      const left = ((node.start - t0) / span) * 100;
      const width = end === null || end === undefined ? 0 : ((end - node.start) / span) * 100;
      bar.style.setProperty('--left', `${Math.min(100, left).toFixed(2)}%`);
      bar.style.setProperty('--width', `${Math.max(0.5, Math.min(100 - left, width)).toFixed(2)}%`);
      row.append(label, meta, bar);
      li.append(row);
      if (node.events?.length) {
        const details = document.createElement('details');
        const sum = document.createElement('summary');
        sum.textContent = 'event';
        const pre = document.createElement('pre');
        pre.textContent = node.events.map((e) => JSON.stringify(e, null, 2)).join('\n');
        details.append(sum, pre);
        li.append(details);
      }
      const kids = node.children.filter((c) => !hidden.has(c.kind) || c.kind === 'section' || c.kind === 'task');
      if (kids.length) {
        const ol = document.createElement('ol');
        for (const c of kids) ol.append(rowFor(c));
        li.append(ol);
      }
      return li;
    };
    tree.replaceChildren(...(events.length ? [rowFor(root)] : []));
  }

  return { add, clear, count, draw, render, get stale() { return container.dataset.stale === 'yes'; } };
}
