//! Spec checks (stub).
