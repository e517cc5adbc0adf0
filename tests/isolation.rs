//! Isolation of section entries: every fanout arm and every sequential section entry sees a
//! pristine Lua state, whatever the entries before it did to theirs. The prompt is
//! pkg-tests/fixtures/isolation.md (pkg-tests/isolation.test.mjs runs it against the package):
//! each entry observes its state, then pollutes it every way a prompt can (globals, library
//! tables, the string metatable, `_G`'s metatable, the Engine globals, error values,
//! `math.random`, a heap of garbage, half the work budget), including arms that fail or are
//! cancelled after polluting.

mod common;

use common::{run_with, TestHost};
use runvil::RunErrorKind;
use serde_json::{json, Value as Json};
use std::rc::Rc;

const PROMPT: &str = include_str!("../pkg-tests/fixtures/isolation.md");

/// The ceiling the runs get: one observation's live strings fit, two entries' worth do not
/// (`the_probes_detect_state_left_behind` holds the prompt to that).
const MEMORY_BYTES: usize = 4 << 20;
/// The budget the runs get: one observation's loop fits, two do not.
const INSTRUCTIONS: u64 = 1_400_000;

/// What a pristine state shows (the part of each observation before `#`; after it come the
/// entry's `math.random` values, which depend on the entry's seed).
const PRISTINE: &str = "nil|nil|7|ABC|abab|a,b|2|9223372036854775807|Hi|table|true|nil|2|nil|nil|nil|[1,2]|nil|function|nil|\
function|nil|models has no field 'nope' (its fields: compact, default, get, infer, loop, need, use)|function|function|\
function|function|function|false|lua|error value|true|nil|40";

fn source(pollute: bool) -> String {
    if pollute {
        PROMPT.to_string()
    } else {
        let clean = PROMPT.replace("local POLLUTE = true", "local POLLUTE = false");
        assert_ne!(clean, PROMPT, "the fixture has its POLLUTE switch");
        clean
    }
}

/// Replaces the fixture's sections with `sections`, keeping its shared library.
fn with_sections(sections: &str) -> String {
    let at = PROMPT.find("\n## Main").expect("the fixture has a Main section");
    format!("{}\n{sections}", &PROMPT[..at])
}

struct Setup {
    seed: u64,
    concurrency: Option<u64>,
    /// Seeds the model's latencies (executor turns), which reorder the arms.
    latency_seed: u64,
}

fn run_setup(src: &str, s: &Setup) -> Result<Option<String>, runvil::RunError> {
    let host = Rc::new(TestHost::default());
    host.model("default", (0..100).map(|i| json!(format!("r{i}"))).collect());
    let mut state = s.latency_seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    *host.model_latency.borrow_mut() = Some(Box::new(move || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % 20
    }));
    run_with(host, src, "", |o| {
        o.seed = s.seed;
        o.limits.memory_bytes = Some(MEMORY_BYTES);
        o.limits.instructions = Some(INSTRUCTIONS);
        o.limits.fanout_concurrency = s.concurrency;
    })
}

fn observations(pollute: bool, s: &Setup) -> Json {
    let out = run_setup(&source(pollute), s).unwrap_or_else(|e| panic!("the isolation prompt runs: {e}"));
    serde_json::from_str(&out.expect("End returns")).expect("End returns JSON")
}

/// Each entry's observation: what a fresh state shows, its `math.random` values and the order
/// `pairs` visited string keys in (which the entry's string-hash seed sets).
fn all_seen(o: &Json) -> Vec<String> {
    let list = |k: &str| o[k].as_array().unwrap_or_else(|| panic!("{k} is a list: {o}")).iter().map(|v| v.as_str().unwrap().to_string());
    list("arms").chain(list("seq")).collect()
}

/// An observation's parts: (what a fresh state shows, the `math.random` values, the `pairs` order).
fn parts(s: &str) -> (&str, &str, &str) {
    let mut p = s.splitn(3, '#');
    let mut next = || p.next().unwrap_or_else(|| panic!("an observation has three parts: {s}"));
    (next(), next(), next())
}

#[test]
fn every_arm_and_entry_sees_a_pristine_state() {
    let o = observations(true, &Setup { seed: 7, concurrency: None, latency_seed: 1 });
    let seen = all_seen(&o);
    // 12 arms twice, three sections and the last one.
    assert_eq!(seen.len(), 28, "{o}");
    for (i, s) in seen.iter().enumerate() {
        let (fixed, seeded, keys) = parts(s);
        assert_eq!(fixed, PRISTINE, "observation {i}");
        assert_eq!(seeded.split(' ').count(), 3, "observation {i}: {s}");
        assert_eq!(keys.split(',').collect::<std::collections::BTreeSet<_>>().len(), 40, "observation {i}: {s}");
    }
    let bad = o["bad"].as_str().unwrap();
    assert!(bad.starts_with("false tasks.fanout: arm 2 (item \"fail\") failed: bad arm"), "{bad}");
}

