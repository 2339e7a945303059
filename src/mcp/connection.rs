//! One live connection to an MCP server, through the official SDK (`rmcp`): a stdio
//! server started as a child ([`crate::exec::service`]: own process group, secrets kept
//! out, optionally sandboxed) or a streamable HTTP endpoint. The handshake runs within
//! the server's start-up timeout; the server's stderr goes to its log file
//! (`$HARNESS9_HOME/logs/mcp/NAME.log`), never to the terminal, and its last lines are
//! kept for error messages. Calls take a timeout and a cancellation token: dropping a
//! call's request makes the SDK send `notifications/cancelled`, so Esc tells the server.
//!
//! Results come back as JSON in the shape the specification gives them, so the rest of
//! harness9 never depends on the SDK's types. It knows the protocol's operations; it
//! must not know tools, prompts as slash commands, or the model.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, GetPromptRequestParams, Implementation,
    InitializeRequestParams, ReadResourceRequestParams,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::config::{McpServerConfig, McpTransport, ServerSandbox};
use crate::exec::service::{self, Service, ServiceCommand};
use crate::sandbox::{Network, SandboxPolicy};

/// Lines of a server's stderr kept for messages.
const TAIL_LINES: usize = 12;
/// Characters of one stderr line kept.
const TAIL_LINE_CHARS: usize = 400;

/// Where servers' logs go and what a stdio server may be confined by.
#[derive(Debug, Clone)]
pub struct ConnectContext {
    /// The project directory (a stdio server's default working directory).
    pub project: PathBuf,
    /// The folder of the servers' stderr logs.
    pub log_dir: PathBuf,
    /// The session's sandbox policy and launcher, for servers with `sandbox = true`.
    pub sandbox: Option<(Arc<SandboxPolicy>, PathBuf)>,
    /// The user's home (its package caches stay writable in a server's sandbox).
    pub user_home: Option<PathBuf>,
    /// Looks up variables (bearer tokens).
    pub env: fn(&str) -> Option<String>,
}

/// What went wrong talking to a server. Every message names the server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    /// It could not be started or reached.
    #[error("MCP server `{server}` could not start: {reason}{tail}")]
    Start {
        /// The server.
        server: String,
        /// Why.
        reason: String,
        /// The end of its stderr, as ` — stderr: …` (or empty).
        tail: String,
    },
    /// It stopped or closed the connection.
    #[error("MCP server `{server}` stopped{status}{tail}; it restarts on next use")]
    Closed {
        /// The server.
        server: String,
        /// ` (exit status 1)`, or empty.
        status: String,
        /// The end of its stderr.
        tail: String,
    },
    /// A request took longer than allowed.
    #[error("MCP server `{server}` did not answer {what} within {secs} s")]
    Timeout {
        /// The server.
        server: String,
        /// What was asked.
        what: String,
        /// The limit.
        secs: u64,
    },
    /// The user interrupted the request (the server was told).
    #[error("interrupted")]
    Cancelled,
    /// The server answered with an error.
    #[error("MCP server `{server}` refused {what}: {message}")]
    Refused {
        /// The server.
        server: String,
        /// What was asked.
        what: String,
        /// Its message.
        message: String,
    },
}

/// The last lines of a server's stderr.
#[derive(Debug, Clone, Default)]
pub struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn push(&self, line: &str) {
        let mut lines = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.len() == TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line.chars().take(TAIL_LINE_CHARS).collect());
    }

    /// ` — stderr: a | b`, or empty when it printed nothing.
    pub fn suffix(&self) -> String {
        let lines = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let text: Vec<&str> = lines
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .collect();
        if text.is_empty() {
            String::new()
        } else {
            format!(" — stderr: {}", text.join(" | "))
        }
    }
}

