//! `check`: every static error of a prompt, each with the message the run reports for it, found
//! without running anything.
mod common;
use common::*;
use runvil::check::{check, Diagnostic, Severity};
use runvil::host::{PackSpec, Unavailable};
use runvil::RunErrorKind;

/// (line, kind, message) of each finding, for compact assertions.
fn found(source: &str) -> Vec<(usize, RunErrorKind, String)> {
    check(source, None).into_iter().map(|d| (d.line, d.kind, d.message)).collect()
}

fn only(source: &str) -> Diagnostic {
    let mut all = check(source, None);
    assert_eq!(all.len(), 1, "{all:#?}");
    all.remove(0)
}

/// The check finds exactly the error the run ends with: same kind, same message.
fn same_as_run(source: &str) -> Diagnostic {
    let d = only(source);
    let e = error(source, "");
    assert_eq!((d.kind, &d.message), (e.kind, &e.message), "check and run disagree on\n{source}");
    d
}

/// The five-error prompt, with each error switched on or off without moving a line.
fn five(frontmatter: bool, placeholder: bool, call: bool, syntax: bool, fence: bool) -> String {
    let pick = |bad: bool, wrong: &str, right: &str| if bad { wrong.to_string() } else { right.to_string() };
    [
        "---".into(),
        pick(frontmatter, "nmae: x", "name: x"),
        "---".into(),
        "# T".into(),
        "".into(),
        "## Main".into(),
        "".into(),
        pick(placeholder, "Say {{ var. x }}.", "Say {{ args }}."),
        "".into(),
        "```lua".into(),
        pick(call, "local r = call(\"## Hepler\")", "local r = call(\"## Helper\")"),
        "return prose .. tostring(r)".into(),
        "```".into(),
        "".into(),
        "## Helper".into(),
        "".into(),
        "```lua".into(),
        pick(syntax, "local = 1", "local y = 1"),
        "return 'x'".into(),
        "```".into(),
        "".into(),
        "```text".into(),
        pick(fence, "notes", "```"),
        "".into(),
    ]
    .join("\n")
}

#[test]
fn five_errors_in_one_pass_in_source_order_each_as_the_run_reports_it() {
    assert_eq!(result(&five(false, false, false, false, false), ""), "Say .x");
    let all = check(&five(true, true, true, true, true), None);
    let at: Vec<(usize, usize, RunErrorKind)> = all.iter().map(|d| (d.line, d.column, d.kind)).collect();
    assert_eq!(
        at,
        [
            (2, 1, RunErrorKind::Frontmatter),
            (8, 5, RunErrorKind::Lua),
            (11, 16, RunErrorKind::Lua),
            (18, 1, RunErrorKind::Lua),
            (22, 1, RunErrorKind::Parse),
        ]
    );
    assert!(all.iter().all(|d| d.severity == Severity::Error));
    let sections: Vec<Option<&str>> = all.iter().map(|d| d.section.as_deref()).collect();
    assert_eq!(sections, [None, Some("## Main"), Some("## Main"), Some("## Helper"), None]);
    let singles = [
        five(true, false, false, false, false),
        five(false, true, false, false, false),
        five(false, false, true, false, false),
        five(false, false, false, true, false),
        five(false, false, false, false, true),
    ];
    for (d, single) in all.iter().zip(&singles) {
        let e = error(single, "");
        assert_eq!((d.kind, &d.message), (e.kind, &e.message));
        assert_eq!(check(single, None), vec![d.clone()]);
    }
}

