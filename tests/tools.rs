//! Chapter 002 (Tools) against the native engine: a scripted model and host Packs.
mod common;
use common::*;
use runvil::host::{PackSpec, ToolSpec};
use runvil::RunErrorKind;
use serde_json::{json, Value as Json};
use std::rc::Rc;

fn tool(name: &str, description: &str, trusted: bool, structured: bool) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters: json!({"type": "object", "properties": {}}),
        trusted,
        structured,
    }
}

/// A host with the web Pack (fetch, search) and the user-input Pack (ask).
fn host() -> Rc<TestHost> {
    let h = Rc::new(TestHost::default());
    h.packs.borrow_mut().push(PackSpec {
        name: "web".into(),
        description: "Search the web and fetch pages.".into(),
        tools: vec![
            tool("fetch", "Fetch a web page and return its text.", false, false),
            tool("search", "Search the web and return a list of results (title, url, description).", false, false),
        ],
        ..Default::default()
    });
    h.packs.borrow_mut().push(PackSpec {
        name: "user-input".into(),
        tools: vec![tool("ask", "Ask the operator.", true, false)],
        ..Default::default()
    });
    h.tool_answers.borrow_mut().insert("user-input/ask".into(), Ok("hi".into()));
    h.tool_answers.borrow_mut().insert("web/fetch".into(), Err("web_fetch: missing url argument".into()));
    h
}

fn run_on(h: &Rc<TestHost>, src: &str) -> Result<Option<String>, runvil::RunError> {
    run_with(h.clone(), src, "", |_| {})
}

fn ok(h: &Rc<TestHost>, src: &str) -> String {
    match run_on(h, src) {
        Ok(Some(t)) => t,
        other => panic!("{other:?}"),
    }
}

fn section(front: &str, lua: &str) -> String {
    format!("---\nname: t\ndescription: d\nrunvil: 0\n{front}---\n\n# T\n\n## Only\n\n```lua\n{lua}\n```\n")
}

#[test]
fn ask_once_and_plain_result() {
    let h = host();
    assert_eq!(ok(&h, &section("uses: [user-input]\n", "return tools.call('user-input/ask')")), "hi");
    assert_eq!(
        ok(&h, &section("uses: [user-input]\n", "local out = tools.call('user-input/ask')\nreturn type(out) .. '|' .. out")),
        "string|hi"
    );
}

/// Binding a suspending call lends `coroutine` to mlua for a moment (lua/ops.rs): a prompt's
/// own global of that name is there before and after.
#[test]
fn a_prompt_global_named_coroutine_survives_a_tool_call() {
    let h = host();
    let lua = "coroutine = 'mine'\nlocal out = tools.call('user-input/ask')\nreturn coroutine .. '|' .. out";
    assert_eq!(ok(&h, &section("uses: [user-input]\n", lua)), "mine|hi");
}

#[test]
fn missing_and_unusable_packs_refuse_the_run() {
    let h = host();
    let e = run_on(&h, &section("uses: [web, nope]\nmodels:\n  writer: {}\n", "return 1")).unwrap_err();
    assert_eq!(e.kind, RunErrorKind::RequirementsUnmet);
    assert_eq!(e.message, "the environment cannot satisfy this prompt:\n- missing required Pack: nope\n- no model for role: writer");
}

#[test]
fn tool_and_pack_objects() {
    let h = host();
    assert_eq!(
        ok(&h, &section("uses: [web]\n", "local fetch = tools.get('web/fetch')\nreturn fetch.pack.name .. '|' .. fetch.id")),
        "web|web/fetch"
    );
    assert_eq!(
        ok(&h, &section("uses: [web]\n", "local fetch = tools.get('web/fetch')\nlocal owner = packs.get('web')\nreturn fetch.id .. '|' .. owner.name .. '|' .. tostring(fetch.pack == owner)")),
        "web/fetch|web|true"
    );
    let lua = "local ids = {}\nfor _, tool in ipairs(tools.extras()) do ids[#ids + 1] = tool.id end\nlocal required = tools.required()\nreturn #required .. ':' .. required[1].id .. '|' .. table.concat(ids, ',')";
    assert_eq!(ok(&h, &section("uses: [user-input]\n", lua)), "1:user-input/ask|web/fetch,web/search");
    let lua = "return packs.required()[1].name .. packs.extras()[1].name .. packs.extras()[2].name .. tostring(tools.get('web_search')) .. type(tools.get('web/fetch'))";
    assert_eq!(ok(&h, &section("uses: [user-input]\n", lua)), "user-inputsubagentswebniluserdata");
    let lua = "local ok, e = pcall(function() tools.get('web/fetch').description = 'x' end)\nlocal ok2, e2 = pcall(tools.get, 42)\nreturn tostring(e) .. '|' .. e.kind .. '|' .. tostring(e2)";
    assert_eq!(
        ok(&h, &section("uses: [web]\n", lua)),
        "Tool objects are frozen: cannot assign field \"description\"|lua|tools.get takes a tool id, got integer"
    );
}

