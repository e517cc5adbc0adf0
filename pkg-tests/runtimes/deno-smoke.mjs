// Deno smoke: run the prompt file given as the first argument through the default entry and print
// the result (exit 1 with "<Kind>: <message>" on failure).
import { createEngine } from '../../pkg/index.js';

const source = await Deno.readTextFile(Deno.args[0]);
const outcome = await (await createEngine()).run(source, { seed: 1 });
if (outcome.ok) {
  console.log(outcome.result);
} else {
  console.error(`${outcome.error.kind}: ${outcome.error.message}`);
  Deno.exit(1);
}
