//! The run's Packs and tool catalog (`002`, "Tools and Packs", "The tool catalog and extra
//! Packs", "Pack ids, tool ids, and wire names"): which of the host's Packs are in the run, what
//! each offers, the offering's left-out tools, and the requirements notice lines at prepare.

use serde_json::Value as Json;

use crate::ids::segment_error;

/// A Pack as the host registers it (`Pack` in js/index.d.ts).
#[derive(Debug, Clone, Default)]
pub struct PackSpec {
    /// `web` (a runvil Pack) or `vendor/name`.
    pub name: String,
    pub description: String,
    pub tools: Vec<ToolSpec>,
    pub prelude: Option<String>,
    pub unavailable: Option<Unavailable>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Unavailable {
    Reason(String),
    Needs { service: String, reason: Option<String> },
}

#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// The Pack's own name for the tool (`fetch`); the tool id is `{pack id}/{name}`.
    pub name: String,
    pub description: String,
    pub parameters: Json,
    pub trusted: bool,
    pub structured: bool,
}

/// A Pack in the run.
#[derive(Debug, Clone)]
pub struct RunPack {
    /// The Pack id (`web`, `poop`).
    pub id: String,
    pub declared: bool,
    /// Index in the host's Pack list (`None` for the built-in `subagents`).
    pub host: Option<usize>,
    /// Indices of its catalog tools, in tool id order.
    pub tools: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct CatalogTool {
    pub id: String,
    /// Index of its Pack in [`Catalog::packs`].
    pub pack: usize,
    pub spec: ToolSpec,
    /// The wire name when the run can offer the tool; `None` when it is left out of the
    /// offering (reserved task name, non-object schema, clashing wire name).
    pub wire: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// Every Pack the run knows, sorted by Pack id.
    pub packs: Vec<RunPack>,
    /// Every catalog tool, sorted by tool id.
    pub tools: Vec<CatalogTool>,
}

pub const TASK_BUILTINS: [&str; 4] = ["task", "task_cancel", "task_status", "await_tasks"];

/// The name a model sees for a tool id: `/` and `.` become `_`.
pub fn wire_name(id: &str) -> String {
    id.replace(['/', '.'], "_")
}

/// `(vendor, id)` of a host Pack name or a `uses:` entry: a bare id means `runvil/{id}`.
fn vendor_and_id(name: &str) -> (String, String) {
    match name.split_once('/') {
        Some((v, id)) => (v.to_string(), id.to_string()),
        None => ("runvil".to_string(), name.to_string()),
    }
}

/// Builds the run's Packs and catalog from the prompt's `uses:` and the host's Packs, and the
/// requirements notice lines for declared Packs the run cannot have.
pub fn build(uses: &[String], host: &[PackSpec]) -> (Catalog, Vec<String>) {
    let mut unmet = Vec::new();
    let mut chosen: Vec<(String, bool, Option<usize>)> = Vec::new(); // (id, declared, host index)
    let host_named: Vec<(String, String)> = host.iter().map(|p| vendor_and_id(&p.name)).collect();
    let usable = |i: usize| host[i].unavailable.is_none();

    for entry in uses {
        let (vendor, id) = vendor_and_id(entry);
        match host_named.iter().position(|(v, i)| *v == vendor && *i == id) {
            Some(h) => {
                match &host[h].unavailable {
                    None => {}
                    Some(Unavailable::Reason(r)) => unmet.push(format!("- {id} is unavailable: {r}")),
                    Some(Unavailable::Needs { service, .. }) => {
                        unmet.push(format!("- {id} needs {service}, and the environment provides none"))
                    }
                }
                chosen.push((id, true, Some(h)));
            }
            // `subagents` is the engine's own Pack, always present: declaring it is satisfied.
            None if vendor == "runvil" && id == "subagents" => {
                if !chosen.iter().any(|(c, _, _)| c == "subagents") {
                    chosen.push((id, true, None));
                }
            }
            None => {
                let line = if vendor == "runvil" && !entry.contains('/') {
                    match host_named.iter().find(|(_, i)| *i == id) {
                        Some((other, _)) => format!(
                            "- {id} is unavailable: {id} means runvil/{id}, which is not installed; write {other}/{id} to use that Pack."
                        ),
                        None => format!("- missing required Pack: {id}"),
                    }
                } else {
                    format!("- {id} is unavailable: {vendor}/{id} is not installed")
                };
                unmet.push(line);
            }
        }
    }
    // Every usable runvil Pack whose id no declared Pack takes is an extra Pack.
    for (h, (vendor, id)) in host_named.iter().enumerate() {
        if vendor == "runvil" && usable(h) && !chosen.iter().any(|(c, _, _)| c == id) {
            chosen.push((id.clone(), false, Some(h)));
        }
    }
    if !chosen.iter().any(|(c, _, _)| c == "subagents") {
        chosen.push(("subagents".into(), false, None));
    }
    crate::sort::sort_by(&mut chosen, |a, b| a.0.cmp(&b.0));

    let mut catalog = Catalog::default();
    for (id, declared, h) in chosen {
        catalog.packs.push(RunPack { id, declared, host: h, tools: Vec::new() });
    }
    let mut tools: Vec<CatalogTool> = Vec::new();
    for (pi, pack) in catalog.packs.iter().enumerate() {
        let Some(h) = pack.host else { continue };
        if !usable(h) {
            continue;
        }
        for spec in &host[h].tools {
            let id = format!("{}/{}", pack.id, spec.name);
            // A tool whose id is not a valid tool id never enters the catalog.
            if segment_error(&id).is_some() || spec.name.is_empty() {
                continue;
            }
            tools.push(CatalogTool { id, pack: pi, spec: spec.clone(), wire: None });
        }
    }
    crate::sort::sort_by(&mut tools, |a, b| a.id.cmp(&b.id));
    tools.dedup_by(|a, b| a.id == b.id);
    let mut wires: Vec<String> = Vec::new();
    for t in &mut tools {
        let wire = wire_name(&t.id);
        let offerable = t.spec.parameters.is_object() && !TASK_BUILTINS.contains(&wire.as_str()) && !wires.contains(&wire);
        if offerable {
            wires.push(wire.clone());
            t.wire = Some(wire);
        }
    }
    for (ti, t) in tools.iter().enumerate() {
        catalog.packs[t.pack].tools.push(ti);
    }
    catalog.tools = tools;
    (catalog, unmet)
}

impl Catalog {
    pub fn tool(&self, id: &str) -> Option<usize> {
        self.tools.binary_search_by(|t| t.id.as_str().cmp(id)).ok()
    }

