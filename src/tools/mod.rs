//! Tools the model can call: one file per tool with its tests beside it, each a
//! [`TypedTool`] over its own argument type, held by one [`ToolRegistry`] as a [`Tool`].
//! Adding a tool is one file and one line in [`ToolRegistry::with_builtins`].
//!
//! A call's arguments are parsed once ([`Tool::prepare`], against the tool's schema, so
//! the model gets an error naming the field and the expected shape); the prepared call
//! declares what it would touch ([`PreparedCall::access`]) so the agent can apply the
//! approval mode before running it, then runs it. A result is either output for the model
//! ([`ToolOutput`], which may be an error the model can recover from) or a fatal
//! [`ToolFatal`]. This module must not know about the model client, frontends or
//! terminals; it knows the project directory and a cancellation token, nothing more.

pub mod bash;
pub mod edit_file;
pub mod glob;
pub mod grep;
pub mod list;
pub mod path;
pub mod read_file;
pub mod skill;
pub mod skill_run;
pub mod skill_tool;
pub mod write_file;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::llm::ToolSpec;
use crate::protocol::ApprovalRequestKind;

/// The future a tool call returns.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolFatal>> + Send + 'a>>;

/// What a tool call is about to do, for the approval policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// Reads inside the project only: always allowed.
    ReadOnly,
    /// Needs a decision: what it would do, as shown to the user.
    NeedsApproval(ApprovalRequestKind),
}

/// Everything a tool may use while it runs.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The project directory (canonical); relative paths resolve against it.
    pub workdir: PathBuf,
    /// Cancelled when the user interrupts: long-running tools must stop promptly and
    /// kill what they started.
    pub cancel: CancellationToken,
    /// Limits on what a tool returns.
    pub limits: ToolLimits,
    /// Live output lines (bash), sent as they are produced. `None` when nobody listens.
    pub live_output: Option<UnboundedSender<String>>,
    /// Runs a forked skill in a sub-agent. `None` inside a sub-agent (no nested forks)
    /// and in tool tests.
    pub forker: Option<Arc<dyn Forker>>,
}

/// A request to run a skill in a sub-agent with its own conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkRequest {
    /// The skill's name (for events).
    pub skill: String,
    /// The expanded skill: the sub-agent's instructions.
    pub instructions: String,
    /// The task: the arguments the skill was invoked with.
    pub task: String,
    /// The skill's `allowed-tools`, if it names any.
    pub allowed_tools: Option<Vec<String>>,
    /// The tool call that asked for it, if any.
    pub parent_call_id: Option<String>,
}

/// How a sub-agent ended, when it did not produce an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForkError {
    /// The user interrupted.
    #[error("interrupted")]
    Interrupted,
    /// The sub-agent failed or hit its request cap.
    #[error("{0}")]
    Failed(String),
}

/// The capability to run a sub-agent, given to tools by the agent.
pub trait Forker: Send + Sync {
    /// Runs the sub-agent to completion and returns its final answer.
    fn fork(
        &self,
        request: ForkRequest,
    ) -> Pin<Box<dyn Future<Output = Result<String, ForkError>> + Send + '_>>;
}

impl std::fmt::Debug for dyn Forker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Forker")
    }
}

/// Size and time limits for tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolLimits {
    /// Largest tool output handed to the model, in bytes; longer output is truncated
    /// with a marker saying how much was cut.
    pub max_output_bytes: usize,
    /// Largest file `read_file` reads, in bytes.
    pub max_read_bytes: u64,
    /// Default timeout for `bash`, in seconds (the model may ask for less or more, up to
    /// `max_bash_timeout_secs`).
    pub default_bash_timeout_secs: u64,
    /// Upper bound on a `bash` timeout, in seconds.
    pub max_bash_timeout_secs: u64,
}

impl Default for ToolLimits {
    fn default() -> Self {
        ToolLimits {
            max_output_bytes: 30_000,
            max_read_bytes: 2 * 1024 * 1024,
            default_bash_timeout_secs: 120,
            max_bash_timeout_secs: 600,
        }
    }
}

