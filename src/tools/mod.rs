//! Tools the model can call: one file per tool with its tests beside it, each a
//! [`TypedTool`] over its own argument type, held as a [`Tool`] by the session's
//! [`ToolRegistry`] (built, then frozen: `registry.rs`). Adding a tool is one file and
//! one line in [`ToolRegistryBuilder::with_builtins`].
//!
//! A call's arguments are parsed once ([`Tool::prepare`], against the tool's schema, so
//! the model gets an error naming the field and the expected shape); the prepared call
//! declares what it would touch ([`PreparedCall::access`]) so the agent can apply the
//! approval mode before running it, then runs it. A result is either output for the model
//! ([`ToolOutput`], which may be an error the model can recover from) or a fatal
//! [`ToolFatal`]. Of the model client it knows only the plain [`ToolSpec`](crate::llm::ToolSpec) it hands over
//! (name, description, schema); it must not know requests, streaming, frontends or
//! terminals. A tool sees the project directory, a cancellation token, limits, a live
//! output channel and (for forked skills) a [`Forker`], nothing more.

pub mod agent_tool;
pub mod bash;
pub mod edit_file;
pub mod exit_plan;
pub mod files;
pub mod glob;
pub mod grep;
pub mod list;
pub mod path;
pub mod read_file;
mod registry;
pub mod skill;
pub mod skill_run;
pub mod skill_tool;
pub mod update_plan;
pub mod view_image;
pub mod web_fetch;
pub mod web_search;
#[cfg(test)]
pub(crate) mod web_test_server;
pub mod write_file;

pub use registry::{LoadedTools, ToolNameCollision, ToolRegistry, ToolRegistryBuilder, ToolSet};

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::protocol::{ApprovalRequestKind, FileLocation};

/// The future a tool call returns.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolFatal>> + Send + 'a>>;

/// What a tool call is about to do, for the approval policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// Touches nothing a rule judges (no file contents, no command): always allowed.
    ReadOnly,
    /// Reads this path inside the project: allowed unless a rule asks or denies (the
    /// built-in secret-file rules ask).
    ReadInside(PathBuf),
    /// Needs a decision: what it would do, as shown to the user.
    NeedsApproval(ApprovalRequestKind),
    /// Does all of these: each is judged (and asked about) in turn, and the call runs
    /// only when every one may (skill_run reading its inputs, then running a command).
    All(Vec<Access>),
}

impl Access {
    /// The single accesses this one is made of, in order.
    pub fn into_parts(self) -> Vec<Access> {
        match self {
            Access::All(parts) => parts.into_iter().flat_map(Access::into_parts).collect(),
            one => vec![one],
        }
    }

    /// Whether any part needs a decision (so the call may change things).
    pub fn needs_approval(&self) -> bool {
        match self {
            Access::NeedsApproval(_) => true,
            Access::All(parts) => parts.iter().any(Access::needs_approval),
            Access::ReadOnly | Access::ReadInside(_) => false,
        }
    }
}

/// Where in the project's folders a call works, for the instruction files of the
/// folders below the working folder (attached to its result the first time): told by
/// each tool from the paths it already resolved, never by reading a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorksIn {
    /// No folder of the project (an MCP tool, a skill's tool, loading a skill).
    Nowhere,
    /// This file or folder: the real path the call acts on, every link followed.
    Place {
        /// The real path.
        real: PathBuf,
    },
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
    /// The saved session's artifacts (`None` when the session is not saved).
    pub artifacts: Option<crate::artifacts::ArtifactStore>,
    /// What the commands this call starts may write.
    pub writes: CommandWrites,
    /// The session's plan file, in plan mode (for `exit_plan`).
    pub plan_file: Option<PathBuf>,
    /// Where `bash` runs its commands: the session's sandbox, or (for a read-only
    /// sub-agent) that sandbox with nothing writable.
    pub commands: crate::exec::Confinement,
    /// The id of the call being run (a sub-agent's events name the call that started
    /// it); empty in tool tests.
    pub call_id: String,
    /// Which addresses this call's web request may reach (`web_fetch`).
    pub web_reach: WebReach,
    /// Where the file tools read and write a file they were allowed to touch: the disk,
    /// or the editor the session runs in.
    pub files: files::FileAccess,
}