#[test]
fn untrusted_output_is_wrapped_and_failures_are_tool_errors() {
    let h = host();
    h.tool_answers.borrow_mut().insert("web/search".into(), Ok("a<b".into()));
    let out = ok(&h, &section("uses: [web]\n", "return tools.call('web/search', { query = 'lua' })"));
    assert!(out.starts_with("The text inside the untrusted_input_") && out.contains("\na&lt;b\n"), "{out}");
    let lua = "local ok, err = pcall(tools.call, 'web/fetch', {})\nreturn tostring(ok) .. '|' .. err.kind .. '|' .. tostring(err)";
    assert_eq!(ok(&h, &section("uses: [web]\n", lua)), "false|tool|tool call failure: web_fetch: missing url argument");
    let e = run_on(&h, &section("uses: [web]\n", "return tools.call('web/fetch', {})")).unwrap_err();
    assert_eq!((e.kind, e.message.as_str()), (RunErrorKind::Tool, "tool call failure: web_fetch: missing url argument"));
}

#[test]
fn unbound_names() {
    let h = host();
    let lua = "local a, e1 = pcall(tools.call, 'web_search', {})\nlocal b, e2 = pcall(tools.call, 'search', {})\nlocal c, e3 = pcall(tools.call, 'task_status', {})\nreturn e1.kind .. ':' .. e1.name .. '|' .. e2.kind .. ':' .. e2.name .. '|' .. e3.kind .. ':' .. e3.name";
    assert_eq!(ok(&h, &section("uses: [web]\n", lua)), "unbound_tool:web_search|unbound_tool:search|unbound_tool:task_status");
    let e = run_on(&h, &section("", "tools.call('missing', {})")).unwrap_err();
    assert_eq!(e.kind, RunErrorKind::Tool);
    assert_eq!(e.message, "tool \"missing\" is not a tool in this run; catalog tools: [\"user-input/ask\", \"web/fetch\", \"web/search\"]");
}

#[test]
fn local_tools_from_lua() {
    let h = host();
    let lua = "tools.offer_local('grab', 'Grab a value', { value = 'string' }, function(args)\n  return 'got ' .. args.value\nend)\nreturn tools.call('grab', { value = 'hi' }) .. '|' .. tostring(tools.calls.grab)";
    assert_eq!(ok(&h, &section("", lua)), "got hi|1");
    let lua = "local raised = { kind = 'custom' }\ntools.offer_local('grab', 'Grab a value', {}, function() error(raised) end)\nlocal ok, err = pcall(tools.call, 'grab', {})\nreturn tostring(ok) .. '|' .. tostring(err == raised) .. '|' .. err.kind";
    assert_eq!(ok(&h, &section("", lua)), "false|true|custom");
    let lua = "tools.offer_local('grab', 'Keep', { value = 'string' }, function(args)\n  store.write('grab.txt', 'kept ' .. args.value)\n  return store.read('grab.txt')\nend)\ntools.offer_local('inner', 'Inner', { value = 'string' }, function(args) return 'inner ' .. args.value end)\ntools.offer_local('outer', 'Outer', { value = 'string' }, function(args) return 'outer ' .. tools.call('inner', { value = args.value }) end)\ntools.offer_local('relay', 'Relay', {}, function() return 'relayed ' .. tools.call('user-input/ask') end)\nreturn tools.call('grab', { value = 'hi' }) .. '|' .. tools.call('outer', { value = 'hi' }) .. '|' .. tools.call('relay', {})";
    assert_eq!(ok(&h, &section("uses:\n  - user-input\n", lua)), "kept hi|outer inner hi|relayed hi");
    let e =
        run_on(&h, &section("", "tools.offer_local('grab', 'g', {}, function() return {} end)\nreturn tools.call('grab')")).unwrap_err();
    assert_eq!(e.message, "cannot return a table as a result");
}

