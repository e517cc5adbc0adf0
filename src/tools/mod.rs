//! Tools (`002`): the run's catalog, each section entry's tool scope, local tool schemas, and the
//! conversation records `models.loop` keeps. The Lua side lives in `lua/tools_api.rs` and
//! `bootstrap.lua`; local tool handlers stay Lua functions and run on the calling coroutine.

pub mod catalog;
pub mod schema;

use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;

use catalog::Catalog;

/// One tool a section's rounds advertise.
#[derive(Debug, Clone)]
pub struct Advertised {
    /// The name the model sees: a wire name, or a local tool's alias.
    pub name: String,
    pub target: Target,
    pub description: String,
    pub parameters: Json,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Catalog(usize),
    Local(String),
    /// One of the model's task built-ins (`002`, "Giving the model task tools").
    Task(TaskBuiltin),
}

/// The model's task built-ins, in the order a round lists them (after every other tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskBuiltin {
    Task,
    Cancel,
    Status,
    Await,
}

impl TaskBuiltin {
    pub const ALL: [TaskBuiltin; 4] = [TaskBuiltin::Task, TaskBuiltin::Cancel, TaskBuiltin::Status, TaskBuiltin::Await];

    /// The reserved name the model calls it by.
    pub fn name(self) -> &'static str {
        match self {
            TaskBuiltin::Task => "task",
            TaskBuiltin::Cancel => "task_cancel",
            TaskBuiltin::Status => "task_status",
            TaskBuiltin::Await => "await_tasks",
        }
    }

    /// The four built-ins as a round advertises them, in order (their descriptions and parameter
    /// schemas come from `TASK_BUILTIN_SPECS`, parsed once per call).
    pub fn advertised_all() -> Vec<Advertised> {
        let specs: Json = crate::json_text::parse_str(TASK_BUILTIN_SPECS).unwrap_or_default();
        TaskBuiltin::ALL
            .iter()
            .zip(specs.as_array().into_iter().flatten())
            .map(|(&b, spec)| Advertised {
                name: b.name().into(),
                target: Target::Task(b),
                description: spec["description"].as_str().unwrap_or_default().into(),
                parameters: spec["parameters"].clone(),
            })
            .collect()
    }
}

/// The task built-ins' descriptions and parameter schemas, in [`TaskBuiltin::ALL`] order. Kept as
/// JSON text: building these values with `json!` cost about 5 KB of module code.
const TASK_BUILTIN_SPECS: &str = r#"[
{"description": "Start a task: run a section of this prompt beside the conversation. Its result arrives later as a task notice.",
 "parameters": {"type": "object", "properties": {
   "target": {"type": "string", "description": "The section's heading, with its markers (e.g. ## Research)"},
   "input": {"type": "string", "description": "The task's argument string (optional)"}}, "required": ["target"]}},
{"description": "Cancel a task this conversation started.",
 "parameters": {"type": "object", "properties": {"id": {"type": "string", "description": "The task id"}}, "required": ["id"]}},
{"description": "List the tasks this conversation started, with their status (running, done, failed, cancelled).",
 "parameters": {"type": "object", "properties": {"id": {"type": "string", "description": "One task id (optional)"}}}},
{"description": "Wait for tasks this conversation started and read their results.",
 "parameters": {"type": "object", "properties": {
   "ids": {"type": "array", "items": {"type": "string"}, "description": "Task ids (optional: every running task)"},
   "timeout_ms": {"type": "number", "description": "Stop waiting after this many milliseconds (optional)"}}}}
]"#;

/// `tools.allow_tasks`: which sections the model's `task` may start.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskAllow {
    /// `tools.allow_tasks()`: any section the entry can address.
    Any,
    /// The listed headings, trimmed.
    Only(Vec<String>),
}

#[derive(Debug, Clone)]
pub struct LocalTool {
    pub alias: String,
    pub description: String,
    pub parameters: Json,
}

/// A section entry's tool scope (`002`, "What the scope holds").
#[derive(Debug, Default)]
pub struct Scope {
    /// Catalog tools from `tools.offer`, in first-offer order.
    pub offered: Vec<usize>,
    /// Packs from `packs.offer`, in first-offer order.
    pub packs: Vec<usize>,
    pub locals: Vec<LocalTool>,
    /// Set by the first loop round: fixed for the rest of the entry.
    pub rendered: Option<Vec<Advertised>>,
    /// `tools.calls`: `None` until the entry's first tool call.
    pub calls: Option<BTreeMap<String, u64>>,
    /// Local tool handlers running (nested calls count): offers, loops and jump are refused.
    pub handler_depth: u32,
    /// Model rounds this entry has run (the `turn` of events).
    pub turn: u64,
    /// Set by `tools.allow_tasks`: the task built-ins join the rounds' tool list.
    pub task_allow: Option<TaskAllow>,
}

