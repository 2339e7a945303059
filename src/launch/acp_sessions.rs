//! `harness9 acp`'s sessions, opened when the editor asks (`session/new`,
//! `session/load`), never before `initialize` is answered: the first one resolves the
//! configuration for the editor's `cwd` exactly as `harness9 -C cwd` would (the project's
//! config, rules, hooks and MCP servers judged the same way), seals the secrets, sets up
//! the sandbox and logging; each one adds the editor's MCP servers to its own copy and
//! is prepared like any session.
//!
//! The sandbox and the sealed secrets belong to the process, so one `harness9 acp` serves
//! one directory: a session asked for in another is refused with what to do. It must not
//! know the ACP wire.

use crate::acp::session::{Conversation, OpenError, OpenRequest, Opener};
use crate::agent::Approver;
use crate::agent::saved::SessionStart;
use crate::cli::Cli;
use crate::config::{Config, ConfigError};
use crate::session::{self, Prepared};
use crate::skills::remote::RemoteRoots;

use super::LaunchError;

/// Opens the sessions of one `harness9 acp`.
pub(super) struct AcpSessions<'a> {
    cli: &'a Cli,
    /// What the first session resolved, shared by the later ones.
    served: Option<Served>,
}

/// The directory this process serves, as resolved for its first session.
#[derive(Clone)]
struct Served {
    config: Config,
    remote: RemoteRoots,
    home_warning: Option<String>,
}

impl<'a> AcpSessions<'a> {
    pub(super) fn new(cli: &'a Cli) -> Self {
        AcpSessions { cli, served: None }
    }

    /// The configuration for `request`'s directory (a copy): resolved (and the process
    /// set up) for the first session; the same for later ones in that directory.
    async fn served(&mut self, request: &OpenRequest) -> Result<Served, OpenError> {
        if let Some(served) = &self.served {
            let same = request
                .cwd
                .canonicalize()
                .is_ok_and(|cwd| cwd == served.config.workdir);
            if !same {
                return Err(OpenError::Refused {
                    reason: format!(
                        "this harness9 acp serves {} (its sandbox is set up for it): start \
                         another harness9 acp for sessions in {}",
                        served.config.workdir.display(),
                        request.cwd.display()
                    ),
                });
            }
            return Ok(served.clone());
        }
        let mut overrides = self.cli.overrides();
        overrides.workdir = Some(request.cwd.clone());
        let config = super::configure_with(self.cli, &overrides).map_err(opening_failed)?;
        let home = crate::startup::init_logging(&config);
        let remote = session::sync_remote_skills(&config).await;
        // A sandbox launcher waiting before the first command needs one.
        tokio::spawn(crate::exec::warm_up());
        let served = Served {
            config,
            remote,
            home_warning: home.warning().map(ToString::to_string),
        };
        self.served = Some(served.clone());
        Ok(served)
    }
}

impl Opener for AcpSessions<'_> {
    async fn open(&mut self, request: OpenRequest) -> Result<Prepared, OpenError> {
        let Served {
            mut config,
            remote,
            home_warning,
        } = self.served(&request).await?;
        config.mcp.add_editor_servers(request.mcp_servers);
        let start = match &request.conversation {
            Conversation::New => SessionStart::New,
            Conversation::Load { id } => loadable(&config, id)?,
        };
        let mut prepared = session::prepare_with_remote(&config, Approver::Frontend, remote, start)
            .map_err(|e| OpenError::Refused {
                reason: e.to_string(),
            })?;
        if let Some(warning) = home_warning {
            prepared.info.startup_warnings.insert(0, warning);
        }
        Ok(prepared)
    }
}

/// The saved session `id` names exactly, when it can be gone on with.
fn loadable(config: &Config, id: &str) -> Result<SessionStart, OpenError> {
    let refused = |reason: String| OpenError::Refused { reason };
    let sessions = session::live_sessions(config).ok_or_else(|| {
        refused("sessions are not saved in this run, so none can be loaded".into())
    })?;
    let found = sessions.find_id(id).map_err(refused)?;
    if found.as_str() != id {
        return Err(refused(format!("no saved session has the id {id:?}")));
    }
    if let Some(reason) = sessions.in_use(&found) {
        return Err(refused(reason));
    }
    Ok(SessionStart::Resume(found))
}

/// A session that could not be set up, as the editor is told: no endpoint is the one
/// to log in for (the message says what to set), the user's mistakes are refusals.
fn opening_failed(e: LaunchError) -> OpenError {
    match e {
        LaunchError::Config(ConfigError::NoEndpoint { .. }) => OpenError::NoEndpoint {
            advice: e.to_string(),
        },
        e => match e.kind() {
            crate::protocol::ErrorKind::Usage => OpenError::Refused {
                reason: e.to_string(),
            },
            _ => OpenError::Failed {
                reason: e.to_string(),
            },
        },
    }
}
