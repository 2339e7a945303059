//! LLM wire (being written).
