//! Agent Skills: folders holding a `SKILL.md` that teach the model a way of doing a job.
//! This module owns discovery below the skill roots, frontmatter parsing, the catalog
//! (winners, shadowed and invalid skills, warnings), the index section of the system
//! prompt, body loading and template expansion.
//!
//! It must not know about the model client, the agent loop or terminals: frontends and
//! the prompt builder read the catalog; the `use_skill` tool and the input router call it.

/// The skills found at start-up (placeholder until discovery lands).
#[derive(Debug, Default)]
pub struct Catalog {}
