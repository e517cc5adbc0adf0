//! Prompt structure: frontmatter checks, sections, fences, breaks, lists, and their errors.
mod common;
use common::*;
use runvil::RunErrorKind;

#[test]
fn frontmatter_unknown_key_names_the_key_its_place_and_the_allowed_keys() {
    let e = error("---\nname: x\nnmae: y\n---\n# T\n", "");
    assert_eq!(e.kind, RunErrorKind::Frontmatter);
    assert_eq!((e.line, e.column), (Some(3), Some(1)));
    assert!(
        e.message.starts_with("invalid frontmatter: unknown key `nmae` (line 3, column 1); allowed keys: name, description, runvil"),
        "{}",
        e.message
    );
}

#[test]
fn frontmatter_versions() {
    assert_eq!(result("---\npromptforge: 0\n---\n# T\n\n## M\n\n```lua\nreturn 'v0'\n```\n", ""), "v0");
    let e = error("---\nrunvil: 1\n---\n# T\n", "");
    assert_eq!(e.kind, RunErrorKind::Frontmatter);
    assert!(e.message.contains("unsupported language version `runvil: 1`"), "{}", e.message);
    let e = error("---\nname: [unclosed\n---\n# T\n", "");
    assert_eq!(e.kind, RunErrorKind::Frontmatter);
    assert!(e.line.is_some());
    let e = error("---\nname: x\n# T\n", "");
    assert_eq!(e.kind, RunErrorKind::Frontmatter);
}

#[test]
fn deeply_nested_frontmatter_is_refused_before_yaml_parsing() {
    // 80 KB of `[` took a YAML parser 18 s before its own depth error; the pre-scan answers at once.
    let started = std::time::Instant::now();
    let e = error(&format!("---\nname: x\nargs: {}\n---\n# T\n", "[".repeat(80_000)), "");
    assert_eq!(e.kind, RunErrorKind::Frontmatter);
    assert_eq!(e.message, "invalid frontmatter: collections nested deeper than 64 levels (line 3, column 71)");
    let e = error(&format!("---\nargs: {}\n---\n# T\n", "{a: ".repeat(50_000)), "");
    assert!(e.message.starts_with("invalid frontmatter: collections nested deeper than 64 levels"), "{}", e.message);
    assert!(started.elapsed().as_secs() < 2, "took {:?}", started.elapsed());
    // Brackets in quotes, comments and plain text do not count; real nesting within the limit parses.
    let text = "[".repeat(100);
    let ok = format!("---\nname: \"{text}\"\ndescription: '{text}' # {text}\n---\n# T\n\n## M\n\n```lua\nreturn 'ok'\n```\n");
    assert_eq!(result(&ok, ""), "ok");
    let nested = format!("---\nmodels: {{default: {{x: {}1{}}}}}\n---\n# T\n", "[".repeat(60), "]".repeat(60));
    let e = error(&nested, "");
    assert!(!e.message.contains("nested deeper"), "{}", e.message);
}

#[test]
fn uses_entries_are_checked() {
    let e = error("---\nuses: [acme/web/fetch]\n---\n# T\n", "");
    assert_eq!(e.message, "invalid frontmatter: invalid uses entry `acme/web/fetch`: a uses entry is a Pack id, such as `web`, or vendor/name, such as `acme/web` (line 2, column 8)");
    assert_eq!((e.line, e.column), (Some(2), Some(8)));
    let e = error("---\nuses: [web, user-input, user-input, web]\n---\n# T\n", "");
    assert_eq!(e.message, "invalid frontmatter: Pack id user-input is declared more than once under uses");
}

