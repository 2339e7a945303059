//! MCP servers as tools: loading a server ([`load`]) lists its tools and puts one
//! [`McpTool`] per tool into the registry's loaded set, owned by `mcp:SERVER` (so
//! `unload_skill("mcp:SERVER")` and `/clear` take them away like a skill's tools), plus,
//! when the server offers resources, one tool that lists and reads them. A call is
//! judged by the approval policy as an [`ApprovalRequestKind::Mcp`] request, runs
//! through [`McpServers`] with the server's tool timeout and the turn's cancellation, and
//! its result is rendered as text ([`super::content`]).
//!
//! It knows the registry's loaded set and the tool traits; it must not know the agent
//! loop or frontends.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::connection::{McpError, Request};
use super::content;
use super::manager::McpServers;
use super::names;
use super::schema;
use crate::protocol::{ApprovalRequestKind, McpAction};
use crate::tools::{
    Access, LoadedTools, OutputKind, PreparedCall, Tool, ToolContext, ToolFatal, ToolFuture,
    ToolOutput, TypedTool,
};

/// The longest tool description passed on (a server's essay would cost every request).
const MAX_DESCRIPTION_CHARS: usize = 2_000;
/// The longest preview of a call's arguments in an approval request.
const MAX_ARGUMENTS_PREVIEW: usize = 2_000;
/// How long listing resources may take when a server loads.
const RESOURCES_PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// The name a server's resources tool asks for (made unique among its tools).
pub const RESOURCES_TOOL: &str = "resources";

/// The owner name of a server's tools in the registry and in the loaded skills.
pub fn owner(server: &str) -> String {
    crate::tools::skill::server_owner(server)
}

/// The server named by a `mcp:NAME` owner or skill name.
pub fn server_of_owner(owner: &str) -> Option<&str> {
    crate::tools::skill::server_of_owner(owner)
}

/// `use_skill` loads the session's servers through this.
impl crate::tools::skill::ServerTools for McpServers {
    fn usable(&self) -> Vec<String> {
        McpServers::usable(self)
    }

    fn has(&self, name: &str) -> bool {
        McpServers::has(self, name)
    }

    fn load<'a>(
        &'a self,
        name: &'a str,
        into: &'a LoadedTools,
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<Output = Result<String, crate::tools::skill::ServerLoadError>>
                + Send
                + 'a,
        >,
    > {
        Box::pin(async move {
            load(self, name, into)
                .await
                .map(|report| loaded_text(name, &report))
                .map_err(|e| crate::tools::skill::ServerLoadError {
                    message: e.to_string(),
                    // The servers reported a failed start when it happened.
                    warn_user: matches!(e, LoadError::Collision(_)),
                })
        })
    }
}

/// One tool of a server.
pub struct McpTool {
    servers: McpServers,
    server: String,
    /// Its name on the server.
    remote: String,
    /// The name the model calls.
    api_name: String,
    description: String,
    parameters: Value,
}

impl McpTool {
    /// Its name on the server.
    pub fn remote_name(&self) -> &str {
        &self.remote
    }
}

/// A call with its arguments parsed.
struct McpCall<'t> {
    tool: &'t McpTool,
    arguments: Map<String, Value>,
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.api_name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        self.parameters.clone()
    }

    fn output_kind(&self) -> OutputKind {
        OutputKind::Reproducible
    }

    fn prepare(&self, args: Value) -> Result<Box<dyn PreparedCall + '_>, ToolOutput> {
        let arguments = match args {
            Value::Null => Map::new(),
            Value::Object(map) => map,
            other => {
                return Err(ToolOutput::error(format!(
                    "Invalid arguments for {}: arguments must be a JSON object, got {}",
                    self.api_name, other
                )));
            }
        };
        Ok(Box::new(McpCall {
            tool: self,
            arguments,
        }))
    }
}

