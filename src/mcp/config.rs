//! Where MCP servers are configured and what a configuration means: `[mcp_servers.NAME]`
//! in the user's config.toml and in the project's `.harness9/config.toml`, and a
//! project's `.mcp.json` (the `mcpServers` format other agents read), resolved into one
//! list of [`McpServerConfig`]s in precedence order (the project's `.harness9/config.toml`
//! over `.mcp.json` over the user's file, by name).
//!
//! A project's servers come with the repository, and starting one runs a command it
//! names, so they are untrusted input: they are listed but never started until this user
//! approved their exact definitions on this machine (`harness9 mcp trust`, recorded in
//! `$HARNESS9_HOME/mcp/trusted.json`). A definition that changes needs approving again.
//!
//! Problems (a bad name, a server with neither `command` nor `url`, unreadable JSON) are
//! warnings naming the file and the server, never silent drops. It owns the formats; it
//! must not know how a server is started or what its tools are.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The project's config file, relative to the project directory.
pub const PROJECT_CONFIG: &str = ".harness9/config.toml";
/// The shared project file other agents read, relative to the project directory.
pub const MCP_JSON: &str = ".mcp.json";
/// How long a server may take to start and answer `initialize`, by default.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one tool call may take, by default.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest server name (so `mcp__NAME__tool` leaves room for the tool in 64).
pub const MAX_NAME_CHARS: usize = 32;

/// One `[mcp_servers.NAME]` table as written in a TOML file.
#[derive(Debug, Default, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerFile {
    /// The program of a stdio server.
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Variables set for it (they win over the environment).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Variables of harness9's environment passed on although they look like secrets
    /// (every other secret-looking variable is kept from it, as from every command).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_vars: Vec<String>,
    /// Its working directory (default: the project directory).
    pub cwd: Option<PathBuf>,
    /// The endpoint of a streamable HTTP server.
    pub url: Option<String>,
    /// HTTP headers for every request to it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The environment variable holding a bearer token for it.
    pub bearer_token_env: Option<String>,
    /// `false` keeps it configured but unused.
    pub enabled: Option<bool>,
    /// Seconds it may take to start (default 30).
    pub startup_timeout_secs: Option<u64>,
    /// Seconds one tool call may take (default 120).
    pub tool_timeout_secs: Option<u64>,
    /// Its tools are in the tool list from the start (it starts in the background).
    pub preload: Option<bool>,
    /// Its line in the system prompt's index (else what it said of itself last time).
    pub description: Option<String>,
    /// Run a stdio server in the session's sandbox (default false).
    pub sandbox: Option<bool>,
}

/// The TOML files' part that names servers.
#[derive(Debug, Default, Deserialize)]
struct ProjectConfig {
    #[serde(default)]
    mcp_servers: BTreeMap<String, ServerFile>,
}

/// How harness9 talks to a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "transport", rename_all = "snake_case")]
pub enum McpTransport {
    /// A child process speaking JSON-RPC on stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set for it.
        env: BTreeMap<String, String>,
        /// Secret-looking variables passed on by name.
        env_vars: Vec<String>,
        /// Its working directory, when not the project's.
        cwd: Option<PathBuf>,
        /// Whether it runs in the session's sandbox.
        sandbox: ServerSandbox,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// Headers for every request.
        headers: BTreeMap<String, String>,
        /// The variable holding a bearer token.
        bearer_token_env: Option<String>,
    },
}

/// Whether a stdio server runs confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerSandbox {
    /// As the user's own program (the default: the user configured it).
    Unconfined,
    /// In the session's sandbox, with the network and the package caches allowed.
    Session,
}

/// When a server starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Preload {
    /// When the model (or the user) first loads it.
    OnFirstUse,
    /// In the background at start; its tools are in the tool list from the start.
    AtStart,
}

/// Whether a server is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Enabled {
    /// Listed in the index, started when loaded.
    Yes,
    /// `enabled = false`: configured, never started.
    No,
}