#[test]
fn what_an_entry_sees_does_not_depend_on_what_ran_before() {
    // The seeded part too (math.random): equal whether the entries before it polluted their
    // states or not, in whatever order the arms ran and however many at once. (The same setup
    // on both sides: how many arms a failing fanout started numbers the chains after it.)
    for (concurrency, latency_seed) in [(None, 1), (None, 2), (Some(1), 3), (Some(3), 4), (Some(64), 5)] {
        let s = Setup { seed: 7, concurrency, latency_seed };
        let (polluted, clean) = (observations(true, &s), observations(false, &s));
        for (i, (p, c)) in all_seen(&polluted).iter().zip(all_seen(&clean)).enumerate() {
            assert_eq!(*p, c, "observation {i}, concurrency {concurrency:?}, latency seed {latency_seed}");
        }
        assert_eq!(polluted["bad"], clean["bad"], "concurrency {concurrency:?}, latency seed {latency_seed}");
    }
    let clean = observations(false, &Setup { seed: 7, concurrency: None, latency_seed: 1 });
    // Each entry has a sequence of its own (its seed mixes in the heading and the chain).
    let seen = all_seen(&clean);
    let mut randoms: Vec<&str> = seen.iter().map(|s| parts(s).1).collect();
    randoms.sort();
    randoms.dedup();
    assert_eq!(randoms.len(), seen.len(), "{seen:?}");
    // Another run seed, other values.
    assert_ne!(all_seen(&observations(false, &Setup { seed: 8, concurrency: None, latency_seed: 1 })), seen);
}

/// The observations are sensitive: in one state, what pollute leaves is seen, and the budget
/// and the ceiling are tight enough that an entry charged with an earlier one's work or heap
/// would fail.
#[test]
fn the_probes_detect_state_left_behind() {
    let s = Setup { seed: 7, concurrency: None, latency_seed: 1 };
    let same_state =
        with_sections("## Main\n\n```lua\npollute()\nlocal ok, seen = pcall(observe)\nreturn tostring(ok) .. ' ' .. tostring(seen)\n```\n");
    let out = run_setup(&same_state, &s).unwrap().unwrap();
    assert!(!out.contains(PRISTINE), "{out}");
    let twice = with_sections("## Main\n\n```lua\nobserve()\nobserve()\n```\n");
    let e = run_setup(&twice, &s).unwrap_err();
    assert!(e.kind == RunErrorKind::Limit && e.message.starts_with("instruction budget"), "{e}");
    let heap_kept =
        with_sections("## Main\n\n```lua\nkept = {}\nfor i = 1, 12000 do kept[i] = string.rep('g', 200) .. i end\nobserve()\n```\n");
    let e = run_setup(&heap_kept, &s).unwrap_err();
    assert!(e.kind == RunErrorKind::Limit && e.message.contains("memory ceiling"), "{e}");
}

/// Two runs of one prompt with one seed see the same `pairs` orders: a state's string-hash seed
/// is its entry's seed, never the operating system's randomness (what the entries before it did
/// does not change it either: `what_an_entry_sees_does_not_depend_on_what_ran_before` compares
/// the orders too). Another run seed gives others.
#[test]
fn the_same_seed_repeats_the_pairs_order() {
    let s = Setup { seed: 7, concurrency: None, latency_seed: 1 };
    let keys = |o: &Json| all_seen(o).iter().map(|s| parts(s).2.to_string()).collect::<Vec<_>>();
    let first = keys(&observations(false, &s));
    assert_eq!(keys(&observations(false, &s)), first);
    assert_ne!(keys(&observations(false, &Setup { seed: 8, ..s })), first);
}

const SORT_PROMPT: &str = include_str!("../pkg-tests/fixtures/sort-seed.md");

/// Each arm's draws (pkg-tests/fixtures/sort-seed.md): the adversary sort's comparisons and
/// order, the equal-keys sort's order, and `math.random` after `math.randomseed()`.
fn sort_draws(arms: usize, s: &Setup) -> Vec<String> {
    let host = Rc::new(TestHost::default());
    host.model("default", (0..arms).map(|i| json!(format!("r{i}"))).collect());
    let mut state = s.latency_seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    *host.model_latency.borrow_mut() = Some(Box::new(move || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % 20
    }));
    let out = run_with(host, SORT_PROMPT, &arms.to_string(), |o| {
        o.seed = s.seed;
        o.limits.fanout_concurrency = s.concurrency;
    })
    .unwrap_or_else(|e| panic!("the sort prompt runs: {e}"))
    .expect("Main returns");
    serde_json::from_str(&out).expect("Main returns a JSON list of strings")
}

/// `table.sort`'s randomized pivot and `math.randomseed()` draw from the arm's own state, so an
/// arm's draws are the same whichever arms were built before it ran, and equal to the arm alone.
#[test]
fn an_arm_draws_from_its_own_state_seed() {
    let alone = sort_draws(1, &Setup { seed: 7, concurrency: None, latency_seed: 1 });
    let one_at_a_time = sort_draws(6, &Setup { seed: 7, concurrency: Some(1), latency_seed: 1 });
    assert_eq!(one_at_a_time[0], alone[0], "the first arm, alone and in a fanout of six");
    // The draws show the seed: every arm has its own, and so its own adversary order and
    // random value; the equal-keys sort never draws, so it is the same in every arm.
    let field =
        |i: usize| one_at_a_time.iter().map(|s| s.split('#').nth(i).unwrap().to_string()).collect::<std::collections::BTreeSet<_>>();
    assert_eq!(field(0).len(), 6, "{one_at_a_time:?}");
    assert_eq!(field(1).len(), 1, "{one_at_a_time:?}");
    assert_eq!(field(2).len(), 6, "{one_at_a_time:?}");
    for (concurrency, latency_seed) in [(None, 1), (None, 2), (Some(2), 3), (Some(3), 4), (Some(64), 5)] {
        let draws = sort_draws(6, &Setup { seed: 7, concurrency, latency_seed });
        for (i, (d, r)) in draws.iter().zip(&one_at_a_time).enumerate() {
            assert_eq!(d, r, "arm {}, concurrency {concurrency:?}, latency seed {latency_seed}", i + 1);
        }
    }
    assert_ne!(sort_draws(6, &Setup { seed: 8, concurrency: Some(1), latency_seed: 1 }), one_at_a_time);
}
