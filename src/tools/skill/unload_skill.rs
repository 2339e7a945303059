//! The `unload_skill` tool: forgets a loaded skill through the session's active set
//! ([`LoadedSkills::unload`]: its tools leave the registry, so their schemas stop
//! travelling with every request; its selected documents are forgotten; `use_skill` can
//! load it again). The result names what was removed and which skills stay loaded. It
//! knows the active set, nothing of the agent loop.

use serde::Deserialize;

use super::use_skill::Listed;
use crate::skills::active::{LoadedSkills, Unloaded};
use crate::tools::{ToolContext, ToolFuture, ToolOutput, TypedTool, schema_from_text};

/// Unloads a skill.
#[derive(Debug, Clone)]
pub struct UnloadSkill {
    loaded: LoadedSkills,
    listed: Listed,
}

/// The arguments of an `unload_skill` call.
#[derive(Debug, Deserialize)]
pub struct Args {
    skill_name: String,
}

impl UnloadSkill {
    /// The tool over the session's active skills (which know their tools).
    pub fn new(loaded: LoadedSkills) -> Self {
        UnloadSkill {
            loaded,
            listed: Listed::Skills,
        }
    }

    /// Says what the system prompt lists (see [`Listed`]): with MCP servers only, the
    /// model is told of servers alone.
    pub fn listing(mut self, listed: Listed) -> Self {
        self.listed = listed;
        self
    }

    fn loaded_names(&self) -> String {
        let names = self.loaded.names_with_tools();
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    }

    fn call(&self, name: &str) -> ToolOutput {
        let name = name.trim();
        let removed = match self.loaded.unload(name) {
            Unloaded::Done { tools } => tools,
            Unloaded::NotLoaded => {
                return ToolOutput::error(format!(
                    "Skill {name:?} is not loaded. Loaded skills: {}",
                    self.loaded_names()
                ));
            }
        };
        let mut out = format!("Unloaded skill \"{name}\".");
        if removed.is_empty() {
            out.push_str(" It had no tools loaded.");
        } else {
            out.push_str(&format!(
                " Removed its tools: {} (no longer callable).",
                removed.join(", ")
            ));
        }
        out.push_str(&format!(
            " Its instructions and documents earlier in the conversation no longer apply; \
             use_skill loads it again. Loaded skills now: {}.",
            self.loaded_names()
        ));
        ToolOutput::ok(out)
    }
}

/// The description when the system prompt lists MCP servers only.
pub const SERVERS_DESCRIPTION: &str = "Remove the tools of a server loaded with use_skill.";
/// The arguments then.
pub const SERVERS_PARAMETERS: &str = include_str!("../schemas/unload_skill_servers.json");

impl TypedTool for UnloadSkill {
    type Args = Args;
    const PLAN_USE: crate::tools::PlanUse = crate::tools::PlanUse::Offered;

    const NAME: &'static str = "unload_skill";
    const DESCRIPTION: &'static str = "Unload a skill loaded with use_skill: removes the tools it added, to free context. \
         use_skill can load it again.";

    const PARAMETERS: &'static str = include_str!("../schemas/unload_skill.json");

    fn description(&self) -> &str {
        match self.listed {
            Listed::Skills => Self::DESCRIPTION,
            Listed::ServersOnly => SERVERS_DESCRIPTION,
        }
    }

    fn parameters(&self) -> serde_json::Value {
        schema_from_text(match self.listed {
            Listed::Skills => Self::PARAMETERS,
            Listed::ServersOnly => SERVERS_PARAMETERS,
        })
    }

    fn summary(&self, args: &Args) -> String {
        args.skill_name.clone()
    }

    fn execute<'a>(&'a self, args: Args, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move { Ok(self.call(&args.skill_name)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{assert_contains, project_with};
    use serde_json::json;

    use crate::tools::ToolRegistry;
    use crate::tools::skill::use_skill::UseSkill;
    use crate::tools::{Tool, test_context};
    use std::sync::Arc;

    #[tokio::test]
    async fn tools_appear_after_use_skill_and_disappear_after_unload() {
        let (tmp, catalog) = project_with(&[
            (
                "skills/calc/SKILL.md",
                "---\nname: calc\ndescription: d\n---\nUse calc_add.\n",
            ),
            (
                "skills/calc/tools.json",
                r#"[{"name": "calc_add", "description": "Add", "command": "cat"}]"#,
            ),
            (
                "skills/plain/SKILL.md",
                "---\nname: plain\ndescription: d\n---\nbody\n",
            ),
        ]);
        let catalog = Arc::new(catalog);
        let mut builder = crate::tools::ToolRegistryBuilder::with_builtins();
        let use_skill = UseSkill::new(catalog).with_tools(builder.loaded().clone());
        let loaded = use_skill.loaded();
        builder.register(Arc::new(use_skill));
        let unload = UnloadSkill::new(loaded.clone());
        builder.register(Arc::new(unload.clone()));
        let registry = builder.freeze();
        let ctx = test_context(tmp.path());
        let has = |r: &ToolRegistry| r.specs().iter().any(|s| s.name == "calc_add");

        assert!(!has(&registry));
        let use_skill = registry.get("use_skill").unwrap();
        use_skill
            .run(json!({"skill_name": "calc"}), &ctx)
            .await
            .unwrap();
        use_skill
            .run(json!({"skill_name": "plain"}), &ctx)
            .await
            .unwrap();
        assert!(has(&registry));
        assert_eq!(loaded.names(), ["calc", "plain"]);

        let out = unload
            .run(json!({"skill_name": "calc"}), &ctx)
            .await
            .unwrap();
        assert!(!out.is_error);
        assert_eq!(
            out.content,
            "Unloaded skill \"calc\". Removed its tools: calc_add (no longer callable). Its \
             instructions and documents earlier in the conversation no longer apply; use_skill \
             loads it again. Loaded skills now: plain."
        );
        assert!(!has(&registry));
        assert!(registry.get("calc_add").is_none());

        // Not loaded any more: an error naming what is loaded.
        let out = unload
            .run(json!({"skill_name": "calc"}), &ctx)
            .await
            .unwrap();
        assert!(out.is_error);
        assert_eq!(
            out.content,
            "Skill \"calc\" is not loaded. Loaded skills: plain"
        );

        // use_skill loads it again, tools included.
        let out = use_skill
            .run(json!({"skill_name": "calc"}), &ctx)
            .await
            .unwrap();
        assert_contains(&out.content, "Use calc_add.");
        assert!(has(&registry));

        let out = unload
            .run(json!({"skill_name": "plain"}), &ctx)
            .await
            .unwrap();
        assert_contains(&out.content, "It had no tools loaded.");
        assert_eq!(loaded.names(), ["calc"]);
    }
}