#[test]
fn frontmatter_and_markdown_errors() {
    same_as_run("---\nname: x\nmodels: [a]\n---\n# T\n");
    same_as_run("---\nuses: [\"bad id!\"]\n---\n# T\n");
    same_as_run("---\nname: x\n# T\n");
    same_as_run("# T\n\n## A\n\n```lua shared\nx = 1\n```\n");
    same_as_run("# T\n\n```lua shared\nx = 1\n```\n\n```lua shared\ny = 1\n```\n");
    same_as_run("# T\n\n## A\n\n## A\n");
    same_as_run("# T\n\n# U\n");
    // Past one error, the body is still read: every Markdown error, then the Lua.
    let source = "# T\n\n## A\n\n## A\n\n```lua\nlocal = 1\n```\n\n# U\n";
    let kinds: Vec<(usize, RunErrorKind)> = found(source).into_iter().map(|(l, k, _)| (l, k)).collect();
    assert_eq!(kinds, [(5, RunErrorKind::Parse), (8, RunErrorKind::Lua), (11, RunErrorKind::Parse)]);
}

#[test]
fn lua_syntax_errors_in_every_block_at_their_file_lines() {
    let d = same_as_run("# T\n\n```lua\nif\n```\n");
    assert_eq!((d.line, d.section), (5, None));
    assert_eq!(d.message, "# T:5: unexpected symbol near <eof>");
    // Blocks the walk never reaches are checked too; a run never reports these.
    let source = "# T\n\n## A\n\n```lua\nreturn 1\n```\n\n## B\n\n```lua\nx = = 1\n```\n\n```lua\nreturn (\n```\n";
    let all = found(source);
    assert_eq!(all.iter().map(|(l, _, _)| *l).collect::<Vec<_>>(), [12, 17]);
    assert!(all[0].2.starts_with("## B:12:"), "{}", all[0].2);
    assert!(run(source, "").is_ok());
    let shared = same_as_run("# T\n\n```lua shared\nfunction f(\n```\n");
    assert_eq!((shared.line, shared.message.as_str()), (5, "lua shared:5: <name> or '...' expected near <eof>"));
}

#[test]
fn heading_references_each_function_and_form() {
    let body = |code: &str| format!("# T\n\n## A\n\n```lua\n{code}\n```\n\n## B\n\n- one\n\n### C\n\ntext\n");
    for code in [
        "return call('## X')",
        "jump '## X'",
        "return require [[## X]]",
        "return tasks.spawn(\"## X\", {}):join()",
        "return tasks.fanout('## X', {1})",
        "return prompt.list('## X')",
        "return prompt.list('## A ')",
        "return call('### C')",
    ] {
        let d = same_as_run(&body(code));
        assert_eq!((d.line, d.section.as_deref()), (6, Some("## A")), "{code}");
        assert!(d.message.contains("is visible from here") || d.message.contains("holds no Markdown list"), "{}", d.message);
    }
    let d = only(&body("return  call(\"## X\", 'input')"));
    assert_eq!(d.column, 14);
    // What resolves, what is not a lone literal, and what a binding takes over are not reported.
    for code in [
        "return call('## B') .. #prompt.list('## B')",
        "return call('## ' .. 'X')",
        "local h = '## X'; return call(h)",
        "local call = function(h) return h end; return call('## X')",
        "local function jump(h) end; jump('## X')",
        "tasks.spawn = function() end; tasks.spawn('## X')",
        "return x.call('## X')",
        "-- call('## X')\nreturn [[ call('## X') ]]",
    ] {
        assert_eq!(found(&body(code)), [], "{code}");
    }
    // The H1 body sees the top level; a child sees its siblings and its own children.
    assert_eq!(found("# T\n\n```lua\nreturn call('## A')\n```\n\n## A\n\ntext\n"), []);
    let d = only("# T\n\n## A\n\n### C\n\n```lua\nreturn call('## A')\n```\n");
    assert_eq!(d.message, "call: no section \"## A\" is visible from here; visible sections: []");
}

#[test]
fn the_shared_library_resolves_from_any_entry() {
    let source = "# T\n\n```lua shared\nfunction go() return call('### C') end\n```\n\n## A\n\n### C\n\n```lua\nreturn 1\n```\n";
    assert_eq!(found(source), []);
    let d = only("# T\n\n```lua shared\nfunction go() return call('## Z') end\n```\n\n## A\n\ntext\n");
    assert_eq!((d.line, d.section), (4, None));
    assert_eq!(d.message, "call: no section \"## Z\" is visible from here; visible sections: [\"## A\"]");
}