/// Where a server's definition came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ServerOrigin {
    /// The user's config.toml.
    User {
        /// The file.
        path: PathBuf,
    },
    /// The project's `.harness9/config.toml`.
    Project {
        /// The file.
        path: PathBuf,
    },
    /// The project's `.mcp.json`.
    McpJson {
        /// The file.
        path: PathBuf,
    },
    /// A plugin the user trusted (its `.mcp.json`, or its `plugin.json` inline).
    Plugin {
        /// The plugin's name.
        plugin: String,
        /// The file.
        path: PathBuf,
    },
    /// The editor that started `harness9 acp` (its `session/new`): the editor's choice,
    /// trusted like a command-line flag.
    Editor,
}

impl ServerOrigin {
    /// The file it came from.
    pub fn path(&self) -> &Path {
        match self {
            ServerOrigin::User { path }
            | ServerOrigin::Project { path }
            | ServerOrigin::McpJson { path }
            | ServerOrigin::Plugin { path, .. } => path,
            ServerOrigin::Editor => Path::new("(the editor's session/new)"),
        }
    }

    fn is_project(&self) -> bool {
        matches!(
            self,
            ServerOrigin::Project { .. } | ServerOrigin::McpJson { .. }
        )
    }
}

/// Whether a project's server may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trust {
    /// The user's own, or a project's that this user approved as it is now.
    Trusted,
    /// A project's, not approved (or changed since): never started.
    Untrusted,
}

/// One server, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct McpServerConfig {
    /// Its name (letters, digits, `-`, `_`; no `__`).
    pub name: String,
    /// How to reach it.
    #[serde(flatten)]
    pub transport: McpTransport,
    /// Whether it is used.
    pub enabled: Enabled,
    /// When it starts.
    pub preload: Preload,
    /// How long it may take to start.
    #[serde(skip)]
    pub startup_timeout: Duration,
    /// How long one tool call may take.
    #[serde(skip)]
    pub tool_timeout: Duration,
    /// The configured index line, if any.
    pub description: Option<String>,
    /// Where it was defined.
    pub origin: ServerOrigin,
    /// Whether it may start.
    pub trust: Trust,
}

impl McpServerConfig {
    /// Whether it is offered to the model: enabled and trusted.
    pub fn usable(&self) -> bool {
        self.enabled == Enabled::Yes && self.trust == Trust::Trusted
    }

    /// The definition as recorded in the trust list: exact, so any change shows.
    fn fingerprint(&self) -> String {
        serde_json::to_string(&(&self.name, &self.transport)).unwrap_or_default()
    }

    /// A few words saying what runs: the command line or the URL.
    pub fn target(&self) -> String {
        match &self.transport {
            McpTransport::Stdio { command, args, .. } => {
                let mut line = command.clone();
                for arg in args {
                    line.push(' ');
                    line.push_str(arg);
                }
                line
            }
            McpTransport::Http { url, .. } => url.clone(),
        }
    }
}

/// The servers of a session and what was wrong with their definitions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpSetup {
    /// Every valid definition, in name order (disabled and untrusted ones included).
    pub servers: Vec<McpServerConfig>,
    /// One line per problem, naming the file and the server.
    pub warnings: Vec<String>,
    /// The trust list file.
    pub trust_file: PathBuf,
    /// The project directory.
    pub project: PathBuf,
}

impl McpSetup {
    /// The servers offered to the model.
    pub fn usable(&self) -> impl Iterator<Item = &McpServerConfig> {
        self.servers.iter().filter(|s| s.usable())
    }

    /// The server called `name`.
    pub fn get(&self, name: &str) -> Option<&McpServerConfig> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// The warning naming the project's servers that wait for approval, if any.
    pub fn untrusted_warning(&self) -> Option<String> {
        let waiting: Vec<String> = self
            .servers
            .iter()
            .filter(|s| s.trust == Trust::Untrusted && s.enabled == Enabled::Yes)
            .map(|s| format!("{} ({})", s.name, s.origin.path().display()))
            .collect();
        (!waiting.is_empty()).then(|| {
            format!(
                "the project defines MCP servers not approved on this machine, so they are not \
                 started: {}. Review what they run (`harness9 mcp list`), then run \
                 `harness9 mcp trust` to use them.",
                waiting.join(", ")
            )
        })
    }
}

