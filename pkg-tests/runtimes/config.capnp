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
    (name = "pkg/public.js", esModule = embed "../../pkg/public.js"),
    (name = "pkg/bindings.js", esModule = embed "../../pkg/bindings.js"),
    (name = "pkg/version.js", esModule = embed "../../pkg/version.js"),
    (name = "pkg/core/engine.js", esModule = embed "../../pkg/core/engine.js"),
    (name = "pkg/core/load.js", esModule = embed "../../pkg/core/load.js"),
    (name = "pkg/core/pool.js", esModule = embed "../../pkg/core/pool.js"),
    (name = "pkg/core/conversations.js", esModule = embed "../../pkg/core/conversations.js"),
    (name = "pkg/core/check.js", esModule = embed "../../pkg/core/check.js"),
    (name = "pkg/core/crossing.js", esModule = embed "../../pkg/core/crossing.js"),
    (name = "pkg/core/journal.js", esModule = embed "../../pkg/core/journal.js"),
    (name = "pkg/core/trace.js", esModule = embed "../../pkg/core/trace.js"),
    (name = "pkg/core/values.js", esModule = embed "../../pkg/core/values.js"),
    (name = "pkg/core/clock.js", esModule = embed "../../pkg/core/clock.js"),
    (name = "pkg/core/seeds.js", esModule = embed "../../pkg/core/seeds.js"),
    (name = "pkg/models/scripted.js", esModule = embed "../../pkg/models/scripted.js"),
    (name = "pkg/models/openai.js", esModule = embed "../../pkg/models/openai.js"),
    (name = "pkg/models/ai-sdk.js", esModule = embed "../../pkg/models/ai-sdk.js"),
    (name = "pkg/models/retry.js", esModule = embed "../../pkg/models/retry.js"),
    (name = "pkg/models/wire.js", esModule = embed "../../pkg/models/wire.js"),
    (name = "pkg/packs/reference.js", esModule = embed "../../pkg/packs/reference.js"),
    (name = "pkg/packs/mcp.js", esModule = embed "../../pkg/packs/mcp.js"),
    (name = "pkg/stores/memory.js", esModule = embed "../../pkg/stores/memory.js"),
    (name = "pkg/stores/idb.js", esModule = embed "../../pkg/stores/idb.js"),
    (name = "pkg/stores/zip.js", esModule = embed "../../pkg/stores/zip.js"),
    (name = "pkg/stores/shared.js", esModule = embed "../../pkg/stores/shared.js"),
    (name = "pkg/stores/durable.js", esModule = embed "../../pkg/stores/durable.js"),
    (name = "pkg/stores/durable-object.js", esModule = embed "../../pkg/stores/durable-object.js"),
    (name = "pkg/stores/durable-run.js", esModule = embed "../../pkg/stores/durable-run.js"),
    (name = "pkg/stores/durable-layout.js", esModule = embed "../../pkg/stores/durable-layout.js"),
    (name = "pkg/runvil_bg.wasm", wasm = embed "../../pkg/runvil_bg.wasm"),
  ],
  compatibilityDate = "2025-01-01",
);