/// What a server said of itself at the handshake.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerIdentity {
    /// Its instructions for the model, if any.
    pub instructions: Option<String>,
    /// Its name and version, e.g. `mcp-server-time 1.2.0`.
    pub implementation: Option<String>,
    /// The protocol version agreed.
    pub protocol: String,
    /// Whether it offers tools, prompts, resources.
    pub has_tools: bool,
    /// Whether it offers prompts.
    pub has_prompts: bool,
    /// Whether it offers resources.
    pub has_resources: bool,
}

/// A tool as the server describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// Its name on the server.
    pub name: String,
    /// Its description (may be empty).
    pub description: String,
    /// Its input schema as given.
    pub schema: Value,
}

/// A prompt as the server describes it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PromptInfo {
    /// Its name.
    pub name: String,
    /// What it is for.
    #[serde(default)]
    pub description: String,
    /// Its arguments, in order.
    #[serde(default)]
    pub arguments: Vec<PromptArgument>,
}

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// What it is.
    #[serde(default)]
    pub description: String,
    /// Whether it must be given.
    #[serde(default)]
    pub required: bool,
}

/// A request whose answer is the specification's JSON result.
#[derive(Debug, Clone, PartialEq)]
pub enum Request<'a> {
    /// `tools/call`: tool `name` (its name on the server) with `arguments`.
    CallTool {
        /// The tool's name on the server.
        name: &'a str,
        /// Its arguments.
        arguments: Map<String, Value>,
    },
    /// `prompts/get`: prompt `name` with `arguments`.
    GetPrompt {
        /// The prompt's name.
        name: &'a str,
        /// Its arguments.
        arguments: Map<String, Value>,
    },
    /// `resources/read`: resource `uri`.
    ReadResource {
        /// The resource.
        uri: &'a str,
    },
}

/// A live connection.
pub struct Connection {
    server: String,
    service: RunningService<RoleClient, InitializeRequestParams>,
    process: Option<Mutex<Service>>,
    stderr: StderrTail,
    pump: Option<StderrPump>,
    identity: ServerIdentity,
}

/// How long a closing connection waits for its server's last stderr lines to reach the
/// log once the server's group is stopped (its pipe then ends at once, unless something
/// that left the group still holds it).
const PUMP_GRACE: Duration = Duration::from_millis(500);

impl Drop for Connection {
    fn drop(&mut self) {
        // The server is stopped first, so its stderr ends; then what it wrote before
        // (a harness9 that exits right after a listing would lose it) is in its log.
        drop(self.process.take());
        if let Some(pump) = self.pump.take() {
            let done = pump
                .done
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner);
            let _ = done.recv_timeout(PUMP_GRACE);
        }
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("server", &self.server)
            .finish()
    }
}

fn client_info() -> InitializeRequestParams {
    InitializeRequestParams::new(
        ClientCapabilities::default(),
        Implementation::new("harness9", env!("CARGO_PKG_VERSION")),
    )
}