impl McpSetup {
    /// Adds the servers an editor gave `session/new` ([`ServerOrigin::Editor`]): the
    /// editor's definition replaces a configured server of the same name.
    pub fn add_editor_servers(&mut self, servers: Vec<McpServerConfig>) {
        for server in servers {
            self.servers.retain(|s| s.name != server.name);
            self.servers.push(server);
        }
        self.servers.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// Adds a trusted plugin's servers (from [`plugin_servers`]): a server already
    /// configured under the same name keeps it, and the plugin's is reported.
    pub fn add_plugin_servers(&mut self, servers: Vec<McpServerConfig>) {
        for server in servers {
            if let Some(kept) = self.get(&server.name) {
                self.warnings.push(format!(
                    "MCP server `{}` of {} is not used: `{}` is already configured in {}",
                    server.name,
                    server.origin.path().display(),
                    kept.name,
                    kept.origin.path().display()
                ));
                continue;
            }
            self.servers.push(server);
        }
        self.servers.sort_by(|a, b| a.name.cmp(&b.name));
    }
}

/// A plugin's MCP servers from an `mcpServers` object (`path` is where it was written):
/// `${CLAUDE_PLUGIN_ROOT}` is the plugin's folder `root`, other `${VAR}`s come from
/// `env`; each entry that cannot be used is one problem naming the plugin and the file.
/// The plugin's trust is the caller's: only a trusted plugin's servers are loaded.
pub fn plugin_servers(
    servers: serde_json::Map<String, serde_json::Value>,
    path: &Path,
    plugin: &str,
    root: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> (Vec<McpServerConfig>, Vec<String>) {
    let root_text = root.display().to_string();
    let lookup = |name: &str| {
        if name == "CLAUDE_PLUGIN_ROOT" {
            Some(root_text.clone())
        } else {
            env(name)
        }
    };
    let (tables, mut problems) = json_servers(servers, path, &lookup);
    let mut out = Vec::new();
    for (name, mut file) in tables {
        if let Some(cwd) = &file.cwd {
            file.cwd = Some(PathBuf::from(expand(&cwd.to_string_lossy(), &lookup)));
        }
        // The plugin's folder is trusted by its content: Python writing `__pycache__`
        // beside the modules a server imports would untrust the plugin (as for hooks).
        if file.command.is_some() {
            file.env
                .entry("PYTHONDONTWRITEBYTECODE".to_string())
                .or_insert_with(|| "1".to_string());
        }
        let origin = ServerOrigin::Plugin {
            plugin: plugin.to_string(),
            path: path.to_path_buf(),
        };
        match resolve(&name, &file, origin) {
            Ok(server) => out.push(server),
            Err(reason) => problems.push(format!(
                "MCP server `{name}` of plugin {plugin} in {}: {reason}; it is not used",
                path.display()
            )),
        }
    }
    (out, problems)
}

/// Reads every definition: `user` is the user's config.toml's `[mcp_servers]` (already
/// parsed with the rest of that file), `home` the harness9 home (for the trust list),
/// `env` looks up variables (for `${VAR}` in `.mcp.json`).
pub fn load(
    user: &BTreeMap<String, ServerFile>,
    user_path: &Path,
    project: &Path,
    home: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> McpSetup {
    let mut setup = McpSetup {
        trust_file: home.join("mcp").join("trusted.json"),
        project: project.to_path_buf(),
        ..McpSetup::default()
    };
    let mut by_name: BTreeMap<String, McpServerConfig> = BTreeMap::new();
    let mut add =
        |name: &str, file: &ServerFile, origin: ServerOrigin, warnings: &mut Vec<String>| {
            match resolve(name, file, origin.clone()) {
                Ok(server) => {
                    by_name.insert(name.to_string(), server);
                }
                Err(reason) => warnings.push(format!(
                    "MCP server `{name}` in {}: {reason}; it is not used",
                    origin.path().display()
                )),
            }
        };
    for (name, file) in user {
        let origin = ServerOrigin::User {
            path: user_path.to_path_buf(),
        };
        add(name, file, origin, &mut setup.warnings);
    }
    let json_path = project.join(MCP_JSON);
    let toml_path = project.join(PROJECT_CONFIG);
    let project_files = [
        (
            read_mcp_json(&json_path, env),
            ServerOrigin::McpJson { path: json_path },
        ),
        (
            read_project_toml(&toml_path),
            ServerOrigin::Project { path: toml_path },
        ),
    ];
    for (read, origin) in project_files {
        match read {
            Ok((servers, problems)) => {
                setup.warnings.extend(problems);
                for (name, file) in servers {
                    add(&name, &file, origin.clone(), &mut setup.warnings);
                }
            }
            Err(Some(e)) => setup.warnings.push(e),
            Err(None) => {}
        }
    }
    let trusted = read_trust(&setup.trust_file)
        .remove(&project.display().to_string())
        .unwrap_or_default();
    for server in by_name.values_mut() {
        if server.origin.is_project() && !trusted.contains(&server.fingerprint()) {
            server.trust = Trust::Untrusted;
        }
    }
    setup.servers = by_name.into_values().collect();
    setup
}

/// Checks a name and a table and makes them a server.
fn resolve(name: &str, file: &ServerFile, origin: ServerOrigin) -> Result<McpServerConfig, String> {
    check_name(name)?;
    let transport = match (&file.command, &file.url) {
        (Some(_), Some(_)) => return Err("it sets both `command` and `url`; keep one".into()),
        (None, None) => {
            return Err(
                "it sets neither `command` (a stdio server) nor `url` (streamable HTTP)".into(),
            );
        }
        (Some(command), None) => {
            if command.trim().is_empty() {
                return Err("`command` is empty".into());
            }
            if !file.headers.is_empty() || file.bearer_token_env.is_some() {
                return Err("`headers` and `bearer_token_env` are for `url` servers".into());
            }
            McpTransport::Stdio {
                command: command.clone(),
                args: file.args.clone(),
                env: file.env.clone(),
                env_vars: file.env_vars.clone(),
                cwd: file.cwd.clone(),
                sandbox: if file.sandbox == Some(true) {
                    ServerSandbox::Session
                } else {
                    ServerSandbox::Unconfined
                },
            }
        }
        (None, Some(url)) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!("`url` {url:?} is not an http(s) URL"));
            }
            if !file.args.is_empty() || !file.env.is_empty() || file.cwd.is_some() {
                return Err("`args`, `env` and `cwd` are for `command` servers".into());
            }
            McpTransport::Http {
                url: url.clone(),
                headers: file.headers.clone(),
                bearer_token_env: file.bearer_token_env.clone(),
            }
        }
    };
    let secs = |value: Option<u64>, default: Duration, key: &str| match value {
        Some(0) => Err(format!("`{key}` must be at least 1")),
        Some(n) => Ok(Duration::from_secs(n)),
        None => Ok(default),
    };
    Ok(McpServerConfig {
        name: name.to_string(),
        transport,
        enabled: if file.enabled == Some(false) {
            Enabled::No
        } else {
            Enabled::Yes
        },
        preload: if file.preload == Some(true) {
            Preload::AtStart
        } else {
            Preload::OnFirstUse
        },
        startup_timeout: secs(
            file.startup_timeout_secs,
            DEFAULT_STARTUP_TIMEOUT,
            "startup_timeout_secs",
        )?,
        tool_timeout: secs(
            file.tool_timeout_secs,
            DEFAULT_TOOL_TIMEOUT,
            "tool_timeout_secs",
        )?,
        description: file
            .description
            .as_ref()
            .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|d| !d.is_empty()),
        origin,
        trust: Trust::Trusted,
    })
}

