// Declarations the type-check of js/ needs (jsconfig.json) and the package does not ship: the
// modules the build generates beside the entries (tools/make-package.mjs) and the one platform
// module the workerd entry imports. Not packed.

declare module '*/bindings.js' {
  /** One copy of the wasm-bindgen glue (docs/packaging.md, "The glue factory"). */
  export interface Bindings {
    instantiateModule(module: WebAssembly.Module): Promise<{ memory: WebAssembly.Memory }>;
    engineVersion(): string;
    /** docs/bridge.md */
    runPrompt(source: string, options: object): Promise<any>;
    debugTrap(): void;
    /** The option keys the module reads: `{ run, limits, ui }` (test hook). */
    bridgeKeys(): { run: string[]; limits: string[]; ui: string[] };
    isDead(): boolean;
  }
  export function createBindings(options?: { onTrap?: (error: unknown) => void }): Bindings;
}

declare module '*/version.js' {
  export const version: string;
}

declare module '*/wasm-inline.js' {
  /** The module's bytes, decoded into what `allocate` gives (a plain Uint8Array by default). */
  export function wasmBytes(allocate?: (length: number) => Uint8Array): Uint8Array;
}

declare module '*.wasm' {
  const module: WebAssembly.Module;
  export default module;
}

declare module 'cloudflare:workers' {
  export class DurableObject {
    constructor(ctx: any, env: any);
    ctx: any;
    env: any;
  }
  export class RpcTarget {}
}