/// Which addresses a web request may reach: set by the agent after the call was
/// approved, from the rule that allowed it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum WebReach {
    /// Addresses on the public internet only: loopback, private, link-local and the
    /// other internal ranges are refused (the default, whatever approved the call).
    #[default]
    PublicOnly,
    /// Any address of the host: an allow rule names this host itself.
    AnyAddress {
        /// The rule, as written.
        rule: String,
    },
}

/// What the commands a tool starts may write: the session sandbox's folders, or nothing
/// (plan mode: a sandbox that writes nothing, or the command does not start).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CommandWrites {
    /// What the session's sandbox allows (everything without one).
    #[default]
    AsSession,
    /// Nothing: [`crate::exec::Confinement::ReadOnly`].
    Nothing,
}

impl CommandWrites {
    /// The confinement for a command that would otherwise run in `usual`.
    pub fn confine(self, usual: crate::exec::Confinement) -> crate::exec::Confinement {
        match self {
            CommandWrites::AsSession => usual,
            CommandWrites::Nothing => crate::exec::Confinement::ReadOnly,
        }
    }
}

/// Whether a tool is offered, and may run, in plan mode. Tools are withheld unless they
/// say otherwise: a new tool, a skill's tool or an MCP tool never runs in plan mode by
/// accident.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PlanUse {
    /// Not offered in plan mode, and refused if called.
    #[default]
    Withheld,
    /// Offered: it only reads, or what it changes plan mode judges (edits: the plan file
    /// only; commands: in the read-only sandbox).
    Offered,
    /// Offered in plan mode only (`exit_plan`), and refused outside it.
    PlanOnly,
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
    /// What it is: a forked skill, or an agent definition with its own limits.
    pub of: ForkOf,
}

/// What a sub-agent runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForkOf {
    /// A forked skill: the session's model, approval mode and sandbox.
    Skill,
    /// An agent definition ([`crate::agents`]), with what it asks for; the runner
    /// narrows, never widens.
    Agent(AgentLimits),
}

/// What an agent definition asks of the sub-agent that runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentLimits {
    /// Tools it must not have (Claude Code's names or harness9's).
    pub disallowed_tools: Vec<String>,
    /// Its approval mode at most (never wider than the session's).
    pub permission: crate::agents::PermissionWish,
    /// Where its commands run.
    pub confinement: crate::agents::Confinement,
    /// The model it asks for.
    pub model: crate::agents::ModelChoice,
    /// Its own cap on model requests.
    pub max_turns: Option<u32>,
}

impl ForkRequest {
    /// A request to run `skill` (prepared into `instructions`) on `task`, limited to its
    /// `allowed-tools` when it names any.
    pub fn for_skill(skill: &crate::skills::Skill, instructions: String, task: String) -> Self {
        let allowed = &skill.frontmatter.allowed_tools;
        ForkRequest {
            skill: skill.name.clone(),
            instructions,
            task,
            allowed_tools: (!allowed.is_empty()).then(|| allowed.clone()),
            parent_call_id: None,
            of: ForkOf::Skill,
        }
    }
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
    /// Whether `grep` searches files that look like secrets (`.env`, keys).
    pub secret_files: SecretFileSearch,
    /// Largest image attached or viewed (`@` mentions, `--image`, `view_image`), in
    /// bytes (`max_image_bytes` in config.toml).
    pub max_image_bytes: u64,
}

/// Whether tools that read many files at once (`grep`) read secret-looking files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SecretFileSearch {
    /// They are skipped, and the output says how many (the default, while the
    /// built-in secret-file rules are on).
    #[default]
    Skipped,
    /// They are searched like any file (`builtin_rules = "off"`).
    Searched,
}

