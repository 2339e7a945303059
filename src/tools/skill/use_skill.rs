//! The `use_skill` tool: loads a skill into the conversation as a tool result, so the
//! system prompt (which only lists names and descriptions) never changes.
//!
//! The skill is prepared by the one skill pipeline ([`crate::skills::invoke`]: inline
//! commands on the body as written, then the optional `args`). An inline skill's text
//! is wrapped in `<skill-loaded name="...">` … `</skill-loaded>`, followed by the skill's
//! directory and the files in its `scripts/`, `references/` and `assets/` folders (names
//! only, for the model's file tools); a `context: fork` skill runs in a sub-agent and
//! its final answer is the result. Unknown or invalid names get an error listing the
//! available ones; a second load of the same skill in a session gets a short note.
//!
//! With a registry's loaded set ([`UseSkill::with_tools`]), a skill's `tools.json` tools
//! join the registry when it loads (so they travel in the following requests until
//! `unload_skill`); a malformed file or a name collision is reported in the result and
//! the body loads anyway. `docs` / `include_all_docs` append documents' text
//! ([`crate::skills::docs`]) within the output limit. Loads are recorded in the
//! session's [`LoadedSkills`]. It knows the catalog and nothing of the agent loop.

use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

use super::docs::bad_path;
use super::{
    BundledTools, SUMMARY_RESERVE, ServerTools, load_bundled_tools, lookup, server_of_owner,
    server_owner,
};
use crate::skills::SharedCatalog;
use crate::skills::Skill;
use crate::skills::active::LoadedSkills;
use crate::skills::docs::{SelectMode, list_docs, resolve_doc};
use crate::skills::folder::{self, WalkLimits};
use crate::skills::inline_shell::{InlineShellError, Permission};
use crate::skills::invoke::{self, InlineShell, PrepareError, Prepared, RunMode};
use crate::tools::{
    ForkError, ForkRequest, LoadedTools, OutputKind, ToolContext, ToolFatal, ToolFuture,
    ToolOutput, TypedTool, run_blocking, schema_from_text,
};

/// Folders of a skill whose files are listed.
const RESOURCE_DIRS: [&str; 3] = ["scripts", "references", "assets"];
/// Files listed per skill at most.
const MAX_LISTED_FILES: usize = 200;
/// Folder depth listed below each resource folder.
const MAX_LIST_DEPTH: usize = 4;

/// Loads a skill's instructions on demand.
#[derive(Debug, Clone)]
pub struct UseSkill {
    catalog: SharedCatalog,
    loaded: LoadedSkills,
    /// Where skills' `tools.json` tools go: the session registry's loaded set.
    tools: Option<LoadedTools>,
    /// Whether the approval mode lets inline `` !`command` ``s run.
    inline: Permission,
    /// The session's MCP servers, loaded by the name `mcp:NAME`.
    mcp: Option<Arc<dyn ServerTools>>,
    /// What the system prompt lists for it to load, which decides what the model is
    /// told about it.
    listed: Listed,
}

/// What the system prompt lists for `use_skill` to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listed {
    /// Skills (and MCP servers, if any).
    Skills,
    /// MCP servers only: the description and the arguments say nothing of skills.
    ServersOnly,
}

/// The arguments of a `use_skill` call.
#[derive(Debug, Deserialize)]
pub struct Args {
    skill_name: String,
    args: Option<String>,
    docs: Option<Vec<String>>,
    include_all_docs: Option<bool>,
}

impl UseSkill {
    /// A tool over this catalog, with a fresh set of loaded skills.
    pub fn new(catalog: impl Into<SharedCatalog>) -> Self {
        UseSkill {
            catalog: catalog.into(),
            loaded: LoadedSkills::default(),
            tools: None,
            inline: Permission::Refuse("inline commands are off in this session".into()),
            mcp: None,
            listed: Listed::Skills,
        }
    }

    /// A tool sharing `loaded` (so the session can clear it, or mark skills the user
    /// invoked with a slash command).
    pub fn with_loaded(catalog: impl Into<SharedCatalog>, loaded: LoadedSkills) -> Self {
        UseSkill {
            catalog: catalog.into(),
            loaded,
            tools: None,
            inline: Permission::Refuse("inline commands are off in this session".into()),
            mcp: None,
            listed: Listed::Skills,
        }
    }

