//! The `harness9 mcp list|tools|add|remove|trust` subcommands: what each prints and
//! returns, given the resolved [`McpSetup`] (and, for `list` and `tools`, the
//! [`McpServers`] that start servers). `add` and `remove` edit the `[mcp_servers.NAME]`
//! tables of the user's config.toml or the project's `.harness9/config.toml` through
//! [`super::edit`], so comments and layout survive; `.mcp.json` is read, never edited. A
//! server the user adds to the project themselves is approved at once
//! ([`config::trust_project_server`]).
//!
//! Servers are remote, untrusted text: their names, descriptions, prompts and error
//! messages (with their stderr's end) reach the terminal only through [`SafeWriter`]
//! (control characters shown as `^[`; JSON with them escaped). Argument parsing belongs
//! to `crate::cli`, exit codes to `main.rs` (through [`McpCliError::kind`]); this module
//! must not know clap, the agent or any frontend.
//!
//! `mcp list --json` prints one array with one object per configured server, with these
//! fields: `name`; `scope` (`user`, `project` or `mcp_json`); `file` (where it is
//! defined); `transport` (`stdio` or `http`); `target` (the command line or the URL);
//! `description` (the configured one, or null); `preload` (bool); `state` (`ok`,
//! `failed`, `disabled` or `not_approved`); `error` (the failure, or null); and, when
//! `state` is `ok`, `tools` and `prompts` (counts), `resources` (bool) and `server` (its
//! name and version, or null) — null otherwise.

use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use super::config::{
    self, Enabled, MCP_JSON, McpServerConfig, McpSetup, McpTransport, PROJECT_CONFIG, ServerFile,
    ServerOrigin, ServerSandbox, Trust, TrustError,
};
use super::connection::{McpError, PromptInfo};
use super::edit::{self, ConfigFile, EditError};
use super::manager::{McpServers, list_or_none};
use super::names;
use super::tools::RESOURCES_TOOL;
use crate::protocol::ErrorKind;
use crate::safe_text::{self, SafeWriter};

/// The longest `mcp list` waits for one server (less when its start-up timeout is).
pub const LIST_START_LIMIT: Duration = Duration::from_secs(15);
/// The most characters of a description's first line `mcp tools` shows.
const DESCRIPTION_CHARS: usize = 160;

/// How `list` and `tools` print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Text for people.
    Text,
    /// One JSON document (`--json`).
    Json,
}

/// Which file `add` and `remove` edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The user's config.toml.
    User,
    /// The project's `.harness9/config.toml`.
    Project,
}

/// The files the subcommands read and edit.
#[derive(Debug, Clone)]
pub struct Files {
    /// The user's config.toml.
    pub user_config: PathBuf,
    /// The project directory.
    pub project: PathBuf,
}

impl Files {
    fn of(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::User => self.user_config.clone(),
            Scope::Project => self.project.join(PROJECT_CONFIG),
        }
    }
}

/// `mcp add`: a server to write.
#[derive(Debug, Clone)]
pub struct AddRequest {
    /// Its name.
    pub name: String,
    /// Where it goes.
    pub scope: Scope,
    /// Its table.
    pub server: ServerFile,
    /// Replace a server of that name.
    pub force: bool,
}

/// How servers are started for `list` and `tools`.
#[derive(Debug, Clone, Default)]
pub struct StartOptions {
    /// Why servers with `sandbox = true` cannot run in this run's sandbox (the sandbox
    /// was asked for but cannot be had); they are reported, never started unconfined.
    pub sandbox_refusal: Option<String>,
}