impl Default for ToolLimits {
    fn default() -> Self {
        ToolLimits {
            max_output_bytes: 30_000,
            max_read_bytes: 2 * 1024 * 1024,
            default_bash_timeout_secs: 120,
            max_bash_timeout_secs: 600,
            secret_files: SecretFileSearch::Skipped,
            max_image_bytes: crate::images::DEFAULT_MAX_IMAGE_BYTES,
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
    /// The changed file's whole text before and after, when it fits the cap (for an
    /// editor's diff view).
    pub change: Option<Box<crate::protocol::FileChange>>,
    /// Problems the user should see as warnings too (the model sees them in
    /// `content` already), e.g. a skill's tools.json that could not be loaded.
    pub warnings: Vec<String>,
    /// The plan as `update_plan` set it, for the frontends and the saved session.
    /// (Boxed: a result is moved often, and is rarely a plan.)
    pub plan: Option<Box<crate::protocol::PlanUpdate>>,
    /// Images for the model (`view_image`): a tool result cannot carry them on the Chat
    /// wire, so the agent sends them in a user message right after the call's results.
    pub images: Vec<crate::images::Image>,
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: false,
            diff: None,
            change: None,
            warnings: Vec::new(),
            plan: None,
            images: Vec::new(),
        }
    }

    /// An error the model can recover from.
    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: true,
            diff: None,
            change: None,
            warnings: Vec::new(),
            plan: None,
            images: Vec::new(),
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

    /// Attach the changed file's texts for frontends (`None`: over the cap).
    pub fn with_change(mut self, change: Option<Box<crate::protocol::FileChange>>) -> Self {
        self.change = change;
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

/// What a tool's result is to the conversation, for deciding what may be dropped from
/// what is sent once it is old.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputKind {
    /// Output the model can get again by repeating the call (files, searches,
    /// commands): an old, large result may be replaced by a marker.
    #[default]
    Reproducible,
    /// Instructions that stay in force (a loaded skill, its documents): never elided.
    Instructions,
}

/// The smallest context window (tokens) the tools whose schema or results would crowd a
/// small one are offered in: `update_plan` (a plan sent with every change), `web_fetch`
/// (a page) and `view_image` (an image, about 1,100 tokens).
pub const ROOMY_WINDOW: u64 = 16_000;

/// One tool, written against its own argument type. The arguments are parsed once, when
/// the call is prepared ([`Tool::prepare`], provided for every `TypedTool`), and the
/// parsed value is what `access`, `summary` and `execute` see.
pub trait TypedTool: Send + Sync {
    /// The tool's arguments. Parsed by `parse_args` against [`TypedTool::parameters`],
    /// so a missing field or a wrong type is an error the model can act on.
    type Args: serde::de::DeserializeOwned + Send;
    /// The name the model calls it by.
    const NAME: &'static str = "";
    /// One or two precise sentences: what it does and when to use it.
    const DESCRIPTION: &'static str = "";
    /// The name; a tool whose name is data (a skill's tools.json) overrides it.
    fn name(&self) -> &str {
        Self::NAME
    }
    /// The description; a tool whose description is data overrides it.
    fn description(&self) -> &str {
        Self::DESCRIPTION
    }
    /// JSON schema of the arguments object, as text. The built-in tools' schemas are data
    /// in `tools/schemas/<name>.json`, compiled in with `include_str!`, so what the model
    /// is told about a tool's arguments reads as exactly what is sent.
    const PARAMETERS: &'static str = "";
    /// JSON schema of the arguments object: [`TypedTool::PARAMETERS`] parsed; a tool whose
    /// schema is data (a skill's tools.json) overrides it.
    fn parameters(&self) -> serde_json::Value {
        schema_from_text(Self::PARAMETERS)
    }
    /// What a call with these arguments would touch (reads inside the project unless
    /// the tool says otherwise).
    fn access(&self, _args: &Self::Args, _ctx: &ToolContext) -> Access {
        Access::ReadOnly
    }
    /// A few words naming the main argument (path, pattern, command) for frontends.
    fn summary(&self, args: &Self::Args) -> String;
    /// Where a call with these arguments works in the project's folders (nowhere unless
    /// the tool says).
    fn works_in(&self, _args: &Self::Args, _ctx: &ToolContext) -> WorksIn {
        WorksIn::Nowhere
    }
    /// The files a call with these arguments reads or changes, for frontends beside an
    /// editor (none unless the tool says).
    fn locations(&self, _args: &Self::Args, _ctx: &ToolContext) -> Vec<FileLocation> {
        Vec::new()
    }
    /// What its results are to the conversation.
    fn output_kind(&self) -> OutputKind {
        OutputKind::Reproducible
    }
    /// Whether it is offered in plan mode (withheld unless the tool says so).
    const PLAN_USE: PlanUse = PlanUse::Withheld;
    /// The smallest context window (tokens) it is offered in (`None`: any).
    const MIN_WINDOW: Option<u64> = None;
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
    /// Whether it is offered, and may run, in plan mode (withheld unless it says so).
    fn plan_use(&self) -> PlanUse {
        PlanUse::Withheld
    }
    /// The smallest context window (tokens) it is offered in (`None`: any).
    fn min_window(&self) -> Option<u64> {
        None
    }
    /// Parses the arguments, once: the call ready for approval and running, or the error
    /// result for the model (naming the problem and the expected shape).
    fn prepare(&self, args: serde_json::Value) -> Result<Box<dyn PreparedCall + '_>, ToolOutput>;
    /// What its results are to the conversation.
    fn output_kind(&self) -> OutputKind;
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
    /// Where the call works in the project's folders (nowhere unless the tool says).
    fn works_in(&self, _ctx: &ToolContext) -> WorksIn {
        WorksIn::Nowhere
    }
    /// The files the call reads or changes (none unless the tool says).
    fn locations(&self, _ctx: &ToolContext) -> Vec<FileLocation> {
        Vec::new()
    }
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

