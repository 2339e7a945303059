//! Rewinding (Esc Esc in the TUI): the user messages the conversation can go back to,
//! and going back to one: that turn and every later one leave what is sent (the session
//! file keeps them and records the rewind), and the files they changed are put back with
//! the undo pictures, newest first. When a file changed since cannot be put back, the
//! conversation is rewound all the same and the model is told what was left as it is.
//!
//! It must not know how events are drawn.

use crate::agent::AgentSetup;
use crate::agent::turn::SessionState;
use crate::protocol::{Event, RewindPoint, UndoOutcome};
use crate::sessions::NoteKind;

/// The messages the conversation can be rewound to, with the files each would put back.
pub(super) fn points(setup: &AgentSetup, state: &SessionState) -> Vec<RewindPoint> {
    state
        .conversation
        .rewind_points()
        .into_iter()
        .map(|(turn, text)| RewindPoint {
            turn,
            text,
            files: setup
                .snapshots
                .as_ref()
                .map(|s| s.changed_since_turn(turn))
                .unwrap_or_default(),
        })
        .collect()
}

/// Rewinds to just before turn `turn`: files first (an error leaves everything as it
/// was), then the conversation.
pub(super) async fn rewind(setup: &AgentSetup, state: &mut SessionState, turn: u64) -> Event {
    let Some((_, text)) = state
        .conversation
        .rewind_points()
        .into_iter()
        .find(|(t, _)| *t == turn)
    else {
        return Event::Warning {
            message: "that message can no longer be rewound to (the conversation was cleared \
                      or compacted since)"
                .into(),
        };
    };
    let files = match setup.snapshots.clone() {
        None => Vec::new(),
        Some(snapshots) => {
            match tokio::task::spawn_blocking(move || snapshots.rewind(turn)).await {
                Ok(Ok(files)) => files,
                Ok(Err(e)) => {
                    return Event::Warning {
                        message: format!(
                            "the rewind failed putting files back: {e}; the conversation is unchanged"
                        ),
                    };
                }
                Err(e) => {
                    return Event::Warning {
                        message: format!("internal error: {e}"),
                    };
                }
            }
        }
    };
    state.conversation.rewind_to(turn);
    if let Some(refused) = files
        .iter()
        .find(|o| matches!(o, UndoOutcome::Refused { .. }))
    {
        state.conversation.add_note(
            NoteKind::Rewind,
            format!(
                "[The user rewound the conversation to this point, but some files changed \
                 after it could not be put back: {} Read files again before relying on \
                 them.]",
                refused.describe()
            ),
        );
    }
    Event::Rewound { turn, text, files }
}