    /// A tool the run offers (has a wire name) by its exact id.
    pub fn offered(&self, id: &str) -> Option<usize> {
        self.tool(id).filter(|&i| self.tools[i].wire.is_some())
    }

    pub fn pack(&self, id: &str) -> Option<usize> {
        self.packs.iter().position(|p| p.id == id)
    }

    pub fn by_wire(&self, wire: &str) -> Option<usize> {
        self.tools.iter().position(|t| t.wire.as_deref() == Some(wire))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pack(name: &str, tools: &[&str]) -> PackSpec {
        PackSpec {
            name: name.into(),
            tools: tools
                .iter()
                .map(|t| ToolSpec {
                    name: t.to_string(),
                    description: String::new(),
                    parameters: json!({"type": "object"}),
                    trusted: false,
                    structured: false,
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn declared_extra_and_missing_packs() {
        let host = vec![pack("web", &["search", "fetch"]), pack("user-input", &["ask"]), pack("acme/poop", &["x"])];
        let (c, unmet) = build(&["user-input".into()], &host);
        assert!(unmet.is_empty());
        let ids: Vec<_> = c.packs.iter().map(|p| (p.id.as_str(), p.declared)).collect();
        assert_eq!(ids, [("subagents", false), ("user-input", true), ("web", false)]);
        let tools: Vec<_> = c.tools.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(tools, ["user-input/ask", "web/fetch", "web/search"]);
        let (_, unmet) = build(&["poop".into(), "nope".into(), "acme/zip".into(), "web/fetch".into()], &host);
        assert_eq!(
            unmet,
            [
                "- poop is unavailable: poop means runvil/poop, which is not installed; write acme/poop to use that Pack.",
                "- missing required Pack: nope",
                "- zip is unavailable: acme/zip is not installed",
                "- fetch is unavailable: web/fetch is not installed",
            ]
        );
    }

    #[test]
    fn declaring_subagents_is_satisfied() {
        let (c, unmet) = build(&["subagents".into()], &[]);
        assert!(unmet.is_empty(), "{unmet:?}");
        let ids: Vec<(&str, bool)> = c.packs.iter().map(|p| (p.id.as_str(), p.declared)).collect();
        assert_eq!(ids, [("subagents", true)]);
    }

    #[test]
    fn third_party_pack_replaces_runvil_pack() {
        let host = vec![pack("web", &["search"]), pack("acme/web", &["fetch"])];
        let (c, _) = build(&["acme/web".into()], &host);
        let tools: Vec<_> = c.tools.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(tools, ["web/fetch"]);
    }

    #[test]
    fn reserved_and_clashing_wire_names_are_left_out() {
        let mut p = pack("task", &["cancel", "x.y", "x/y"]);
        p.tools[0].name = "cancel".into();
        let (c, _) = build(&[], &[PackSpec { name: "task".into(), ..p }]);
        let offered: Vec<_> = c.tools.iter().map(|t| (t.id.as_str(), t.wire.clone())).collect();
        assert_eq!(offered[0], ("task/cancel", None));
        assert_eq!(offered[1], ("task/x.y", Some("task_x_y".to_string())));
        assert_eq!(offered[2], ("task/x/y", None));
    }
}