/// Why `load` would refuse the table `file` named `name` (a bad name, both or neither
/// of `command` and `url`, a non-http URL, keys of the other transport, a zero
/// timeout), if it would: for `harness9 mcp add`, before anything is written.
pub fn check(name: &str, file: &ServerFile) -> Result<(), String> {
    let origin = ServerOrigin::User {
        path: PathBuf::new(),
    };
    resolve(name, file, origin).map(|_| ())
}

/// Whether `name` can name a server: it becomes part of tool names and slash commands.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name is empty".into());
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(format!(
            "the name is longer than {MAX_NAME_CHARS} characters"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err("a name is ASCII letters, digits, `-` and `_`".into());
    }
    if name.contains("__") || name.starts_with(['-', '_']) {
        return Err("a name may not start with `-` or `_` or contain `__`".into());
    }
    Ok(())
}

/// The text of a project file defining servers; `Err(None)` when there is no file.
fn read_servers_file(path: &Path) -> Result<String, Option<String>> {
    std::fs::read_to_string(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => None,
        _ => Some(format!(
            "{}: {e}; its MCP servers are not used",
            path.display()
        )),
    })
}

/// The servers of `.harness9/config.toml` (whose problems stop the whole file); `Err(None)`
/// when there is no file.
fn read_project_toml(path: &Path) -> Result<ProjectServers, Option<String>> {
    let text = read_servers_file(path)?;
    toml::from_str::<ProjectConfig>(&text)
        .map(|c| (c.mcp_servers.into_iter().collect(), Vec::new()))
        .map_err(|e| {
            Some(format!(
                "{}: {}; its MCP servers are not used",
                path.display(),
                e.message()
            ))
        })
}

