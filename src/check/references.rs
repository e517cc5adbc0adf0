//! Heading references given as string literals to the Engine functions that take a heading:
//! `call`, `jump`, `require`, `tasks.spawn`, `tasks.fanout` and `prompt.list`, in each of Lua's
//! call forms (`call "x"`, `call [[x]]`, `call("x")`, `call('x', input)`). An argument that is
//! not a lone literal (`call("## " .. name)`, a variable) is a value only the run knows.

use super::lexer::{Kind, Token};

/// The Engine functions that take a heading, as a block names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Call,
    Jump,
    Require,
    TasksSpawn,
    TasksFanout,
    PromptList,
}

impl Target {
    /// The name the function's not-found message opens with.
    pub fn name(self) -> &'static str {
        match self {
            Target::Call => "call",
            Target::Jump => "jump",
            Target::Require => "require",
            Target::TasksSpawn => "tasks.spawn",
            Target::TasksFanout => "tasks.fanout",
            Target::PromptList => "prompt.list",
        }
    }

    /// The global the function is reached through (what a binding can shadow).
    pub fn global_name(self) -> &'static str {
        match self {
            Target::Call => "call",
            Target::Jump => "jump",
            Target::Require => "require",
            Target::TasksSpawn | Target::TasksFanout => "tasks",
            Target::PromptList => "prompt",
        }
    }

    fn by_path(first: &str, field: Option<&str>) -> Option<Target> {
        Some(match (first, field) {
            ("call", None) => Target::Call,
            ("jump", None) => Target::Jump,
            ("require", None) => Target::Require,
            ("tasks", Some("spawn")) => Target::TasksSpawn,
            ("tasks", Some("fanout")) => Target::TasksFanout,
            ("prompt", Some("list")) => Target::PromptList,
            _ => return None,
        })
    }
}

/// One literal heading reference: the function, the literal's value and its offset in the chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    pub target: Target,
    pub heading: String,
    pub at: usize,
}

fn sym(t: Option<&Token>, s: &str) -> bool {
    matches!(t, Some(Token { kind: Kind::Sym(x), .. }) if *x == s)
}

fn name<'a>(t: Option<&Token<'a>>) -> Option<&'a str> {
    match t {
        Some(Token { kind: Kind::Name(n), .. }) => Some(n),
        _ => None,
    }
}

/// Whether token `i` stands for a global (not a field `x.call` or a method `x:call`).
fn is_global(tokens: &[Token], i: usize) -> bool {
    i == 0 || !(sym(tokens.get(i - 1), ".") || sym(tokens.get(i - 1), ":"))
}

/// Every literal reference in `tokens`, in order.
pub fn find(tokens: &[Token]) -> Vec<Reference> {
    let mut found = Vec::new();
    for i in 0..tokens.len() {
        let Some(first) = name(tokens.get(i)) else { continue };
        if !is_global(tokens, i) || (i > 0 && name(tokens.get(i - 1)) == Some("function")) {
            continue;
        }
        let field = sym(tokens.get(i + 1), ".").then(|| name(tokens.get(i + 2))).flatten();
        let Some(target) = Target::by_path(first, field).or_else(|| Target::by_path(first, None)) else { continue };
        // The argument follows the name, or the field of `tasks.spawn` and `prompt.list`.
        let arg = if matches!(target, Target::Call | Target::Jump | Target::Require) { i + 1 } else { i + 3 };
        let literal = |j: usize| match tokens.get(j) {
            Some(Token { kind: Kind::Str(s), at }) => Some((s.clone(), *at)),
            _ => None,
        };
        let hit = if sym(tokens.get(arg), "(") {
            literal(arg + 1).filter(|_| sym(tokens.get(arg + 2), ",") || sym(tokens.get(arg + 2), ")"))
        } else {
            literal(arg)
        };
        if let Some((heading, at)) = hit {
            found.push(Reference { target, heading, at });
        }
    }
    found
}