pub const FIXED_LIST: &str =
    "the section's tool list is fixed at its first models.loop round; make every offer before the first loop, or offer in another section";

impl Scope {
    pub fn offer_tool(&mut self, idx: usize) {
        if !self.offered.contains(&idx) {
            self.offered.push(idx);
        }
    }

    pub fn offer_pack(&mut self, idx: usize) {
        if !self.packs.contains(&idx) {
            self.packs.push(idx);
        }
    }

    /// Renders the tool list: offered tools in first-offer order, then each offered Pack's tools
    /// in id order, then local tools (a local tool takes over an offered tool's wire name).
    pub fn render(&mut self, catalog: &Catalog) -> &[Advertised] {
        if self.rendered.is_none() {
            let mut list: Vec<Advertised> = Vec::new();
            let pack_tools = self.packs.iter().flat_map(|&p| catalog.packs[p].tools.iter().copied());
            for idx in self.offered.iter().copied().chain(pack_tools) {
                let t = &catalog.tools[idx];
                let Some(wire) = &t.wire else { continue };
                if list.iter().any(|a| &a.name == wire) {
                    continue;
                }
                list.push(Advertised {
                    name: wire.clone(),
                    target: Target::Catalog(idx),
                    description: t.spec.description.clone(),
                    parameters: t.spec.parameters.clone(),
                });
            }
            for local in &self.locals {
                list.retain(|a| a.name != local.alias);
                list.push(Advertised {
                    name: local.alias.clone(),
                    target: Target::Local(local.alias.clone()),
                    description: local.description.clone(),
                    parameters: local.parameters.clone(),
                });
            }
            self.rendered = Some(list);
        }
        self.rendered.as_deref().unwrap_or(&[])
    }

    /// What a round advertises: the rendered list, then the task built-ins while an allowlist is
    /// set.
    pub fn advertised(&self) -> Vec<Advertised> {
        let mut list = self.rendered.clone().unwrap_or_default();
        if self.task_allow.is_some() {
            list.extend(TaskBuiltin::advertised_all());
        }
        list
    }

    /// Counts one dispatch under `key`, setting the counts up (seeded from the scope) on the
    /// entry's first tool call.
    pub fn count(&mut self, catalog: &Catalog, key: &str) {
        let calls = self.calls.get_or_insert_with(BTreeMap::new);
        let pack_tools = self.packs.iter().flat_map(|&p| catalog.packs[p].tools.iter().copied());
        for idx in self.offered.iter().copied().chain(pack_tools) {
            calls.entry(catalog.tools[idx].id.clone()).or_insert(0);
        }
        *calls.entry(key.to_string()).or_insert(0) += 1;
    }
}

/// The JSON Schema for a local tool's params: every parameter required, names sorted.
pub fn local_schema(params: &[(String, String, Option<String>)]) -> Json {
    let mut properties = Map::new();
    let mut required: Vec<&str> = Vec::new();
    let mut sorted: Vec<&(String, String, Option<String>)> = params.iter().collect();
    crate::sort::sort_by(&mut sorted, |a, b| a.0.cmp(&b.0));
    for (name, ty, description) in sorted {
        let mut p = Map::new();
        p.insert("type".into(), Json::from(ty.clone()));
        if let Some(d) = description {
            p.insert("description".into(), Json::from(d.clone()));
        }
        properties.insert(name.clone(), Json::Object(p));
        required.push(name);
    }
    crate::obj!({ "type": "object", "properties": properties, "required": required })
}

/// One record of a section's conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub role: String,
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    pub tool_call_id: Option<String>,
    /// The reasoning text the model's reply carried (`reasoning_content`), kept so the record goes
    /// back to the model with it in later rounds (providers whose thinking-mode tool loops need it).
    pub reasoning: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Json,
}

impl Record {
    pub fn text(role: &str, content: String) -> Self {
        Record { role: role.into(), content, tool_calls: Vec::new(), tool_call_id: None, reasoning: None }
    }

    /// The record as the model request carries it (`Message` in js/index.d.ts).
    pub fn to_wire(&self) -> Json {
        let mut o = crate::obj!({ "role": self.role, "content": self.content });
        if !self.tool_calls.is_empty() {
            o["tool_calls"] = Json::Array(
                self.tool_calls.iter().map(|c| crate::obj!({ "id": c.id, "name": c.name, "arguments": c.arguments })).collect(),
            );
        }
        if let Some(id) = &self.tool_call_id {
            o["tool_call_id"] = Json::from(id.clone());
        }
        if let Some(text) = &self.reasoning {
            o["reasoning_content"] = Json::from(text.clone());
        }
        o
    }
}