/// One entry of `.mcp.json`'s `mcpServers`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JsonServer {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct McpJson {
    #[serde(default)]
    mcp_servers: BTreeMap<String, serde_json::Value>,
}

/// A project file's servers and one problem per entry that could not be read.
type ProjectServers = (Vec<(String, ServerFile)>, Vec<String>);

/// The servers of `.mcp.json` and the entries that could not be read, with `${VAR}` and `${VAR:-default}` expanded in
/// commands, arguments, variables, URLs and headers; `Err(None)` when there is no file.
fn read_mcp_json(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ProjectServers, Option<String>> {
    let text = read_servers_file(path)?;
    let file: McpJson = serde_json::from_str(&text).map_err(|e| {
        Some(format!(
            "{}: not valid ({e}); its MCP servers are not used",
            path.display()
        ))
    })?;
    Ok(json_servers(file.mcp_servers, path, env))
}

/// The entries of an `mcpServers` object (from `path`) as server tables, with
/// `${VAR}` and `${VAR:-default}` expanded by `env`, and one problem per entry that
/// could not be read.
fn json_servers(
    servers: impl IntoIterator<Item = (String, serde_json::Value)>,
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> ProjectServers {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for (name, value) in servers {
        let server: JsonServer = match serde_json::from_value(value) {
            Ok(s) => s,
            Err(e) => {
                problems.push(format!(
                    "MCP server `{name}` in {}: {e}; it is not used",
                    path.display()
                ));
                continue;
            }
        };
        match server.kind.as_deref() {
            None
            | Some("stdio")
            | Some("http")
            | Some("streamable-http")
            | Some("streamableHttp") => {}
            Some(other) => {
                problems.push(format!(
                    "MCP server `{name}` in {}: transport type {other:?} is not supported \
                     (stdio and http are); it is not used",
                    path.display()
                ));
                continue;
            }
        }
        let x = |s: &str| expand(s, env);
        out.push((
            name,
            ServerFile {
                command: server.command.as_deref().map(x),
                args: server.args.iter().map(|a| x(a)).collect(),
                env: server.env.iter().map(|(k, v)| (k.clone(), x(v))).collect(),
                cwd: server.cwd,
                url: server.url.as_deref().map(x),
                headers: server
                    .headers
                    .iter()
                    .map(|(k, v)| (k.clone(), x(v)))
                    .collect(),
                ..ServerFile::default()
            },
        ));
    }
    (out, problems)
}

/// `${VAR}` and `${VAR:-default}` replaced from the environment (unset: empty, or the
/// default).
pub fn expand(text: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        let value = env(name).filter(|v| !v.is_empty());
        out.push_str(&value.unwrap_or_else(|| default.unwrap_or("").to_string()));
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The trust list: project directory → approved definitions.
fn read_trust(path: &Path) -> BTreeMap<String, Vec<String>> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Why the trust list could not be written.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct TrustError {
    /// The file.
    pub path: PathBuf,
    /// The I/O error.
    pub source: std::io::Error,
}

/// Approves the project's servers as they are defined now; returns their names.
pub fn trust_project(setup: &McpSetup) -> Result<Vec<String>, TrustError> {
    let key = setup.project.display().to_string();
    let approved: Vec<&McpServerConfig> = setup
        .servers
        .iter()
        .filter(|s| s.origin.is_project())
        .collect();
    update_trust(&setup.trust_file, |list| {
        list.insert(key, approved.iter().map(|s| s.fingerprint()).collect());
    })?;
    Ok(approved.iter().map(|s| s.name.clone()).collect())
}

/// Approves the one definition of `name` now in the project's `.harness9/config.toml`
/// (read again, not taken from `setup`: what is approved is what the file says), keeping
/// the project's other approvals and dropping older ones of that name. For a server the
/// user has just written there themselves (`harness9 mcp add --scope project`), who
/// need not approve their own addition. `Ok(false)` when the file does not define such
/// a server validly (then nothing changed).
pub fn trust_project_server(setup: &McpSetup, name: &str) -> Result<bool, TrustError> {
    let path = setup.project.join(PROJECT_CONFIG);
    let Ok((servers, _)) = read_project_toml(&path) else {
        return Ok(false);
    };
    let Some((_, file)) = servers.into_iter().find(|(n, _)| n == name) else {
        return Ok(false);
    };
    let Ok(server) = resolve(name, &file, ServerOrigin::Project { path }) else {
        return Ok(false);
    };
    update_trust(&setup.trust_file, |list| {
        let approved = list.entry(setup.project.display().to_string()).or_default();
        approved.retain(|f| fingerprint_name(f).as_deref() != Some(name));
        approved.push(server.fingerprint());
    })?;
    Ok(true)
}

/// The server name a trust-list entry ([`McpServerConfig::fingerprint`]) is for.
fn fingerprint_name(fingerprint: &str) -> Option<String> {
    serde_json::from_str::<(String, serde_json::Value)>(fingerprint)
        .ok()
        .map(|(name, _)| name)
}

/// Changes the trust list under its folder's lock (read, change, write to a temporary
/// file, rename), so two `harness9 mcp trust` or `mcp add` at once lose no approval.
fn update_trust(
    path: &Path,
    change: impl FnOnce(&mut BTreeMap<String, Vec<String>>),
) -> Result<(), TrustError> {
    let mode = crate::private_files::UpdateMode {
        links: crate::private_files::Links::Follow,
        privacy: crate::private_files::Privacy::Private,
    };
    crate::private_files::update(path, mode, |old| {
        let mut list: BTreeMap<String, Vec<String>> = old
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        change(&mut list);
        Ok((
            Some(serde_json::to_string_pretty(&list).unwrap_or_default()),
            (),
        ))
    })
}

impl From<crate::private_files::UpdateIoError> for TrustError {
    fn from(e: crate::private_files::UpdateIoError) -> Self {
        TrustError {
            path: e.path,
            source: e.source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn setup_with(files: &[(&str, &str)], user: &str) -> (tempfile::TempDir, McpSetup) {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        std::fs::create_dir_all(project.join(".harness9")).unwrap();
        for (path, text) in files {
            std::fs::write(project.join(path), text).unwrap();
        }
        #[derive(Deserialize)]
        struct User {
            #[serde(default)]
            mcp_servers: BTreeMap<String, ServerFile>,
        }
        let user: User = toml::from_str(user).unwrap();
        let home = dir.path().join("home");
        let setup = load(
            &user.mcp_servers,
            &home.join("config.toml"),
            &project,
            &home,
            &no_env,
        );
        (dir, setup)
    }

    #[test]
    fn user_servers_are_trusted_and_resolved_with_defaults() {
        let (_d, setup) = setup_with(
            &[],
            r#"
[mcp_servers.time]
command = "uvx"
args = ["mcp-server-time"]
[mcp_servers.docs]
url = "https://example.com/mcp"
bearer_token_env = "DOCS_TOKEN"
preload = true
tool_timeout_secs = 5
"#,
        );
        assert!(setup.warnings.is_empty(), "{:?}", setup.warnings);
        let names: Vec<&str> = setup.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["docs", "time"]);
        let docs = setup.get("docs").unwrap();
        assert_eq!(docs.preload, Preload::AtStart);
        assert_eq!(docs.tool_timeout, Duration::from_secs(5));
        assert_eq!(docs.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
        assert!(docs.usable());
        assert_eq!(setup.get("time").unwrap().target(), "uvx mcp-server-time");
    }

    #[test]
    fn bad_definitions_are_warnings_naming_the_file_and_server() {
        let (_d, setup) = setup_with(
            &[],
            r#"
[mcp_servers.both]
command = "x"
url = "http://x"
[mcp_servers.none]
enabled = true
[mcp_servers."bad__name"]
command = "x"
[mcp_servers.ftp]
url = "ftp://x"
[mcp_servers.zero]
command = "x"
tool_timeout_secs = 0
"#,
        );
        assert!(setup.servers.is_empty());
        assert_eq!(setup.warnings.len(), 5, "{:?}", setup.warnings);
        assert!(setup.warnings.iter().all(|w| w.contains("config.toml")));
        assert!(
            setup
                .warnings
                .iter()
                .any(|w| w.contains("`both`") && w.contains("both"))
        );
        assert!(
            setup
                .warnings
                .iter()
                .any(|w| w.contains("`bad__name`") && w.contains("__"))
        );
    }

    #[test]
    fn project_servers_wait_for_trust_and_a_changed_definition_needs_it_again() {
        let files = [
            (
                ".mcp.json",
                r#"{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "server-fs", "${ROOT:-.}"]},
                     "web": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-A": "1"}}}}"#,
            ),
            (
                ".harness9/config.toml",
                "[mcp_servers.git]\ncommand = \"uvx\"\nargs = [\"mcp-server-git\"]\n",
            ),
        ];
        let (dir, setup) = setup_with(&files, "");
        assert!(setup.warnings.is_empty(), "{:?}", setup.warnings);
        assert_eq!(setup.servers.len(), 3);
        assert!(setup.servers.iter().all(|s| s.trust == Trust::Untrusted));
        assert_eq!(setup.usable().count(), 0);
        let warning = setup.untrusted_warning().unwrap();
        assert!(warning.contains("fs (") && warning.contains("harness9 mcp trust"));
        assert_eq!(setup.get("fs").unwrap().target(), "npx -y server-fs .");

        assert_eq!(trust_project(&setup).unwrap(), ["fs", "git", "web"]);
        let (_, again) = reload(&dir);
        assert_eq!(again.usable().count(), 3);

        std::fs::write(
            dir.path().join("p/.harness9/config.toml"),
            "[mcp_servers.git]\ncommand = \"sh\"\nargs = [\"-c\", \"evil\"]\n",
        )
        .unwrap();
        let (_, changed) = reload(&dir);
        assert_eq!(changed.get("git").unwrap().trust, Trust::Untrusted);
        assert_eq!(changed.get("fs").unwrap().trust, Trust::Trusted);

        // Approving the one server the user wrote keeps the others' approvals.
        assert!(trust_project_server(&changed, "git").unwrap());
        assert!(
            !trust_project_server(&changed, "fs").unwrap(),
            "not in the TOML file"
        );
        let (_, again) = reload(&dir);
        assert_eq!(again.usable().count(), 3);
        let list = std::fs::read_to_string(&again.trust_file).unwrap();
        assert_eq!(list.matches("\\\"git\\\"").count(), 1, "{list}");
    }

    fn reload(dir: &tempfile::TempDir) -> ((), McpSetup) {
        let home = dir.path().join("home");
        (
            (),
            load(
                &BTreeMap::new(),
                &home.join("config.toml"),
                &dir.path().join("p"),
                &home,
                &no_env,
            ),
        )
    }

    #[test]
    fn a_broken_project_file_is_a_warning() {
        let (_d, setup) = setup_with(&[(".mcp.json", "{not json")], "");
        assert_eq!(setup.warnings.len(), 1);
        assert!(setup.warnings[0].contains(".mcp.json: not valid"));
    }

    #[test]
    fn expansion_reads_variables_and_defaults() {
        let env = |n: &str| (n == "A").then(|| "a".to_string());
        assert_eq!(expand("x${A}y${B:-b}z${C}", &env), "xaybz");
        assert_eq!(expand("open ${A", &env), "open ${A");
    }
}
