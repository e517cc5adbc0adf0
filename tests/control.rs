//! Control flow and concurrency beyond the chapters' worked examples (those are spec cases):
//! child-level walks, `call`'s containment and the depth limit across calls and arms, large and
//! failing fanouts, cancellation mid-fanout, and the claims verdict under many interleavings.

mod common;

use common::{prompt, run_with, TestHost};
use runvil::{RunError, RunErrorKind};
use serde_json::{json, Value as Json};
use std::rc::Rc;

fn lua(code: &str) -> String {
    format!("```lua\n{code}\n```\n")
}

fn run_host(host: Rc<TestHost>, source: &str) -> Result<Option<String>, RunError> {
    run_with(host, source, "", |_| {})
}

fn ok(source: &str) -> String {
    match run_host(Rc::new(TestHost::default()), source) {
        Ok(Some(t)) => t,
        other => panic!("expected a result, got {other:?}"),
    }
}

fn err(source: &str) -> RunError {
    match run_host(Rc::new(TestHost::default()), source) {
        Err(e) => e,
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn a_jump_to_a_child_walks_the_child_level_then_resumes_after_the_jumper() {
    let src = prompt(&format!(
        "## A\n\n{}\n### A1\n\n{}\n### A2\n\n{}\n### A3\n\n{}\n## B\n\n{}",
        lua("var.trail = 'A'\njump('### A2')\nvar.trail = 'never'"),
        lua("var.trail = var.trail .. '1'"),
        lua("var.trail = var.trail .. '2'"),
        lua("var.trail = var.trail .. '3'"),
        lua("return var.trail .. 'B'"),
    ));
    assert_eq!(ok(&src), "A23B");
}

#[test]
fn jump_is_not_caught_by_pcall_and_a_sibling_jump_can_go_back() {
    let src = prompt(&format!(
        "## A\n\n{}\n## B\n\n{}\n## C\n\n{}",
        lua("var.n = (var.n or 0) + 1\nif var.n < 3 then local ok = pcall(jump, '## C') end\nreturn 'caught ' .. var.n"),
        lua("return 'B ran'"),
        lua("jump('## A')"),
    ));
    // A jumps to C (pcall does not stop it), C jumps back to A, twice; the third A returns.
    assert_eq!(ok(&src), "caught 3");
}

#[test]
fn jump_during_the_shared_library_load_fails_the_run() {
    let src = "# T\n\n```lua shared\npcall(jump, '## B')\n```\n\n## A\n\n```lua\nreturn 'a'\n```\n\n## B\n\n```lua\nreturn 'b'\n```\n";
    let e = err(src);
    assert_eq!((e.kind, e.message.as_str()), (RunErrorKind::Lua, "jump is not available during shared library load"));
}

#[test]
fn a_heading_that_is_not_visible_is_a_lua_error_listing_the_visible_ones() {
    let src = prompt(&format!("## A\n\n{}\n### Child\n\n{}\n## B\n\n{}", lua("jump('## Child')"), lua("return 'c'"), lua("return 'b'")));
    let e = err(&src);
    assert_eq!(e.kind, RunErrorKind::Lua);
    assert!(
        e.message.contains(r####"no section "## Child" is visible from here; visible sections: ["## B", "### Child"]"####),
        "{}",
        e.message
    );
}

#[test]
fn call_clones_var_in_and_drops_it_out_and_returns_the_chain_result() {
    let src = prompt(&format!(
        "## Main\n\n{}\n## Sub\n\n{}",
        lua("var.x = 1\nlocal r = call('## Sub')\nreturn r .. ' ' .. var.x"),
        lua("var.x = var.x + 1\nreturn tostring(var.x)"),
    ));
    assert_eq!(ok(&src), "2 1");
}

#[test]
fn an_error_in_a_called_chain_is_raised_at_the_call_and_catchable() {
    let src = prompt(&format!(
        "## Main\n\n{}\n## Sub\n\n{}",
        lua("local ok, e = pcall(call, '## Sub')\nreturn tostring(ok) .. '|' .. e.kind .. '|' .. tostring(e)"),
        lua("error('boom')"),
    ));
    assert_eq!(ok(&src), "false|lua|## Sub:19: boom");
}

/// `## Even` calls `## Odd`; `## Odd` fans out two `## Even` arms: depth grows by one at every
/// step, across calls and arms alike.
fn tree(limit: u32) -> String {
    prompt(&format!(
        "## Main\n\n{}\n## Even\n\n{}\n## Odd\n\n{}",
        lua("return call('## Even', '1')"),
        lua(&format!(
            "local d = tonumber(item) or tonumber(args)\nif d >= {limit} then return 'leaf' end\nreturn 'c(' .. call('## Odd', tostring(d + 1)) .. ')'"
        )),
        lua(&format!(
            "local d = tonumber(args)\nif d >= {limit} then return 'leaf' end\nlocal rs = tasks.fanout('## Even', {{ d + 1, d + 1 }})\nreturn 'f(' .. rs[1].text .. ',' .. rs[2].text .. ')'"
        )),
    ))
}

fn expected_tree(d: u32, limit: u32) -> String {
    if d >= limit {
        return "leaf".into();
    }
    let below = expected_tree(d + 1, limit);
    if d % 2 == 1 {
        format!("c({below})")
    } else {
        format!("f({below},{below})")
    }
}

#[test]
fn a_call_and_fanout_tree_reaches_the_depth_limit_and_not_past_it() {
    assert_eq!(ok(&tree(8)), expected_tree(1, 8));
    let e = err(&tree(9));
    assert_eq!(e.kind, RunErrorKind::Lua);
    assert!(e.message.contains("call depth limit of 8 reached"), "{}", e.message);
}

fn default_model(host: &TestHost, replies: usize) {
    host.model("default", (0..replies).map(|i| json!(format!("r{i}"))).collect());
}

#[test]
fn a_fanout_of_a_thousand_arms_each_asking_the_model() {
    let host = Rc::new(TestHost::default());
    default_model(&host, 1000);
    let src = prompt(&format!(
        "## Main\n\n{}\n### W\n\n{}",
        lua("local c = {}\nfor i = 1, 1000 do c[i] = i end\nlocal rs = tasks.fanout('### W', c)\nlocal n = 0\nfor i, r in ipairs(rs) do if r.ok and r.item == i then n = n + 1 end end\nreturn n .. ' ' .. #store.glob('out/*')"),
        lua("local reply = models.infer('x')\nstore.write('out/' .. sys.index .. '.txt', reply)"),
    ));
    assert_eq!(run_host(host.clone(), &src).unwrap().as_deref(), Some("1000 1000"));
    let events = host.events.borrow();
    let count = |t: &str| events.iter().filter(|e| e["type"] == t).count();
    assert_eq!((count("task_started"), count("task_finished")), (1000, 1000));
}

#[test]
fn a_hard_error_in_an_arm_cancels_its_siblings_and_raises_at_the_fanout() {
    let host = Rc::new(TestHost::default());
    default_model(&host, 10);
    // Arms 1 and 3 wait on the model for a while; arm 2 fails at once.
    *host.model_latency.borrow_mut() = Some(Box::new(|| 50));
    let src = prompt(&format!(
        "## Main\n\n{}\n### W\n\n{}",
        lua("local ok, e = pcall(tasks.fanout, '### W', { 1, 2, 3 })\nreturn tostring(ok) .. '|' .. e.kind .. '|' .. e.message .. '|' .. e.arm .. '|' .. e.item .. '|' .. e.cause.message"),
        lua("if item == 2 then error('arm two failed') end\nmodels.infer('x')\nstore.write('late' .. item, 'x')"),
    ));
    assert_eq!(
        run_host(host.clone(), &src).unwrap().as_deref(),
        Some("false|lua|tasks.fanout: arm 2 (item 2) failed: ### W:19: arm two failed|2|2|### W:19: arm two failed")
    );
    let events = host.events.borrow();
    let statuses: Vec<&str> = events.iter().filter(|e| e["type"] == "task_finished").filter_map(|e| e["status"].as_str()).collect();
    assert_eq!(statuses, ["failed", "cancelled", "cancelled"]);
}

#[test]
fn an_arm_out_of_model_rounds_is_soft_and_its_siblings_finish() {
    let host = Rc::new(TestHost::default());
    let call = json!({ "content": "", "tool_calls": [{ "id": "c1", "name": "t", "arguments": {} }], "finish_reason": "tool_calls" });
    host.model("default", vec![call.clone(), call.clone(), call]);
    let src = prompt(&format!(
        "## Main\n\n{}\n### W\n\n{}",
        lua("local rs = tasks.fanout('### W', { 'loop', 'plain' })\nreturn tostring(rs[1].ok) .. ' ' .. tostring(rs[1].exhausted) .. ' ' .. rs[1].error.kind .. ' | ' .. tostring(rs[2].ok) .. ' ' .. rs[2].text"),
        lua("if item == 'plain' then return 'fine' end\ntools.offer_local('t', 'a tool', {}, function() return 'r' end)\nmessages:user('go')\nreturn models.loop()"),
    ));
    let outcome = run_with(host, &src, "", |o| o.limits.max_tool_iterations = Some(1));
    assert_eq!(outcome.unwrap().as_deref(), Some("false true round_cap | true fine"));
}

#[test]
fn an_arm_past_the_instruction_budget_ends_the_run() {
    let src = prompt(&format!("## Main\n\n{}\n### W\n\n{}", lua("tasks.fanout('### W', { 1, 2 })\nreturn 'no'"), lua("while true do end")));
    let e = run_with(Rc::new(TestHost::default()), &src, "", |o| o.limits.instructions = Some(100_000)).unwrap_err();
    assert_eq!(e.kind, RunErrorKind::Limit, "{e}");
    assert!(e.message.starts_with("instruction budget of 100000 exceeded in section ### W"), "{}", e.message);
}

#[test]
fn cancelling_mid_fanout_leaves_no_task_running_and_the_store_whole() {
    let host = Rc::new(TestHost::default());
    default_model(&host, 40);
    let mut n = 0u64;
    *host.model_latency.borrow_mut() = Some(Box::new(move || {
        n += 1;
        n % 7 * 3
    }));
    host.cancel_after_requests.set(Some(12));
    let src = prompt(&format!(
        "## Main\n\n{}\n### W\n\n{}",
        lua("local c = {}\nfor i = 1, 40 do c[i] = i end\ntasks.fanout('### W', c)\nreturn 'finished'"),
        lua("local r = models.infer('x')\nstore.write('out/' .. sys.index .. '.txt', string.rep(r, 100))"),
    ));
    let backend = Rc::new(runvil::store::MemoryBackend::new(Vec::new(), false));
    let store: Rc<dyn runvil::store::Backend> = backend.clone();
    let e = run_with(host.clone(), &src, "", |o| {
        o.store = Some(store);
        o.limits.fanout_concurrency = Some(8);
    })
    .unwrap_err();
    assert_eq!(e.kind, RunErrorKind::Cancelled, "{e}");
    let events = host.events.borrow();
    let started: Vec<&Json> = events.iter().filter(|e| e["type"] == "task_started").map(|e| &e["id"]).collect();
    let finished: Vec<&Json> = events.iter().filter(|e| e["type"] == "task_finished").map(|e| &e["id"]).collect();
    assert!(!started.is_empty() && started.len() < 40, "{} arms started", started.len());
    assert_eq!(started.len(), finished.len(), "every started task reports its end");
    // Every file an arm wrote is whole: one reply repeated 100 times.
    for (path, data) in backend.snapshot() {
        let text = String::from_utf8(data).unwrap();
        let reply = &text[..text.len() / 100];
        assert_eq!(text, reply.repeat(100), "{path} is torn");
    }
}

/// Runs `source` under `seeds` different model latency orderings; answers each run's verdict
/// (result or error kind) and final store.
/// A run's verdict (its result, or its error kind) and its final store.
type Verdict = (Result<Option<String>, RunErrorKind>, Vec<(String, Vec<u8>)>);

fn under_orderings(source: &str, replies: usize, seeds: u64) -> Vec<Verdict> {
    (0..seeds)
        .map(|seed| {
            let host = Rc::new(TestHost::default());
            default_model(&host, replies);
            let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            *host.model_latency.borrow_mut() = Some(Box::new(move || {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (state >> 33) % 9
            }));
            let backend = Rc::new(runvil::store::MemoryBackend::new(Vec::new(), false));
            let store: Rc<dyn runvil::store::Backend> = backend.clone();
            let outcome = run_with(host, source, "", |o| o.store = Some(store)).map_err(|e| {
                if e.kind == RunErrorKind::Determinism {
                    assert!(e.message.starts_with("store determinism violation: "), "{}", e.message);
                }
                e.kind
            });
            (outcome, backend.snapshot())
        })
        .collect()
}

/// A fanout over three arms whose worker first asks the model (so arms finish in a seeded
/// order), then does `worker`; the caller then does `after`.
fn arms(worker: &str, after: &str) -> String {
    prompt(&format!(
        "## Main\n\n{}\n### W\n\n{}",
        lua(&format!("tasks.fanout('### W', {{ 'a', 'b', 'c' }})\n{after}")),
        lua(&format!("models.infer('x')\n{worker}")),
    ))
}

#[test]
fn claims_verdicts_do_not_depend_on_timing() {
    let always_fail = [
        arms("store.append('log.txt', item)", "return 'no conflict'"),
        arms("store.write('out/' .. sys.index .. '.md', item)\npcall(store.read, 'out/' .. (sys.index % 3 + 1) .. '.md')", "return 'no conflict'"),
        arms("store.write('out/' .. sys.index .. '.md', item)\nstore.glob('out/*')", "return 'no conflict'"),
        arms("if sys.index == 1 then store.write('flag.txt', 'x') else store.exists('flag.txt') end", "return 'no conflict'"),
        prompt(&format!(
            "## Main\n\n{}\n### Reader\n\n{}",
            lua("local h = tasks.spawn('### Reader')\nmodels.infer('x')\nstore.write('shared.txt', 'late')\ntasks.join({ h })\nreturn 'no conflict'"),
            lua("models.infer('x')\npcall(store.read, 'shared.txt')"),
        )),
    ];
    for (n, src) in always_fail.iter().enumerate() {
        for (outcome, files) in under_orderings(src, 8, 100) {
            assert_eq!(outcome, Err(RunErrorKind::Determinism), "pattern {n}");
            // Of two conflicting accesses the second never reaches the store: whichever arm
            // came first, no file holds more than one arm's write.
            for (path, data) in files {
                assert!(data.len() <= 1 || path == "shared.txt", "pattern {n}: {path} holds {data:?}");
            }
        }
    }
    let always_pass = [
        arms(
            "store.write('research/' .. sys.index .. '.md', item)",
            "local parts = {}\nfor i = 1, 3 do parts[i] = store.read('research/' .. i .. '.md') end\nstore.write('research.md', table.concat(parts, ','))\nreturn store.read('research.md')",
        ),
        prompt(&format!(
            "## Main\n\n{}\n### W\n\n{}",
            lua("tasks.fanout('### W', { 'a1', 'b1' })\ntasks.fanout('### W', { 'a2', 'b2' })\nreturn store.read('out/1.txt') .. store.read('out/2.txt')"),
            lua("models.infer('x')\nstore.write('out/' .. sys.index .. '.txt', item)"),
        )),
        prompt(&format!(
            "## Main\n\n{}\n### Reader\n\n{}",
            lua("store.write('input.txt', 'owner')\nlocal h = tasks.spawn('### Reader')\nlocal r = tasks.join({ h })[1]\nreturn store.read('task-out.txt') .. ' ' .. r.text"),
            lua("models.infer('x')\nstore.write('task-out.txt', 'saw ' .. store.read('input.txt'))\nreturn 'done'"),
        )),
    ];
    for (n, src) in always_pass.iter().enumerate() {
        let runs = under_orderings(src, 8, 100);
        let first = &runs[0];
        assert!(first.0.is_ok(), "pattern {n}: {:?}", first.0);
        for run in &runs {
            assert_eq!(run, first, "pattern {n}: the outcome and the final store repeat under every ordering");
        }
    }
}

#[test]
fn tasks_join_with_a_timeout_delivers_what_ended() {
    let host = Rc::new(TestHost::default());
    let src = prompt(&format!(
        "## Main\n\n{}\n## Quick\n\n{}\n## Slow\n\n{}",
        lua("local q = tasks.spawn('## Quick')\nlocal s = tasks.spawn('## Slow')\nlocal rs = tasks.join({ q, s }, { timeout_ms = 30 })\nlocal line = rs[1].text .. ' ' .. tostring(rs[2].running) .. ' ' .. s:status()\ns:cancel()\nreturn line .. ' ' .. s:status()"),
        lua("return 'quick'"),
        lua("while true do local x = 1 end"),
    ));
    // The slow task spins until cancelled; its budget is large enough to outlast the timeout.
    let outcome = run_with(host, &src, "", |o| o.limits.instructions = Some(u64::MAX / 2));
    assert_eq!(outcome.unwrap().as_deref(), Some("quick true running cancelled"));
}

#[test]
fn a_jump_loop_ends_at_the_section_entry_limit() {
    assert_eq!(runvil::effects::context::Limits::default().section_entries, 100_000);
    let src = prompt(&format!("## A\n\n{}\n## B\n\n{}", lua("jump('## B')"), lua("jump('## A')")));
    let e = run_with(Rc::new(TestHost::default()), &src, "", |o| o.limits.section_entries = Some(2_000)).unwrap_err();
    assert_eq!(e.kind, RunErrorKind::Limit);
    assert!(e.message.starts_with("section entry limit of 2000 reached entering ## "), "{}", e.message);
    // A pcall around a call cannot swallow it: the run stops.
    let src = prompt(&format!("## A\n\n{}\n## C\n\n{}", lua("while true do pcall(call, '## C') end"), lua("return 1")));
    let e = run_with(Rc::new(TestHost::default()), &src, "", |o| o.limits.section_entries = Some(500)).unwrap_err();
    assert_eq!(e.kind, RunErrorKind::Limit, "{}", e.message);
    assert_eq!(
        e.message,
        "section entry limit of 500 reached entering ## C: the run entered sections that many times \
         (a jump or call loop that never ends?); limits.sectionEntries raises it"
    );
}

#[test]
fn the_section_entry_limit_is_a_run_option() {
    let host = Rc::new(TestHost::default());
    let src = prompt(&format!(
        "## A\n\n{}\n## B\n\n{}",
        lua("var.n = (var.n or 0) + 1\nif var.n < 30 then jump('## B') end\nreturn var.n"),
        lua("jump('## A')")
    ));
    let run = |limit| run_with(host.clone(), &src, "", |o| o.limits.section_entries = Some(limit));
    assert_eq!(run(60).unwrap().as_deref(), Some("30"));
    let e = run(40).unwrap_err();
    assert_eq!((e.kind, e.message.starts_with("section entry limit of 40 reached")), (RunErrorKind::Limit, true), "{}", e.message);
}

#[test]
fn events_and_model_requests_name_their_chain_and_entry() {
    let host = Rc::new(TestHost::default());
    host.model("default", vec![json!("a"), json!("b")]);
    let src = prompt(&format!(
        "## Main\n\n{}\n### W\n\n{}\n## Helper\n\n{}",
        lua("tasks.fanout('### W', { 1, 2 })\nreturn call('## Helper')"),
        lua("log('arm ' .. item)\nreturn models.infer('x')"),
        lua("log('helping')\nreturn 'ok'"),
    ));
    assert_eq!(run_host(host.clone(), &src).unwrap().as_deref(), Some("ok"));
    let events = host.events.borrow();
    let of = |t: &str| events.iter().filter(|e| e["type"] == t).cloned().collect::<Vec<Json>>();
    let main = of("section_started").into_iter().find(|e| e["heading"] == "## Main").unwrap();
    assert_eq!((main["chain"].as_str(), main.get("caller")), (Some("0"), None));
    // The two arms are two chains, each started by ## Main's entry.
    let arms: Vec<Json> = of("section_started").into_iter().filter(|e| e["heading"] == "### W").collect();
    let mut chains: Vec<&str> = arms.iter().map(|e| e["chain"].as_str().unwrap()).collect();
    chains.sort();
    assert_eq!(chains, ["0.0", "0.1"]);
    assert!(arms.iter().all(|e| e["caller"] == main["id"]), "{arms:?}");
    // A call shares its caller's chain, and names the calling entry.
    let helper = of("section_started").into_iter().find(|e| e["heading"] == "## Helper").unwrap();
    assert_eq!((helper["chain"].as_str(), &helper["caller"]), (Some("0"), &main["id"]));
    // Every event inside an entry says which; model requests too.
    for log in of("log") {
        assert!(log["chain"].is_string() && log["entry"].is_u64(), "{log}");
    }
    let requests = host.requests.borrow();
    let mut request_chains: Vec<&str> = requests.iter().map(|r| r["chain"].as_str().unwrap()).collect();
    request_chains.sort();
    assert_eq!(request_chains, ["0.0", "0.1"]);
}

#[test]
fn a_host_that_observes_nothing_gets_only_the_run_events_and_the_same_result() {
    let source = prompt(&format!(
        "## Main\n\n{}\n### W\n\n{}",
        lua("local rs = tasks.fanout('### W', { 1, 2, 3 })\nlog('done')\nreturn rs[1].text .. rs[2].text .. rs[3].text"),
        lua("return models.infer('x') .. sys.index"),
    ));
    let run = |unobserved: bool| {
        let host = Rc::new(TestHost::default());
        host.unobserved.set(unobserved);
        host.model("default", vec![json!("a"), json!("b"), json!("c")]);
        let result = run_host(host.clone(), &source);
        let events: Vec<String> = host.events.borrow().iter().map(|e| e["event"].as_str().unwrap_or_default().to_string()).collect();
        let requests = host.requests.borrow().clone();
        (result.ok().flatten(), events, requests)
    };
    let (watched, watched_events, watched_requests) = run(false);
    let (unwatched, unwatched_events, unwatched_requests) = run(true);
    assert_eq!(watched.as_deref(), Some("a1b2c3"));
    assert_eq!(unwatched, watched);
    assert_eq!(unwatched_requests, watched_requests, "the model requests do not depend on an observer");
    for event in
        ["task_started", "section_started", "model_turn_started", "model_turn_completed", "log", "section_finished", "task_finished"]
    {
        assert!(watched_events.iter().any(|e| e == event), "an observer sees {event}");
    }
    assert_eq!(unwatched_events, ["run_started", "run_finished"]);
}
