// Records every model round of a run as the page's model functions see it: the request exactly as
// sent (messages, tools, role, section, turn), the reply (text, tool calls, finish reason, usage)
// or the failure, and the latency; and adds the tokens up by role. The engine calls the page's
// model functions, so this is the one place that sees both sides of a round.

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
        const usage = reply?.usage;
        if (usage && typeof usage === 'object') {
          const sum = (totals[role] ??= { calls: 0, input_tokens: 0, output_tokens: 0 });
          sum.calls += 1;
          sum.input_tokens += Number(usage.input_tokens) || 0;
          sum.output_tokens += Number(usage.output_tokens) || 0;
        }
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

/** "default 120 in / 48 out · critic 30 in / 12 out" for the status line, or ''. */
export function tokenSummary(totals) {
  return Object.entries(totals)
    .map(([role, t]) => `${role} ${t.input_tokens.toLocaleString('en-US')} in / ${t.output_tokens.toLocaleString('en-US')} out`)
    .join(' · ');
}
