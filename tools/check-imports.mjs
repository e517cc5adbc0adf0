// Fails when the raw cargo output imports anything but wasm-bindgen placeholders: a WASI or "env"
// import would mean a C symbol (libc, setjmp runtime) was left unresolved, and the module would not
// instantiate in browsers or workerd.
import { readFileSync } from 'node:fs';

const file = process.argv[2];
const module = new WebAssembly.Module(readFileSync(file));
const imports = WebAssembly.Module.imports(module);
const bad = imports.filter((i) => !i.module.startsWith('__wbindgen'));
if (bad.length) {
  console.error(`${file}: unexpected imports (only wasm-bindgen glue is allowed):`);
  for (const i of bad) console.error(`  ${i.module}.${i.name} (${i.kind})`);
  process.exit(1);
}
console.log(`imports OK: ${imports.length} wasm-bindgen placeholder(s), nothing else`);
