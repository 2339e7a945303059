//! CLI (stub).
