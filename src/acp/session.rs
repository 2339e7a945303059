//! Opening ACP sessions: what `session/new` and `session/load` ask for (the editor's
//! working directory, its MCP servers, a new or a saved conversation) as an
//! [`OpenRequest`], handed to an [`Opener`] that turns it into a prepared session, and why
//! it could not ([`OpenError`]).
//!
//! The opener is the caller's (`launch`): the configuration, the sandbox and the saved
//! sessions are resolved there, for the editor's directory, exactly as when harness9
//! starts in it. This module must not know how; it only checks what ACP itself requires
//! (an absolute `cwd`) and makes the editor's MCP servers harness9's definitions
//! ([`ServerOrigin::Editor`]: the editor's choice, trusted like a command-line flag).

use std::future::Future;
use std::path::{Path, PathBuf};

use agent_client_protocol_schema::v1::McpServer;

use crate::mcp::config::{
    DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, Enabled, McpServerConfig, McpTransport, Preload,
    ServerOrigin, ServerSandbox, Trust, check_name,
};
use crate::session::Prepared;

/// The answer to `authenticate`: harness9 offers no login (none is advertised), its
/// model endpoint is configured.
pub const NO_LOGIN: &str = "harness9 has no sign-in: it sends the key in OPENAI_API_KEY (or \
     the variable api_key_env names in config.toml) to the endpoint of OPENAI_BASE_URL (or \
     base_url in $HARNESS9_HOME/config.toml, by default ~/.harness9/config.toml): set them \
     in the agent's environment in the editor's settings, then start a session again";

/// Which conversation the session starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conversation {
    /// A new one (`session/new`).
    New,
    /// The saved session with this id (`session/load`).
    Load {
        /// The id as the editor gave it (a harness9 session id).
        id: String,
    },
}

/// What the editor asked a session to be.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenRequest {
    /// The working directory: absolute, as ACP requires (not yet resolved).
    pub cwd: PathBuf,
    /// The editor's MCP servers, as harness9 definitions.
    pub mcp_servers: Vec<McpServerConfig>,
    /// New or loaded.
    pub conversation: Conversation,
}

/// Why a session was not opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    /// No model endpoint is configured: the message says exactly what to set.
    #[error("{advice}")]
    NoEndpoint {
        /// What to set, for people.
        advice: String,
    },
    /// The request cannot be served as given (a directory that is not one, a session
    /// that cannot be found or is in use, a directory this process does not serve).
    #[error("{reason}")]
    Refused {
        /// Why, for people.
        reason: String,
    },
    /// Something went wrong here.
    #[error("{reason}")]
    Failed {
        /// What, for people.
        reason: String,
    },
}

/// Turns an [`OpenRequest`] into a session ready to spawn.
pub trait Opener {
    /// Opens one session (called once per `session/new` or `session/load`).
    fn open(&mut self, request: OpenRequest) -> impl Future<Output = Result<Prepared, OpenError>>;
}

/// The request `session/new` or `session/load` makes, or why its parameters are refused.
pub fn request(
    cwd: &Path,
    servers: &[McpServer],
    conversation: Conversation,
) -> Result<OpenRequest, OpenError> {
    if !cwd.is_absolute() {
        return Err(OpenError::Refused {
            reason: format!(
                "cwd must be an absolute path (ACP requires it), not {:?}",
                cwd.display().to_string()
            ),
        });
    }
    let mut mcp_servers = Vec::with_capacity(servers.len());
    for server in servers {
        let server = editor_server(server)?;
        if mcp_servers
            .iter()
            .any(|s: &McpServerConfig| s.name == server.name)
        {
            return Err(OpenError::Refused {
                reason: format!("two MCP servers are called {:?}", server.name),
            });
        }
        mcp_servers.push(server);
    }
    Ok(OpenRequest {
        cwd: cwd.to_path_buf(),
        mcp_servers,
        conversation,
    })
}

