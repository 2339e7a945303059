//! The `unload_skill` tool: removes the tools a loaded skill brought (so their schemas
//! stop travelling with every request), forgets its selected documents and lets
//! `use_skill` load it again. The result names what was removed and which skills stay
//! loaded. It knows the session's [`LoadedSkills`] and the registry's loaded tools,
//! nothing of the agent loop.

use serde::Deserialize;
use serde_json::{Value, json};

use super::parse_args;
use super::use_skill::LoadedSkills;
use super::{Access, LoadedTools, Tool, ToolContext, ToolFuture, ToolOutput, ToolRegistry};

/// Unloads a skill.
#[derive(Clone)]
pub struct UnloadSkill {
    loaded: LoadedSkills,
    tools: LoadedTools,
}

impl std::fmt::Debug for UnloadSkill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnloadSkill")
            .field("loaded", &self.loaded)
            .finish()
    }
}

#[derive(Debug, Deserialize)]
struct Args {
    skill_name: String,
}

impl UnloadSkill {
    /// The tool over the session's loaded skills and the loaded set of `registry`.
    pub fn new(loaded: LoadedSkills, registry: &ToolRegistry) -> Self {
        UnloadSkill {
            loaded,
            tools: registry.loaded().clone(),
        }
    }

    fn loaded_names(&self) -> String {
        let mut names = self.loaded.names();
        for owner in self.tools.owners() {
            if !names.contains(&owner) {
                names.push(owner);
            }
        }
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    }

    fn call(&self, name: &str) -> ToolOutput {
        let name = name.trim();
        let has_tools = self.tools.owners().iter().any(|o| o == name);
        if !self.loaded.contains(name) && !has_tools {
            return ToolOutput::error(format!(
                "Skill {name:?} is not loaded. Loaded skills: {}",
                self.loaded_names()
            ));
        }
        let removed = self.tools.unload(name);
        self.loaded.unmark(name);
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

impl Tool for UnloadSkill {
    fn name(&self) -> &str {
        "unload_skill"
    }

    fn description(&self) -> &str {
        "Unload a skill loaded with use_skill: removes the tools it added, to free context. \
         use_skill can load it again."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "skill_name": {"type": "string", "description": "The loaded skill's name."}
            },
            "required": ["skill_name"]
        })
    }

    fn access(&self, _args: &Value, _ctx: &ToolContext) -> Access {
        Access::ReadOnly
    }

    fn summary(&self, args: &Value) -> String {
        args.get("skill_name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    }

    fn run<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let args = match parse_args::<Args>(self.name(), &args, &self.parameters()) {
                Ok(a) => a,
                Err(out) => return Ok(out),
            };
            Ok(self.call(&args.skill_name))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::{Catalog, DiscoveryOptions};
    use crate::tools::test_context;
    use crate::tools::use_skill::UseSkill;
    use std::path::Path;
    use std::sync::Arc;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[tokio::test]
    async fn tools_appear_after_use_skill_and_disappear_after_unload() {
        let tmp = tempfile::tempdir().unwrap();
        let skill = tmp.path().join("skills/calc");
        write(
            &skill.join("SKILL.md"),
            "---\nname: calc\ndescription: d\n---\nUse calc_add.\n",
        );
        write(
            &skill.join("tools.json"),
            r#"[{"name": "calc_add", "description": "Add", "command": "cat"}]"#,
        );
        write(
            &tmp.path().join("skills/plain/SKILL.md"),
            "---\nname: plain\ndescription: d\n---\nbody\n",
        );
        let catalog = Arc::new(Catalog::discover(&DiscoveryOptions {
            workdir: tmp.path().to_path_buf(),
            harness9_home: tmp.path().join("home"),
            ..DiscoveryOptions::default()
        }));
        let mut registry = ToolRegistry::with_builtins();
        let use_skill = UseSkill::new(catalog).with_registry(registry.clone());
        let loaded = use_skill.loaded();
        registry.register(Arc::new(use_skill));
        let unload = UnloadSkill::new(loaded.clone(), &registry);
        registry.register(Arc::new(unload.clone()));
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
        assert!(out.content.contains("Use calc_add."), "{}", out.content);
        assert!(has(&registry));

        let out = unload
            .run(json!({"skill_name": "plain"}), &ctx)
            .await
            .unwrap();
        assert!(
            out.content.contains("It had no tools loaded."),
            "{}",
            out.content
        );
        assert_eq!(loaded.names(), ["calc"]);
    }
}
