# workerd config for the runtime smoke test. The socket address is overridden on the command line
# (--socket-addr http=127.0.0.1:<port>). Every module of the package is listed: workerd resolves
# imports only among declared modules, and the wasm must be a module binding.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ (name = "main", worker = .smokeWorker) ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);

const smokeWorker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "pkg/workerd.js", esModule = embed "../../pkg/workerd.js"),
    (name = "pkg/engine.js", esModule = embed "../../pkg/engine.js"),
    (name = "pkg/load.js", esModule = embed "../../pkg/load.js"),
    (name = "pkg/conversations.js", esModule = embed "../../pkg/conversations.js"),
    (name = "pkg/bindings.js", esModule = embed "../../pkg/bindings.js"),
    (name = "pkg/public.js", esModule = embed "../../pkg/public.js"),
    (name = "pkg/store.js", esModule = embed "../../pkg/store.js"),
    (name = "pkg/idb-store.js", esModule = embed "../../pkg/idb-store.js"),
    (name = "pkg/zip.js", esModule = embed "../../pkg/zip.js"),
    (name = "pkg/store-host.js", esModule = embed "../../pkg/store-host.js"),
    (name = "pkg/durable-store.js", esModule = embed "../../pkg/durable-store.js"),
    (name = "pkg/durable-object.js", esModule = embed "../../pkg/durable-object.js"),
    (name = "pkg/durable-layout.js", esModule = embed "../../pkg/durable-layout.js"),
    (name = "pkg/models.js", esModule = embed "../../pkg/models.js"),
    (name = "pkg/packs.js", esModule = embed "../../pkg/packs.js"),
    (name = "pkg/openai.js", esModule = embed "../../pkg/openai.js"),
    (name = "pkg/ai-sdk.js", esModule = embed "../../pkg/ai-sdk.js"),
    (name = "pkg/retry.js", esModule = embed "../../pkg/retry.js"),
    (name = "pkg/version.js", esModule = embed "../../pkg/version.js"),
    (name = "pkg/runvil_bg.wasm", wasm = embed "../../pkg/runvil_bg.wasm"),
  ],
  compatibilityDate = "2025-01-01",
);
