mod common;
use common::*;

#[test]
fn greet() {
    let src = "---\nname: greet\ndescription: Greets the argument string\nrunvil: 0\n---\n\n# Greet\n\n## Main\n\nhi {{ args }}!\n\n```lua\nreturn prose\n```\n";
    assert_eq!(result(src, "Acme Corp"), "hi Acme Corp!");
}