    fn works_in(&self, ctx: &ToolContext) -> WorksIn {
        self.tool.works_in(&self.args, ctx)
    }

    fn locations(&self, ctx: &ToolContext) -> Vec<FileLocation> {
        self.tool.locations(&self.args, ctx)
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

    fn output_kind(&self) -> OutputKind {
        TypedTool::output_kind(self)
    }

    fn plan_use(&self) -> PlanUse {
        T::PLAN_USE
    }

    fn min_window(&self) -> Option<u64> {
        T::MIN_WINDOW
    }

    fn prepare(&self, args: serde_json::Value) -> Result<Box<dyn PreparedCall + '_>, ToolOutput> {
        let args =
            parse_args::<T::Args>(TypedTool::name(self), &args, &TypedTool::parameters(self))?;
        Ok(Box::new(Typed { tool: self, args }))
    }
}

/// A schema compiled into the binary (`TypedTool::PARAMETERS`). Every built-in tool's text
/// is parsed by a test (`tools::schema_tests::every_built_in_schema_is_an_object_schema`), so the
/// fallback, an object with no known properties, is never what a released build sends.
pub(crate) fn schema_from_text(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|_| serde_json::json!({"type": "object"}))
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
    serde_json::from_value(args.clone()).map_err(|e| {
        invalid(match refused_field::<T>(object) {
            Some(name) => format!("field `{name}`: {e}"),
            None => e.to_string(),
        })
    })
}

/// More fields than any tool takes: arguments this wide get serde's message alone.
const MAX_FIELDS_SEARCHED: usize = 32;

/// The field whose value made parsing fail, when one alone did: serde's message says
/// what was wrong ("invalid value: integer `-1`, expected u64", "unknown variant") but
/// not where. A field is the one when the arguments parse without it, or when without
/// it the only complaint is that it is missing (a required field). Runs only after a
/// failure, one parse per field, and not at all for more than [`MAX_FIELDS_SEARCHED`]
/// fields (the search copies the object once per field).
fn refused_field<T: serde::de::DeserializeOwned>(
    object: &serde_json::Map<String, serde_json::Value>,
) -> Option<&str> {
    if object.len() > MAX_FIELDS_SEARCHED {
        return None;
    }
    object.keys().map(String::as_str).find(|name| {
        let mut without = object.clone();
        without.remove(*name);
        match serde_json::from_value::<T>(serde_json::Value::Object(without)) {
            Ok(_) => true,
            Err(e) => e.to_string() == format!("missing field `{name}`"),
        }
    })
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

/// [`run_blocking`] that gives up waiting when `cancel` fires: the call ends at once as
/// interrupted, whatever the blocking work is doing (it runs on to its end on its own
/// thread, and its result is dropped). Long loops also check `cancel` to stop early.
pub(crate) async fn run_blocking_until<T, F>(
    cancel: &CancellationToken,
    work: F,
) -> Result<T, ToolFatal>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let task = tokio::task::spawn_blocking(work);
    tokio::select! {
        biased;
        joined = task => {
            joined.map_err(|e| ToolFatal::Internal(format!("tool task failed: {e}")))
        }
        () = cancel.cancelled() => Err(ToolFatal::Interrupted),
    }
}

