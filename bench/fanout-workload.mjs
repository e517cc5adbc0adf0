// The fanout workload bench/fanout.mjs and bench/fanout-ab.mjs share: 1,000 arms, each one model
// round of 5 ms at concurrency 64, as a Runvil prompt and as its peer, AI SDK 7 `generateText`
// calls (MockLanguageModelV4, same latency) in a 64-wide promise pool. AI SDK 7 needs Node >= 22.
export const LATENCY = 5;
export const ARMS = 1000;
export const CONCURRENCY = 64;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export const fanoutSrc = `# F\n\n## Main\n\n\`\`\`lua\nlocal c = {}\nfor i = 1, ${ARMS} do c[i] = i end\nlocal rs = tasks.fanout('### W', c)\nreturn #rs\n\`\`\`\n\n### W\n\n\`\`\`lua\nreturn models.infer('x')\n\`\`\`\n`;

/** The Runvil side's model: answers after LATENCY ms. */
export const model = async () => {
  await sleep(LATENCY);
  return { content: 'ok', finish_reason: 'stop' };
};

/** The peer: ARMS AI SDK 7 calls, at most CONCURRENCY in flight; resolves when all answered ok. */
export async function makeSdkPool() {
  if (Number(process.versions.node.split('.')[0]) < 22) {
    throw new Error(`the AI SDK 7 peer needs Node >= 22 (this is ${process.version}): run with tools/node24`);
  }
  const { generateText } = await import('ai7');
  const { MockLanguageModelV4 } = await import('ai7/test');
  const sdkModel = new MockLanguageModelV4({
    doGenerate: async () => {
      await sleep(LATENCY);
      return {
        content: [{ type: 'text', text: 'ok' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } },
        warnings: [],
      };
    },
  });
  return async function sdkPool() {
    let next = 0;
    let answered = 0;
    const worker = async () => {
      while (next < ARMS) {
        next++;
        if ((await generateText({ model: sdkModel, prompt: 'x' })).text === 'ok') answered++;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    if (answered !== ARMS) throw new Error('AI SDK pool: a call did not answer ok');
  };
}