#[test]
fn offer_errors() {
    let h = host();
    let lua = "tools.offer_local('pick', 'Pick an option', {}, function() return 'picked' end)\nlocal ok, err = pcall(tools.offer, { 'web/search', 'pick' })\nreturn err.kind .. '|' .. tostring(err)";
    assert_eq!(ok(&h, &section("uses: [web]\n", lua)), "lua|tools.offer: \"pick\" is not a catalog tool in this run");
    let lua = "local ok, e = pcall(tools.offer_local, 'bad alias', 'd', {}, function() end)\nlocal ok2, e2 = pcall(tools.offer_local, 'x', 'd', { a = 'float' }, function() end)\nreturn e.message .. '|' .. e2.message";
    assert_eq!(
        ok(&h, &section("", lua)),
        "invalid alias \"bad alias\": expected [A-Za-z][A-Za-z0-9_-]{0,63}|tools.offer_local param \"a\" has unsupported type \"float\": expected \"string\", \"integer\", \"number\", or \"boolean\""
    );
    let lua = "tools.call('web/fetch', { url = 'x' })\nlocal ok, err = pcall(function() return tools.calls['web/search'] end)\nreturn tostring(err)";
    h.tool_answers.borrow_mut().insert("web/fetch".into(), Ok("page".into()));
    assert_eq!(
        ok(&h, &section("uses: [web]\n", lua)),
        "tools.calls: \"web/search\" has no seeded count; seeded names: [\"web/fetch\"] (a catalog tool that was neither offered in this section nor called with tools.call)"
    );
}

fn call(id: &str, name: &str, args: Json) -> Json {
    json!({ "id": id, "name": name, "arguments": args })
}

#[test]
fn grab_loop_and_records() {
    let h = host();
    h.model(
        "writer",
        vec![
            json!({ "content": "", "tool_calls": [call("call_1", "grab", json!({"value": "x"}))], "finish_reason": "tool_calls" }),
            json!("done"),
        ],
    );
    let lua = "models.use('writer')\ntools.offer_local('grab', 'Grab a value', { value = 'string' }, function(args)\n  return 'grabbed ' .. args.value\nend)\nmessages:user('Grab x.')\nmodels.loop()\nreturn messages[3].content .. '|' .. messages[3].tool_call_id";
    assert_eq!(ok(&h, &section("models:\n  writer: {}\n", lua)), "grabbed x|call_1");
    let first = &h.requests.borrow()[0];
    assert_eq!(
        first["tools"],
        json!([{ "name": "grab", "description": "Grab a value", "parameters": {"type":"object","properties":{"value":{"type":"string"}},"required":["value"]} }])
    );
}

#[test]
fn reasoning_goes_back_with_the_assistant_record() {
    // Providers whose thinking-mode tool loops need the reply's reasoning sent back.
    let h = host();
    h.model(
        "writer",
        vec![
            json!({ "content": "", "reasoning_content": "I should grab x.", "tool_calls": [call("call_1", "grab", json!({"value": "x"}))] }),
            json!("done"),
        ],
    );
    let lua = "models.use('writer')\ntools.offer_local('grab', 'Grab a value', { value = 'string' }, function(args) return 'got' end)\nmessages:user('Grab x.')\nreturn models.loop()";
    assert_eq!(ok(&h, &section("models:\n  writer: {}\n", lua)), "done");
    let second = &h.requests.borrow()[1];
    assert_eq!(second["messages"][1]["reasoning_content"], json!("I should grab x."));
    assert_eq!(second["messages"][0].get("reasoning_content"), None);
    assert_eq!(second["messages"][2].get("reasoning_content"), None);
}

