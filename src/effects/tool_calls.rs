//! Tool calls as the run sees them (`002`, "Calling tools"): a catalog tool runs through the
//! host's Pack, a local tool through its Lua handler (run by the binding); either way the call is
//! counted, its events are emitted here, and untrusted output is wrapped.

use serde_json::{json, Value as Json};

use super::context::EntryCtx;
use super::Refusal;
use crate::effects::events::Event;
use crate::error::ErrorValueKind;
use crate::host::Incoming;
use crate::tools::schema::{self, Required};

/// Who asked for a call (the `caller` a Pack tool sees).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    Model,
    Script,
}

impl Caller {
    pub fn as_str(self) -> &'static str {
        match self {
            Caller::Model => "model",
            Caller::Script => "script",
        }
    }
}

/// What a catalog tool answered a script's `tools.call`.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptAnswer {
    Text(String),
    /// A structured tool's JSON output.
    Data(Json),
}

/// Runs one catalog tool through the host. Returns the text the caller gets (wrapped when
/// untrusted) and its trust, or the tool's model-safe failure message.
pub async fn call_catalog(
    ctx: &EntryCtx,
    idx: usize,
    used: &str,
    args: Json,
    call_id: &str,
    turn: u64,
    caller: Caller,
) -> Result<(String, bool), String> {
    let t = &ctx.run.catalog.tools[idx];
    ctx.scope_mut().count(&ctx.run.catalog, &t.id);
    let name = ctx.section_name().to_string();
    let caller_text = caller.as_str();
    // Arguments that do not fit the tool's parameters never reach the Pack: the caller learns
    // which argument is wrong, and a model can retry. A missing one is the Pack's to name.
    let fits =
        schema::check(&t.spec.parameters, &args, Required::LeftToTheTool).map_err(|why| format!("invalid arguments for {used}: {why}"));
    let outcome = match (fits, ctx.run.catalog.packs[t.pack].host) {
        (Err(why), _) => Err(why),
        (Ok(()), Some(host_pack)) => {
            let request = json!({
                "tool": t.id, "name": used, "arguments": args, "callId": call_id, "caller": caller_text,
                "section": name, "chain": ctx.chain.id(), "entry": ctx.id, "origin": { "execution": ctx.run.execution, "section": name, "caller": caller_text },
            });
            ctx.run.host.call_tool(host_pack, &t.spec.name, request).await.map_err(|e| ctx.host_failure(Incoming::ToolResult, e))
        }
        // Only the built-in `subagents` Pack has no host Pack; its tools are the task built-ins,
        // which never reach here.
        (Ok(()), None) => Err(format!("tool {} has no host Pack to run it", t.id)),
    };
    let trusted = t.spec.trusted;
    match outcome {
        Ok(text) => {
            let text = if trusted { text } else { crate::untrusted::envelope(&text, &ctx.run.nonce) };
            ctx.emit(Event::ToolCallSucceeded, || crate::obj!({ "tool": t.id, "alias": used, "tool_call_id": call_id, "turn": turn }));
            // The event carries a copy of the text: made only for an observer (`emit` builds it).
            ctx.emit(
                Event::ToolResult,
                || crate::obj!({ "turn": turn, "tool_call_id": call_id, "alias": used, "tool": t.id, "content": text, "trusted": trusted }),
            );
            Ok((text, trusted))
        }
        Err(msg) => {
            ctx.emit(
                Event::ToolCallFailed,
                || crate::obj!({ "tool": t.id, "alias": used, "tool_call_id": call_id, "turn": turn, "message": msg }),
            );
            if caller == Caller::Model {
                // The model reads the failure as the call's (untrusted) result.
                ctx.emit(Event::ToolResult, || {
                    let text = crate::untrusted::envelope(&msg, &ctx.run.nonce);
                    crate::obj!({ "turn": turn, "tool_call_id": call_id, "alias": used, "tool": t.id, "content": text, "trusted": false })
                });
            }
            Err(msg)
        }
    }
}

/// `tools.call` to a catalog tool: the tool's text, or its JSON output when it is structured.
pub async fn script_call(ctx: &EntryCtx, idx: usize, used: &str, args: Json) -> Result<ScriptAnswer, Refusal> {
    let turn = ctx.scope().turn;
    match call_catalog(ctx, idx, used, args, "", turn, Caller::Script).await {
        Ok((text, _)) if ctx.run.catalog.tools[idx].spec.structured => match crate::json_text::parse_str(&text) {
            Ok(j) => Ok(ScriptAnswer::Data(j)),
            Err(e) => Err(Refusal::new(ErrorValueKind::Tool, format!("structured tool {used:?} returned invalid JSON: {e}"))),
        },
        Ok((text, _)) => Ok(ScriptAnswer::Text(text)),
        Err(msg) => Err(Refusal::new(ErrorValueKind::Tool, format!("tool call failure: {msg}"))),
    }
}

/// A local handler starts: it is counted, and offers, loops and jumps are refused until it ends.
pub fn local_started(c: &EntryCtx, alias: &str) {
    let mut s = c.scope_mut();
    s.count(&c.run.catalog, alias);
    s.handler_depth += 1;
}

/// How a local handler ended, as its call's events tell it.
pub enum LocalEnd {
    /// The handler raised (the error goes on to the caller unchanged).
    Raised,
    /// The handler's return could not become text (the message says why).
    BadReturn(String),
    /// The handler answered this text.
    Answered(String),
}

/// A local handler ended: its events (none for a raise while the run is stopping).
pub fn local_finished(c: &EntryCtx, alias: &str, call_id: &str, turn: Option<u64>, end: &LocalEnd) {
    let turn = turn.unwrap_or_else(|| c.scope().turn);
    c.scope_mut().handler_depth -= 1;
    let failed = || c.emit(Event::ToolCallFailed, || crate::obj!({ "alias": alias, "tool_call_id": call_id, "turn": turn }));
    match end {
        LocalEnd::Raised if c.run.stopped() => {}
        LocalEnd::Raised | LocalEnd::BadReturn(_) => failed(),
        LocalEnd::Answered(text) => {
            c.emit(Event::ToolCallSucceeded, || crate::obj!({ "alias": alias, "tool_call_id": call_id, "turn": turn }));
            c.emit(
                Event::ToolResult,
                || crate::obj!({ "turn": turn, "tool_call_id": call_id, "alias": alias, "content": text, "trusted": true }),
            );
        }
    }
}
