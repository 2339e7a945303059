//! What the client's stream reader needs of an answer being read, whatever wire it
//! comes over: hand it each Server-Sent Event, ask whether the model has finished, and
//! take the finished [`Completion`] or what streamed before a failure. The Chat wire's
//! state (in `client.rs`) and the Responses wire's (`responses/stream.rs`) implement it.
//! It must not know HTTP, timeouts or either wire's field names.

use super::error::{PartialAnswer, Site};
use super::sse::SseEvent;
use super::{Completion, LlmError, StreamEvent};

/// Whether the stream goes on after an event.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Keep reading.
    More,
    /// The answer is complete.
    Done,
}

/// An answer being gathered from a stream.
pub(crate) trait AnswerState: Send {
    /// Takes one event; reports text and reasoning through `on_event`.
    fn handle(
        &mut self,
        event: SseEvent,
        site: &Site,
        model: &str,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Flow, LlmError>;

    /// Whether the model has said it finished (only usage or the end marker may follow).
    fn finished(&self) -> bool;

    /// Events handled so far.
    fn events(&self) -> usize;

    /// The first bytes of the body (up to 512), for a message when it is no event stream.
    fn head_mut(&mut self) -> &mut Vec<u8>;

    /// The finished answer, moved out.
    fn take_completion(&mut self) -> Completion;

    /// What streamed so far, moved out.
    fn take_partial(&mut self) -> PartialAnswer;
}