#[test]
fn grab_state_and_raise_in_loop() {
    let h = host();
    let two =
        json!({ "content": "", "tool_calls": [call("c1", "grab", json!({"value": "a"})), call("c2", "grab", json!({"value": "b"}))] });
    h.model("writer", vec![two.clone(), json!("final")]);
    let lua = "models.use('writer')\nlocal calls = {}\nlocal seen = {}\nmessages:user('Grab a, then b.')\ntools.offer_local('grab', 'Grab a value', { value = 'string' }, function(args)\n  calls[#calls + 1] = args.value\n  seen[#seen + 1] = #messages\n  return 'grabbed ' .. args.value\nend)\nmodels.loop()\nreturn table.concat(calls, ',') .. '|' .. table.concat(seen, ',') .. '|' .. #messages";
    assert_eq!(ok(&h, &section("models:\n  writer: {}\n", lua)), "a,b|1,1|5");
    h.model("writer", vec![two]);
    let lua = "models.use('writer')\nlocal own = { reason = 'mine' }\nlocal count = 0\ntools.offer_local('grab', 'Grab a value', { value = 'string' }, function(args)\n  count = count + 1\n  if count == 2 then error(own) end\n  return 'grabbed ' .. args.value\nend)\nmessages:user('Grab a, then b.')\nlocal ok, err = pcall(models.loop)\nreturn tostring(ok) .. '|' .. tostring(err == own) .. '|' .. count .. '|' .. #messages .. '|' .. messages[1].role";
    assert_eq!(ok(&h, &section("models:\n  writer: {}\n", lua)), "false|true|2|1|user");
}

#[test]
fn bound_tool_loop_failure_and_scope_gate() {
    let h = host();
    h.model("writer", vec![json!({ "content": "", "tool_calls": [call("call_1", "web_fetch", json!({}))] }), json!("final answer")]);
    let lua = "models.use('writer')\ntools.offer('web/fetch')\nmessages:user('Fetch the Lua home page.')\nmodels.loop()\nreturn messages[3].role .. '|' .. tools.calls['web/fetch'] .. '|' .. messages[#messages].content";
    assert_eq!(ok(&h, &section("uses:\n  - web\nmodels:\n  writer: {}\n", lua)), "tool|1|final answer");
    h.model("writer", vec![json!({ "content": "", "tool_calls": [call("c", "rogue", json!({}))] })]);
    let lua = "models.use('writer')\ntools.offer_local('echo', 'Echo a value', { value = 'string' }, function(args) return args.value end)\nmessages:user('Use your tools.')\nlocal ok, err = pcall(models.loop)\nif not ok and err.kind == 'out_of_scope_tool' then\n  return 'the model asked for ' .. err.name .. ': ' .. tostring(err) .. ' (' .. #messages .. ')'\nend\nreturn messages[#messages].content";
    assert_eq!(
        ok(&h, &section("models:\n  writer: {}\n", lua)),
        "the model asked for rogue: tool \"rogue\" is not in this section's scope; in-scope aliases: [\"echo\"] (1)"
    );
}

#[test]
fn offer_order_and_fixed_list() {
    let h = host();
    h.model("writer", vec![json!("ok"), json!("again")]);
    let lua = "models.use('writer')\npacks.offer('web')\ntools.offer('web/search')\ntools.offer({ 'web/search' })\nmessages:user('go')\nmodels.loop()\nlocal ok, e = pcall(tools.offer, 'web/fetch')\nreturn e.message";
    assert_eq!(
        ok(&h, &section("uses: [web]\nmodels:\n  writer: {}\n", lua)),
        "tools.offer: the section's tool list is fixed at its first models.loop round; make every offer before the first loop, or offer in another section"
    );
    let names: Vec<String> =
        h.requests.borrow()[0]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(names, ["web_search", "web_fetch"]);
}

#[test]
fn decide_in_h1() {
    let h = host();
    h.model(
        "writer",
        vec![json!({ "content": "", "tool_calls": [call("d1", "decide", json!({"choice": "use_mcp"}))] }), json!("recorded it")],
    );
    let src = "---\nname: decide\ndescription: d\nrunvil: 0\nmodels:\n  writer: {}\n---\n\n# Decide\n\n```lua\nmodels.default('writer')\ntools.offer_local('decide', 'Record the verdict', { choice = 'string' }, function(args)\n  var.verdict = args.choice\n  return 'recorded'\nend)\nmessages:user('Choose use_mcp or use_web and record your choice with the decide tool.')\nmodels.loop()\n```\n\n## Result\n\n```lua\nreturn var.verdict\n```\n";
    assert_eq!(ok(&h, src), "use_mcp");
}

const USER_INPUT_PRELUDE: &str = "local pack = ...\ninput = {}\nfunction input.ask(...)\n  if select('#', ...) > 0 then\n    error(\"input.ask takes no arguments\", 2)\n  end\n  return tools.call(pack .. \"/ask\")\nend\n";

fn with_prelude(prelude: &str) -> Rc<TestHost> {
    let h = host();
    h.packs.borrow_mut()[1].prelude = Some(prelude.into());
    h
}

