mod common;
use common::*;

#[test]
fn greet() {
    let src = "---\nname: greet\ndescription: Greets the argument string\nrunvil: 0\n---\n\n# Greet\n\n## Main\n\nhi {{ args }}!\n\n```lua\nreturn prose\n```\n";
    assert_eq!(result(src, "Acme Corp"), "hi Acme Corp!");
}

#[test]
fn print_says_what_to_use_instead() {
    let e = error(&prompt("```lua\nprint('hi')\n```\n"), "");
    assert!(e.message.ends_with("attempt to call a nil value (global 'print'); Runvil has no print: log(message) writes a line to the run's log (the CLI shows it on stderr)"), "{}", e.message);
}

#[test]
fn a_log_line_may_hold_tabs_and_newlines_but_no_other_control_character() {
    assert_eq!(result(&prompt("```lua\nlog('a\\tb\\nc')\nreturn 'logged'\n```\n"), ""), "logged");
    let e = error(&prompt("```lua\nlog('a\\rb')\n```\n"), "");
    assert!(e.message.contains("log message contains the control character U+000D"), "{}", e.message);
}

#[test]
fn errors_a_block_ends_with_carry_its_line() {
    let src = "# T\n\n## Main\n\nSome prose.\n\n```lua\nlocal x = 1\nerror('boom')\n```\n\n## Next\n\n```lua\nstore.write('', 'x')\n```\n";
    let e = error(src, "");
    assert_eq!((e.message.as_str(), e.line, e.section.as_deref()), ("## Main:9: boom", Some(9), Some("## Main")));
    let e = error(&src.replace("error('boom')", "local y = 2"), "");
    assert_eq!((e.message.as_str(), e.line, e.section.as_deref()), ("invalid path \"\": path is empty", Some(15), Some("## Next")));
    let e = error("# T\n\n## A\n\n```lua\nreturn {}\n```\n", "");
    assert_eq!((e.message.as_str(), e.line), ("cannot return a table as a result", Some(6)));
}
