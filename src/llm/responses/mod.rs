//! OpenAI's Responses API as a second wire beside Chat Completions: `request.rs` builds
//! the body (`instructions`, `input` items, flat function tools, `store: false` with the
//! encrypted reasoning asked for and sent back), `stream.rs` reads the answer (its
//! events, or one JSON body) into the same `Completion` and `StreamEvent`s. Only these
//! files know the Responses field names; the client picks the wire per request
//! (`WireSetting`) and does the HTTP, retries and timeouts for both. It must not know
//! the agent loop, tools' behaviour or terminals.

pub mod request;
pub(crate) mod stream;

pub use request::RequestBody;

#[cfg(test)]
mod tests;
