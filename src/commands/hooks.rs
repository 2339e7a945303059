//! `harness9 hooks list|trust|untrust`: every configured hook with whether it is in
//! force (and why not), or the project's hooks trusted (shown first, then recorded
//! exactly as shown) or forgotten. Hooks, matchers and paths come from files a
//! repository may have written: what is printed has its control characters made
//! visible (text) or escaped (JSON).

use std::io::{self, Write};

use crate::agent::hooks_session;
use crate::cli::HooksAction;
use crate::config::Config;
use crate::hooks::{self, TrustError};
use crate::protocol::{HookLineKind, HookListing, describe_hooks};
use crate::sink::Sink;
use crate::subcommand::Kind;

/// Why a `hooks` subcommand failed.
#[derive(Debug, thiserror::Error)]
pub enum HooksCliError {
    /// The trust list could not be read or written.
    #[error(transparent)]
    Trust(#[from] TrustError),
    /// Standard output failed.
    #[error("cannot write the output: {0}")]
    Output(#[from] io::Error),
}

impl HooksCliError {
    /// The kind of failure, for the exit code: a trust list that does not parse is the
    /// user's to fix (a usage error), a file that cannot be read or written internal.
    pub fn kind(&self) -> Kind {
        match self {
            HooksCliError::Trust(TrustError::Parse { .. }) => Kind::Usage,
            HooksCliError::Trust(TrustError::Io(_)) | HooksCliError::Output(_) => Kind::Internal,
        }
    }
}

/// Runs one `hooks` action.
pub(super) fn run(config: &Config, action: &HooksAction) -> Result<(), super::CommandError> {
    let project = &config.project_hooks;
    let text = match action {
        HooksAction::List { json: true } => {
            let json = serde_json::to_string_pretty(&hooks_session::listing(config))
                .map_err(io::Error::other)
                .map_err(HooksCliError::from)?;
            format!("{}\n", crate::safe_text::escape_json(&json))
        }
        HooksAction::List { json: false } => {
            let lines: Vec<String> = describe_hooks(&hooks_session::listing(config))
                .into_iter()
                .map(|l| l.text)
                .collect();
            neutral_lines(&lines)
        }
        HooksAction::Trust => {
            let shown = HookListing {
                hooks: project.listing(&hooks::HookSet::new()).hooks,
                problems: project.problems.clone(),
            };
            let mut text = if shown.hooks.is_empty() {
                format!(
                    "{} configures no hooks (.harness9/hooks.toml, .claude/settings.json, \
                     .claude/settings.local.json); nothing to trust.\n",
                    project.root.display()
                )
            } else {
                let mut text = format!(
                    "Trusting these {} hook(s) of {} on this machine, exactly as they are now \
                     (with the scripts they name in the project):\n",
                    shown.hooks.len(),
                    project.root.display()
                );
                let lines: Vec<String> = describe_hooks(&shown)
                    .into_iter()
                    .filter(|l| l.kind != HookLineKind::Summary)
                    .map(|l| l.text)
                    .collect();
                text.push_str(&neutral_lines(&lines));
                text
            };
            let count = hooks::trust(&config.home, project).map_err(HooksCliError::from)?;
            if count > 0 {
                text.push_str(
                    "Trusted. They run from the next session on; a hook added or changed \
                     later is not in force until you trust it again.\n",
                );
            }
            text
        }
        HooksAction::Untrust => {
            let had = hooks::untrust(&config.home, &project.root).map_err(HooksCliError::from)?;
            let root = project.root.display();
            if had {
                format!("The hooks of {root} are no longer trusted; none of them runs.\n")
            } else {
                format!("No hooks of {root} were trusted.\n")
            }
        }
    };
    let mut out = Sink::new(io::stdout().lock());
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(HooksCliError::from)?;
    Ok(())
}

/// `lines` neutralized, one per line.
fn neutral_lines(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| format!("{}\n", crate::safe_text::neutralize(l)))
        .collect()
}