impl PreparedCall for McpCall<'_> {
    fn access(&self, _ctx: &ToolContext) -> Access {
        Access::NeedsApproval(ApprovalRequestKind::Mcp {
            server: self.tool.server.clone(),
            tool: self.tool.remote.clone(),
            action: McpAction::CallTool,
            arguments: preview(&Value::Object(self.arguments.clone())),
        })
    }

    fn summary(&self) -> String {
        let args = preview(&Value::Object(self.arguments.clone()));
        let short: String = args.chars().take(80).collect();
        format!("{} {short}", self.tool.remote)
    }

    fn run<'a>(self: Box<Self>, ctx: &'a ToolContext) -> ToolFuture<'a>
    where
        Self: 'a,
    {
        Box::pin(async move {
            let McpCall { tool, arguments } = *self;
            let result = tool
                .servers
                .request(
                    &tool.server,
                    Request::CallTool {
                        name: &tool.remote,
                        arguments,
                    },
                    &ctx.cancel,
                )
                .await;
            let resources = names::server_prefix(&tool.server) + RESOURCES_TOOL;
            match result {
                Ok(value) => {
                    let rendered = content::tool_result(&value, &resources);
                    let output = crate::truncate::truncate_head_tail(
                        &rendered.text,
                        ctx.limits.max_output_bytes,
                    );
                    Ok(if rendered.is_error {
                        ToolOutput::error(output)
                    } else {
                        ToolOutput::ok(output)
                    })
                }
                Err(e) => failure(e),
            }
        })
    }
}

/// An error as the model and the user see it.
fn failure(e: McpError) -> Result<ToolOutput, ToolFatal> {
    match e {
        McpError::Cancelled => Err(ToolFatal::Interrupted),
        // A server that stopped during the call: the user hears of it here. (A failed
        // start was reported by the servers when it failed.)
        e @ McpError::Closed { .. } => {
            let message = e.to_string();
            Ok(ToolOutput::error(format!("{message}.")).with_warning(message))
        }
        e => Ok(ToolOutput::error(format!("{e}."))),
    }
}

/// A compact JSON preview, cut at a character boundary.
fn preview(value: &Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_default();
    if text.chars().count() <= MAX_ARGUMENTS_PREVIEW {
        return text;
    }
    let mut cut: String = text.chars().take(MAX_ARGUMENTS_PREVIEW).collect();
    cut.push('…');
    cut
}

/// The tool that lists and reads a server's resources.
pub struct McpResources {
    servers: McpServers,
    server: String,
    api_name: String,
    description: String,
}

/// The arguments of a resources call.
#[derive(Debug, serde::Deserialize)]
pub struct ResourcesArgs {
    /// The resource to read; none (or blank) lists them.
    #[serde(default)]
    uri: Option<String>,
}

impl ResourcesArgs {
    /// The resource to read, or `None` to list them.
    fn uri(&self) -> Option<&str> {
        self.uri.as_deref().filter(|u| !u.trim().is_empty())
    }
}

impl TypedTool for McpResources {
    type Args = ResourcesArgs;
    const PLAN_USE: crate::tools::PlanUse = crate::tools::PlanUse::Offered;
    const PARAMETERS: &'static str = r#"{
        "type": "object",
        "properties": {
            "uri": {"type": "string", "description": "The resource to read; leave out to list them."}
        }
    }"#;

    fn name(&self) -> &str {
        &self.api_name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn access(&self, args: &ResourcesArgs, _ctx: &ToolContext) -> Access {
        Access::NeedsApproval(ApprovalRequestKind::Mcp {
            server: self.server.clone(),
            tool: RESOURCES_TOOL.to_string(),
            action: McpAction::ReadResource,
            arguments: args.uri().unwrap_or("(list)").to_string(),
        })
    }

    fn summary(&self, args: &ResourcesArgs) -> String {
        args.uri().unwrap_or("list").to_string()
    }

    fn execute<'a>(&'a self, args: ResourcesArgs, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let (servers, server) = (&self.servers, &self.server);
            let text = match args.uri() {
                Some(uri) => match servers
                    .request(server, Request::ReadResource { uri }, &ctx.cancel)
                    .await
                {
                    Ok(value) => content::resource_contents(&value),
                    Err(e) => return failure(e),
                },
                None => match servers.list_resources(server, &ctx.cancel).await {
                    Ok((resources, templates)) => listing(&resources, &templates),
                    Err(e) => return failure(e),
                },
            };
            Ok(ToolOutput::ok(crate::truncate::truncate_head_tail(
                &text,
                ctx.limits.max_output_bytes,
            )))
        })
    }
}

