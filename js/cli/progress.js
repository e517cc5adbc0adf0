// @ts-check
// What `runvil run` shows on a terminal while a run goes on (stderr; off when piped or --quiet):
// the section, each model round and each tool call, one line each.

/** @param {(line: string) => void} writeLine */
export function progressReporter(writeLine) {
  return (event) => {
    switch (event.event) {
      case 'section_started':
        writeLine(event.heading ?? event.section);
        break;
      case 'model_turn_started':
        writeLine(`  model ${event.role} · round ${event.turn}`);
        break;
      case 'tool_call_succeeded':
        writeLine(`  tool ${event.tool ?? event.alias} ✓`);
        break;
      case 'tool_call_failed':
        writeLine(`  tool ${event.tool ?? event.alias} ✗${event.message ? ` ${event.message}` : ''}`);
        break;
      default:
    }
  };
}
