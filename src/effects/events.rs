//! The run events a host observes through `onEvent` (listed in docs/language.md, "Run facts"):
//! one variant each, so an event the engine emits is spelled once.

/// A run event's `event`/`type` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    RunStarted,
    RunFinished,
    SectionStarted,
    SectionFinished,
    Log,
    ModelTurnStarted,
    ModelTurnCompleted,
    AssistantToolCalls,
    ToolCallSucceeded,
    ToolCallFailed,
    ToolResult,
    ToolScopeValidationStarted,
    ToolScopeValidationSucceeded,
    TaskStarted,
    TaskFinished,
}

impl Event {
    pub fn as_str(self) -> &'static str {
        match self {
            Event::RunStarted => "run_started",
            Event::RunFinished => "run_finished",
            Event::SectionStarted => "section_started",
            Event::SectionFinished => "section_finished",
            Event::Log => "log",
            Event::ModelTurnStarted => "model_turn_started",
            Event::ModelTurnCompleted => "model_turn_completed",
            Event::AssistantToolCalls => "assistant_tool_calls",
            Event::ToolCallSucceeded => "tool_call_succeeded",
            Event::ToolCallFailed => "tool_call_failed",
            Event::ToolResult => "tool_result",
            Event::ToolScopeValidationStarted => "tool_scope_validation_started",
            Event::ToolScopeValidationSucceeded => "tool_scope_validation_succeeded",
            Event::TaskStarted => "task_started",
            Event::TaskFinished => "task_finished",
        }
    }
}