    /// Lets inline `` !`command` ``s in skill bodies run as the approval mode allows
    /// (`Permission::Run` in full-auto); skills from remote roots never run them.
    pub fn with_inline_shell(mut self, mode: Permission) -> Self {
        self.inline = mode;
        self
    }

    /// Loads skills' `tools.json` tools into `tools`, the session registry's loaded set
    /// (refusing names its fixed tools have, once it is frozen); [`LoadedSkills::clear`]
    /// unloads them. Without it, bundled tools are not loaded.
    pub fn with_tools(mut self, tools: LoadedTools) -> Self {
        self.loaded.attach_tools(Arc::new(tools.clone()));
        self.tools = Some(tools);
        self
    }

    /// Lets `mcp:NAME` load MCP server NAME's tools (into the set given to
    /// [`UseSkill::with_tools`]). Without usable servers nothing changes, not even the
    /// description.
    pub fn with_servers(mut self, servers: Arc<dyn ServerTools>) -> Self {
        if !servers.usable().is_empty() {
            self.mcp = Some(servers);
        }
        self
    }

    /// Says what the system prompt lists for it (skills by default): with
    /// [`Listed::ServersOnly`] the model is told of MCP servers and `skill_name` alone,
    /// a few hundred bytes less in every request. It still loads any skill it is named.
    pub fn listing(mut self, listed: Listed) -> Self {
        self.listed = listed;
        self
    }

