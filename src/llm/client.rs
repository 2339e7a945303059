//! LLM client (being written).

/// The Chat Completions client (placeholder until it lands).
#[derive(Debug)]
pub struct Client;