/// A finished call: text for the model plus optional display data for frontends.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolOutput {
    /// What the model sees.
    pub content: String,
    /// True when this is an error the model should correct (bad arguments, no match,
    /// command failed to start...). The agent reports it with status `error`.
    pub is_error: bool,
    /// A unified diff for calls that changed a file (shown by frontends).
    pub diff: Option<String>,
    /// Problems the user should see as warnings too (the model sees them in
    /// `content` already), e.g. a skill's tools.json that could not be loaded.
    pub warnings: Vec<String>,
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: false,
            diff: None,
            warnings: Vec::new(),
        }
    }

    /// An error the model can recover from.
    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: true,
            diff: None,
            warnings: Vec::new(),
        }
    }

    /// Attach a warning for the user (frontends show it as a notice).
    pub fn with_warning(mut self, warning: String) -> Self {
        self.warnings.push(warning);
        self
    }

    /// Attach a diff for frontends.
    pub fn with_diff(mut self, diff: String) -> Self {
        self.diff = Some(diff);
        self
    }
}

/// A failure that is not the model's to fix: the turn fails.
#[derive(Debug, thiserror::Error)]
pub enum ToolFatal {
    /// The call was interrupted by the user.
    #[error("interrupted")]
    Interrupted,
    /// An internal failure (a bug or an I/O failure outside the tool's remit).
    #[error("{0}")]
    Internal(String),
}

/// One tool, written against its own argument type. The arguments are parsed once, when
/// the call is prepared ([`Tool::prepare`], provided for every `TypedTool`), and the
/// parsed value is what `access`, `summary` and `execute` see.
pub trait TypedTool: Send + Sync {
    /// The tool's arguments. Parsed by [`parse_args`] against [`TypedTool::parameters`],
    /// so a missing field or a wrong type is an error the model can act on.
    type Args: serde::de::DeserializeOwned + Send;
    /// The name the model calls it by.
    fn name(&self) -> &str;
    /// One or two precise sentences: what it does and when to use it.
    fn description(&self) -> &str;
    /// JSON schema of the arguments object.
    fn parameters(&self) -> serde_json::Value;
    /// What a call with these arguments would touch (reads inside the project unless
    /// the tool says otherwise).
    fn access(&self, _args: &Self::Args, _ctx: &ToolContext) -> Access {
        Access::ReadOnly
    }
    /// A few words naming the main argument (path, pattern, command) for frontends.
    fn summary(&self, args: &Self::Args) -> String;
    /// Runs the call. Problems the model can fix are an `Ok(ToolOutput::error(..))`.
    fn execute<'a>(&'a self, args: Self::Args, ctx: &'a ToolContext) -> ToolFuture<'a>;
}

/// One tool as the registry holds it (object-safe). Every [`TypedTool`] is one.
pub trait Tool: Send + Sync {
    /// The name the model calls it by.
    fn name(&self) -> &str;
    /// One or two precise sentences: what it does and when to use it.
    fn description(&self) -> &str;
    /// JSON schema of the arguments object.
    fn parameters(&self) -> serde_json::Value;
    /// Parses the arguments, once: the call ready for approval and running, or the error
    /// result for the model (naming the problem and the expected shape).
    fn prepare(&self, args: serde_json::Value) -> Result<Box<dyn PreparedCall + '_>, ToolOutput>;
    /// Prepares and runs the call; arguments that do not parse are an
    /// `Ok(ToolOutput::error(..))`.
    fn run<'a>(&'a self, args: serde_json::Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        match self.prepare(args) {
            Ok(call) => call.run(ctx),
            Err(output) => Box::pin(async move { Ok(output) }),
        }
    }
}

/// A call whose arguments parsed: what it would touch, how to name it, and running it.
pub trait PreparedCall: Send {
    /// What the call would touch, for the approval policy.
    fn access(&self, ctx: &ToolContext) -> Access;
    /// A few words naming the main argument, for frontends.
    fn summary(&self) -> String;
    /// Runs the call.
    fn run<'a>(self: Box<Self>, ctx: &'a ToolContext) -> ToolFuture<'a>
    where
        Self: 'a;
}

/// A [`TypedTool`] with its parsed arguments.
struct Typed<'t, T: TypedTool> {
    tool: &'t T,
    args: T::Args,
}

impl<T: TypedTool> PreparedCall for Typed<'_, T> {
    fn access(&self, ctx: &ToolContext) -> Access {
        self.tool.access(&self.args, ctx)
    }

    fn summary(&self) -> String {
        self.tool.summary(&self.args)
    }

    fn run<'a>(self: Box<Self>, ctx: &'a ToolContext) -> ToolFuture<'a>
    where
        Self: 'a,
    {
        let Typed { tool, args } = *self;
        tool.execute(args, ctx)
    }
}

impl<T: TypedTool> Tool for T {
    fn name(&self) -> &str {
        TypedTool::name(self)
    }