/// Why an `mcp` subcommand failed.
#[derive(Debug, thiserror::Error)]
pub enum McpCliError {
    /// What was typed names no such server, or a server that cannot be used or written.
    #[error("{0}")]
    Usage(String),
    /// A config file could not be read, edited or written.
    #[error(transparent)]
    Edit(#[from] EditError),
    /// The server could not be started or answered with an error.
    #[error(transparent)]
    Server(#[from] McpError),
    /// The trust list could not be written.
    #[error("cannot record the approval: {0}")]
    Trust(#[from] TrustError),
    /// Standard output failed.
    #[error("cannot write the output: {0}")]
    Output(#[from] io::Error),
}

impl McpCliError {
    /// The kind of failure, for the exit code: what the user typed is a usage error,
    /// the rest (a server that fails, a file that cannot be read or written) internal.
    pub fn kind(&self) -> ErrorKind {
        match self {
            McpCliError::Usage(_) => ErrorKind::Usage,
            _ => ErrorKind::Internal,
        }
    }
}

/// What one server's check found.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Probe {
    Ok {
        tools: usize,
        prompts: usize,
        resources: bool,
        implementation: Option<String>,
    },
    Failed(String),
    Disabled,
    NotApproved,
}

impl Probe {
    fn state(&self) -> &'static str {
        match self {
            Probe::Ok { .. } => "ok",
            Probe::Failed(_) => "failed",
            Probe::Disabled => "disabled",
            Probe::NotApproved => "not_approved",
        }
    }

    fn words(&self) -> String {
        match self {
            Probe::Ok {
                tools,
                prompts,
                implementation,
                ..
            } => {
                let mut text = format!(
                    "ok — {}, {}",
                    count(*tools, "tool", "tools"),
                    count(*prompts, "prompt", "prompts")
                );
                if let Some(imp) = implementation {
                    text.push_str(&format!(" ({imp})"));
                }
                text
            }
            Probe::Failed(message) => format!("failed — {}", one_line(message)),
            Probe::Disabled => "disabled".into(),
            Probe::NotApproved => "not approved (harness9 mcp trust)".into(),
        }
    }
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `text` on one line: its lines joined with ` | `.
fn one_line(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines.join(" | ")
}

/// Why `config` may not start in this run, if it may not.
fn blocked(config: &McpServerConfig, options: &StartOptions) -> Option<Probe> {
    if config.enabled == Enabled::No {
        return Some(Probe::Disabled);
    }
    if config.trust == Trust::Untrusted {
        return Some(Probe::NotApproved);
    }
    match (&config.transport, &options.sandbox_refusal) {
        (
            McpTransport::Stdio {
                sandbox: ServerSandbox::Session,
                ..
            },
            Some(reason),
        ) => Some(Probe::Failed(format!(
            "it asks for the sandbox (`sandbox = true`), which cannot be had: {reason}"
        ))),
        _ => None,
    }
}

/// Starts `name` (within `limit`) and says what it offers.
async fn probe(servers: McpServers, name: String, limit: Duration) -> Probe {
    match tokio::time::timeout(limit, servers.tools(&name)).await {
        Err(_) => Probe::Failed(format!(
            "MCP server `{name}` did not start within {} s",
            limit.as_secs()
        )),
        Ok(Err(e)) => Probe::Failed(e.to_string()),
        Ok(Ok((conn, tools))) => Probe::Ok {
            tools: tools.len(),
            prompts: servers.memo(&name).map_or(0, |m| m.prompts.len()),
            resources: conn.identity().has_resources,
            implementation: conn.identity().implementation.clone(),
        },
    }
}

/// The scope word of a definition's origin (text, JSON).
fn scope_words(origin: &ServerOrigin) -> (&'static str, &'static str) {
    match origin {
        ServerOrigin::User { .. } => ("user", "user"),
        ServerOrigin::Project { .. } => ("project", "project"),
        ServerOrigin::McpJson { .. } => ("project", "mcp_json"),
    }
}

fn transport_word(config: &McpServerConfig) -> &'static str {
    match config.transport {
        McpTransport::Stdio { .. } => "stdio",
        McpTransport::Http { .. } => "http",
    }
}

/// `mcp list [--json]`: every configured server with where it is defined, what runs and
/// its state; the enabled, approved ones are started side by side (each within its
/// start-up timeout, at most [`LIST_START_LIMIT`]). Problems with the definitions go
/// to `err`. Returns 0, or 1 when a definition or a file could not be loaded (the
/// listing is then incomplete); a server that fails is part of the answer, not an error.
pub async fn list(
    servers: &McpServers,
    options: &StartOptions,
    format: Format,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, McpCliError> {
    let setup = servers.setup();
    let mut pending = Vec::new();
    for config in &setup.servers {
        match blocked(config, options) {
            Some(probe) => pending.push(Err(probe)),
            None => {
                let limit = config.startup_timeout.min(LIST_START_LIMIT);
                let task = probe(servers.clone(), config.name.clone(), limit);
                pending.push(Ok(tokio::spawn(task)));
            }
        }
    }
    let mut probes = Vec::new();
    for item in pending {
        probes.push(match item {
            Err(probe) => probe,
            Ok(task) => task
                .await
                .unwrap_or_else(|e| Probe::Failed(format!("the check stopped: {e}"))),
        });
    }
    match format {
        Format::Json => {
            let items: Vec<Value> = setup
                .servers
                .iter()
                .zip(&probes)
                .map(|(c, p)| list_item(c, p))
                .collect();
            let text = serde_json::to_string_pretty(&items).unwrap_or_default();
            let mut safe = SafeWriter::json(&mut *out);
            writeln!(safe, "{text}")?;
            safe.flush()?;
        }
        Format::Text => {
            let mut safe = SafeWriter::text(&mut *out);
            list_text(setup, &probes, &mut safe)?;
            safe.flush()?;
        }
    }
    let mut safe = SafeWriter::text(err);
    for warning in &setup.warnings {
        writeln!(safe, "harness9: warning: {warning}")?;
    }
    safe.flush()?;
    Ok(if setup.warnings.is_empty() { 0 } else { 1 })
}

fn list_text(setup: &McpSetup, probes: &[Probe], out: &mut dyn Write) -> io::Result<()> {
    if setup.servers.is_empty() {
        writeln!(
            out,
            "No MCP servers are configured. Add one with `harness9 mcp add NAME -- COMMAND \
             [ARGS...]` or `harness9 mcp add NAME --url URL`."
        )?;
        return Ok(());
    }
    for (i, (config, probe)) in setup.servers.iter().zip(probes).enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        writeln!(out, "{}  {}", config.name, probe.words())?;
        writeln!(out, "    {:<6} {}", transport_word(config), config.target())?;
        writeln!(
            out,
            "    {:<6} {} ({})",
            "file",
            config.origin.path().display(),
            scope_words(&config.origin).0
        )?;
    }
    Ok(())
}

fn list_item(config: &McpServerConfig, probe: &Probe) -> Value {
    let (tools, prompts, resources, server) = match probe {
        Probe::Ok {
            tools,
            prompts,
            resources,
            implementation,
        } => (
            json!(tools),
            json!(prompts),
            json!(resources),
            json!(implementation),
        ),
        _ => (Value::Null, Value::Null, Value::Null, Value::Null),
    };
    json!({
        "name": config.name,
        "scope": scope_words(&config.origin).1,
        "file": config.origin.path().display().to_string(),
        "transport": transport_word(config),
        "target": config.target(),
        "description": config.description,
        "preload": config.preload == config::Preload::AtStart,
        "state": probe.state(),
        "error": match probe {
            Probe::Failed(message) => json!(message),
            _ => Value::Null,
        },
        "tools": tools,
        "prompts": prompts,
        "resources": resources,
        "server": server,
    })
}

/// `mcp tools NAME [--json]`: starts the server and lists its tools (the name the model
/// calls, the server's name, the description's first line), its prompts as slash
/// commands and whether it has resources. An unknown, disabled or unapproved server is
/// a usage error; one that fails to start is [`McpCliError::Server`].
pub async fn tools(
    servers: &McpServers,
    options: &StartOptions,
    name: &str,
    format: Format,
    out: &mut dyn Write,
) -> Result<i32, McpCliError> {
    let setup = servers.setup();
    let Some(config) = setup.get(name) else {
        let names: Vec<String> = setup.servers.iter().map(|s| s.name.clone()).collect();
        return Err(McpCliError::Usage(format!(
            "no MCP server named `{name}` is configured (servers: {})",
            list_or_none(&names)
        )));
    };
    match blocked(config, options) {
        None => {}
        Some(Probe::Disabled) => {
            return Err(McpCliError::Usage(format!(
                "MCP server `{name}` is disabled (`enabled = false` in {})",
                config.origin.path().display()
            )));
        }
        Some(Probe::NotApproved) => {
            return Err(McpCliError::Usage(format!(
                "MCP server `{name}` is defined by the project ({}) and not approved on this \
                 machine, so it is not started; review it (`harness9 mcp list`), then run \
                 `harness9 mcp trust`",
                config.origin.path().display()
            )));
        }
        Some(Probe::Failed(reason)) => {
            return Err(McpCliError::Usage(format!(
                "MCP server `{name}` is not started: {reason}"
            )));
        }
        Some(Probe::Ok { .. }) => {}
    }
    let (conn, infos) = servers.tools(name).await?;
    let identity = conn.identity().clone();
    let prompts = servers.prompts(name).await;
    let mut wanted: Vec<&str> = infos.iter().map(|t| t.name.as_str()).collect();
    if identity.has_resources {
        wanted.push(RESOURCES_TOOL);
    }
    let api = names::api_names(name, wanted);
    let resources_tool = identity
        .has_resources
        .then(|| api.last().map(|(api, _)| api.clone()))
        .flatten();
    let rows: Vec<[String; 3]> = infos
        .iter()
        .zip(&api)
        .map(|(info, (api_name, _))| {
            [
                api_name.clone(),
                info.name.clone(),
                first_line(&info.description),
            ]
        })
        .collect();
    if format == Format::Json {
        let value = json!({
            "name": name,
            "server": identity.implementation,
            "tools": infos.iter().zip(&api).map(|(info, (api_name, _))| json!({
                "name": api_name,
                "server_name": info.name,
                "description": info.description,
            })).collect::<Vec<_>>(),
            "prompts": match &prompts {
                Ok(list) => json!(list.iter().map(|p| json!({
                    "command": format!("/{name}:{}", p.name),
                    "name": p.name,
                    "description": p.description,
                    "arguments": p.arguments.iter().map(|a| json!({
                        "name": a.name,
                        "required": a.required,
                        "description": a.description,
                    })).collect::<Vec<_>>(),
                })).collect::<Vec<_>>()),
                Err(_) => Value::Null,
            },
            "prompts_error": prompts.as_ref().err().map(ToString::to_string),
            "resources": identity.has_resources,
            "resources_tool": resources_tool,
        });
        let text = serde_json::to_string_pretty(&value).unwrap_or_default();
        let mut safe = SafeWriter::json(&mut *out);
        writeln!(safe, "{text}")?;
        safe.flush()?;
        return Ok(0);
    }
    let mut safe = SafeWriter::text(&mut *out);
    let out: &mut dyn Write = &mut safe;
    let about = identity
        .implementation
        .as_deref()
        .map(|i| format!(" ({i})"))
        .unwrap_or_default();
    writeln!(out, "MCP server {name}{about}")?;
    writeln!(out)?;
    if rows.is_empty() {
        writeln!(out, "Tools: none")?;
    } else {
        writeln!(out, "Tools (the model calls each by the first name):")?;
        table(&rows, out)?;
    }
    writeln!(out)?;
    match &prompts {
        Ok(list) if list.is_empty() => writeln!(out, "Prompts: none")?,
        Ok(list) => {
            writeln!(out, "Prompts (* marks a required argument):")?;
            let rows: Vec<[String; 2]> = list
                .iter()
                .map(|p| [prompt_usage(name, p), first_line(&p.description)])
                .collect();
            table(&rows, out)?;
        }
        Err(e) => writeln!(
            out,
            "Prompts: could not be listed — {}",
            one_line(&e.to_string())
        )?,
    }
    writeln!(out)?;
    match &resources_tool {
        Some(tool) => writeln!(
            out,
            "Resources: yes (the model lists and reads them with {tool})"
        )?,
        None => writeln!(out, "Resources: none")?,
    }
    out.flush()?;
    Ok(0)
}

/// `/server:prompt arg* other`.
fn prompt_usage(server: &str, prompt: &PromptInfo) -> String {
    let mut text = format!("/{server}:{}", prompt.name);
    for arg in &prompt.arguments {
        text.push(' ');
        text.push_str(&arg.name);
        if arg.required {
            text.push('*');
        }
    }
    text
}

/// The first non-empty line of `text`, cut to [`DESCRIPTION_CHARS`].
fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if line.chars().count() > DESCRIPTION_CHARS {
        let mut cut: String = line.chars().take(DESCRIPTION_CHARS - 1).collect();
        cut.push('…');
        cut
    } else {
        line.to_string()
    }
}

/// Rows in columns, indented; cells are neutralized first so the widths are those shown.
fn table<const N: usize>(rows: &[[String; N]], out: &mut dyn Write) -> io::Result<()> {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|c| safe_text::neutralize(c).into_owned())
                .collect()
        })
        .collect();
    let mut widths = [0usize; N];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in &rows {
        let mut line = String::from(" ");
        for (i, cell) in row.iter().enumerate() {
            line.push(' ');
            line.push_str(cell);
            if i + 1 < N {
                let pad = widths[i].saturating_sub(cell.chars().count()) + 1;
                line.push_str(&" ".repeat(pad));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// `mcp add`: writes `[mcp_servers.NAME]` into the scope's file (created when
/// missing), keeping the rest of the file as written; a server the user adds to the
/// project is approved at once. A name already defined (in any file) is a usage error
/// unless `force`. Returns 0, or 1 when a project server was written but could not be
/// approved.
pub fn add(
    setup: &McpSetup,
    files: &Files,
    request: &AddRequest,
    out: &mut dyn Write,
) -> Result<i32, McpCliError> {
    let name = request.name.as_str();
    let usage = |reason: String| McpCliError::Usage(format!("MCP server `{name}`: {reason}"));
    config::check_name(name).map_err(usage)?;
    if request.server.command.is_none() && request.server.url.is_none() {
        return Err(usage(
            "say what to run: `harness9 mcp add NAME -- COMMAND [ARGS...]` (a stdio server) \
             or `harness9 mcp add NAME --url URL` (streamable HTTP)"
                .into(),
        ));
    }
    config::check(name, &request.server).map_err(usage)?;
    let path = files.of(request.scope);
    let mut file = ConfigFile::open(&path)?;
    let here = file.defines(name);
    let elsewhere = setup
        .get(name)
        .filter(|s| s.origin.path() != path)
        .map(|s| s.origin.clone());
    if !request.force {
        let place = if here {
            Some(path.clone())
        } else {
            elsewhere.as_ref().map(|o| o.path().to_path_buf())
        };
        if let Some(place) = place {
            return Err(usage(format!(
                "it is already defined in {}; `--force` replaces it (or pick another name)",
                place.display()
            )));
        }
    }
    file.set(name, &request.server)?;
    file.save()?;

    let mut safe = SafeWriter::text(out);
    let out: &mut dyn Write = &mut safe;
    let verb = if here { "Replaced" } else { "Added" };
    let prep = if here { "in" } else { "to" };
    writeln!(out, "{verb} MCP server `{name}` {prep} {}:", path.display())?;
    writeln!(out)?;
    write!(out, "{}", edit::table_text(name, &request.server))?;
    writeln!(out)?;
    if let Some(origin) = &elsewhere {
        // Precedence: the project's .harness9/config.toml, then .mcp.json, then the user's.
        let other = origin.path().display();
        if request.scope == Scope::Project {
            writeln!(
                out,
                "It takes precedence over the definition in {other}, which stays."
            )?;
        } else {
            writeln!(
                out,
                "Note: the definition in {other} takes precedence over this one."
            )?;
        }
    }
    let mut code = 0;
    if request.scope == Scope::Project {
        if config::trust_project_server(setup, name)? {
            writeln!(
                out,
                "It is approved on this machine (you added it). Anyone else who gets this \
                 project approves it with `harness9 mcp trust`."
            )?;
        } else {
            writeln!(
                out,
                "harness9: warning: {} could not be read back, so `{name}` is not approved \
                 yet; check the file, then run `harness9 mcp trust`.",
                path.display()
            )?;
            code = 1;
        }
    }
    writeln!(out, "Check it with `harness9 mcp tools {name}`.")?;
    out.flush()?;
    Ok(code)
}

/// `mcp remove NAME [--scope]`: removes the table from the scope's file, or (no scope)
/// from the file whose definition is in force: the project's `.harness9/config.toml`,
/// else the user's config.toml. A server only `.mcp.json` defines is a usage error
/// (harness9 does not edit that file), as is a name no file defines.
pub fn remove(
    setup: &McpSetup,
    files: &Files,
    name: &str,
    scope: Option<Scope>,
    out: &mut dyn Write,
) -> Result<i32, McpCliError> {
    let json_path = files.project.join(MCP_JSON);
    let in_json = edit::json_defines(&json_path, name);
    let mut found = None;
    for candidate in [Scope::Project, Scope::User] {
        if scope.is_some_and(|s| s != candidate) {
            continue;
        }
        let file = ConfigFile::open(&files.of(candidate))?;
        if file.defines(name) {
            found = Some(file);
            break;
        }
        // Without a scope, `.mcp.json` comes between the project's file and the user's.
        if scope.is_none() && candidate == Scope::Project && in_json {
            return Err(McpCliError::Usage(format!(
                "MCP server `{name}` is defined in {}, which harness9 does not edit (other \
                 tools share it); remove it there by hand{}",
                json_path.display(),
                if ConfigFile::open(&files.user_config)?.defines(name) {
                    ", or use `--scope user` to remove the one in config.toml"
                } else {
                    ""
                }
            )));
        }
    }
    let Some(mut file) = found else {
        let names: Vec<String> = setup.servers.iter().map(|s| s.name.clone()).collect();
        let where_ = match scope {
            Some(s) => format!("in {}", files.of(s).display()),
            None => "in config.toml or .harness9/config.toml".to_string(),
        };
        let elsewhere = match setup.get(name) {
            Some(s) => format!("; it is defined in {}", s.origin.path().display()),
            None => format!(" (servers: {})", list_or_none(&names)),
        };
        return Err(McpCliError::Usage(format!(
            "no MCP server named `{name}` is defined {where_}{elsewhere}"
        )));
    };
    file.remove(name)?;
    file.save()?;
    let path = file.path();
    let mut safe = SafeWriter::text(out);
    writeln!(safe, "Removed MCP server `{name}` from {}.", path.display())?;
    let mut others = Vec::new();
    for other in [files.of(Scope::Project), files.user_config.clone()] {
        if other != path && ConfigFile::open(&other)?.defines(name) {
            others.push(other);
        }
    }
    if in_json {
        others.push(json_path);
    }
    for other in others {
        writeln!(safe, "It is still defined in {}.", other.display())?;
    }
    safe.flush()?;
    Ok(0)
}

/// `mcp trust`: lists the project's server definitions (name, file, what runs, the
/// names of the variables and headers set — never their values) and approves them as
/// they are now. Problems with the project's files go to `err` first.
pub fn trust(
    setup: &McpSetup,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, McpCliError> {
    let mut safe_err = SafeWriter::text(err);
    for warning in &setup.warnings {
        writeln!(safe_err, "harness9: warning: {warning}")?;
    }
    safe_err.flush()?;
    let mut safe = SafeWriter::text(out);
    let out: &mut dyn Write = &mut safe;
    let project: Vec<&McpServerConfig> = setup
        .servers
        .iter()
        .filter(|s| !matches!(s.origin, ServerOrigin::User { .. }))
        .collect();
    if project.is_empty() {
        writeln!(
            out,
            "{} defines no MCP servers ({PROJECT_CONFIG}, {MCP_JSON}); there is nothing to \
             approve.",
            setup.project.display()
        )?;
        out.flush()?;
        return Ok(0);
    }
    writeln!(
        out,
        "The MCP servers of {} (approving one lets harness9 run it on this machine):",
        setup.project.display()
    )?;
    for server in &project {
        writeln!(out)?;
        let mut notes = Vec::new();
        if server.trust == Trust::Trusted {
            notes.push("already approved");
        }
        if server.enabled == Enabled::No {
            notes.push("disabled");
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join(", "))
        };
        writeln!(out, "{}{notes}", server.name)?;
        writeln!(out, "    file     {}", server.origin.path().display())?;
        match &server.transport {
            McpTransport::Stdio {
                env,
                env_vars,
                cwd,
                sandbox,
                ..
            } => {
                writeln!(out, "    command  {}", server.target())?;
                if let Some(cwd) = cwd {
                    writeln!(out, "    cwd      {}", cwd.display())?;
                }
                if !env.is_empty() {
                    let keys: Vec<&str> = env.keys().map(String::as_str).collect();
                    writeln!(out, "    env      {}", keys.join(", "))?;
                }
                if !env_vars.is_empty() {
                    writeln!(out, "    passes   {}", env_vars.join(", "))?;
                }
                if *sandbox == ServerSandbox::Session {
                    writeln!(out, "    sandbox  the session's")?;
                }
            }
            McpTransport::Http {
                url,
                headers,
                bearer_token_env,
            } => {
                writeln!(out, "    url      {url}")?;
                if !headers.is_empty() {
                    let keys: Vec<&str> = headers.keys().map(String::as_str).collect();
                    writeln!(out, "    headers  {}", keys.join(", "))?;
                }
                if let Some(var) = bearer_token_env {
                    writeln!(out, "    token    from ${var}")?;
                }
            }
        }
    }
    let approved = config::trust_project(setup)?;
    writeln!(out)?;
    writeln!(
        out,
        "Approved {} for this machine: {}. A definition that changes needs approving again.",
        count(approved.len(), "MCP server", "MCP servers"),
        approved.join(", ")
    )?;
    out.flush()?;
    Ok(0)
}

#[cfg(test)]
#[path = "cli_tests.rs"]
mod tests;
