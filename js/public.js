// What every entry point exports besides createEngine (and, in Node, directoryStore).
export { memoryStore } from './store.js';
export { indexedDbStore, deleteIndexedDbStore } from './idb-store.js';
export { scriptedModel } from './models.js';
export { openAIChatModel, wireToolName } from './openai.js';
export { aiSdkModel } from './ai-sdk.js';
export { webPack, userInputPack, htmlToText, USER_INPUT_PRELUDE } from './packs.js';
export { version } from './version.js';