/// A temporary project for tool tests holding `files` (path, content), and a context on it.
#[cfg(test)]
pub(crate) fn test_tree(files: &[(&str, &str)]) -> (tempfile::TempDir, ToolContext) {
    let dir = crate::test_support::temp_tree(files);
    let ctx = test_context(dir.path());
    (dir, ctx)
}

/// Cancels a running tool call and waits (at most 10 s) for it to end as interrupted.
#[cfg(test)]
pub(crate) async fn cancel_and_expect_interrupted(
    cancel: &tokio_util::sync::CancellationToken,
    task: tokio::task::JoinHandle<Result<ToolOutput, ToolFatal>>,
) {
    crate::exec::test_support::cancel_and_expect(cancel, task, |result| {
        matches!(result, Err(ToolFatal::Interrupted))
    })
    .await;
}

/// Like [`test_tree`], every file holding `x`.
#[cfg(test)]
pub(crate) fn test_files<S: AsRef<str>>(paths: &[S]) -> (tempfile::TempDir, ToolContext) {
    let with_content: Vec<(&str, &str)> = paths.iter().map(|p| (p.as_ref(), "x")).collect();
    test_tree(&with_content)
}

/// Asserts that `text` lists `cap` lines, the first being `first`, and then `note`.
#[cfg(test)]
#[track_caller]
pub(crate) fn assert_capped(text: &str, cap: usize, first: &str, note: &str) {
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), cap + 1, "{text}");
    assert_eq!((lines[0], lines[cap]), (first, note));
}

/// What `tool` answers to `args` in `ctx`, for tests; panics on a fatal error.
#[cfg(test)]
pub(crate) async fn run_tool(
    tool: &dyn Tool,
    ctx: &ToolContext,
    args: serde_json::Value,
) -> ToolOutput {
    tool.run(args, ctx)
        .await
        .unwrap_or_else(|e| panic!("{}: {e:?}", tool.name()))
}

/// Why `out` is not an error result whose text contains `needle`; `None` when it is.
#[cfg(test)]
fn not_the_error(out: &ToolOutput, needle: &str) -> Option<String> {
    (!(out.is_error && out.content.contains(needle))).then(|| {
        format!(
            "expected an error containing {needle:?}, got (is_error: {}):\n{}",
            out.is_error, out.content
        )
    })
}

/// Asserts that `out` is an error result whose text contains `needle`.
#[cfg(test)]
#[track_caller]
pub(crate) fn assert_error(out: &ToolOutput, needle: &str) {
    if let Some(why) = not_the_error(out, needle) {
        panic!("{why}");
    }
}

/// Runs `tool` once per `(arguments, needle)` and asserts that each call is an error
/// result whose text contains `needle`; a failure names the arguments.
#[cfg(test)]
pub(crate) async fn assert_errors(
    tool: &dyn Tool,
    ctx: &ToolContext,
    cases: &[(serde_json::Value, &str)],
) {
    for (args, needle) in cases {
        let out = run_tool(tool, ctx, args.clone()).await;
        if let Some(why) = not_the_error(&out, needle) {
            panic!("{args}: {why}");
        }
    }
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
        artifacts: None,
        writes: CommandWrites::AsSession,
        plan_file: None,
        commands: crate::exec::Confinement::SessionSandbox,
        call_id: String::new(),
        web_reach: WebReach::PublicOnly,
        files: files::FileAccess::Disk,
    }
}

#[cfg(test)]
mod tests;
