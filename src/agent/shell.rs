//! Shell mode: a command the user typed after `!` ([`crate::protocol::Op::Shell`]). It
//! is a `bash` call made by the user, so it goes through the one call path
//! (`call.rs`): the permission rules, the approval mode, the sandbox, the output cap and
//! the undo pictures apply exactly as to the model's calls; nothing here judges or runs
//! anything itself. What it printed becomes a note for the model, delivered with the
//! user's next message and saved in the session.
//!
//! It must not know how events are drawn.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::agent::call::run_user_call;
use crate::agent::turn::{SessionState, TurnContext};
use crate::llm::ToolCall;
use crate::protocol::{Event, ToolStatus, TurnOutcome, Usage};
use crate::sessions::NoteKind;

/// Numbers the user's commands, for their call ids.
static RUNS: AtomicU64 = AtomicU64::new(0);

/// Runs `command` as the user's `bash` call, shown between a turn's start and end (no
/// model request is made); its output is noted for the model unless it never ran.
pub(super) async fn run(state: &mut SessionState, ctx: &TurnContext, command: String) {
    ctx.emit(Event::TurnStarted {
        text: format!("!{command}"),
    });
    let call = ToolCall {
        id: format!("user-shell-{}", RUNS.fetch_add(1, Ordering::Relaxed) + 1),
        name: "bash".to_string(),
        arguments: serde_json::json!({ "command": command }).to_string(),
    };
    let (status, output) = run_user_call(state, ctx, &call).await;
    if let Some(note) = note(&command, status, &output) {
        state.conversation.add_note(NoteKind::Shell, note);
    }
    for message in state.conversation.take_warnings() {
        ctx.emit(Event::Warning { message });
    }
    let outcome = match status {
        ToolStatus::Interrupted => TurnOutcome::Interrupted,
        ToolStatus::Ok | ToolStatus::Error | ToolStatus::Denied => TurnOutcome::Completed,
    };
    ctx.emit(Event::TurnComplete {
        outcome,
        final_text: String::new().into(),
        usage: Usage::default(),
        requests: 0,
    });
}

/// What the model is told of the user's command: that the user ran it, how it ended,
/// and its output (which ends with the exit status). A command that was not run (denied)
/// is not news to the model.
fn note(command: &str, status: ToolStatus, output: &str) -> Option<String> {
    let how = match status {
        ToolStatus::Ok => "it succeeded",
        ToolStatus::Error => "it failed",
        ToolStatus::Interrupted => "the user interrupted it",
        ToolStatus::Denied => return None,
    };
    Some(format!(
        "[The user ran a shell command themselves (not you): `{command}`; {how}. Its \
         output:]\n{}",
        output.trim_end()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_says_the_user_ran_it_and_carries_the_output_and_status() {
        let n = note("ls", ToolStatus::Error, "a\n[exit code 2]\n").unwrap();
        assert!(n.contains("The user ran a shell command"), "{n}");
        assert!(n.contains("`ls`; it failed"), "{n}");
        assert!(n.ends_with("a\n[exit code 2]"), "{n}");
        assert_eq!(note("rm -rf /", ToolStatus::Denied, "Denied"), None);
    }
}
