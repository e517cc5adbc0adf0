// Records every model round of a run as the page's model functions see it: the request exactly as
// sent (messages, tools, role, section, turn), the reply (text, tool calls, finish reason, usage)
// or the failure, and the latency; and adds the tokens up by role. The engine calls the page's
// model functions, so this is the one place that sees both sides of a round. A replayed run calls
// no model function: its rounds come from the run's events and the journal's recorded replies.

/** A plain copy of what crossed: functions (emit) and signals left out. */
function plain(value) {
  return JSON.parse(JSON.stringify(value, (key, v) => (typeof v === 'function' || key === 'signal' || key === 'emit' ? undefined : v)));
}

export function createRecorder({ onRound } = {}) {
  /** @type {object[]} */
  const rounds = [];
  const totals = {};

  /** `fn` for `role`, recording each call. */
  function wrap(role, fn) {
    return async (request) => {
      const round = {
        index: rounds.length + 1,
        role,
        section: request?.section ?? null,
        turn: request?.turn ?? null,
        request: plain({ ...request, emit: undefined }),
        started: Date.now(),
        streamed: '',
        reply: null,
        error: null,
        ms: null,
      };
      rounds.push(round);
      onRound?.(round, 'started');
      // The stream as the model told it: deltas are recorded before they go on to the run.
      if (typeof request?.emit === 'function') {
        const emit = request.emit;
        request.emit = (name, fields) => {
          if (name === 'model_delta' && typeof fields?.text === 'string') round.streamed += fields.text;
          return emit(name, fields);
        };
      }
      const t0 = performance.now();
      try {
        const reply = await fn(request);
        round.reply = plain(reply ?? null);
        addUsage(totals, role, reply?.usage);
        return reply;
      } catch (error) {
        round.error = error?.message ?? String(error);
        throw error;
      } finally {
        round.ms = Math.round(performance.now() - t0);
        onRound?.(round, 'finished');
      }
    };
  }

  return { wrap, rounds, totals };
}

function addUsage(totals, role, usage) {
  if (!usage || typeof usage !== 'object') return;
  const sum = (totals[role] ??= { calls: 0, input_tokens: 0, output_tokens: 0 });
  sum.calls += 1;
  sum.input_tokens += Number(usage.input_tokens) || 0;
  sum.output_tokens += Number(usage.output_tokens) || 0;
}

/**
 * The rounds of a replay of `journal`, as its events arrive (`onEvent`): each `model_turn_started`
 * takes the first unused model entry of its chain with the same section, role and turn, in the
 * order the chain asked for them. A journal keeps each reply and how many messages were sent, not
 * the messages (docs/journal.md), so a replayed round has `sent` (a count) and no `request`.
 */
export function replayRecorder(journal, { onRound } = {}) {
  const rounds = [];
  const totals = {};
  const entries = journal
    .filter((e) => e?.kind === 'model')
    .sort((a, b) => String(a.chain).localeCompare(String(b.chain)) || a.seq - b.seq);
  const used = new Set();
  const open = new Map(); // chain -> the round its last model_turn_started opened

  /** Takes a run event; answers the round a `model_turn_completed` finished. */
  function onEvent(event) {
    const name = event.event ?? event.type;
    if (name === 'model_turn_started') {
      const entry = entries.find((e) => !used.has(e) && e.chain === event.chain && e.section === event.section && e.role === event.role && e.turn === event.turn);
      if (entry) used.add(entry);
      const round = {
        index: rounds.length + 1,
        role: event.role ?? entry?.role ?? null,
        section: event.section ?? null,
        turn: event.turn ?? null,
        replayed: true,
        request: null,
        sent: entry?.request?.messages ?? null,
        streamed: '',
        reply: null,
        error: null,
        ms: null,
        entry,
      };
      rounds.push(round);
      open.set(event.chain, round);
      onRound?.(round, 'started');
    } else if (name === 'model_turn_completed') {
      const round = open.get(event.chain);
      if (!round) return undefined;
      open.delete(event.chain);
      finish(round);
      return round;
    }
    return undefined;
  }

  function finish(round) {
    const { entry } = round;
    if (entry && 'error' in entry) round.error = String(entry.error?.message ?? entry.error);
    else if (entry) {
      round.reply = entry.reply;
      addUsage(totals, round.role, entry.reply?.usage);
    }
    onRound?.(round, 'finished');
  }

  /** At the run's end: a round still open failed (its recorded error, else the run's). */
  function end(outcome) {
    for (const round of open.values()) {
      if (round.entry && !('error' in round.entry) && outcome.ok) finish(round);
      else {
        round.error = round.entry && 'error' in round.entry ? String(round.entry.error?.message ?? round.entry.error) : outcome.error?.message ?? 'no answer';
        onRound?.(round, 'finished');
      }
    }
    open.clear();
  }

  return { onEvent, end, rounds, totals };
}

/** "default 120 in / 48 out · critic 30 in / 12 out" for the status line, or ''. */
export function tokenSummary(totals) {
  return Object.entries(totals)
    .map(([role, t]) => `${role} ${t.input_tokens.toLocaleString('en-US')} in / ${t.output_tokens.toLocaleString('en-US')} out`)
    .join(' · ');
}