    fn description(&self) -> &str {
        TypedTool::description(self)
    }

    fn parameters(&self) -> serde_json::Value {
        TypedTool::parameters(self)
    }

    fn prepare(&self, args: serde_json::Value) -> Result<Box<dyn PreparedCall + '_>, ToolOutput> {
        let args =
            parse_args::<T::Args>(TypedTool::name(self), &args, &TypedTool::parameters(self))?;
        Ok(Box::new(Typed { tool: self, args }))
    }
}

/// The tools of a session: the fixed tools, in a fixed order (so requests are
/// byte-identical), followed by the tools that loaded skills bring ([`LoadedTools`]),
/// in load order. Clones share both lists, so a clone handed to a tool (use_skill)
/// sees tools registered after it was made.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    fixed: Arc<std::sync::RwLock<Vec<Arc<dyn Tool>>>>,
    loaded: LoadedTools,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        ToolRegistry::default()
    }

    /// The built-in coding tools.
    pub fn with_builtins() -> Self {
        let mut registry = ToolRegistry::new();
        registry.register(Arc::new(read_file::ReadFile));
        registry.register(Arc::new(write_file::WriteFile));
        registry.register(Arc::new(edit_file::EditFile));
        registry.register(Arc::new(glob::Glob));
        registry.register(Arc::new(list::List));
        registry.register(Arc::new(grep::Grep));
        registry.register(Arc::new(bash::Bash));
        registry
    }

    fn fixed(&self) -> std::sync::RwLockReadGuard<'_, Vec<Arc<dyn Tool>>> {
        // Every write is a single push or slot replacement, so a poisoned lock still
        // holds a consistent list.
        self.fixed
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds a fixed tool at the end; a tool with the same name is replaced in place.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let mut fixed = self
            .fixed
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(slot) = fixed.iter_mut().find(|t| t.name() == tool.name()) {
            *slot = tool;
        } else {
            fixed.push(tool);
        }
    }

    /// A new registry with only the fixed tools `keep` says yes to, sharing nothing
    /// with this one (sub-agents limited to a skill's allowed tools).
    pub fn filtered(&self, keep: impl Fn(&str) -> bool) -> ToolRegistry {
        let tools: Vec<Arc<dyn Tool>> = self
            .fixed()
            .iter()
            .filter(|t| keep(t.name()))
            .cloned()
            .collect();
        ToolRegistry {
            fixed: Arc::new(std::sync::RwLock::new(tools)),
            loaded: LoadedTools::default(),
        }
    }

    /// The set of tools loaded skills brought; shared by clones of this registry.
    pub fn loaded(&self) -> &LoadedTools {
        &self.loaded
    }

    /// The tool with this name, fixed or loaded.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        let fixed = self.fixed().iter().find(|t| t.name() == name).cloned();
        fixed.or_else(|| self.loaded.get(name))
    }

    /// Names: fixed tools in order, then loaded ones.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.fixed().iter().map(|t| t.name().to_string()).collect();
        names.extend(self.loaded.names());
        names
    }

    /// The specs sent to the model: fixed tools in order, then loaded ones.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> = self.fixed().iter().map(|t| spec_of(t.as_ref())).collect();
        specs.extend(self.loaded.specs());
        specs
    }

    /// Loads `tools` on behalf of skill `owner`. Fails, loading nothing, when a name is
    /// taken by a fixed tool, by another loaded tool, or twice in `tools`.
    pub fn load_skill_tools(
        &self,
        owner: &str,
        tools: Vec<Arc<dyn Tool>>,
    ) -> Result<(), ToolNameCollision> {
        let fixed: Vec<String> = self.fixed().iter().map(|t| t.name().to_string()).collect();
        let fixed: Vec<&str> = fixed.iter().map(String::as_str).collect();
        self.loaded.load(owner, tools, &fixed)
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

/// Tools brought by loaded skills, in load order. Cheap to clone (shared).
#[derive(Clone, Default)]
pub struct LoadedTools(Arc<std::sync::Mutex<Vec<LoadedTool>>>);

impl LoadedTools {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<LoadedTool>> {
        // A panic while holding this lock cannot leave the Vec half-updated (every
        // update is a single push/retain), so a poisoned lock is safe to use.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn load(
        &self,
        owner: &str,
        tools: Vec<Arc<dyn Tool>>,
        fixed: &[&str],
    ) -> Result<(), ToolNameCollision> {
        let mut loaded = self.lock();
        for (i, tool) in tools.iter().enumerate() {
            let name = tool.name();
            let collision = |taken_by: String| ToolNameCollision {
                owner: owner.to_string(),
                name: name.to_string(),
                taken_by,
            };
            if fixed.contains(&name) {
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

    fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
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

    fn specs(&self) -> Vec<ToolSpec> {
        self.lock()
            .iter()
            .map(|l| spec_of(l.tool.as_ref()))
            .collect()
    }
}

/// Parses a tool's arguments into its private argument struct. Arguments are first
/// checked against the tool's JSON schema (`parameters`) so that a missing field or a
/// wrong type comes back as an error the model can act on, naming the field and the
/// expected shape. `null` counts as `{}`.
pub(crate) fn parse_args<T: serde::de::DeserializeOwned>(
    tool: &str,
    args: &serde_json::Value,
    schema: &serde_json::Value,
) -> Result<T, ToolOutput> {
    let empty = serde_json::Value::Object(serde_json::Map::new());
    let args = if args.is_null() { &empty } else { args };
    let invalid = |problem: String| {
        ToolOutput::error(format!(
            "Invalid arguments for {tool}: {problem}. Expected {}.",
            schema_shape(schema)
        ))
    };
    let Some(object) = args.as_object() else {
        return Err(invalid(format!(
            "arguments must be a JSON object, got {}",
            json_kind(args)
        )));
    };
    let properties = schema.get("properties").and_then(|p| p.as_object());
    let required = schema.get("required").and_then(|r| r.as_array());
    for name in required.into_iter().flatten().filter_map(|n| n.as_str()) {
        if !object.contains_key(name) {
            return Err(invalid(format!("missing field `{name}`")));
        }
    }
    for (name, value) in object {
        let expected = properties
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("type"))
            .and_then(|t| t.as_str());
        if let Some(expected) = expected
            && !value.is_null()
            && !json_type_matches(value, expected)
        {
            return Err(invalid(format!(
                "field `{name}` must be {}, got {}",
                with_article(expected),
                json_kind(value)
            )));
        }
    }
    serde_json::from_value(args.clone()).map_err(|e| invalid(e.to_string()))
}

fn json_type_matches(value: &serde_json::Value, expected: &str) -> bool {
    match expected {
        "string" => value.is_string(),
        "integer" => value.is_u64() || value.is_i64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(n) if n.is_f64() => "a number",
        serde_json::Value::Number(_) => "an integer",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

fn with_article(kind: &str) -> String {
    match kind {
        "integer" | "array" | "object" => format!("an {kind}"),
        _ => format!("a {kind}"),
    }
}

/// `{"path": string, "offset"?: integer}` for a schema: the shape the model should send.
fn schema_shape(schema: &serde_json::Value) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| r.iter().filter_map(|n| n.as_str()).collect())
        .unwrap_or_default();
    let fields: Vec<String> = schema
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|p| {
            p.iter()
                .map(|(name, prop)| {
                    let kind = prop.get("type").and_then(|t| t.as_str()).unwrap_or("any");
                    let optional = if required.contains(&name.as_str()) {
                        ""
                    } else {
                        "?"
                    };
                    format!("\"{name}\"{optional}: {kind}")
                })
                .collect()
        })
        .unwrap_or_default();
    format!("{{{}}}", fields.join(", "))
}

/// Runs blocking file-system work off the async threads.
pub(crate) async fn run_blocking<T, F>(work: F) -> Result<T, ToolFatal>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolFatal::Internal(format!("tool task failed: {e}")))
}