#[test]
fn preludes_install_sealed_helpers() {
    let h = with_prelude(USER_INPUT_PRELUDE);
    assert_eq!(ok(&h, &section("uses:\n  - user-input\n", "return input.ask()")), "hi");
    let lua = "local sealed = not pcall(function() input.ask = nil end)\nlocal ok, err = pcall(function() input.extra = 1 end)\nlocal n = 0\nfor _ in pairs(input) do n = n + 1 end\nreturn input.ask() .. '|' .. tostring(sealed) .. '|' .. tostring(err) .. '|' .. getmetatable(input) .. '|' .. n";
    assert_eq!(
        ok(&h, &section("uses:\n  - user-input\n", lua)),
        "hi|true|input is read-only: Pack `user-input` defines it; cannot set 'extra'|input is sealed|0"
    );
    assert_eq!(ok(&h, &section("", "return type(input)")), "nil");
}

#[test]
fn prelude_rules() {
    let h = with_prelude("function peek() return type(ui) .. ',' .. type(argv) .. ',' .. type(sys) .. ',' .. type(models) end\nfunction mode() return var.mode end\nfunction set() var.mode = 'slow' end");
    let lua = "var.mode = 'fast'\nlocal ok, e = pcall(set)\nreturn peek() .. '|' .. mode() .. '|' .. tostring(e) .. '|' .. var.mode";
    assert_eq!(
        ok(&h, &section("uses: [user-input]\n", lua)),
        "nil,nil,nil,nil|fast|var is read-only inside a Pack prelude; cannot set 'mode'|fast"
    );
    let h = with_prelude("tools = 1");
    let e = run_on(&h, &section("uses: [user-input]\n", "return 'unreachable'")).unwrap_err();
    assert_eq!(
        (e.kind, e.message.as_str()),
        (RunErrorKind::Lua, "Pack `user-input`: its prelude defines the global `tools`, which is reserved as an Engine global")
    );
    let h = with_prelude("local x = tools.call('user-input/ask')");
    let e = run_on(&h, &section("uses: [user-input]\n", "return 'unreachable'")).unwrap_err();
    assert!(
        e.message.starts_with("Pack `user-input`: its prelude failed to load: ")
            && e.message.ends_with("A prelude only defines functions; it must not call tools while loading."),
        "{}",
        e.message
    );
    let h = with_prelude("x = require('x')");
    let e = run_on(&h, &section("uses: [user-input]\n", "return 'unreachable'")).unwrap_err();
    assert!(e.message.contains("attempt to call a nil value (global 'require')"), "{}", e.message);
}

#[test]
fn model_handles() {
    let h = host();
    h.model("writer", vec![json!("from writer")]);
    h.model("critic", vec![json!("from critic")]);
    let lua = "local w = models.get('writer')\nlocal ok, e = pcall(tools.call, w)\nlocal ok2, e2 = pcall(function() w.role = 'x' end)\nreturn w.role .. '|' .. w.id .. '|' .. type(w) .. '|' .. models.get('critic'):infer('hi') .. '|' .. e.message .. '|' .. e2.message";
    assert_eq!(
        ok(&h, &section("models:\n  writer: { model: big-1 }\n  critic: {}\n", lua)),
        "writer|big-1|userdata|from critic|tools.call takes a tool id, a local alias, or a tool object, got userdata|Model handle objects are frozen: cannot assign field \"role\""
    );
}

#[test]
fn sys_model_facts_after_the_first_round() {
    let h = host();
    h.model("writer", vec![json!({ "content": "hi", "finish_reason": "length", "model": "big-2" })]);
    let lua = "models.use('writer')\nlocal before = pcall(function() return sys.model end)\nmessages:user('go')\nmodels.loop()\nreturn tostring(before) .. '|' .. sys.model .. '|' .. sys.reply_finish_reason";
    assert_eq!(ok(&h, &section("models:\n  writer: {}\n", lua)), "false|big-2|length");
}

#[test]
fn models_use_is_fixed_after_the_first_round() {
    let h = host();
    h.model("writer", vec![json!("one")]);
    h.model("critic", vec![]);
    let lua = "models.use('writer')\nmessages:user('go')\nmodels.loop()\nlocal ok, e = pcall(models.use, 'critic')\nreturn e.message";
    assert_eq!(
        ok(&h, &section("models:\n  writer: {}\n  critic: {}\n", lua)),
        "models.use: the section's model is fixed at its first model round; use another section for another model"
    );
}