/// One line per resource and template.
fn listing(resources: &[Value], templates: &[Value]) -> String {
    let field = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let mut lines = Vec::new();
    for r in resources {
        let mut line = format!("- {}", field(r, "uri"));
        let (name, mime, desc) = (
            field(r, "name"),
            field(r, "mimeType"),
            field(r, "description"),
        );
        if !name.is_empty() {
            line.push_str(&format!(" ({name}"));
            if !mime.is_empty() {
                line.push_str(&format!(", {mime}"));
            }
            line.push(')');
        }
        if !desc.is_empty() {
            line.push_str(&format!(": {desc}"));
        }
        lines.push(line);
    }
    for t in templates {
        lines.push(format!(
            "- template {} ({}): {}",
            field(t, "uriTemplate"),
            field(t, "name"),
            field(t, "description")
        ));
    }
    if lines.is_empty() {
        "The server lists no resources.".to_string()
    } else {
        format!(
            "Resources (read one by passing its uri):\n{}",
            lines.join("\n")
        )
    }
}

/// What loading a server did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadReport {
    /// The names the model calls its tools by, in the server's order.
    pub tools: Vec<String>,
    /// Its instructions for the model.
    pub instructions: Option<String>,
    /// Its name and version.
    pub implementation: Option<String>,
}

/// Why a server's tools could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// It could not be reached or answered with an error.
    #[error(transparent)]
    Server(#[from] McpError),
    /// One of its names is taken by another tool.
    #[error(transparent)]
    Collision(#[from] crate::tools::ToolNameCollision),
}

/// Starts `server` when needed and puts its tools into `into` (replacing what it had
/// there), owned by `mcp:SERVER`.
pub async fn load(
    servers: &McpServers,
    server: &str,
    into: &LoadedTools,
) -> Result<LoadReport, LoadError> {
    let (conn, infos) = servers.tools(server).await?;
    let identity = conn.identity().clone();
    // A server may announce resources and list none: then the tool would be noise in
    // every request.
    let has_resources = identity.has_resources
        && conn
            .list_resources(
                RESOURCES_PROBE_TIMEOUT,
                &tokio_util::sync::CancellationToken::new(),
            )
            .await
            .is_ok_and(|(resources, templates)| !resources.is_empty() || !templates.is_empty());
    let mut wanted: Vec<&str> = infos.iter().map(|t| t.name.as_str()).collect();
    if has_resources {
        wanted.push(RESOURCES_TOOL);
    }
    let api = names::api_names(server, wanted);
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    for (info, (api_name, _)) in infos.iter().zip(&api) {
        let mut description: String = info
            .description
            .chars()
            .take(MAX_DESCRIPTION_CHARS)
            .collect();
        if description.trim().is_empty() {
            description = format!("The `{}` tool of MCP server `{server}`.", info.name);
        }
        tools.push(Arc::new(McpTool {
            servers: servers.clone(),
            server: server.to_string(),
            remote: info.name.clone(),
            api_name: api_name.clone(),
            description,
            parameters: schema::normalize(&info.schema),
        }));
    }
    if has_resources && let Some((api_name, _)) = api.last() {
        tools.push(Arc::new(McpResources {
            servers: servers.clone(),
            server: server.to_string(),
            api_name: api_name.clone(),
            description: format!(
                "List the resources of MCP server `{server}` (no arguments), or read one (`uri`)."
            ),
        }));
    }
    let names: Vec<String> = tools.iter().map(|t| t.name().to_string()).collect();
    into.load(&owner(server), tools)?;
    Ok(LoadReport {
        tools: names,
        instructions: identity.instructions,
        implementation: identity.implementation,
    })
}

/// The tool result of a load, for the model.
pub fn loaded_text(server: &str, report: &LoadReport) -> String {
    let mut out = format!("<mcp-server-loaded name=\"{server}\">\n");
    out.push_str(&format!("MCP server \"{server}\""));
    if let Some(imp) = &report.implementation {
        out.push_str(&format!(" ({imp})"));
    }
    if report.tools.is_empty() {
        out.push_str(" is loaded but offers no tools.");
    } else {
        out.push_str(&format!(
            " is loaded. Its tools are callable from your next step: {}.",
            report.tools.join(", ")
        ));
    }
    out.push_str(&format!(
        " unload_skill(\"mcp:{server}\") removes them when you are done."
    ));
    if let Some(instructions) = &report.instructions {
        out.push_str("\n\nThe server's instructions:\n");
        out.push_str(instructions.trim());
    }
    out.push_str("\n</mcp-server-loaded>");
    out
}