/// Starts (or reaches) `config`'s server and completes the handshake within its
/// start-up timeout.
pub async fn connect(
    config: &McpServerConfig,
    ctx: &ConnectContext,
) -> Result<Connection, McpError> {
    let server = config.name.clone();
    let secs = config.startup_timeout.as_secs();
    let start_error = |reason: String, tail: &StderrTail| McpError::Start {
        server: server.clone(),
        reason,
        tail: tail.suffix(),
    };
    let stderr = StderrTail::default();
    let mut pump = None;
    let (service, process) = match &config.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            env_vars,
            cwd,
            sandbox,
        } => {
            let command = ServiceCommand {
                program: command.clone(),
                args: args.clone(),
                cwd: cwd
                    .as_ref()
                    .map_or_else(|| ctx.project.clone(), |c| ctx.project.join(c)),
                env: env.clone(),
                keep: env_vars.clone(),
                sandbox: match sandbox {
                    ServerSandbox::Unconfined => None,
                    ServerSandbox::Session => ctx.sandbox.as_ref().map(|(policy, launcher)| {
                        (
                            Arc::new(server_policy(policy, ctx.user_home.as_deref())),
                            launcher.clone(),
                        )
                    }),
                },
            };
            let mut process =
                service::spawn(&command).map_err(|e| start_error(e.to_string(), &stderr))?;
            pump = process.stderr.take().and_then(|err| {
                log_stderr(
                    err,
                    ctx.log_dir.join(format!("{server}.log")),
                    stderr.clone(),
                )
            });
            let (Some(stdin), Some(stdout)) = (process.stdin.take(), process.stdout.take()) else {
                return Err(start_error("its pipes could not be opened".into(), &stderr));
            };
            let handshake = rmcp::serve_client(client_info(), (stdout, stdin));
            let service = match tokio::time::timeout(config.startup_timeout, handshake).await {
                Ok(Ok(service)) => service,
                Ok(Err(e)) => {
                    // Give its stderr a moment to arrive: the reason is usually there.
                    settle(&mut process).await;
                    let status = process
                        .exited()
                        .map(|s| format!(" (it exited: {s})"))
                        .unwrap_or_default();
                    return Err(start_error(format!("{e}{status}"), &stderr));
                }
                Err(_) => {
                    return Err(start_error(
                        format!("no answer to `initialize` within {secs} s"),
                        &stderr,
                    ));
                }
            };
            (service, Some(Mutex::new(process)))
        }
        McpTransport::Http {
            url,
            headers,
            bearer_token_env,
        } => {
            let mut custom = HashMap::new();
            for (name, value) in headers {
                let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|e| start_error(format!("header {name:?}: {e}"), &stderr))?;
                let value = reqwest::header::HeaderValue::from_str(value)
                    .map_err(|e| start_error(format!("header {name}: {e}"), &stderr))?;
                custom.insert(name, value);
            }
            let mut transport_config =
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
            if let Some(var) = bearer_token_env {
                let token = (ctx.env)(var).filter(|t| !t.is_empty()).ok_or_else(|| {
                    start_error(
                        format!("`bearer_token_env` names {var}, which is not set"),
                        &stderr,
                    )
                })?;
                transport_config = transport_config.auth_header(token);
            }
            let client = crate::http::builder(url.starts_with("http://"))
                .build()
                .map_err(|e| start_error(format!("HTTP client: {e}"), &stderr))?;
            let transport = StreamableHttpClientTransport::with_client(client, transport_config);
            let handshake = rmcp::serve_client(client_info(), transport);
            match tokio::time::timeout(config.startup_timeout, handshake).await {
                Ok(Ok(service)) => (service, None),
                Ok(Err(e)) => return Err(start_error(e.to_string(), &stderr)),
                Err(_) => {
                    return Err(start_error(
                        format!("no answer to `initialize` from {url} within {secs} s"),
                        &stderr,
                    ));
                }
            }
        }
    };
    let identity = identity_of(&service);
    Ok(Connection {
        server,
        service,
        process,
        stderr,
        pump,
        identity,
    })
}

/// The session's policy for a server: its writes, plus the user's package caches (npx,
/// uvx and pip write there), with the network (servers are mostly API clients).
fn server_policy(session: &SandboxPolicy, home: Option<&std::path::Path>) -> SandboxPolicy {
    let mut policy = session.clone();
    policy.network = Network::Allow;
    if let Some(home) = home {
        for dir in [".npm", ".cache", ".local/share/uv"] {
            policy.writable.push(home.join(dir));
        }
    }
    policy
}