/// The records as one JSON array: the text `Json::Array` of their [`Record::to_wire`] forms
/// writes, key order included (sorted, as `Json` objects keep them), written from the records in
/// place into a buffer of its exact size. A large tool-call argument is neither cloned into a
/// tree first nor copied again each time a growing buffer doubles.
pub fn wire_text(records: &[Record]) -> String {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let wire: Vec<Wire<'_>> = records.iter().map(Wire).collect();
    let mut count = Count(0);
    // Writing to memory cannot fail, and the records hold only strings and JSON data.
    let _ = serde_json::to_writer(&mut count, &wire);
    let mut out = Vec::with_capacity(count.0);
    let _ = serde_json::to_writer(&mut out, &wire);
    String::from_utf8(out).unwrap_or_default()
}

/// A record as [`Record::to_wire`] shows it, serialized from a borrow.
struct Wire<'a>(&'a Record);

impl serde::Serialize for Wire<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let r = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("content", &r.content)?;
        if let Some(text) = &r.reasoning {
            m.serialize_entry("reasoning_content", text)?;
        }
        m.serialize_entry("role", &r.role)?;
        if let Some(id) = &r.tool_call_id {
            m.serialize_entry("tool_call_id", id)?;
        }
        if !r.tool_calls.is_empty() {
            m.serialize_entry("tool_calls", &r.tool_calls.iter().map(WireCall).collect::<Vec<_>>())?;
        }
        m.end()
    }
}

struct WireCall<'a>(&'a ToolCall);

impl serde::Serialize for WireCall<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("arguments", &self.0.arguments)?;
        m.serialize_entry("id", &self.0.id)?;
        m.serialize_entry("name", &self.0.name)?;
        m.end()
    }
}

/// The most tool calls one model reply may ask for (docs/language.md). More is a `Model` error
/// before any call runs: a reply of 100,000 calls would otherwise hold the run (and the host's
/// event loop) for a long time with nothing to show.
pub const MAX_TOOL_CALLS_PER_REPLY: usize = 128;

/// Checks a model reply's tool calls as a whole (`002`, "The arguments the model sends").
pub fn parse_tool_calls(reply: &mut Json) -> Result<Vec<ToolCall>, String> {
    let Some(list) = reply.get_mut("tool_calls").filter(|v| !v.is_null()) else { return Ok(Vec::new()) };
    let Some(list) = list.as_array_mut() else { return Err("the model's reply is malformed: tool_calls must be an array".into()) };
    if list.len() > MAX_TOOL_CALLS_PER_REPLY {
        return Err(format!("the model's reply asks for {} tool calls; the limit is {MAX_TOOL_CALLS_PER_REPLY} per reply", list.len()));
    }
    let mut calls: Vec<ToolCall> = Vec::new();
    for c in list {
        let id = c.get("id").and_then(Json::as_str).unwrap_or("").to_string();
        let name = c.get("name").and_then(Json::as_str).unwrap_or("").to_string();
        if id.trim().is_empty() || name.trim().is_empty() {
            return Err("the model's reply is malformed: a tool call has a blank id or name".into());
        }
        if calls.iter().any(|k| k.id == id) {
            return Err(format!("the model's reply is malformed: the tool call id {id:?} repeats"));
        }
        // Taken, not copied: the arguments may be most of a large reply.
        let arguments = c.get_mut("arguments").map(Json::take).unwrap_or(Json::Null);
        if !arguments.is_object() {
            return Err("tool call arguments were not a JSON object".into());
        }
        calls.push(ToolCall { id, name, arguments });
    }
    Ok(calls)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, name: &str, arguments: Json) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), arguments }
    }

    #[test]
    fn wire_text_is_the_text_of_the_wire_records() {
        let records = [
            Record::text("user", "go \"now\"\n\u{1}é".into()),
            Record {
                reasoning: Some("thinking".into()),
                tool_calls: vec![
                    call("c1", "grab", serde_json::json!({ "value": "x".repeat(5000), "n": [1, 2.5, null, true] })),
                    call("c2", "other", serde_json::json!({ "z": {}, "a": { "b": "c" } })),
                ],
                ..Record::text("assistant", String::new())
            },
            Record { tool_call_id: Some("c1".into()), ..Record::text("tool", "5000".into()) },
        ];
        for n in 0..=records.len() {
            let expected = Json::Array(records[..n].iter().map(Record::to_wire).collect()).to_string();
            let text = wire_text(&records[..n]);
            assert_eq!(text, expected);
            // Written into a buffer of its exact size, never grown.
            assert_eq!(text.capacity(), text.len());
        }
    }

    #[test]
    fn every_task_builtin_has_a_description_and_an_object_schema() {
        let all = TaskBuiltin::advertised_all();
        assert_eq!(all.len(), TaskBuiltin::ALL.len());
        for (b, a) in TaskBuiltin::ALL.iter().zip(&all) {
            assert_eq!(a.name, b.name());
            assert!(!a.description.is_empty(), "{}", a.name);
            assert_eq!(a.parameters["type"], "object", "{}", a.name);
        }
    }
}
