//! The tools of a session. A [`ToolRegistryBuilder`] collects the fixed tools in order
//! and [`ToolRegistryBuilder::freeze`] makes them an immutable [`ToolRegistry`]; the only
//! part that changes afterwards is [`LoadedTools`], the tools loaded skills bring and
//! take away. The loaded set exists from the builder's start, so a tool can be handed it
//! before the others are registered (`use_skill`); it learns the fixed names at freeze,
//! to refuse skill tools that would shadow one.
//!
//! It knows tools only through the [`Tool`] trait: nothing of what any tool does, of
//! skills beyond an owner's name, or of the agent.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use super::{
    PlanUse, Tool, bash, edit_file, exit_plan, glob, grep, list, read_file, update_plan,
    view_image, web_fetch, write_file,
};
use crate::llm::ToolSpec;

/// Collects the fixed tools of a session, in order, until [`ToolRegistryBuilder::freeze`].
#[derive(Default)]
pub struct ToolRegistryBuilder {
    fixed: Vec<Arc<dyn Tool>>,
    loaded: LoadedTools,
}

impl ToolRegistryBuilder {
    /// No tools yet.
    pub fn new() -> Self {
        ToolRegistryBuilder::default()
    }

    /// The built-in coding tools.
    pub fn with_builtins() -> Self {
        let mut builder = ToolRegistryBuilder::new();
        builder.register(Arc::new(read_file::ReadFile));
        builder.register(Arc::new(view_image::ViewImage));
        builder.register(Arc::new(write_file::WriteFile));
        builder.register(Arc::new(edit_file::EditFile));
        builder.register(Arc::new(glob::Glob));
        builder.register(Arc::new(list::List));
        builder.register(Arc::new(grep::Grep));
        builder.register(Arc::new(bash::Bash));
        builder.register(Arc::new(web_fetch::WebFetch::default()));
        builder.register(Arc::new(update_plan::UpdatePlan));
        // Offered in plan mode only: requests outside it never carry it.
        builder.register(Arc::new(exit_plan::ExitPlan));
        builder
    }

    /// Adds a fixed tool at the end; a tool with the same name is replaced in place.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        if let Some(slot) = self.fixed.iter_mut().find(|t| t.name() == tool.name()) {
            *slot = tool;
        } else {
            self.fixed.push(tool);
        }
    }

    /// The set skills' tools will load into, shared with the registry this builder
    /// becomes. Loads are checked against the fixed tools once the registry is frozen.
    pub fn loaded(&self) -> &LoadedTools {
        &self.loaded
    }

    /// The registry: these fixed tools, in this order, for good.
    pub fn freeze(self) -> ToolRegistry {
        let names: Vec<String> = self.fixed.iter().map(|t| t.name().to_string()).collect();
        // The builder made this set and is consumed here, so the names are set once.
        let _ = self.loaded.0.fixed.set(names);
        ToolRegistry {
            fixed: self.fixed.into(),
            loaded: self.loaded,
        }
    }
}

/// Which of a session's tools a request offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolSet {
    /// Every tool.
    All,
    /// Plan mode's: the tools that say they run there.
    Plan,
}

/// The tools of a session: the fixed tools, in a fixed order (so requests are
/// byte-identical), followed by the tools that loaded skills bring ([`LoadedTools`]),
/// in load order. Clones share the loaded set.
#[derive(Clone)]
pub struct ToolRegistry {
    fixed: Arc<[Arc<dyn Tool>]>,
    loaded: LoadedTools,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl ToolRegistry {
    /// A builder with no tools.
    pub fn builder() -> ToolRegistryBuilder {
        ToolRegistryBuilder::new()
    }

    /// The built-in coding tools, frozen.
    pub fn with_builtins() -> Self {
        ToolRegistryBuilder::with_builtins().freeze()
    }

    /// A new registry with only the fixed tools `keep` says yes to, sharing nothing
    /// with this one (sub-agents limited to a skill's allowed tools).
    pub fn filtered(&self, keep: impl Fn(&str) -> bool) -> ToolRegistry {
        let mut builder = ToolRegistryBuilder::new();
        for tool in self.fixed.iter().filter(|t| keep(t.name())) {
            builder.register(tool.clone());
        }
        builder.freeze()
    }

    /// The set of tools loaded skills brought; shared by clones of this registry.
    pub fn loaded(&self) -> &LoadedTools {
        &self.loaded
    }

    /// The tool with this name, fixed or loaded.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        let fixed = self.fixed.iter().find(|t| t.name() == name).cloned();
        fixed.or_else(|| self.loaded.get(name))
    }

