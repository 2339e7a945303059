//! The instruction files of folders below the working folder, for one tool call: where
//! the call worked (the tool's own [`WorksIn`], from the paths it resolved), the files
//! of the folders on the way there that the conversation does not hold yet
//! (`instructions::nested` finds and reads them, off the async threads) and that the
//! permission rules let the model read unasked, and the user told of a file refused or
//! shortened. The call appends the text to its result and the
//! turn records it with the result (`Conversation::attach_instructions`).
//!
//! It must not know how the files are read or how the result is sized.

use std::path::Path;

use crate::agent::approval::Verdict;
use crate::agent::turn::{SessionState, TurnContext};
use crate::instructions::nested::Gathered;
use crate::protocol::Event;
use crate::tools::{Access, WorksIn};

/// The instruction files to attach to the result of a call that worked at `works_in`;
/// `None` when there are none (most calls: no folder below the working folder, or its
/// files already in force).
pub(super) async fn gather(
    state: &SessionState,
    ctx: &TurnContext,
    works_in: &WorksIn,
) -> Option<Gathered> {
    let WorksIn::Place { real } = works_in else {
        return None;
    };
    let nested = ctx.setup.nested_instructions.clone();
    if !real.starts_with(&ctx.setup.workdir) || *real == ctx.setup.workdir {
        return None;
    }
    let in_force = state.conversation.instructions_in_force();
    let place = real.clone();
    // Attached only what the model may read unasked: a rule that asks about or denies a
    // read of the file keeps it out (the read it would take is never asked for).
    let policy = state.policy.clone();
    let may_read = move |path: &Path| {
        let read = Access::ReadInside(path.to_path_buf());
        matches!(policy.verdict("read_file", read), Verdict::Run)
    };
    let got = tokio::task::spawn_blocking(move || nested.gather(&place, &in_force, &may_read))
        .await
        .ok()?;
    for message in &got.warnings {
        ctx.emit(Event::Warning {
            message: message.clone(),
        });
    }
    (!got.files.is_empty()).then_some(got)
}