#[test]
fn placeholders_with_a_shape_no_value_can_fix() {
    let section = |prose: &str| format!("# T\n\n## A\n\n{prose}\n\n```lua\nreturn prose\n```\n");
    for prose in ["{{ }}", "a {{ var }}", "{{ sys }}", "{{ args.x }}", "x {{ item.y }}", "{{ prose }}", "{{ var.a. b }}", "open {{ args"] {
        let d = same_as_run(&section(prose));
        assert_eq!((d.line, d.severity), (5, Severity::Error), "{prose}");
    }
    // Every one, not just the first; and none that depends on the run's values.
    assert_eq!(found(&section("{{ }} and\n{{ var }}")).iter().map(|(l, _, _)| *l).collect::<Vec<_>>(), [5, 6]);
    assert_eq!(found(&section("{{ var.missing }} {{ ghost }} {{ item }} \\{{ }}")), []);
    // In the H1 body, a placeholder is the prompt's gate.
    let d = same_as_run("# T\n\nHi {{ var }}\n\n```lua\nlocal p = prose\n```\n");
    assert_eq!((d.kind, d.line, d.column), (RunErrorKind::RequirementsUnmet, 3, 4));
    // A block that never reads its prose never renders it: a warning, and the run succeeds.
    let source = "# T\n\n## A\n\n{{ var }}\n\n```lua\nreturn 'ok'\n```\n";
    assert_eq!(only(source).severity, Severity::Warning);
    assert_eq!(result(source, ""), "ok");
}

#[test]
fn declared_packs_the_host_lacks() {
    let source = "---\nname: x\nuses: [web, acme/search]\n---\n# T\n";
    assert_eq!(check(source, None), []);
    let packs = [PackSpec { name: "web".into(), unavailable: Some(Unavailable::Reason("offline".into())), ..Default::default() }];
    let d = check(source, Some(&packs)).remove(0);
    assert_eq!((d.kind, d.line), (RunErrorKind::RequirementsUnmet, 3));
    assert_eq!(
        d.message,
        "the environment cannot satisfy this prompt:\n- web is unavailable: offline\n- search is unavailable: acme/search is not installed"
    );
    let host = std::rc::Rc::new(TestHost::default());
    *host.packs.borrow_mut() = packs.to_vec();
    assert_eq!(run_with(host, source, "", |_| {}).unwrap_err().message, d.message);
    assert_eq!(check(source, Some(&[])).len(), 1);
}

#[test]
fn every_example_is_clean_and_nothing_runs() {
    for entry in std::fs::read_dir("examples").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") && path.file_name().is_some_and(|n| n != "README.md") {
            let source = std::fs::read_to_string(&path).unwrap();
            assert_eq!(check(&source, None), [], "{}", path.display());
        }
    }
    let started = std::time::Instant::now();
    let source = "# T\n\n```lua\nwhile true do end\n```\n\n## A\n\n```lua\nreturn models.infer('hi')\n```\n";
    assert_eq!(check(source, None), []);
    assert!(started.elapsed().as_secs() < 2);
}

#[test]
fn malformed_input_ends_in_findings_never_a_panic() {
    for source in
        ["", "---", "---\n---", "```lua", "# T\n\n```lua\n\"\\", "\u{0}\u{ffff}{{", "# T\n\n```lua\nreturn call(\"\\u{d800}\")\n```\n"]
    {
        let _ = check(source, None);
    }
    let deep = format!("# T\n\n```lua\nreturn {}1{}\n```\n", "(".repeat(300), ")".repeat(300));
    let d = same_as_run(&deep);
    assert_eq!(d.kind, RunErrorKind::Lua);
}
