// @ts-check
// What every entry point exports besides createEngine (and, in Node, directoryStore).
export { memoryStore } from '../stores/memory.js';
export { indexedDbStore, deleteIndexedDbStore } from '../stores/idb.js';
export { scriptedModel } from '../models/scripted.js';
export { openAIChatModel } from '../models/openai.js';
export { wireToolName } from '../models/wire.js';
export { aiSdkModel } from '../models/ai-sdk.js';
export { webPack, userInputPack, htmlToText, USER_INPUT_PRELUDE } from '../packs/reference.js';
export { mcpPack } from '../packs/mcp.js';
export { version } from '../version.js';