    /// Loads MCP server `server` (the `mcp:NAME` form of `skill_name`).
    async fn load_server(&self, server: &str) -> ToolOutput {
        let (Some(servers), Some(into)) = (&self.mcp, &self.tools) else {
            return ToolOutput::error(format!(
                "There is no MCP server \"{server}\" in this session (none are configured)."
            ));
        };
        if !servers.has(server) {
            return ToolOutput::error(format!(
                "There is no MCP server \"{server}\". Servers: {}.",
                servers
                    .usable()
                    .iter()
                    .map(|s| server_owner(s))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        match servers.load(server, into).await {
            Ok(text) => {
                self.loaded.mark(&server_owner(server));
                ToolOutput::ok(text)
            }
            Err(e) => {
                let output = ToolOutput::error(format!(
                    "{}. Its tools are not available; continue without them or tell the user.",
                    e.message
                ));
                if e.warn_user {
                    output.with_warning(e.message)
                } else {
                    output
                }
            }
        }
    }

    /// The set of skills loaded in this session.
    pub fn loaded(&self) -> LoadedSkills {
        self.loaded.clone()
    }

    /// Runs a `context: fork` skill in a sub-agent; its final answer is the result.
    async fn fork(
        &self,
        skill: &Skill,
        args: &Args,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolFatal> {
        let Some(forker) = ctx.forker.as_ref() else {
            return Ok(ToolOutput::error(format!(
                "Skill \"{}\" runs in its own sub-agent (context: fork) and cannot be started \
                 from inside another sub-agent; do the work with your tools instead.",
                skill.name
            )));
        };
        // The one skill pipeline: inline commands run on the body as written, before the
        // model's arguments go in, so an argument can never add a command.
        let (instructions, task) = match self.prepare(skill, args, ctx).await? {
            Ok(Prepared::Fork { instructions, task }) => (instructions, task),
            // The mode was checked by the caller; a file changed meanwhile.
            Ok(Prepared::Inline { text }) => (text, String::new()),
            Err(PrepareError::Body(e)) => {
                return Ok(ToolOutput::error(format!(
                    "Cannot load skill \"{}\": {e}",
                    skill.name
                )));
            }
            Err(PrepareError::Inline(e)) => {
                return Ok(ToolOutput::error(format!("{e}; the skill was not run.")));
            }
        };
        let request = ForkRequest::for_skill(skill, instructions, task);
        match forker.fork(request).await {
            Ok(answer) => Ok(ToolOutput::ok(format!(
                "<skill-result name=\"{}\">\n{answer}\n</skill-result>\n(Skill \"{}\" ran in a sub-agent; this is its final answer.)",
                skill.name, skill.name
            ))),
            Err(ForkError::Interrupted) => Err(ToolFatal::Interrupted),
            Err(ForkError::Failed(message)) => Ok(ToolOutput::error(format!(
                "Skill \"{}\" (run in a sub-agent) failed: {message}",
                skill.name
            ))),
        }
    }

    /// Runs the skill pipeline with the model's arguments; an interruption ends the
    /// call.
    async fn prepare(
        &self,
        skill: &Skill,
        args: &Args,
        ctx: &ToolContext,
    ) -> Result<Result<Prepared, PrepareError>, ToolFatal> {
        let shell = InlineShell {
            permission: &self.inline,
            workdir: &ctx.workdir,
            cancel: &ctx.cancel,
        };
        match invoke::prepare(skill, args.args.as_deref().unwrap_or(""), shell).await {
            Err(PrepareError::Inline(InlineShellError::Interrupted)) => Err(ToolFatal::Interrupted),
            other => Ok(other),
        }
    }

    /// The prepared text of an inline skill about to load (`None` when it is already
    /// loaded: nothing runs again), or the error result that ends the call.
    async fn prepared_text(
        &self,
        skill: &Skill,
        args: &Args,
        ctx: &ToolContext,
    ) -> Result<Result<Option<String>, ToolOutput>, ToolFatal> {
        if self.loaded.contains(&skill.name) {
            return Ok(Ok(None));
        }
        Ok(match self.prepare(skill, args, ctx).await? {
            Ok(Prepared::Inline { text })
            | Ok(Prepared::Fork {
                instructions: text, ..
            }) => Ok(Some(text)),
            Err(PrepareError::Body(e)) => Err(ToolOutput::error(format!(
                "Cannot load skill \"{}\": {e}",
                skill.name
            ))),
            Err(PrepareError::Inline(e)) => {
                Err(ToolOutput::error(format!("{e}; the skill was not loaded.")))
            }
        })
    }

    fn call(&self, args: Args, budget: usize, prepared: Option<String>) -> ToolOutput {
        let catalog = self.catalog.current();
        let skill = match lookup(&catalog, &args.skill_name) {
            Ok(s) => s,
            Err(e) => return ToolOutput::error(e),
        };
        let mut wanted = args.docs.unwrap_or_default();
        if args.include_all_docs == Some(true) {
            wanted.extend(
                skill
                    .folder()
                    .map(list_docs)
                    .unwrap_or_default()
                    .0
                    .into_iter()
                    .map(|d| d.path),
            );
        }
        for doc in &wanted {
            let Some(folder) = skill.folder() else {
                return ToolOutput::error(format!(
                    "\"{}\" is a command: it has no documents",
                    skill.name
                ));
            };
            if let Err(e) = resolve_doc(folder, doc) {
                return bad_path(skill, &e);
            }
        }
        if self.loaded.contains(&skill.name) {
            let mut out = format!(
                "Skill \"{}\" is already loaded in this conversation; follow the instructions \
                 from the earlier use_skill result.",
                skill.name
            );
            if !wanted.is_empty() {
                out.push_str("\n\n");
                out.push_str(&self.add_docs(skill, &wanted, budget.saturating_sub(out.len())));
            }
            return ToolOutput::ok(out);
        }
        let Some(text) = prepared else {
            return ToolOutput::error(format!(
                "Cannot load skill \"{}\": it changed while loading",
                skill.name
            ));
        };
        self.loaded.mark(&skill.name);
        let mut out = render(skill, &text);
        if let Some(line) = skill.folder().and_then(unlisted_docs) {
            out.push_str("\n\n");
            out.push_str(&line);
        }
        let (section, warning) = self.load_tools(skill);
        if let Some(section) = section {
            out.push_str("\n\n");
            out.push_str(&section);
        }
        let others: Vec<String> = self
            .loaded
            .names()
            .into_iter()
            .filter(|n| *n != skill.name)
            .collect();
        if !others.is_empty() {
            out.push_str(&format!(
                "\n\nOther skills loaded in this conversation: {}.",
                others.join(", ")
            ));
        }
        if !wanted.is_empty() {
            out.push_str("\n\n");
            out.push_str(&self.add_docs(skill, &wanted, budget.saturating_sub(out.len())));
        }
        let output = ToolOutput::ok(out);
        match warning {
            Some(w) => output.with_warning(w),
            None => output,
        }
    }

    fn add_docs(&self, skill: &Skill, wanted: &[String], budget: usize) -> String {
        match self
            .loaded
            .docs()
            .change(skill, SelectMode::Add, wanted, budget)
        {
            Ok(selected) => selected.render(&skill.name),
            // Checked before; the folder changed meanwhile.
            Err(e) => format!("Documents not added: {e}."),
        }
    }

    /// Loads the skill's bundled tools; `None` when it has none (or nowhere to load
    /// them). The result section and, when the tools could not load, a warning for the
    /// user.
    fn load_tools(&self, skill: &Skill) -> (Option<String>, Option<String>) {
        let Some(tools) = self.tools.as_ref() else {
            return (None, None);
        };
        match load_bundled_tools(skill, tools) {
            BundledTools::None => (None, None),
            BundledTools::Loaded(names) => (
                Some(format!(
                    "Tools added by this skill (callable from your next step; unload_skill(\"{}\") \
                     removes them): {}.",
                    skill.name,
                    names.join(", ")
                )),
                None,
            ),
            BundledTools::Failed(problem) => (
                Some(format!(
                    "Warning: the skill's tools were NOT loaded (its instructions above are): \
                     {problem}"
                )),
                Some(format!(
                    "skill `{}`: its tools were not loaded: {problem}",
                    skill.name
                )),
            ),
        }
    }
}

/// A line naming the documents outside the listed resource folders, if any.
fn unlisted_docs(dir: &Path) -> Option<String> {
    let (docs, _) = list_docs(dir);
    let unlisted: Vec<&str> = docs
        .iter()
        .map(|d| d.path.as_str())
        .filter(|p| {
            !RESOURCE_DIRS
                .iter()
                .any(|r| p.starts_with(&format!("{r}/")))
        })
        .collect();
    if unlisted.is_empty() {
        return None;
    }
    Some(format!(
        "Documents: {} (skill_select_docs adds their text; skill_list_docs lists all).",
        unlisted.join(", ")
    ))
}

/// The tool result for a loaded skill, around its prepared text.
fn render(skill: &Skill, text: &str) -> String {
    let mut out = format!(
        "<skill-loaded name=\"{}\">\n{text}\n</skill-loaded>\n\n",
        skill.name
    );
    let Some(folder) = skill.folder() else {
        // A command is its text alone: no folder, no bundled files.
        return out.trim_end().to_string();
    };
    out.push_str(&format!("Skill directory: {}\n", folder.display()));
    let files = resource_files(folder);
    if files.is_empty() {
        out.push_str("Bundled files: none.");
    } else {
        out.push_str("Bundled files (paths relative to the skill directory; read them with your file tools when the instructions call for them):");
        for f in &files {
            out.push_str("\n- ");
            out.push_str(f);
        }
        if files.len() >= MAX_LISTED_FILES {
            out.push_str("\n- … (more files not listed)");
        }
    }
    out
}

/// Relative paths of the files under the skill's resource folders, sorted, bounded
/// (the one folder walk: hidden files and links leading outside are left out).
fn resource_files(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for sub in RESOURCE_DIRS {
        let limits = WalkLimits {
            max_depth: MAX_LIST_DEPTH,
            max_files: MAX_LISTED_FILES.saturating_sub(out.len()),
        };
        if limits.max_files == 0 {
            break;
        }
        out.extend(
            folder::walk(dir, sub, limits, &|_| true)
                .files
                .into_iter()
                .map(|f| f.path),
        );
    }
    out
}

/// The description when the system prompt lists MCP servers only.
pub const SERVERS_DESCRIPTION: &str =
    "Load the tools of a server in the MCP Servers list by its name, before using them.";
/// The arguments then: the name alone.
pub const SERVERS_PARAMETERS: &str = include_str!("../schemas/use_skill_servers.json");

impl TypedTool for UseSkill {
    type Args = Args;
    const PLAN_USE: crate::tools::PlanUse = crate::tools::PlanUse::Offered;

    const NAME: &'static str = "use_skill";
    const DESCRIPTION: &'static str = "Load the full instructions of a skill from the Available Skills list in the system \
         prompt. Use it when a skill matches the task, before starting the work. Returns the \
         skill's instructions and the files bundled with it, and adds any tools it brings.";

    const PARAMETERS: &'static str = include_str!("../schemas/use_skill.json");

    fn description(&self) -> &str {
        if self.listed == Listed::ServersOnly {
            SERVERS_DESCRIPTION
        } else if self.mcp.is_some() {
            "Load the full instructions of a skill from the Available Skills list in the system \
             prompt, or the tools of an MCP server from the MCP Servers list (by its name, \
             `mcp:NAME`). Use it when a skill or server matches the task, before starting the \
             work. Returns the skill's instructions and the files bundled with it, and adds \
             any tools it brings."
        } else {
            Self::DESCRIPTION
        }
    }

    fn parameters(&self) -> serde_json::Value {
        schema_from_text(match self.listed {
            Listed::Skills => Self::PARAMETERS,
            Listed::ServersOnly => SERVERS_PARAMETERS,
        })
    }

    fn output_kind(&self) -> OutputKind {
        // A loaded skill's instructions (or documents) stay in force for the session.
        OutputKind::Instructions
    }

    fn summary(&self, args: &Args) -> String {
        args.skill_name.clone()
    }

    fn execute<'a>(&'a self, args: Args, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            if let Some(server) = server_of_owner(args.skill_name.trim()) {
                if self.loaded.contains(args.skill_name.trim())
                    && self
                        .tools
                        .as_ref()
                        .is_some_and(|t| t.owners().iter().any(|o| o == args.skill_name.trim()))
                {
                    return Ok(ToolOutput::ok(format!(
                        "MCP server \"{server}\" is already loaded; its tools (mcp__{server}__…) are in your tool list."
                    )));
                }
                return Ok(self.load_server(server).await);
            }
            let budget = ctx.limits.max_output_bytes.saturating_sub(SUMMARY_RESERVE);
            let skill = lookup(&self.catalog.current(), &args.skill_name)
                .ok()
                .cloned();
            let mut prepared = None;
            if let Some(skill) = &skill {
                if RunMode::of(skill) == RunMode::Fork {
                    return self.fork(skill, &args, ctx).await;
                }
                if ctx.cancel.is_cancelled() {
                    return Err(ToolFatal::Interrupted);
                }
                match self.prepared_text(skill, &args, ctx).await? {
                    Ok(text) => prepared = text,
                    Err(out) => return Ok(out),
                }
            }
            let tool = self.clone();
            run_blocking(move || tool.call(args, budget, prepared)).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{assert_contains, project_catalog, project_with, write};
    use crate::tools::{Tool, assert_error, test_context};
    use serde_json::{Value, json};

    fn setup() -> (tempfile::TempDir, Arc<crate::skills::Catalog>) {
        let (tmp, catalog) = project_with(&[
            (
                "skills/go-refactor/SKILL.md",
                "---\nname: go-refactor\ndescription: Use when refactoring Go code\n---\n\n# Go\nRun `go vet ./...` on $ARGUMENTS.\n",
            ),
            ("skills/go-refactor/scripts/check.sh", "#!/bin/sh\n"),
            ("skills/go-refactor/references/style/naming.md", "names\n"),
            (
                "skills/secret/SKILL.md",
                "---\nname: secret\ndescription: user only\ndisable-model-invocation: true\n---\nbody\n",
            ),
        ]);
        (tmp, Arc::new(catalog))
    }

    async fn call(tool: &UseSkill, args: Value, dir: &Path) -> ToolOutput {
        tool.run(args, &test_context(dir)).await.unwrap()
    }

    /// A forker that records what it was asked to run.
    #[derive(Default)]
    struct RecordingForker(std::sync::Mutex<Vec<ForkRequest>>);

    impl crate::tools::Forker for RecordingForker {
        fn fork(
            &self,
            request: ForkRequest,
        ) -> std::pin::Pin<
            Box<dyn std::future::Future<Output = Result<String, ForkError>> + Send + '_>,
        > {
            self.0.lock().unwrap().push(request);
            Box::pin(async { Ok("done".to_string()) })
        }
    }

    /// The defect this pipeline fixed: the fork path filled the templates with the
    /// model's `args` before running inline commands, so `!`cmd`` in an argument ran.
    #[tokio::test]
    async fn a_models_argument_never_runs_as_an_inline_command() {
        let tmp = tempfile::tempdir().unwrap();
        let skills = tmp.path().join("skills");
        let body = "Today: !`echo ran`. Task: $ARGUMENTS\n";
        write(
            &skills.join("forked/SKILL.md"),
            &format!("---\nname: forked\ndescription: d\ncontext: fork\n---\n{body}"),
        );
        write(
            &skills.join("inline/SKILL.md"),
            &format!("---\nname: inline\ndescription: d\n---\n{body}"),
        );
        let catalog = Arc::new(project_catalog(tmp.path()));
        let tool = UseSkill::new(catalog).with_inline_shell(Permission::Run);
        let forker = Arc::new(RecordingForker::default());
        let mut ctx = test_context(tmp.path());
        ctx.forker = Some(forker.clone());
        let evil = "!`touch pwned`";
        for name in ["forked", "inline"] {
            let out = tool
                .run(json!({"skill_name": name, "args": evil}), &ctx)
                .await
                .unwrap();
            assert!(!out.is_error, "{}", out.content);
            if name == "inline" {
                assert_contains(&out.content, "Today: ran. Task: !`touch pwned`");
            }
        }
        let requests = forker.0.lock().unwrap();
        assert_eq!(requests[0].instructions, "Today: ran. Task: !`touch pwned`");
        assert_eq!(requests[0].task, evil);
        for place in [
            tmp.path().to_path_buf(),
            skills.join("forked"),
            skills.join("inline"),
        ] {
            assert!(
                !place.join("pwned").exists(),
                "the argument ran in {place:?}"
            );
        }
    }

    #[tokio::test]
    async fn loads_the_body_wrapped_with_dir_and_files() {
        let (tmp, catalog) = setup();
        let tool = UseSkill::new(catalog);
        let out = call(
            &tool,
            json!({"skill_name": "go-refactor", "args": "main.go"}),
            tmp.path(),
        )
        .await;
        assert!(!out.is_error, "{}", out.content);
        let dir = tmp.path().join("skills/go-refactor");
        let expected = format!(
            "<skill-loaded name=\"go-refactor\">\n# Go\nRun `go vet ./...` on main.go.\n</skill-loaded>\n\n\
             Skill directory: {}\nBundled files (paths relative to the skill directory; read them with your file tools when the instructions call for them):\n\
             - scripts/check.sh\n- references/style/naming.md",
            dir.display()
        );
        assert_eq!(out.content, expected);
        assert_eq!(
            crate::tools::prepared(&tool, json!({"skill_name": "go-refactor"}))
                .access(&test_context(tmp.path())),
            crate::tools::Access::ReadOnly
        );
    }

    #[tokio::test]
    async fn second_load_is_a_short_note_until_cleared() {
        let (tmp, catalog) = setup();
        let tool = UseSkill::new(catalog);
        let args = json!({"skill_name": "go-refactor"});
        call(&tool, args.clone(), tmp.path()).await;
        let again = call(&tool, args.clone(), tmp.path()).await;
        assert!(!again.is_error);
        assert_contains(&again.content, "already loaded");
        assert!(!again.content.contains("go vet"));
        tool.loaded().clear();
        assert!(
            call(&tool, args, tmp.path())
                .await
                .content
                .contains("go vet")
        );
    }

    #[tokio::test]
    async fn unknown_names_list_the_available_ones() {
        let (tmp, catalog) = setup();
        let tool = UseSkill::new(catalog);
        let out = call(&tool, json!({"skill_name": "go-refactr"}), tmp.path()).await;
        assert!(out.is_error);
        assert_eq!(
            out.content,
            "Unknown skill \"go-refactr\". Available skills: go-refactor"
        );
        // Model invocation disabled: not loadable, not listed.
        let out = call(&tool, json!({"skill_name": "secret"}), tmp.path()).await;
        assert!(
            out.is_error && !out.content.contains("secret,"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn path_traversal_is_rejected() {
        let (tmp, catalog) = setup();
        let tool = UseSkill::new(catalog);
        for bad in [
            "../go-refactor",
            "go-refactor/../x",
            "a\\b",
            "..",
            "/etc/passwd",
            "",
        ] {
            let out = call(&tool, json!({"skill_name": bad}), tmp.path()).await;
            assert!(out.is_error, "{bad}");
            assert!(
                out.content.starts_with("Invalid skill name"),
                "{bad}: {}",
                out.content
            );
        }
        let out = call(&tool, json!({}), tmp.path()).await;
        assert_error(&out, "skill_name");
    }
}

#[cfg(test)]
mod bundle_tests {
    use super::*;
    use crate::test_support::{assert_contains, project_catalog, write, write_tree};
    use crate::tools::{Tool, ToolRegistry, test_context};
    use serde_json::{Value, json};
    use std::os::unix::fs::PermissionsExt;

    /// Skill `pdf` with an echoing tool `pdf_echo`, skill `twin` with a tool of the same
    /// name, and skill `plain` with documents and no tools.
    fn setup() -> (tempfile::TempDir, Arc<crate::skills::Catalog>) {
        let tmp = tempfile::tempdir().unwrap();
        let skills = tmp.path().join("skills");
        for name in ["pdf", "twin"] {
            write(
                &skills.join(name).join("SKILL.md"),
                &format!("---\nname: {name}\ndescription: d\n---\n{name} body\n"),
            );
            let script = skills.join(name).join("scripts/echo.sh");
            write(&script, "#!/bin/sh\ncat\n");
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
            write(
                &skills.join(name).join("tools.json"),
                r#"{"tools": [{"name": "pdf_echo", "description": "Echo", "command": "scripts/echo.sh",
                    "parameters": {"type": "object", "properties": {"x": {"type": "string"}}}}]}"#,
            );
        }
        write_tree(
            &skills,
            &[
                (
                    "plain/SKILL.md",
                    "---\nname: plain\ndescription: d\n---\nplain body\n",
                ),
                ("plain/guide.md", "Guide text\n"),
                ("plain/references/a.txt", "A text\n"),
            ],
        );
        let catalog = Arc::new(project_catalog(tmp.path()));
        (tmp, catalog)
    }

    async fn call(tool: &UseSkill, args: Value, dir: &Path) -> ToolOutput {
        tool.run(args, &test_context(dir)).await.unwrap()
    }

    fn names(registry: &ToolRegistry) -> Vec<String> {
        registry.specs().into_iter().map(|s| s.name).collect()
    }

    #[tokio::test]
    async fn bundled_tools_join_the_registry_and_run() {
        let (tmp, catalog) = setup();
        let registry = ToolRegistry::with_builtins();
        let tool = UseSkill::new(catalog).with_tools(registry.loaded().clone());
        let out = call(&tool, json!({"skill_name": "pdf"}), tmp.path()).await;
        assert!(!out.is_error, "{}", out.content);
        assert!(
            out.content.ends_with(
                "Tools added by this skill (callable from your next step; unload_skill(\"pdf\") \
             removes them): pdf_echo."
            ),
            "{}",
            out.content
        );
        assert_eq!(names(&registry).last().unwrap(), "pdf_echo");
        let spec = registry.specs().pop().unwrap();
        assert_eq!(spec.description, "Echo");
        assert_eq!(spec.parameters["properties"]["x"]["type"], "string");
        let echo = registry.get("pdf_echo").unwrap();
        let out = echo
            .run(json!({"x": "hi"}), &test_context(tmp.path()))
            .await
            .unwrap();
        assert_eq!(out.content, "{\"x\":\"hi\"}\n");
        assert_eq!(tool.loaded().names(), ["pdf"]);
        // A new conversation forgets the load and unloads the tools.
        tool.loaded().clear();
        assert!(registry.get("pdf_echo").is_none());
        assert!(tool.loaded().names().is_empty());
    }

    #[tokio::test]
    async fn collisions_are_refused_but_the_body_loads() {
        let (tmp, catalog) = setup();
        let mut builder = crate::tools::ToolRegistryBuilder::with_builtins();
        let tool = UseSkill::new(catalog.clone()).with_tools(builder.loaded().clone());
        // Registered after use_skill got its handle: the loaded set learns every fixed
        // name when the registry is frozen.
        builder.register(Arc::new(crate::tools::skill_run::SkillRun::new(
            catalog,
            Default::default(),
        )));
        builder.register(Arc::new(tool.clone()));
        let registry = builder.freeze();
        call(&tool, json!({"skill_name": "pdf"}), tmp.path()).await;
        let out = call(&tool, json!({"skill_name": "twin"}), tmp.path()).await;
        assert!(!out.is_error);
        assert_contains(&out.content, "twin body");
        assert_eq!(
            out.warnings.len(),
            1,
            "the user is told too: {:?}",
            out.warnings
        );
        assert!(out.warnings[0].contains("pdf_echo"), "{:?}", out.warnings);
        let tools_json = tmp.path().join("skills/twin/tools.json");
        assert!(
            out.content.contains(&format!(
                "Warning: the skill's tools were NOT loaded (its instructions above are): {}: \
                 skill `twin` declares tool `pdf_echo`, but skill `pdf` already loaded a tool \
                 with that name",
                tools_json.display()
            )),
            "{}",
            out.content
        );
        assert_contains(
            &out.content,
            "Other skills loaded in this conversation: pdf.",
        );
        assert_eq!(registry.loaded().owners(), ["pdf"]);

        // With a built-in: `bash`, and a tool the session registers later (`skill_run`).
        for builtin in ["bash", "skill_run"] {
            write(
                &tools_json,
                &format!(r#"[{{"name": "{builtin}", "description": "d", "command": "true"}}]"#),
            );
            tool.loaded().unload("twin");
            let out = call(&tool, json!({"skill_name": "twin"}), tmp.path()).await;
            assert!(
                out.content.contains(&format!(
                    "skill `twin` declares tool `{builtin}`, but a built-in tool has that name"
                )),
                "{}",
                out.content
            );
        }
        assert_eq!(names(&registry).iter().filter(|n| *n == "bash").count(), 1);
    }

    #[tokio::test]
    async fn a_malformed_tools_json_is_reported_with_its_path() {
        let (tmp, catalog) = setup();
        let tools_json = tmp.path().join("skills/pdf/tools.json");
        write(&tools_json, "[{\"name\": \"bad name\"");
        let registry = ToolRegistry::with_builtins();
        let tool = UseSkill::new(catalog).with_tools(registry.loaded().clone());
        let out = call(&tool, json!({"skill_name": "pdf"}), tmp.path()).await;
        assert!(!out.is_error);
        assert_contains(&out.content, "pdf body");
        assert!(
            out.content.contains(&format!(
                "Warning: the skill's tools were NOT loaded (its instructions above are): \
                 {}: invalid JSON",
                tools_json.display()
            )),
            "{}",
            out.content
        );
        assert_eq!(registry.specs().len(), 10);
    }

    #[tokio::test]
    async fn docs_and_include_all_docs_append_text() {
        let (tmp, catalog) = setup();
        let tool = UseSkill::new(catalog.clone());
        let out = call(
            &tool,
            json!({"skill_name": "plain", "docs": ["guide.md"]}),
            tmp.path(),
        )
        .await;
        assert!(!out.is_error, "{}", out.content);
        assert_contains(
            &out.content,
            "Documents: guide.md (skill_select_docs adds their text; skill_list_docs lists all).",
        );
        assert!(
            out.content.ends_with(
                "Selection of skill \"plain\" is now: guide.md.\n\n\
             <skill-doc path=\"guide.md\">\nGuide text\n</skill-doc>"
            ),
            "{}",
            out.content
        );

        let tool = UseSkill::new(catalog.clone());
        let out = call(
            &tool,
            json!({"skill_name": "plain", "include_all_docs": true}),
            tmp.path(),
        )
        .await;
        assert_contains(
            &out.content,
            "<skill-doc path=\"guide.md\">\nGuide text\n</skill-doc>\n<skill-doc path=\"references/a.txt\">\nA text\n</skill-doc>",
        );
        assert_eq!(
            tool.loaded().docs().selected("plain"),
            ["guide.md", "references/a.txt"]
        );
        // Loaded already: the note, plus only documents not yet selected.
        let out = call(
            &tool,
            json!({"skill_name": "plain", "include_all_docs": true}),
            tmp.path(),
        )
        .await;
        assert!(out.content.starts_with("Skill \"plain\" is already loaded"));
        assert!(!out.content.contains("Guide text"), "{}", out.content);
    }

    #[tokio::test]
    async fn a_doc_path_escaping_the_skill_loads_nothing() {
        let (tmp, catalog) = setup();
        write(&tmp.path().join("secret.md"), "SECRET\n");
        let tool = UseSkill::new(catalog);
        for bad in ["../../secret.md", "/etc/passwd", "SKILL.md"] {
            let out = call(
                &tool,
                json!({"skill_name": "plain", "docs": [bad]}),
                tmp.path(),
            )
            .await;
            assert!(out.is_error, "{bad}");
            assert!(
                out.content
                    .starts_with("Cannot select a document of skill \"plain\"")
                    && out
                        .content
                        .contains("Documents: guide.md, references/a.txt"),
                "{}",
                out.content
            );
            assert!(!tool.loaded().contains("plain"));
        }
    }
}
