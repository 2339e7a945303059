//! LLM sse (being written).