/// One of the editor's MCP servers as harness9's definition: stdio and streamable HTTP;
/// SSE (not offered in the capabilities) is refused, as is a name harness9 cannot use.
fn editor_server(server: &McpServer) -> Result<McpServerConfig, OpenError> {
    let (name, transport) = match server {
        McpServer::Stdio(stdio) => (
            &stdio.name,
            McpTransport::Stdio {
                command: stdio.command.to_string_lossy().into_owned(),
                args: stdio.args.clone(),
                env: stdio
                    .env
                    .iter()
                    .map(|v| (v.name.clone(), v.value.clone()))
                    .collect(),
                env_vars: Vec::new(),
                cwd: None,
                sandbox: ServerSandbox::Unconfined,
            },
        ),
        McpServer::Http(http) => (
            &http.name,
            McpTransport::Http {
                url: http.url.clone(),
                headers: http
                    .headers
                    .iter()
                    .map(|h| (h.name.clone(), h.value.clone()))
                    .collect(),
                bearer_token_env: None,
            },
        ),
        McpServer::Sse(sse) => {
            return Err(OpenError::Refused {
                reason: format!(
                    "MCP server {:?} uses SSE, which harness9 does not speak: give it as \
                     streamable HTTP or stdio",
                    sse.name
                ),
            });
        }
        _ => {
            return Err(OpenError::Refused {
                reason: "an MCP server of a transport harness9 does not speak".into(),
            });
        }
    };
    check_name(name).map_err(|e| OpenError::Refused {
        reason: format!("MCP server {name:?}: {e}"),
    })?;
    Ok(McpServerConfig {
        name: name.clone(),
        transport,
        enabled: Enabled::Yes,
        preload: Preload::OnFirstUse,
        startup_timeout: DEFAULT_STARTUP_TIMEOUT,
        tool_timeout: DEFAULT_TOOL_TIMEOUT,
        description: None,
        origin: ServerOrigin::Editor,
        trust: Trust::Trusted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn servers(value: serde_json::Value) -> Vec<McpServer> {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_relative_cwd_is_refused() {
        for cwd in ["", ".", "project", "./x", "~/x"] {
            assert!(
                matches!(
                    request(Path::new(cwd), &[], Conversation::New),
                    Err(OpenError::Refused { .. })
                ),
                "{cwd:?}"
            );
        }
        assert!(request(Path::new("/tmp"), &[], Conversation::New).is_ok());
    }

    #[test]
    fn stdio_and_http_servers_become_trusted_editor_definitions() {
        let given = servers(json!([
            {"name": "files", "command": "/bin/srv", "args": ["-v"],
             "env": [{"name": "TOKEN", "value": "t"}]},
            {"type": "http", "name": "web", "url": "http://127.0.0.1:1/mcp",
             "headers": [{"name": "X-A", "value": "b"}]},
        ]));
        let opened = request(Path::new("/tmp"), &given, Conversation::New).unwrap();
        let [files, web] = &opened.mcp_servers[..] else {
            panic!("{:?}", opened.mcp_servers)
        };
        assert!(files.usable() && web.usable());
        assert_eq!(files.origin, ServerOrigin::Editor);
        assert_eq!(files.target(), "/bin/srv -v");
        let McpTransport::Stdio { env, sandbox, .. } = &files.transport else {
            panic!("{files:?}")
        };
        assert_eq!(env.get("TOKEN").map(String::as_str), Some("t"));
        assert_eq!(*sandbox, ServerSandbox::Unconfined);
        let McpTransport::Http { url, headers, .. } = &web.transport else {
            panic!("{web:?}")
        };
        assert_eq!(url, "http://127.0.0.1:1/mcp");
        assert_eq!(headers.get("X-A").map(String::as_str), Some("b"));
    }

    #[test]
    fn sse_bad_names_and_twins_are_refused() {
        for bad in [
            json!([{"type": "sse", "name": "s", "url": "http://x", "headers": []}]),
            json!([{"name": "a__b", "command": "x", "args": [], "env": []}]),
            json!([{"name": "", "command": "x", "args": [], "env": []}]),
            json!([{"name": "a", "command": "x", "args": [], "env": []},
                   {"name": "a", "command": "y", "args": [], "env": []}]),
        ] {
            assert!(
                matches!(
                    request(Path::new("/tmp"), &servers(bad.clone()), Conversation::New),
                    Err(OpenError::Refused { .. })
                ),
                "{bad}"
            );
        }
    }
}