/// Whether `tokens` bind `global` where the scanner can see it: a `local` of that name (a
/// variable, a function, a parameter, a loop variable), an assignment to it or to one of its
/// fields (`tasks.spawn = f`, `_G.call = f`), or a `function` statement naming it. A block that
/// does so calls something else through the name, so its references through it are not checked.
pub fn binds(tokens: &[Token], global: &str) -> bool {
    (0..tokens.len()).any(|i| {
        if name(tokens.get(i)) != Some(global) {
            return false;
        }
        let prev = i.checked_sub(1).and_then(|p| tokens.get(p));
        let after_g = i >= 2 && sym(prev, ".") && name(tokens.get(i - 2)) == Some("_G");
        if !is_global(tokens, i) && !after_g {
            return false;
        }
        if matches!(name(prev), Some("local" | "function" | "for")) {
            return true;
        }
        // An assignment `name = ...`, `name.field = ...` or `a, name = ...`.
        let mut j = i + 1;
        while sym(tokens.get(j), ".") && name(tokens.get(j + 1)).is_some() {
            j += 2;
        }
        if sym(tokens.get(j), "=") {
            return true;
        }
        in_binding_list(tokens, i)
    })
}

/// Whether name `i` sits in a list of names that binds them: after `local`, `for`, or inside a
/// `function ( ... )` parameter list, or before the `=` of a multiple assignment.
fn in_binding_list(tokens: &[Token], i: usize) -> bool {
    // Back over `name ,` pairs to what opens the list.
    let mut j = i;
    while j >= 2 && sym(tokens.get(j - 1), ",") && name(tokens.get(j - 2)).is_some() {
        j -= 2;
    }
    let opener = j.checked_sub(1).and_then(|p| tokens.get(p));
    if matches!(name(opener), Some("local" | "for")) {
        return true;
    }
    if sym(opener, "(") && j >= 2 {
        // `function (a, b)` or `function name(a, b)` / `function a.b:c(x)`.
        let mut k = j - 2;
        while k >= 1
            && (name(tokens.get(k)).is_some() || sym(tokens.get(k), ".") || sym(tokens.get(k), ":"))
            && name(tokens.get(k)) != Some("function")
        {
            k -= 1;
        }
        if name(tokens.get(k)) == Some("function") {
            return true;
        }
    }
    // Forward over `, name` pairs: a multiple assignment ends in `=`.
    let mut k = i + 1;
    while sym(tokens.get(k), ",") && name(tokens.get(k + 1)).is_some() {
        k += 2;
    }
    k > i + 1 && sym(tokens.get(k), "=")
}

/// Whether the chunk reads the `prose` global (so its pending prose is rendered).
pub fn reads_prose(tokens: &[Token]) -> bool {
    (0..tokens.len()).any(|i| name(tokens.get(i)) == Some("prose") && is_global(tokens, i))
}

#[cfg(test)]
mod tests {
    use super::super::lexer::tokens;
    use super::*;

    fn refs(code: &str) -> Vec<(Target, String)> {
        find(&tokens(code)).into_iter().map(|r| (r.target, r.heading)).collect()
    }

    #[test]
    fn call_forms() {
        let code = r###"call "## A"; call("## B"); call('## C', x); call [[## D]]
            local v = jump("## E"); require("## F"); tasks.spawn("## G", {}); tasks.fanout('## H', xs)
            prompt.list("## I"); call("## " .. n); call(name); x.call("## J"); o:jump("## K"); call("## L" .. "")"###;
        let heads: Vec<String> = refs(code).into_iter().map(|(_, h)| h).collect();
        assert_eq!(heads, ["## A", "## B", "## C", "## D", "## E", "## F", "## G", "## H", "## I"]);
        assert_eq!(refs("tasks.spawn('## X')")[0].0, Target::TasksSpawn);
    }

    #[test]
    fn bindings() {
        let t = tokens;
        assert!(binds(&t("local call = f"), "call"));
        assert!(binds(&t("local function call() end"), "call"));
        assert!(binds(&t("local a, call = 1, 2"), "call"));
        assert!(binds(&t("function f(x, call) end"), "call"));
        assert!(binds(&t("for _, call in pairs(t) do end"), "call"));
        assert!(binds(&t("call = nil"), "call"));
        assert!(binds(&t("a, call = 1, 2"), "call"));
        assert!(binds(&t("tasks.spawn = f"), "tasks"));
        assert!(binds(&t("_G.jump = f"), "jump"));
        assert!(binds(&t("function call() end"), "call"));
        assert!(!binds(&t("call('## A'); f(a, call); x.call = 1; if call == f then end"), "call"));
    }
}