#[test]
fn frontmatter_values_without_a_json_form_are_refused() {
    // A null map key has no JSON spelling; it must not turn the whole spec into `{}`.
    let e = error("---\nmodels:\n  main:\n    ~: x\n---\n# T\n", "");
    assert_eq!(e.kind, RunErrorKind::Frontmatter);
    assert_eq!((e.line, e.column), (Some(2), Some(1)));
    assert_eq!(e.message, "invalid frontmatter: the spec of role `main` has no JSON form: key must be a string (line 2, column 1)");
    let e = error("---\nname: t\nargs:\n  topic:\n    type: string\n    [a, b]: 1\n---\n# T\n", "");
    assert_eq!((e.kind, e.line, e.column), (RunErrorKind::Frontmatter, Some(3), Some(1)));
    assert_eq!(
        e.message,
        "invalid frontmatter: the declaration of argument `topic` has no JSON form: key must be a string (line 3, column 1)"
    );
    // serde_json would turn a non-finite number into null.
    let e = error("---\nargs:\n  topic: { type: number, default: .nan }\n---\n# T\n", "");
    assert_eq!((e.kind, e.line, e.column), (RunErrorKind::Frontmatter, Some(2), Some(1)));
    assert_eq!(
        e.message,
        "invalid frontmatter: the declaration of argument `topic` has no JSON form: JSON has no NaN or infinite numbers (line 2, column 1)"
    );
}

#[test]
fn structural_mistakes_are_parse_errors_with_lines() {
    let e = error("# T\n\n## Main\n\n```lua\nreturn 1\n", "");
    assert_eq!(e.kind, RunErrorKind::Parse);
    assert_eq!(e.line, Some(5));
    assert_eq!(e.message, "unclosed code fence \"```lua\": no closing \"```\" line before the end of the prompt (line 5)");
    let e = error("# T\n\n```lua shared\nx = 1\n```\n\n```lua shared\ny = 1\n```\n", "");
    assert_eq!((e.kind, e.line), (RunErrorKind::Parse, Some(7)));
    let e = error("# T\n\n## A\n\n## A\n", "");
    assert_eq!((e.kind, e.line), (RunErrorKind::Parse, Some(5)));
    let e = error("# T\n\n# U\n", "");
    assert_eq!(e.kind, RunErrorKind::Parse);
    // A fence inside a block quote closes on a quoted line; one the quote ends first does not.
    let quoted = "# T\n\n## Main\n\n> ```text\n> notes\n> ```\n>> ~~~~\n>> x\n>>  ~~~~\n\n```lua\nreturn prose\n```\n";
    assert_eq!(result(quoted, ""), "> ```text\n> notes\n> ```\n>> ~~~~\n>> x\n>>  ~~~~");
    let e = error("# T\n\n## Main\n\n> ```text\n> notes\n\nafter\n", "");
    assert_eq!(e.kind, RunErrorKind::Parse);
    assert_eq!(e.message, "unclosed code fence \"```text\": no closing \"```\" line before the end of the prompt (line 5)");
}

#[test]
fn off_walk_sections_are_skipped_and_breaks_elsewhere_only_reset_prose() {
    let src = "# T\n\n## Helper\n\n---\n\n```lua\nreturn 'helper'\n```\n\n## Main\n\nold\n\n---\n\nnew\n\n```lua\nreturn prose\n```\n";
    assert_eq!(result(src, ""), "new");
}

#[test]
fn children_never_run_by_fall_through() {
    let src = "# T\n\n## A\n\n### Child\n\n```lua\nreturn 'child'\n```\n\n## B\n\n```lua\nreturn 'b'\n```\n";
    assert_eq!(result(src, ""), "b");
}

#[test]
fn prompt_global() {
    let src = "---\nname: lists\ndescription: d\n---\n# T\n\n## Main\n\n```lua\nlocal l = prompt.list('### Topics')\nreturn prompt.name .. '|' .. table.concat(prompt.sections, ',') .. '|' .. table.concat(l, ',') .. '|' .. #l\n```\n\n### Topics\n\n- alpha\n- beta gamma\n  - nested\n1. not this list\n";
    assert_eq!(result(src, ""), "lists|## Main,### Topics|alpha,beta gamma|2");
    let src = "# T\n\n## Main\n\n```lua\nlocal ok, e = pcall(prompt.list, '## Nope')\nreturn e.message\n```\n";
    assert_eq!(result(src, ""), "prompt.list: no section \"## Nope\" is visible from here; visible sections: []");
}

