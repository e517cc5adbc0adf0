// The run's views that are plain lists: the console (log lines and streamed model text, in the
// Result tab, as they come) and the rounds (each model round as sent and as answered).

const el = (tag, className, text) => {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
};

/** The console keeps its last MAX_LINES lines: a run that logs without end does not fill the page. */
const MAX_LINES = 1000;

export function createConsole(list) {
  let streams = new Map();
  const trim = () => {
    while (list.childElementCount > MAX_LINES) list.firstElementChild.remove();
  };
  return {
    clear() {
      list.replaceChildren();
      streams = new Map();
      list.hidden = true;
    },
    log(section, message) {
      const li = el('li', 'console-log');
      li.append(el('span', 'console-where', section ? `## ${section}` : 'run'), ' ', el('span', 'console-text', message));
      list.append(li);
      trim();
      list.hidden = false;
    },
    /** Streamed text of one round (`key`), appended to that round's line. */
    delta(key, where, text) {
      let entry = streams.get(key);
      if (!entry) {
        const li = el('li', 'console-stream');
        const body = el('span', 'console-text', '');
        li.append(el('span', 'console-where', where), ' ', body);
        list.append(li);
        trim();
        entry = body;
        streams.set(key, entry);
      }
      entry.textContent += text;
      list.hidden = false;
    },
  };
}

function block(title, content, open = false) {
  const details = el('details', 'round-part');
  details.open = open;
  details.append(el('summary', '', title));
  details.append(content);
  return details;
}

function pre(text) {
  return el('pre', 'round-pre', text);
}

function messageList(messages) {
  const ol = el('ol', 'round-messages');
  for (const m of messages ?? []) {
    const li = el('li');
    li.dataset.role = m.role;
    li.append(el('span', 'round-role', m.role));
    const body = typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
    li.append(el('span', 'round-content', body ?? ''));
    if (m.tool_calls?.length) li.append(pre(JSON.stringify(m.tool_calls, null, 2)));
    if (m.tool_call_id) li.append(el('span', 'round-meta', ` (answers ${m.tool_call_id})`));
    ol.append(li);
  }
  return ol;
}

/** One row per round: the summary line, then request and reply in detail. */
export function renderRounds(list, rounds) {
  list.replaceChildren();
  for (const r of rounds) {
    const li = el('li', 'round');
    li.dataset.state = r.error ? 'error' : r.reply ? 'done' : 'running';
    const reply = r.reply ?? {};
    const usage = reply.usage;
    const head = [
      `#${r.index}`,
      r.section ? `## ${r.section}` : null,
      r.role,
      r.turn ? `round ${r.turn}` : null,
      r.replayed ? 'replayed' : r.ms === null ? 'waiting…' : `${r.ms} ms`,
      usage ? `${usage.input_tokens ?? 0} in / ${usage.output_tokens ?? 0} out` : null,
      r.error ? 'failed' : reply.finish_reason ?? null,
    ].filter(Boolean).join(' · ');
    const details = el('details', 'round-details');
    details.append(el('summary', 'round-head', head));
    const req = r.request ?? {};
    if (r.replayed) details.append(el('p', 'round-meta', `${r.sent ?? '?'} message${r.sent === 1 ? '' : 's'} sent: the journal keeps the reply and a digest of the request, not its messages.`));
    else details.append(block(`Messages sent (${req.messages?.length ?? 0})`, messageList(req.messages), true));
    if (req.tools?.length) details.append(block(`Tools offered (${req.tools.length}): ${req.tools.map((t) => t.name).join(', ')}`, pre(JSON.stringify(req.tools, null, 2))));
    if (r.error) details.append(block('Failure', pre(r.error), true));
    else if (r.reply) {
      const answer = el('div', 'round-reply');
      if (reply.content) answer.append(pre(typeof reply.content === 'string' ? reply.content : JSON.stringify(reply.content, null, 2)));
      if (reply.tool_calls?.length) answer.append(el('p', 'round-meta', 'Tool calls:'), pre(JSON.stringify(reply.tool_calls, null, 2)));
      answer.append(el('p', 'round-meta', `finish reason: ${reply.finish_reason ?? '—'}${reply.model ? ` · model ${reply.model}` : ''}`));
      details.append(block('Reply', answer, true));
    }
    if (r.request) details.append(block('Request, as sent (JSON)', pre(JSON.stringify(r.request, null, 2))));
    if (r.reply) details.append(block(r.replayed ? 'Reply, as recorded (JSON)' : 'Reply, as received (JSON)', pre(JSON.stringify(r.reply, null, 2))));
    li.append(details);
    list.append(li);
  }
}