/// A reply asking for more tool calls than one reply may hold is a Model error before any runs
/// (a 100,000-call reply used to take over 30 s: a quadratic id check, then every call).
#[test]
fn a_reply_with_too_many_tool_calls_is_a_model_error() {
    let h = host();
    let many: Vec<Json> = (0..100_000).map(|i| call(&format!("c{i}"), "grab", json!({}))).collect();
    h.model("writer", vec![json!({ "content": "", "tool_calls": many })]);
    let lua = "models.use('writer')\nlocal n = 0\ntools.offer_local('grab', 'Grab', {}, function() n = n + 1 return 'x' end)\nmessages:user('go')\nlocal ok, e = pcall(models.loop)\nreturn tostring(ok) .. '|' .. n .. '|' .. e.kind .. '|' .. e.message";
    let started = std::time::Instant::now();
    assert_eq!(
        ok(&h, &section("models:\n  writer: {}\n", lua)),
        "false|0|model|the model's reply asks for 100000 tool calls; the limit is 128 per reply"
    );
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
    // 128 is still fine.
    let most: Vec<Json> = (0..128).map(|i| call(&format!("c{i}"), "grab", json!({}))).collect();
    h.model("writer", vec![json!({ "content": "", "tool_calls": most }), json!("done")]);
    let lua = "models.use('writer')\nlocal n = 0\ntools.offer_local('grab', 'Grab', {}, function() n = n + 1 return 'x' end)\nmessages:user('go')\nmodels.loop()\nreturn tostring(n)";
    assert_eq!(ok(&h, &section("models:\n  writer: {}\n", lua)), "128");
}

#[test]
fn models_infer_of_an_empty_reply_is_a_model_error() {
    let h = host();
    h.model("default", vec![json!({ "content": "" }), json!({ "content": null }), json!({ "content": "ok" })]);
    let src = section(
        "",
        "local out = {}\nfor i = 1, 3 do\n  local done, r = pcall(models.infer, 'x')\n  out[i] = done and r or (r.kind .. ': ' .. r.message)\nend\nreturn table.concat(out, ' | ')",
    );
    assert_eq!(ok(&h, &src), "model: the model returned an empty reply | model: the model's reply has no text content | ok");
}

#[test]
fn a_model_call_with_arguments_that_do_not_fit_is_answered_and_may_be_retried() {
    let h = host();
    let call = |id: &str, args: Json| json!({ "content": "", "tool_calls": [{ "id": id, "name": "add", "arguments": args }], "finish_reason": "tool_calls" });
    h.model(
        "default",
        vec![
            call("c1", json!({ "a": "two", "b": 3 })),
            call("c2", json!({ "a": 2 })),
            call("c3", json!({ "a": 2, "b": 3 })),
            json!("done"),
        ],
    );
    let lua = "tools.offer_local('add', 'Adds a and b', { a = 'number', b = 'number' }, function(args) return args.a + args.b end)\n\
               messages:user('add')\nmodels.loop()\nlocal out = {}\n\
               for i = 3, 7, 2 do out[#out + 1] = messages[i].content end\nreturn table.concat(out, '\\n')";
    let text = ok(&h, &section("", lua));
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("The text inside") && !l.starts_with("<") && !l.is_empty()).collect();
    assert_eq!(
        lines,
        [
            "invalid arguments for add: argument 'a' must be a number, got the string \"two\"",
            "invalid arguments for add: argument 'b' is required (a number) and missing",
            "5",
        ],
        "{text}"
    );
}

#[test]
fn a_pack_tool_never_sees_arguments_of_the_wrong_type() {
    let h = host();
    h.packs.borrow_mut()[0].tools[0].parameters =
        json!({ "type": "object", "properties": { "url": { "type": "string" } }, "required": ["url"] });
    let lua = "local done, e = pcall(tools.call, 'web/fetch', { url = 42 })\nreturn e.kind .. ': ' .. e.message";
    assert_eq!(
        ok(&h, &section("uses:\n  - web\n", lua)),
        "tool: tool call failure: invalid arguments for web_fetch: argument 'url' must be a string, got the number 42"
    );
    // A missing argument is the Pack's to name (the empty-argument call reaches every tool).
    let lua = "local done, e = pcall(tools.call, 'web/fetch', {})\nreturn e.message";
    assert_eq!(ok(&h, &section("uses:\n  - web\n", lua)), "tool call failure: web_fetch: missing url argument");
}
