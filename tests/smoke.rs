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

#[test]
fn a_misspelt_field_of_models_raises_where_it_is_read() {
    let e = error(&prompt("```lua\nlocal f = models.infr\n```\n"), "");
    assert!(e.message.ends_with("models has no field 'infr' (its fields: compact, default, get, infer, loop, need, use)"), "{}", e.message);
    let e = error(&prompt("```lua\nmodels.compact()\n```\n"), "");
    assert!(e.message.ends_with("models.compact is not available in this version of Runvil"), "{}", e.message);
}

#[test]
fn models_and_compactors_are_sealed() {
    let lua = "local seen = { getmetatable(models), getmetatable(compactors) }
local tries = {
  function() models.x = 1 end,
  function() compactors.clear = 1 end,
  function() return compactors.nope end,
  function() compactors.clear() end,
}
for _, f in ipairs(tries) do
  local ok, e = pcall(f)
  seen[#seen + 1] = tostring(ok) .. ': ' .. tostring(e)
end
return table.concat(seen, ' | ')";
    assert_eq!(
        result(&prompt(&format!("```lua\n{lua}\n```\n")), ""),
        "models is sealed | compactors is sealed | false: models is sealed; cannot set 'x' | false: compactors is sealed; cannot set 'clear' | \
         false: compactors has no field 'nope' (its fields: clear) | false: compactors.clear is not available in this version of Runvil"
    );
}

#[test]
fn replacing_var_is_an_error_not_a_silent_loss() {
    for lua in ["var = { count = 1 }", "local x = var.a\nvar = { count = 1 }", "var.sub = {}\nvar = var.sub"] {
        let e = error(&prompt(&format!("```lua\n{lua}\n```\n\n## Next\n\n```lua\nreturn json.encode(var)\n```\n")), "");
        assert!(e.message.starts_with("this block assigned the global var"), "{lua}: {}", e.message);
        assert_eq!(e.line, Some(10), "{lua}");
    }
    // Clearing the name is harmless: the next read is var again.
    assert_eq!(result(&prompt("```lua\nvar.a = 1\nvar = nil\nreturn var.a\n```\n"), ""), "1");
}
