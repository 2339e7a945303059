//! The session's MCP servers ([`McpServers`]): each configured server's state (not
//! started, running, failed), started when first needed and restarted on the next use
//! after it stopped; at most one start per server at a time. It also remembers, per
//! server, what the last successful start learned (instructions, tool count, prompts:
//! [`super::cache`]) so the system prompt's index and the slash-command popup can name
//! them without starting anything.
//!
//! A failed start or a server that stopped is reported once as a notice (through the
//! callback the agent sets) naming the server with the end of its stderr; what a start
//! learnt that was not remembered is announced through a second callback (the agent
//! tells frontends their slash commands changed). It knows
//! connections and configurations; it must not know the agent loop, tools' registry or
//! frontends.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::cache::{IndexCache, ServerMemo};
use super::config::{McpServerConfig, McpSetup};
use super::connection::{
    self, ConnectContext, Connection, McpError, PromptInfo, Request, ToolInfo,
};

/// How long listing requests (tools, prompts, resources) may take.
const LIST_TIMEOUT: Duration = Duration::from_secs(30);

/// Who tells the user that a server could not start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StartFailure {
    /// The servers' notice callback: nothing else reaches the user (a background load,
    /// the model's tool call, whose error goes to the model).
    Notice,
    /// The caller, which ends the user's own request (`/SERVER:PROMPT`) with the error.
    CallerReports,
}

/// What a server is doing, for `/mcp` and `harness9 mcp list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    /// Not started in this session.
    NotStarted,
    /// Running, with this many tools.
    Running {
        /// Its tool count.
        tools: usize,
    },
    /// The last start failed or it stopped.
    Failed {
        /// The message (names the server, with its stderr's end).
        error: String,
    },
}

/// One server's line for `/mcp`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    /// Its configuration.
    pub config: McpServerConfig,
    /// Its state.
    pub state: ServerState,
    /// What the last start learned, if any.
    pub memo: Option<ServerMemo>,
}

type Notify = Box<dyn Fn(String) + Send + Sync>;
type Learnt = Box<dyn Fn(&McpServers) + Send + Sync>;

struct Slot {
    config: McpServerConfig,
    /// Serializes starts; holds the running connection.
    running: tokio::sync::Mutex<Option<Arc<Connection>>>,
    state: Mutex<ServerState>,
    /// The tools the running connection listed when it started.
    tools: Mutex<Vec<ToolInfo>>,
}

struct Inner {
    setup: McpSetup,
    slots: BTreeMap<String, Slot>,
    ctx: ConnectContext,
    cache: IndexCache,
    memos: Mutex<BTreeMap<String, ServerMemo>>,
    notify: Mutex<Option<Notify>>,
    learnt: Mutex<Option<Learnt>>,
}

/// The session's servers. Cheap to clone (shared).
#[derive(Clone)]
pub struct McpServers(Arc<Inner>);

impl std::fmt::Debug for McpServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.slots.keys()).finish()
    }
}

impl McpServers {
    /// The servers of `setup` (the usable ones get slots; the rest are only listed),
    /// with what the cache remembers of them.
    pub fn new(setup: McpSetup, ctx: ConnectContext, cache: IndexCache) -> Self {
        let slots = setup
            .usable()
            .map(|c| {
                (
                    c.name.clone(),
                    Slot {
                        config: c.clone(),
                        running: tokio::sync::Mutex::new(None),
                        state: Mutex::new(ServerState::NotStarted),
                        tools: Mutex::new(Vec::new()),
                    },
                )
            })
            .collect();
        let memos = if setup.usable().next().is_some() {
            cache.read()
        } else {
            BTreeMap::new()
        };
        McpServers(Arc::new(Inner {
            setup,
            slots,
            ctx,
            cache,
            memos: Mutex::new(memos),
            notify: Mutex::new(None),
            learnt: Mutex::new(None),
        }))
    }

    /// No servers at all.
    pub fn none() -> Self {
        McpServers::new(
            McpSetup::default(),
            ConnectContext {
                project: std::path::PathBuf::from("."),
                log_dir: std::path::PathBuf::from("."),
                sandbox: None,
                user_home: None,
                env: |_| None,
            },
            IndexCache::disabled(),
        )
    }