/// A temporary project for tool tests holding `files` (path, content), and a context on it.
#[cfg(test)]
pub(crate) fn test_tree(files: &[(&str, &str)]) -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    for (file, content) in files {
        let path = dir.path().join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{}: {e}", parent.display()));
        }
        std::fs::write(&path, content).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    let ctx = test_context(dir.path());
    (dir, ctx)
}

/// The call `tool` prepares from `args`, for tests; panics when they do not parse.
#[cfg(test)]
pub(crate) fn prepared(tool: &dyn Tool, args: serde_json::Value) -> Box<dyn PreparedCall + '_> {
    tool.prepare(args)
        .unwrap_or_else(|e| panic!("{}: arguments refused: {}", tool.name(), e.content))
}

/// A context for tool tests: canonical `workdir`, default limits, nobody listening.
#[cfg(test)]
pub(crate) fn test_context(workdir: &std::path::Path) -> ToolContext {
    ToolContext {
        workdir: std::fs::canonicalize(workdir).unwrap_or_else(|_| workdir.to_path_buf()),
        cancel: CancellationToken::new(),
        limits: ToolLimits::default(),
        live_output: None,
        forker: None,
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
                "write_file",
                "edit_file",
                "glob",
                "list",
                "grep",
                "bash"
            ]
        );
        let mut total = 0;
        for spec in registry.specs() {
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
        assert_eq!(shared.specs().len(), 9);
        assert!(shared.get("pdf_fill").is_some());
        assert_eq!(registry.loaded().owners(), ["pdf"]);
        assert_eq!(registry.loaded().unload("pdf"), ["pdf_fill", "pdf_merge"]);
        assert!(shared.get("pdf_fill").is_none());
        assert_eq!(shared.specs().len(), 7);
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
    fn filtered_keeps_only_allowed_fixed_tools() {
        let registry = ToolRegistry::with_builtins();
        registry
            .load_skill_tools("a", vec![Arc::new(Named("fill"))])
            .unwrap();
        let sub = registry.filtered(|n| n == "read_file" || n == "grep");
        assert_eq!(sub.names(), ["read_file", "grep"]);
    }
}