#[test]
fn lua_errors_carry_file_lines_and_syntax_errors_fail_the_run() {
    let e = error("# T\n\n## Main\n\n```lua\nlocal x = 1\nerror('boom')\n```\n", "");
    assert_eq!(e.message, "## Main:7: boom");
    assert_eq!(e.section.as_deref(), Some("## Main"));
    let e = error("# T\n\n## Main\n\n```lua\nlocal = 1\n```\n", "");
    assert_eq!(e.kind, RunErrorKind::Lua);
    assert!(e.message.starts_with("## Main:6:"), "{}", e.message);
}

#[test]
fn shared_library_replays_into_every_entry() {
    let src = "# T\n\n```lua shared\nfunction twice(s) return s .. s end\ncount = (count or 0) + 1\nreturn 'discarded'\n```\n\n```lua\nvar.h1 = twice('h')\n```\n\n## A\n\n```lua\nvar.a = twice('a') .. count\n```\n\n## B\n\n```lua\nreturn var.h1 .. var.a .. count\n```\n";
    assert_eq!(result(src, ""), "hhaa11");
}

/// The build replaces pulldown-cmark's table of HTML named character references with a stub
/// (vendor/pulldown-cmark/entities.rs, for size): prose never depended on it (it is sliced from
/// the source), and a fence's info string now keeps a named reference as written, while numeric
/// references still decode there.
#[test]
fn character_references_in_prose_and_fence_info_strings() {
    let src = "# T\n\n## Main\n\na &amp; b &#38; c &nbsp;\n\n```lua\nreturn prose\n```\n";
    assert_eq!(result(src, ""), "a &amp; b &#38; c &nbsp;");
    let src = "# T\n\n## Main\n\n```lua&nbsp;\nreturn 'fence'\n```\n\n```lua\nreturn prose\n```\n";
    assert_eq!(result(src, ""), "```lua&nbsp;\nreturn 'fence'\n```");
    let src = "# T\n\n## Main\n\n```l&#117;a\nreturn 'numeric'\n```\n";
    assert_eq!(result(src, ""), "numeric");
}

/// The build's pulldown-cmark runs no inline pass (vendor/pulldown-cmark/patches, for size):
/// emphasis, code spans, links, autolinks, inline HTML come out as text inside their block, and
/// link labels (of reference definitions) fold ASCII case only. A prompt sees no difference:
/// prose and headings are sliced from the source, and the engine reads no inline event.
#[test]
fn inline_markup_is_text_and_prompts_see_no_difference() {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let src = "*a* __b__ `c` [d](/e) [f] ![g](/h) <https://i> <span>j</span> $k$ \\*l\\\nm  \nn\n\n[f]: /o\n";
    let events: Vec<Event> = Parser::new(src).collect();
    assert!(matches!(events.first(), Some(Event::Start(Tag::Paragraph))), "{events:?}");
    assert!(matches!(events.last(), Some(Event::End(TagEnd::Paragraph))), "{events:?}");
    let inner = &events[1..events.len() - 1];
    assert!(inner.iter().all(|e| matches!(e, Event::Text(_) | Event::SoftBreak | Event::HardBreak)), "{events:?}");
    let text: String = inner.iter().filter_map(|e| if let Event::Text(t) = e { Some(t.as_ref()) } else { None }).collect();
    for word in ["*a*", "__b__", "`c`", "[d](/e)", "[f]", "![g](/h)", "<https://i>", "<span>j</span>", "$k$"] {
        assert!(text.contains(word), "{word} in {text:?}");
    }
    let src = "# T\n\n[ω]: /greek\n[foo]: /ascii\n\n## See [Ω] and [FOO]\n\nProse [Ω], *[FOO]* and `[ω][]`.\n\n```lua\nreturn prose\n```\n";
    assert_eq!(result(src, ""), "Prose [Ω], *[FOO]* and `[ω][]`.");
    let src = "# T\n\n[ω]: /greek\n\n## Main\n\n```lua\ncall('## See *[Ω]* `x`')\nreturn 'called'\n```\n\n## See *[Ω]* `x`\n\n```lua\nlog('in')\n```\n";
    assert_eq!(result(src, ""), "called");
}