    /// What the results of the tool named `name` are to the conversation (a tool that
    /// is gone counts as reproducible).
    pub fn output_kind(&self, name: &str) -> crate::tools::OutputKind {
        self.get(name)
            .map_or(crate::tools::OutputKind::Reproducible, |t| t.output_kind())
    }

    /// Names: fixed tools in order, then loaded ones.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.fixed.iter().map(|t| t.name().to_string()).collect();
        names.extend(self.loaded.names());
        names
    }

    /// The specs sent to the model outside plan mode: fixed tools in order, then loaded
    /// ones (plan mode's own tools left out).
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.specs_for(ToolSet::All, None)
    }

    /// The specs offered in `set` with a context window of `window` tokens (`None`: not
    /// known), in the same order: outside plan mode every tool but plan mode's own
    /// ([`PlanUse::PlanOnly`]); in plan mode only the tools that say they run there; and
    /// never a tool that needs a larger window than a known one.
    pub fn specs_for(&self, set: ToolSet, window: Option<u64>) -> Vec<ToolSpec> {
        let fits = |t: &Arc<dyn Tool>| match (t.min_window(), window) {
            (Some(need), Some(window)) => window >= need,
            (None, _) | (_, None) => true,
        };
        let offered = |t: &&Arc<dyn Tool>| {
            fits(t)
                && match (set, t.plan_use()) {
                    (ToolSet::All, PlanUse::PlanOnly) | (ToolSet::Plan, PlanUse::Withheld) => false,
                    (ToolSet::All, PlanUse::Offered | PlanUse::Withheld)
                    | (ToolSet::Plan, PlanUse::Offered | PlanUse::PlanOnly) => true,
                }
        };
        let mut specs: Vec<ToolSpec> = self
            .fixed
            .iter()
            .filter(offered)
            .map(|t| spec_of(t.as_ref()))
            .collect();
        specs.extend(
            self.loaded
                .lock()
                .iter()
                .map(|l| &l.tool)
                .filter(offered)
                .map(|t| spec_of(t.as_ref())),
        );
        specs
    }

    /// Loads `tools` on behalf of skill `owner` ([`LoadedTools::load`]).
    pub fn load_skill_tools(
        &self,
        owner: &str,
        tools: Vec<Arc<dyn Tool>>,
    ) -> Result<(), ToolNameCollision> {
        self.loaded.load(owner, tools)
    }
}

fn spec_of(tool: &dyn Tool) -> ToolSpec {
    ToolSpec {
        name: tool.name().to_string(),
        description: tool.description().to_string(),
        parameters: tool.parameters(),
    }
}

/// A skill tool whose name is already taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "skill `{owner}` declares tool `{name}`, but {taken_by}; rename it in the skill's tools.json"
)]
pub struct ToolNameCollision {
    /// The skill that tried to load it.
    pub owner: String,
    /// The tool name.
    pub name: String,
    /// Who has the name ("a built-in tool has that name", "skill `x` already loaded it"...).
    pub taken_by: String,
}

struct LoadedTool {
    owner: String,
    tool: Arc<dyn Tool>,
}

#[derive(Default)]
struct Loaded {
    tools: Mutex<Vec<LoadedTool>>,
    /// The fixed tools' names, set when the registry is frozen.
    fixed: OnceLock<Vec<String>>,
}

/// Tools brought by loaded skills, in load order. Cheap to clone (shared).
#[derive(Clone, Default)]
pub struct LoadedTools(Arc<Loaded>);

impl std::fmt::Debug for LoadedTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl LoadedTools {
    fn lock(&self) -> MutexGuard<'_, Vec<LoadedTool>> {
        // A panic while holding this lock cannot leave the Vec half-updated (every
        // update is a single push/retain), so a poisoned lock is safe to use.
        self.0.tools.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Loads `tools` on behalf of skill `owner`, replacing what it loaded before. Fails,
    /// loading nothing, when a name is taken by a fixed tool of the frozen registry, by
    /// another skill's tool, or twice in `tools`.
    pub fn load(&self, owner: &str, tools: Vec<Arc<dyn Tool>>) -> Result<(), ToolNameCollision> {
        let fixed = self.0.fixed.get().map(Vec::as_slice).unwrap_or_default();
        let mut loaded = self.lock();
        for (i, tool) in tools.iter().enumerate() {
            let name = tool.name();
            let collision = |taken_by: String| ToolNameCollision {
                owner: owner.to_string(),
                name: name.to_string(),
                taken_by,
            };
            if fixed.iter().any(|f| f == name) {
                return Err(collision("a built-in tool has that name".into()));
            }
            if let Some(other) = loaded
                .iter()
                .find(|l| l.tool.name() == name && l.owner != owner)
            {
                return Err(collision(format!(
                    "skill `{}` already loaded a tool with that name",
                    other.owner
                )));
            }
            if tools[..i].iter().any(|t| t.name() == name) {
                return Err(collision("it is declared twice".into()));
            }
        }
        loaded.retain(|l| l.owner != owner);
        loaded.extend(tools.into_iter().map(|tool| LoadedTool {
            owner: owner.to_string(),
            tool,
        }));
        Ok(())
    }

