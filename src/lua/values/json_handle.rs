//! Where a proxy points: a JSON value the Engine holds (`var`, a frozen `argv`) and a path inside
//! it, read by reference and edited in place. Pure data: the proxies (`proxy`) are the Lua side.

use mlua::Value;
use serde_json::{Map, Value as Json};
use std::cell::RefCell;
use std::rc::Rc;

use crate::effects::memory::{self, json_size, member_size};

/// One step of a path into JSON data.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// Who may write through a proxy, and how a refused write is worded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Access {
    /// `var`: every write is checked to be JSON data at the assigning line.
    Var,
    /// The frozen `argv` of the sections after the H1 pass.
    FrozenArgv,
    /// `var` as Pack prelude code sees it: read-only at every depth.
    PreludeVar,
}

/// What a proxy's metatable keeps (as `Handle::Json`): which JSON value, and where inside it.
#[derive(Debug, Clone)]
pub struct JsonHandle {
    pub root: Rc<RefCell<Json>>,
    pub path: Vec<Step>,
    pub access: Access,
}

impl JsonHandle {
    fn root_name(&self) -> &'static str {
        match self.access {
            Access::Var | Access::PreludeVar => "var",
            Access::FrozenArgv => "argv",
        }
    }

    /// `var.row.cells[2]`: how messages name a place.
    pub fn describe(&self, extra: Option<&Step>) -> String {
        let mut s = self.root_name().to_string();
        for step in self.path.iter().chain(extra) {
            match step {
                Step::Key(k) => {
                    s.push('.');
                    s.push_str(k);
                }
                Step::Index(i) => s.push_str(&format!("[{i}]")),
            }
        }
        s
    }

    /// The value the handle addresses, by reference: nothing is copied. `None` when the place no
    /// longer exists (an ancestor was replaced). Never call into Lua while holding it: a Lua
    /// finalizer could write `var` and find it borrowed.
    pub fn value(&self) -> Option<std::cell::Ref<'_, Json>> {
        std::cell::Ref::filter_map(self.root.borrow(), |root| {
            let mut cur = root;
            for step in &self.path {
                cur = child(cur, step)?;
            }
            Some(cur)
        })
        .ok()
    }

    /// A copy of the value the handle addresses (what crosses out of `var` as data).
    pub fn get(&self) -> Option<Json> {
        self.value().map(|j| j.clone())
    }

    pub(super) fn with_target<R>(&self, f: impl FnOnce(&mut Json) -> R) -> Option<R> {
        let mut root = self.root.borrow_mut();
        let mut cur = &mut *root;
        for step in &self.path {
            cur = match (step, cur) {
                (Step::Key(k), Json::Object(m)) => m.get_mut(k)?,
                (Step::Index(i), Json::Array(a)) => a.get_mut(i.checked_sub(1)?)?,
                _ => return None,
            };
        }
        Some(f(cur))
    }
}

/// The value one step inside a container, by reference.
pub(super) fn child<'a>(container: &'a Json, step: &Step) -> Option<&'a Json> {
    match (step, container) {
        (Step::Key(k), Json::Object(m)) => m.get(k),
        (Step::Index(i), Json::Array(a)) => a.get(i.checked_sub(1)?),
        _ => None,
    }
}

/// The change in `var`'s compact JSON text (`effects::memory::json_size`) that setting `step` of
/// `container` to `new` (`None` removes) makes, or why the write is refused.
pub(super) fn write_delta(container: &Json, step: &Step, new: Option<&Json>, place: &str) -> Result<i64, String> {
    let size = |j: &Json| json_size(j) as i64;
    Ok(match (container, step, new) {
        (Json::Object(m), Step::Key(k), Some(j)) => match m.get(k) {
            Some(old) => size(j) - size(old),
            None => (member_size(k, j) + usize::from(!m.is_empty())) as i64,
        },
        (Json::Object(m), Step::Key(k), None) => match m.get(k) {
            Some(old) => -((member_size(k, old) + usize::from(m.len() > 1)) as i64),
            None => 0,
        },
        (Json::Array(a), Step::Index(i), new) => {
            let (i, len) = (*i, a.len());
            match new {
                Some(j) if i <= len => size(j) - size(&a[i - 1]),
                Some(j) if i == len + 1 => size(j) + i64::from(len > 0),
                Some(_) => return Err(format!("cannot set {place}: the array has {len} items, and JSON arrays have no holes")),
                None if i == len => -(size(&a[len - 1]) + i64::from(len > 1)),
                None if i < len => size(&Json::Null) - size(&a[i - 1]),
                None => 0,
            }
        }
        _ => 0,
    })
}

/// Sets `step` of `container` to `new` (`None` removes), once [`write_delta`] allowed it.
pub(super) fn apply_write(container: &mut Json, step: Step, new: Option<Json>) {
    match (container, step, new) {
        (Json::Object(m), Step::Key(k), Some(j)) => {
            m.insert(k, j);
        }
        (Json::Object(m), Step::Key(k), None) => {
            m.remove(&k);
        }
        (Json::Array(a), Step::Index(i), new) => {
            let len = a.len();
            match new {
                Some(j) if i <= len => a[i - 1] = j,
                Some(j) if i == len + 1 => a.push(j),
                Some(_) => {}
                // Removing the last item shortens the array; a hole elsewhere becomes null.
                None if i == len => {
                    a.pop();
                }
                None if i < len => a[i - 1] = Json::Null,
                None => {}
            }
        }
        _ => {}
    }
}

/// The empty container of the other kind when `container` is empty and `key` asks for it: `1`
/// makes an array, any other key an object. `None` when the write keeps the container's kind.
pub(super) fn retype_empty(container: &Json, key: &Value) -> Option<Json> {
    let first_item = matches!(key, Value::Integer(1)) || matches!(key, Value::Number(n) if *n == 1.0);
    match container {
        Json::Object(m) if m.is_empty() && first_item => Some(Json::Array(Vec::new())),
        Json::Array(a) if a.is_empty() && !first_item => Some(Json::Object(Map::new())),
        _ => None,
    }
}

/// The integer an object key stands for when Lua would have used that integer (`"3"`, not
/// `"03"` or `"-1"`): objects take integer keys as their decimal text.
fn index_key(k: &str) -> Option<usize> {
    let i: usize = k.parse().ok()?;
    (i >= 1 && !k.starts_with('0') && !k.starts_with('+')).then_some(i)
}

/// `#` of an object: how many of its keys run `"1"`, `"2"`, ... without a gap (a border, as
/// Lua's `#` gives for a table with a sequence part).
pub(super) fn object_border(m: &Map<String, Json>) -> usize {
    (1..).take_while(|i: &usize| m.contains_key(&i.to_string())).count()
}

/// After a removal, an object whose keys are now exactly `"1"`..`"n"` is the array a Lua table
/// with those keys encodes as. Returns the bytes of JSON text that saves (0 when nothing changed).
pub(super) fn sequence_to_array(container: &mut Json) -> usize {
    let Json::Object(m) = container else { return 0 };
    if m.is_empty() || !m.keys().all(|k| index_key(k).is_some_and(|i| i <= m.len())) {
        return 0;
    }
    // Distinct keys, each in 1..=len: exactly 1..=len.
    let saved = m.keys().map(|k| memory::string_size(k) + 1).sum();
    let mut items = vec![Json::Null; m.len()];
    for (k, v) in std::mem::take(m) {
        if let Some(slot) = index_key(&k).and_then(|i| items.get_mut(i - 1)) {
            *slot = v;
        }
    }
    *container = Json::Array(items);
    saved
}