    /// Sets where notices (a failed start, a server that stopped) go.
    pub fn set_notify(&self, notify: impl Fn(String) + Send + Sync + 'static) {
        *self.0.notify.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(notify));
    }

    /// Sets what is called after a start learnt something new of a server (its prompts,
    /// tools or instructions differ from what was remembered): the servers are passed
    /// in, so the callback needs no handle of its own.
    pub fn set_on_learnt(&self, learnt: impl Fn(&McpServers) + Send + Sync + 'static) {
        *self.0.learnt.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(learnt));
    }

    /// Reports `message` through the notice callback (and the log).
    pub fn report(&self, message: String) {
        self.notice(message);
    }

    fn notice(&self, message: String) {
        tracing::warn!("{message}");
        if let Some(notify) = self
            .0
            .notify
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            notify(message);
        }
    }

    /// The configuration (every server, usable or not).
    pub fn setup(&self) -> &McpSetup {
        &self.0.setup
    }

    /// Names of the servers offered to the model, in name order.
    pub fn usable(&self) -> Vec<String> {
        self.0.slots.keys().cloned().collect()
    }

    /// Whether `name` is a usable server.
    pub fn has(&self, name: &str) -> bool {
        self.0.slots.contains_key(name)
    }

    /// The configuration of usable server `name`.
    pub fn config(&self, name: &str) -> Option<&McpServerConfig> {
        self.0.slots.get(name).map(|s| &s.config)
    }

    /// What the last successful start of `name` learned.
    pub fn memo(&self, name: &str) -> Option<ServerMemo> {
        self.memos().get(name).cloned()
    }

    fn memos(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, ServerMemo>> {
        self.0.memos.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every configured server with its state.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        let memos = self.memos().clone();
        self.0
            .setup
            .servers
            .iter()
            .map(|config| ServerStatus {
                config: config.clone(),
                state: self
                    .0
                    .slots
                    .get(&config.name)
                    .map_or(ServerState::NotStarted, |s| {
                        s.state
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .clone()
                    }),
                memo: memos
                    .get(&config.name)
                    .filter(|m| m.fingerprint == super::cache::fingerprint(config))
                    .cloned(),
            })
            .collect()
    }

    fn set_state(&self, slot: &Slot, state: ServerState) {
        *slot.state.lock().unwrap_or_else(PoisonError::into_inner) = state;
    }

    /// The running connection to `name`, starting (or restarting) it when needed; a
    /// failed start is also a notice.
    pub async fn connection(&self, name: &str) -> Result<Arc<Connection>, McpError> {
        self.connect(name, StartFailure::Notice).await
    }

    async fn connect(&self, name: &str, report: StartFailure) -> Result<Arc<Connection>, McpError> {
        let slot = self.0.slots.get(name).ok_or_else(|| McpError::Start {
            server: name.to_string(),
            reason: self.why_unusable(name),
            tail: String::new(),
        })?;
        let mut running = slot.running.lock().await;
        if let Some(conn) = running.as_ref() {
            if conn.alive() {
                return Ok(conn.clone());
            }
            let error = conn.closed_error();
            *running = None;
            self.notice(error.to_string());
        }
        match connection::connect(&slot.config, &self.0.ctx).await {
            Ok(conn) => {
                let conn = Arc::new(conn);
                // Learnt before anyone else can use it, so its tool list is there first.
                if let Err(e) = self.learn(slot, &conn).await {
                    return Err(self.start_failed(slot, e, report));
                }
                *running = Some(conn.clone());
                Ok(conn)
            }
            Err(e) => Err(self.start_failed(slot, e, report)),
        }
    }

    /// Records a failed start in `slot`'s state, tells the user if `report` says so,
    /// and gives the error back.
    fn start_failed(&self, slot: &Slot, error: McpError, report: StartFailure) -> McpError {
        let message = error.to_string();
        self.set_state(
            slot,
            ServerState::Failed {
                error: message.clone(),
            },
        );
        if report == StartFailure::Notice {
            self.notice(message);
        }
        error
    }

    /// Records what a fresh connection says of itself (tools, prompts) in the state and
    /// the cache.
    async fn learn(&self, slot: &Slot, conn: &Connection) -> Result<(), McpError> {
        let config = &slot.config;
        let listed = if conn.identity().has_tools {
            conn.list_tools(LIST_TIMEOUT).await?
        } else {
            Vec::new()
        };
        let tools = listed.len();
        *slot.tools.lock().unwrap_or_else(PoisonError::into_inner) = listed;
        // A server whose prompts cannot be listed still serves its tools.
        let prompts = conn.list_prompts(LIST_TIMEOUT).await.unwrap_or_default();
        self.set_state(slot, ServerState::Running { tools });
        let identity = conn.identity();
        let memo = ServerMemo {
            fingerprint: super::cache::fingerprint(config),
            instructions: identity.instructions.clone(),
            implementation: identity.implementation.clone(),
            tools,
            prompts,
        };
        let changed = {
            let mut memos = self.memos();
            let changed = memos.get(&config.name) != Some(&memo);
            if changed {
                memos.insert(config.name.clone(), memo);
                self.0.cache.write(&memos);
            }
            changed
        };
        if changed
            && let Some(learnt) = self
                .0
                .learnt
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .as_ref()
        {
            learnt(self);
        }
        Ok(())
    }

    fn why_unusable(&self, name: &str) -> String {
        match self.0.setup.get(name) {
            None => format!(
                "no server of that name is configured (servers: {})",
                list_or_none(&self.usable())
            ),
            Some(c) if c.enabled == super::config::Enabled::No => {
                "it is disabled (`enabled = false`)".into()
            }
            Some(c) => format!(
                "it is defined by the project ({}) and not approved on this machine; run \
                 `harness9 mcp trust` after reviewing it",
                c.origin.path().display()
            ),
        }
    }

    /// Stops `name`'s connection, if running (the next use starts it again).
    pub async fn stop(&self, name: &str) {
        if let Some(slot) = self.0.slots.get(name) {
            *slot.running.lock().await = None;
            self.set_state(slot, ServerState::NotStarted);
        }
    }

    /// `name`'s tools.
    pub async fn tools(&self, name: &str) -> Result<(Arc<Connection>, Vec<ToolInfo>), McpError> {
        let conn = self.connection(name).await?;
        let tools = self
            .0
            .slots
            .get(name)
            .map(|s| {
                s.tools
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone()
            })
            .unwrap_or_default();
        Ok((conn, tools))
    }

    /// `server`'s prompts (starting it when needed; a failed start is the caller's to
    /// report).
    pub async fn prompts(&self, server: &str) -> Result<Vec<PromptInfo>, McpError> {
        let conn = self.connect(server, StartFailure::CallerReports).await?;
        let result = conn.list_prompts(LIST_TIMEOUT).await;
        self.closed_means_failed(server, result)
    }

    /// Sends `request` to `server`, starting it when needed (a server that stopped is
    /// restarted once for it). A tool call or a resource read gets the server's tool
    /// timeout; a prompt gets the listing timeout, and a failed start is the caller's to
    /// report (prompts are the user's own `/SERVER:PROMPT`, which reports it).
    pub async fn request(
        &self,
        server: &str,
        request: Request<'_>,
        cancel: &CancellationToken,
    ) -> Result<Value, McpError> {
        let (report, limit) = match request {
            Request::GetPrompt { .. } => (StartFailure::CallerReports, LIST_TIMEOUT),
            Request::CallTool { .. } | Request::ReadResource { .. } => {
                (StartFailure::Notice, self.tool_timeout(server))
            }
        };
        let conn = self.connect(server, report).await?;
        let result = conn.request(request, limit, cancel).await;
        self.closed_means_failed(server, result)
    }

    /// `server`'s resources and templates.
    pub async fn list_resources(
        &self,
        server: &str,
        cancel: &CancellationToken,
    ) -> Result<(Vec<Value>, Vec<Value>), McpError> {
        let conn = self.connection(server).await?;
        let result = conn.list_resources(LIST_TIMEOUT, cancel).await;
        self.closed_means_failed(server, result)
    }

    /// How long one of `server`'s tool calls or resource reads may take.
    fn tool_timeout(&self, server: &str) -> Duration {
        self.config(server)
            .map_or(super::config::DEFAULT_TOOL_TIMEOUT, |c| c.tool_timeout)
    }

    /// Passes `result` on; when the server closed during the request, its state says it
    /// failed (and why) until the next use restarts it, whatever the request was.
    fn closed_means_failed<T>(
        &self,
        server: &str,
        result: Result<T, McpError>,
    ) -> Result<T, McpError> {
        if let Err(error @ McpError::Closed { .. }) = &result
            && let Some(slot) = self.0.slots.get(server)
        {
            self.set_state(
                slot,
                ServerState::Failed {
                    error: error.to_string(),
                },
            );
        }
        result
    }

    /// The prompts known for slash commands without starting anything: those of the
    /// last successful start of each usable server, as `(server, prompt)`.
    pub fn known_prompts(&self) -> Vec<(String, PromptInfo)> {
        let memos = self.memos();
        self.0
            .slots
            .values()
            .filter_map(|slot| {
                let memo = memos.get(&slot.config.name)?;
                (memo.fingerprint == super::cache::fingerprint(&slot.config)).then(|| {
                    memo.prompts
                        .iter()
                        .map(|p| (slot.config.name.clone(), p.clone()))
                        .collect::<Vec<_>>()
                })
            })
            .flatten()
            .collect()
    }
}

/// `a, b`, or `none`.
pub fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}
