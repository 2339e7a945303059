//! LLM errors (being written).

/// A classified model-request failure (placeholder until the client lands).
#[derive(Debug, thiserror::Error)]
#[error("llm error")]
pub struct LlmError;
