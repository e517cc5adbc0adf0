// The prompt the edge example runs: Markdown with a Lua block, kept in a module so that every host
// (wrangler, workerd, Deno, Bun) imports it without text-import rules.
const FENCE = '```';

export const prompt = `---
name: edge-facts
description: Answer a question on the edge, with a lookup tool the host serves.
runvil: 0
uses: [facts]
---
# Edge facts

## Main

${FENCE}lua
store.append("questions.md", "- " .. args .. "\\n")
tools.offer("facts/lookup")
messages:user("Answer in one sentence, looking the topic up first: " .. args)
return models.loop()
${FENCE}
`;
