// The child processes of the start-up benches (startup.mjs, startup-ab.mjs): each imports one Lua
// engine, times its import, its creation and a trivial first run, and prints them with the RSS the
// engine added (in all, and by its creation alone), then the time of the same run once more, as
// one JSON line.

/**
 * Runvil's child: the package at `pkg` (a file URL of its index.js); `options` is the source text of
 * the first run's options, evaluated inside the timed run; `again`: time the run a second time.
 */
export const runvilChild = (pkg, options, again = true) => `
    const t00 = performance.now();
    const { createEngine } = await import(${JSON.stringify(pkg)});
    const tImport = performance.now() - t00;
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    const engine = await createEngine();
    const t1 = performance.now();
    const rssCreate = process.memoryUsage().rss - rss0;
    const out = await engine.run("# T\\n\\n\`\`\`lua\\nreturn 'ok'\\n\`\`\`\\n", ${options});
    const t2 = performance.now();
    if (out.result !== 'ok') throw new Error(JSON.stringify(out));
    const rss = process.memoryUsage().rss - rss0;
    const t3 = performance.now();
    if (${again}) await engine.run("# T\\n\\n\`\`\`lua\\nreturn 'ok'\\n\`\`\`\\n", ${options});
    const second = performance.now() - t3;
    console.log(JSON.stringify({ import: tImport, create: t1 - t0, first: t2 - t1, rss, rssCreate, second }));`;

/** wasmoon's child; `chunk` is the Lua its first run does, `expected` what that returns. */
export const wasmoonChild = (chunk, expected, again = true) => `
    const t00 = performance.now();
    const { LuaFactory } = await import('wasmoon');
    const tImport = performance.now() - t00;
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    const lua = await new LuaFactory().createEngine();
    const t1 = performance.now();
    const rssCreate = process.memoryUsage().rss - rss0;
    const out = await lua.doString(${JSON.stringify(chunk)});
    const t2 = performance.now();
    if (out !== ${JSON.stringify(expected)}) throw new Error(String(out));
    const rss = process.memoryUsage().rss - rss0;
    const t3 = performance.now();
    if (${again}) await lua.doString(${JSON.stringify(chunk)});
    const second = performance.now() - t3;
    console.log(JSON.stringify({ import: tImport, create: t1 - t0, first: t2 - t1, rss, rssCreate, second }));`;