    /// Removes the tools of skill `owner`; returns their names.
    pub fn unload(&self, owner: &str) -> Vec<String> {
        let mut loaded = self.lock();
        let names = loaded
            .iter()
            .filter(|l| l.owner == owner)
            .map(|l| l.tool.name().to_string())
            .collect();
        loaded.retain(|l| l.owner != owner);
        names
    }

    /// Skills that have tools loaded, in load order, without repeats.
    pub fn owners(&self) -> Vec<String> {
        let mut owners: Vec<String> = Vec::new();
        for l in self.lock().iter() {
            if !owners.contains(&l.owner) {
                owners.push(l.owner.clone());
            }
        }
        owners
    }

    /// The loaded tool called `name`.
    pub(crate) fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.lock()
            .iter()
            .find(|l| l.tool.name() == name)
            .map(|l| l.tool.clone())
    }

    fn names(&self) -> Vec<String> {
        self.lock()
            .iter()
            .map(|l| l.tool.name().to_string())
            .collect()
    }
}

#[cfg(test)]
mod builtin_tests {
    use super::*;

    #[test]
    fn builtins_are_registered_in_order_with_concise_schemas() {
        let registry = ToolRegistry::with_builtins();
        assert_eq!(
            registry.names(),
            [
                "read_file",
                "view_image",
                "write_file",
                "edit_file",
                "glob",
                "list",
                "grep",
                "bash",
                "web_fetch",
                "update_plan",
                "exit_plan"
            ]
        );
        let names = |specs: Vec<ToolSpec>| specs.into_iter().map(|s| s.name).collect::<Vec<_>>();
        // exit_plan is plan mode's alone; view_image, web_fetch and update_plan need a
        // window of 16k tokens; web_fetch is offered outside plan mode only.
        let seven = [
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "list",
            "grep",
            "bash",
        ];
        let roomy = |rest: &[&'static str]| {
            let mut all = vec!["read_file", "view_image"];
            all.extend_from_slice(&seven[1..]);
            all.extend_from_slice(rest);
            all
        };
        assert_eq!(
            names(registry.specs()),
            roomy(&["web_fetch", "update_plan"])
        );
        assert_eq!(
            names(registry.specs_for(ToolSet::All, Some(15_999))),
            seven.to_vec()
        );
        assert_eq!(
            names(registry.specs_for(ToolSet::All, Some(16_000))),
            roomy(&["web_fetch", "update_plan"])
        );
        assert_eq!(
            names(registry.specs_for(ToolSet::Plan, Some(8_000))),
            [&seven[..], &["exit_plan"]].concat()
        );
        assert_eq!(
            names(registry.specs_for(ToolSet::Plan, Some(16_000))),
            roomy(&["update_plan", "exit_plan"])
        );
        let mut total = 0;
        for spec in registry.specs_for(ToolSet::Plan, None) {
            let wire = serde_json::json!({
                "type": "function",
                "function": {
                    "name": spec.name,
                    "description": spec.description,
                    "parameters": spec.parameters,
                }
            })
            .to_string();
            eprintln!("{}: {} bytes", spec.name, wire.len());
            assert!(
                wire.len() <= 1024,
                "{} schema is {} bytes",
                spec.name,
                wire.len()
            );
            let properties = spec.parameters["properties"].as_object().unwrap();
            for (name, property) in properties {
                assert!(property["description"].is_string(), "{}.{name}", spec.name);
            }
            total += wire.len();
        }
        eprintln!("all tool schemas: {total} bytes");
        assert!(total <= 6 * 1024, "{total}");
    }
}

#[cfg(test)]
mod loaded_tests {
    use super::*;
    use crate::tools::{ToolContext, ToolFuture, ToolOutput, TypedTool};