/// Waits briefly for a failed server to exit and print its reason.
async fn settle(process: &mut Service) {
    for _ in 0..25 {
        if process.exited().is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
}

/// The thread copying a server's stderr to its log: `done` disconnects when it ends.
struct StderrPump {
    done: Mutex<std::sync::mpsc::Receiver<()>>,
}

/// Copies a server's stderr to its log (appending, one header line per start) and keeps
/// its last lines, on a thread of its own: it runs whatever the async threads are doing
/// and however soon the runtime goes, and [`Connection`]'s drop waits for it. `None`
/// when the pipe or the thread cannot be had (the server still runs, unlogged).
fn log_stderr(
    stderr: tokio::process::ChildStderr,
    log: PathBuf,
    tail: StderrTail,
) -> Option<StderrPump> {
    use std::io::{BufRead, Write};
    // Blocking from here on: tokio hands the pipe over in blocking mode.
    let pipe = std::fs::File::from(stderr.into_owned_fd().ok()?);
    // Private (0600 in 0700 folders): a server's stderr may hold what it was given.
    let mut file = crate::private_files::open_private_log(&log).ok();
    let (done, ended) = std::sync::mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("mcp-stderr".into())
        .spawn(move || {
            let _done = done;
            if let Some(f) = file.as_mut() {
                let _ = f.write_all(b"--- started\n");
            }
            let mut reader = std::io::BufReader::new(pipe);
            let mut bytes = Vec::new();
            loop {
                bytes.clear();
                match reader.read_until(b'\n', &mut bytes) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let line = String::from_utf8_lossy(&bytes);
                let line = line.trim_end_matches(['\n', '\r']);
                tail.push(line);
                if let Some(f) = file.as_mut() {
                    let _ = f.write_all(line.as_bytes());
                    let _ = f.write_all(b"\n");
                }
            }
        })
        .ok()?;
    Some(StderrPump {
        done: Mutex::new(ended),
    })
}

fn identity_of(service: &RunningService<RoleClient, InitializeRequestParams>) -> ServerIdentity {
    let Some(info) = service.peer().peer_info() else {
        return ServerIdentity::default();
    };
    let caps = serde_json::to_value(&info.capabilities).unwrap_or(Value::Null);
    let has = |key: &str| caps.get(key).is_some_and(|v| !v.is_null());
    ServerIdentity {
        instructions: info.instructions.clone().filter(|i| !i.trim().is_empty()),
        implementation: info
            .server_info
            .as_ref()
            .map(|i| format!("{} {}", i.name, i.version)),
        protocol: info.protocol_version.to_string(),
        has_tools: has("tools"),
        has_prompts: has("prompts"),
        has_resources: has("resources"),
    }
}

/// An answer as JSON; `null` for one serde cannot write (it came from JSON, so none).
fn to_value<T: serde::Serialize>(answer: T) -> Value {
    serde_json::to_value(&answer).unwrap_or(Value::Null)
}

fn to_json<T: serde::Serialize>(items: &[T]) -> Vec<Value> {
    items
        .iter()
        .filter_map(|x| serde_json::to_value(x).ok())
        .collect()
}

impl Connection {
    /// The server's name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// What it said of itself.
    pub fn identity(&self) -> &ServerIdentity {
        &self.identity
    }

    /// Whether it is still there: the connection is open and (for stdio) the process
    /// runs.
    pub fn alive(&self) -> bool {
        if self.service.is_closed() {
            return false;
        }
        match &self.process {
            Some(p) => p
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .exited()
                .is_none(),
            None => true,
        }
    }

    /// The error for a connection that ended.
    pub fn closed_error(&self) -> McpError {
        let status = self
            .process
            .as_ref()
            .and_then(|p| p.lock().unwrap_or_else(PoisonError::into_inner).exited())
            .map(|s| format!(" ({s})"))
            .unwrap_or_default();
        McpError::Closed {
            server: self.server.clone(),
            status,
            tail: self.stderr.suffix(),
        }
    }

    fn map_error(&self, what: &str, e: rmcp::ServiceError) -> McpError {
        match e {
            rmcp::ServiceError::McpError(data) => McpError::Refused {
                server: self.server.clone(),
                what: what.to_string(),
                message: data.message.to_string(),
            },
            rmcp::ServiceError::Timeout { timeout } => McpError::Timeout {
                server: self.server.clone(),
                what: what.to_string(),
                secs: timeout.as_secs(),
            },
            rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_) => {
                self.closed_error()
            }
            other if !self.alive() => {
                let _ = other;
                self.closed_error()
            }
            other => McpError::Refused {
                server: self.server.clone(),
                what: what.to_string(),
                message: other.to_string(),
            },
        }
    }

    /// Runs a listing `request` within `limit`; listings are made outside any turn, so
    /// nothing cancels them.
    async fn listing<T>(
        &self,
        what: &str,
        limit: Duration,
        request: impl std::future::Future<Output = Result<T, rmcp::ServiceError>>,
    ) -> Result<T, McpError> {
        self.bounded(what, limit, &CancellationToken::new(), request)
            .await
    }

    /// Runs `request` within `limit`, stopping when `cancel` fires. Dropping the
    /// request's future is how the SDK tells the server it was cancelled.
    async fn bounded<T>(
        &self,
        what: &str,
        limit: Duration,
        cancel: &CancellationToken,
        request: impl std::future::Future<Output = Result<T, rmcp::ServiceError>>,
    ) -> Result<T, McpError> {
        tokio::select! {
            result = request => result.map_err(|e| self.map_error(what, e)),
            _ = tokio::time::sleep(limit) => Err(McpError::Timeout {
                server: self.server.clone(),
                what: what.to_string(),
                secs: limit.as_secs(),
            }),
            _ = cancel.cancelled() => Err(McpError::Cancelled),
        }
    }

    /// Every tool it offers.
    pub async fn list_tools(&self, limit: Duration) -> Result<Vec<ToolInfo>, McpError> {
        let tools = self
            .listing("tools/list", limit, self.service.peer().list_all_tools())
            .await?;
        Ok(tools
            .into_iter()
            .map(|t| ToolInfo {
                name: t.name.to_string(),
                description: t.description.map(|d| d.to_string()).unwrap_or_default(),
                schema: Value::Object((*t.input_schema).clone()),
            })
            .collect())
    }

    /// Every prompt it offers (none when it offers no prompts).
    pub async fn list_prompts(&self, limit: Duration) -> Result<Vec<PromptInfo>, McpError> {
        if !self.identity.has_prompts {
            return Ok(Vec::new());
        }
        let prompts = self
            .listing(
                "prompts/list",
                limit,
                self.service.peer().list_all_prompts(),
            )
            .await?;
        Ok(prompts
            .into_iter()
            .filter_map(|p| serde_json::from_value(serde_json::to_value(&p).ok()?).ok())
            .collect())
    }

    /// Its resources and resource templates, as JSON lists.
    pub async fn list_resources(
        &self,
        limit: Duration,
        cancel: &CancellationToken,
    ) -> Result<(Vec<Value>, Vec<Value>), McpError> {
        let peer = self.service.peer();
        let resources = self
            .bounded("resources/list", limit, cancel, peer.list_all_resources())
            .await?;
        let templates = self
            .bounded(
                "resources/templates/list",
                limit,
                cancel,
                peer.list_all_resource_templates(),
            )
            .await
            .unwrap_or_default();
        Ok((to_json(&resources), to_json(&templates)))
    }

    /// Sends `request` within `limit`, stopping when `cancel` fires; the answer as the
    /// specification's JSON.
    pub async fn request(
        &self,
        request: Request<'_>,
        limit: Duration,
        cancel: &CancellationToken,
    ) -> Result<Value, McpError> {
        let peer = self.service.peer();
        match request {
            Request::CallTool { name, arguments } => {
                let params = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
                let what = format!("the call of `{name}`");
                self.bounded(&what, limit, cancel, peer.call_tool(params))
                    .await
                    .map(to_value)
            }
            Request::GetPrompt { name, arguments } => {
                let params = GetPromptRequestParams::new(name).with_arguments(arguments);
                let what = format!("the prompt `{name}`");
                self.bounded(&what, limit, cancel, peer.get_prompt(params))
                    .await
                    .map(to_value)
            }
            Request::ReadResource { uri } => {
                let params = ReadResourceRequestParams::new(uri);
                let what = format!("reading {uri}");
                self.bounded(&what, limit, cancel, peer.read_resource(params))
                    .await
                    .map(to_value)
            }
        }
    }
}
