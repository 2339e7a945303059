//! `harness9 permissions list|trust`: the rules in force, numbered, with where each came
//! from (and the project's allow rules not yet approved), or the project's allow rules
//! approved for this machine. Rules and paths come from files anyone may have written:
//! what is printed has its control characters made visible.

use std::io::{self, Write};

use crate::cli::PermissionsAction;
use crate::config::Config;
use crate::permissions::files::{self, PermissionsError};
use crate::sink::Sink;
use crate::subcommand::Kind;

/// Why a `permissions` subcommand failed.
#[derive(Debug, thiserror::Error)]
pub enum PermissionsCliError {
    /// The project's rules or the trust list could not be read or written.
    #[error(transparent)]
    Rules(#[from] PermissionsError),
    /// Standard output failed.
    #[error("cannot write the output: {0}")]
    Output(#[from] io::Error),
}

impl PermissionsCliError {
    /// The kind of failure, for the exit code: a rule file the user must fix is a
    /// usage error (as it is when a session starts), a file that cannot be read or
    /// written internal.
    pub fn kind(&self) -> Kind {
        match self {
            PermissionsCliError::Rules(
                PermissionsError::Parse { .. }
                | PermissionsError::Rule { .. }
                | PermissionsError::CommandLine { .. },
            ) => Kind::Usage,
            PermissionsCliError::Rules(PermissionsError::Io { .. })
            | PermissionsCliError::Output(_) => Kind::Internal,
        }
    }
}

/// Runs one `permissions` action.
pub(super) fn run(config: &Config, action: &PermissionsAction) -> Result<(), super::CommandError> {
    let setup = &config.permissions;
    let project_file = setup.places.project_file();
    let text = match action {
        PermissionsAction::List => {
            crate::permissions::describe_list(&setup.book.list(), &setup.untrusted, &project_file)
        }
        PermissionsAction::Trust => {
            let approved =
                files::trust_project(&setup.places).map_err(PermissionsCliError::from)?;
            if approved.is_empty() {
                format!(
                    "{} has no allow rules to approve.\n",
                    project_file.display()
                )
            } else {
                format!(
                    "Approved {} allow rule(s) of {} for this machine:\n{}",
                    approved.len(),
                    project_file.display(),
                    approved
                        .iter()
                        .map(|r| format!("  allow  {r}\n"))
                        .collect::<String>()
                )
            }
        }
    };
    let mut out = Sink::new(io::stdout().lock());
    out.write_all(crate::safe_text::neutralize(&text).as_bytes())
        .and_then(|()| out.flush())
        .map_err(PermissionsCliError::from)?;
    Ok(())
}
