//! LLM retry (being written).