#[cfg(test)]
mod typed_tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    /// Times [`Counted`] was deserialized. The other test here never gets that far: its
    /// arguments fail the schema check first.
    static PARSES: AtomicUsize = AtomicUsize::new(0);

    /// Arguments that count their own deserializations.
    struct Counted {
        path: String,
    }

    impl<'de> Deserialize<'de> for Counted {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            #[derive(Deserialize)]
            struct Raw {
                path: String,
            }
            PARSES.fetch_add(1, Ordering::SeqCst);
            Raw::deserialize(d).map(|raw| Counted { path: raw.path })
        }
    }

    struct Touch;

    impl TypedTool for Touch {
        type Args = Counted;
        fn name(&self) -> &str {
            "touch"
        }
        fn description(&self) -> &str {
            "test tool"
        }
        fn parameters(&self) -> serde_json::Value {
            json!({
                "type": "object",
                "properties": {"path": {"type": "string", "description": "A path."}},
                "required": ["path"]
            })
        }
        fn access(&self, args: &Counted, ctx: &ToolContext) -> Access {
            Access::NeedsApproval(ApprovalRequestKind::Edit {
                path: ctx.workdir.join(&args.path),
                diff: None,
                outside_project: false,
            })
        }
        fn summary(&self, args: &Counted) -> String {
            format!("touch {}", args.path)
        }
        fn execute<'a>(&'a self, args: Counted, _: &'a ToolContext) -> ToolFuture<'a> {
            Box::pin(async move { Ok(ToolOutput::ok(format!("touched {}", args.path))) })
        }
    }

    #[tokio::test]
    async fn arguments_are_parsed_once_for_access_summary_and_run() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path());
        let tool: Arc<dyn Tool> = Arc::new(Touch);
        let before = PARSES.load(Ordering::SeqCst);
        let call = tool.prepare(json!({"path": "a.txt"})).ok().unwrap();
        assert_eq!(
            call.access(&ctx),
            Access::NeedsApproval(ApprovalRequestKind::Edit {
                path: ctx.workdir.join("a.txt"),
                diff: None,
                outside_project: false,
            })
        );
        assert_eq!(call.summary(), "touch a.txt");
        let out = call.run(&ctx).await.unwrap();
        assert_eq!(out, ToolOutput::ok("touched a.txt"));
        assert_eq!(PARSES.load(Ordering::SeqCst) - before, 1);
    }

    #[tokio::test]
    async fn refused_arguments_are_the_same_error_from_prepare_and_run() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path());
        let expected = [
            (
                json!([1]),
                "Invalid arguments for touch: arguments must be a JSON object, got an array. \
                 Expected {\"path\": string}.",
            ),
            (
                json!(null),
                "Invalid arguments for touch: missing field `path`. Expected {\"path\": string}.",
            ),
            (
                json!({"path": 7}),
                "Invalid arguments for touch: field `path` must be a string, got an integer. \
                 Expected {\"path\": string}.",
            ),
        ];
        for (args, message) in expected {
            let refused = Touch.prepare(args.clone()).err().unwrap();
            assert_eq!(refused, ToolOutput::error(message), "{args}");
            assert_eq!(
                Touch.run(args, &ctx).await.unwrap(),
                ToolOutput::error(message)
            );
        }
    }
}