    struct Named(&'static str);
    impl TypedTool for Named {
        type Args = serde::de::IgnoredAny;
        fn name(&self) -> &str {
            self.0
        }
        fn description(&self) -> &str {
            "test tool"
        }
        fn parameters(&self) -> serde_json::Value {
            serde_json::json!({"type": "object", "properties": {}})
        }
        fn summary(&self, _: &Self::Args) -> String {
            String::new()
        }
        fn execute<'a>(&'a self, _: Self::Args, _: &'a ToolContext) -> ToolFuture<'a> {
            Box::pin(async { Ok(ToolOutput::ok(self.0)) })
        }
    }

    #[test]
    fn skill_tools_join_after_the_fixed_ones_and_leave_on_unload() {
        let registry = ToolRegistry::with_builtins();
        let shared = registry.clone();
        registry
            .load_skill_tools(
                "pdf",
                vec![Arc::new(Named("pdf_fill")), Arc::new(Named("pdf_merge"))],
            )
            .unwrap();
        let names = shared.names();
        assert_eq!(&names[names.len() - 2..], ["pdf_fill", "pdf_merge"]);
        // The eight, web_fetch, view_image, update_plan, and the skill's two
        // (exit_plan is plan mode's).
        assert_eq!(shared.specs().len(), 12);
        assert!(shared.get("pdf_fill").is_some());
        assert_eq!(registry.loaded().owners(), ["pdf"]);
        assert_eq!(registry.loaded().unload("pdf"), ["pdf_fill", "pdf_merge"]);
        assert!(shared.get("pdf_fill").is_none());
        assert_eq!(shared.specs().len(), 10);
    }

    #[test]
    fn collisions_are_refused_whole_and_name_the_culprit() {
        let registry = ToolRegistry::with_builtins();
        let e = registry
            .load_skill_tools("x", vec![Arc::new(Named("ok")), Arc::new(Named("bash"))])
            .unwrap_err();
        assert!(
            e.to_string().contains("`bash`") && e.to_string().contains("built-in"),
            "{e}"
        );
        assert!(
            registry.get("ok").is_none(),
            "nothing loads when one name collides"
        );
        registry
            .load_skill_tools("a", vec![Arc::new(Named("fill"))])
            .unwrap();
        let e = registry
            .load_skill_tools("b", vec![Arc::new(Named("fill"))])
            .unwrap_err();
        assert!(e.to_string().contains("skill `a`"), "{e}");
        let e = registry
            .load_skill_tools("c", vec![Arc::new(Named("d")), Arc::new(Named("d"))])
            .unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
        // Reloading the same skill replaces its tools.
        registry
            .load_skill_tools("a", vec![Arc::new(Named("fill"))])
            .unwrap();
        assert_eq!(registry.names().iter().filter(|n| *n == "fill").count(), 1);
    }

    #[test]
    fn the_loaded_set_handed_out_early_learns_every_fixed_name_at_freeze() {
        let mut builder = ToolRegistry::builder();
        builder.register(Arc::new(Named("a")));
        let early = builder.loaded().clone();
        builder.register(Arc::new(Named("b")));
        // Registering a name again replaces the tool in place.
        builder.register(Arc::new(Named("a")));
        let registry = builder.freeze();
        assert_eq!(registry.names(), ["a", "b"]);
        let e = early.load("s", vec![Arc::new(Named("b"))]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "skill `s` declares tool `b`, but a built-in tool has that name; rename it in \
             the skill's tools.json"
        );
        early.load("s", vec![Arc::new(Named("c"))]).unwrap();
        assert_eq!(
            registry.names(),
            ["a", "b", "c"],
            "the registry shares the set"
        );
    }

    #[tokio::test]
    async fn a_loaded_tool_is_found_and_runs() {
        let registry = ToolRegistry::with_builtins();
        registry
            .load_skill_tools("s", vec![Arc::new(Named("fill"))])
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let ctx = crate::tools::test_context(dir.path());
        let tool = registry.get("fill").unwrap();
        let out = tool.run(serde_json::json!({}), &ctx).await.unwrap();
        assert_eq!(out, ToolOutput::ok("fill"));
    }

    #[test]
    fn filtered_keeps_only_allowed_fixed_tools() {
        let registry = ToolRegistry::with_builtins();
        registry
            .load_skill_tools("a", vec![Arc::new(Named("fill"))])
            .unwrap();
        let sub = registry.filtered(|n| n == "read_file" || n == "grep");
        assert_eq!(sub.names(), ["read_file", "grep"]);
        // Its own loaded set, frozen with its own fixed names.
        assert!(
            sub.load_skill_tools("b", vec![Arc::new(Named("grep"))])
                .is_err()
        );
        sub.load_skill_tools("b", vec![Arc::new(Named("bash"))])
            .unwrap();
        assert_eq!(sub.names(), ["read_file", "grep", "bash"]);
        assert!(registry.get("bash").is_some() && registry.loaded().owners() == ["a"]);
    }
}
