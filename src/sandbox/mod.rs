//! The OS sandbox for the commands harness9 starts for the model (bash, skill_run,
//! tools.json tools, inline `` !`cmd` ``): what a sandbox allows ([`SandboxPolicy`]:
//! write access only beneath the project, the temp folders and configured paths, and no
//! network unless allowed), whether this system can enforce it ([`availability`]), the
//! session's sandbox ([`configure`], set once at start-up like the secrets policy), and
//! how a confined command is started: harness9 re-executes itself as a small launcher
//! ([`launcher`]) that confines its own process with Landlock and a seccomp filter and
//! then `exec`s the command, so no `unsafe` `pre_exec` hook is needed.
//!
//! It also words the note added to a command's output when it probably failed because
//! of the sandbox ([`denial_note`]). It must not know tools, the model or approvals.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::protocol::ApprovalMode;

pub mod launcher;
#[cfg(target_os = "linux")]
mod linux;

/// The first argument that makes the binary a launcher instead of harness9.
pub const LAUNCHER_MARKER: &str = "__harness9-sandbox-exec";

/// How commands are confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Nothing may be written but `/dev/null`.
    ReadOnly,
    /// Writes only beneath the project, the temp folders and configured paths.
    WorkspaceWrite,
    /// No sandbox.
    Off,
}

impl SandboxMode {
    /// As written on the command line and in config.toml.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::Off => "off",
        }
    }
}

/// Whether confined commands may use the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Network {
    /// No sockets except Unix domain sockets (the default).
    #[default]
    Deny,
    /// The network as the user has it.
    Allow,
}

/// What a confined command may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// Read-only or workspace-write (never off: then there is no policy).
    pub mode: SandboxMode,
    /// Where it may write (beneath each), besides `/dev/null`; empty in read-only.
    pub writable: Vec<PathBuf>,
    /// Whether it may use the network.
    pub network: Network,
}

impl SandboxPolicy {
    /// The policy for a session in `project`: in workspace-write the project, the temp
    /// folders and `extra` are writable.
    pub fn new(mode: SandboxMode, project: &Path, extra: &[PathBuf], network: Network) -> Self {
        let mut writable = Vec::new();
        if mode == SandboxMode::WorkspaceWrite {
            writable.push(project.to_path_buf());
            writable.push(std::env::temp_dir());
            writable.push(PathBuf::from("/tmp"));
            // Shared memory, for Python's multiprocessing and the like.
            writable.push(PathBuf::from("/dev/shm"));
            writable.extend(extra.iter().cloned());
            writable.dedup();
        }
        SandboxPolicy {
            mode,
            writable,
            network,
        }
    }

    /// This policy with writes allowed only beneath `writable` (workspace-write, the
    /// same network rule), for a command that must keep to its own folders.
    pub fn writing_only(&self, writable: &[PathBuf]) -> SandboxPolicy {
        SandboxPolicy {
            mode: SandboxMode::WorkspaceWrite,
            writable: writable.to_vec(),
            network: self.network,
        }
    }

    /// The launcher's arguments before `--`: mode, network and writable paths.
    pub fn launcher_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![
            LAUNCHER_MARKER.into(),
            "--mode".into(),
            self.mode.as_str().into(),
            "--network".into(),
            match self.network {
                Network::Deny => "deny".into(),
                Network::Allow => "allow".into(),
            },
        ];
        for path in &self.writable {
            args.push("--write".into());
            args.push(path.clone().into_os_string());
        }
        args
    }

    /// A few words for notes: what the sandbox allows.
    pub fn describe(&self) -> String {
        let writes = match self.mode {
            SandboxMode::ReadOnly => "no writes".to_string(),
            _ => format!(
                "writes only in {}",
                self.writable
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let network = match self.network {
            Network::Deny => "no network",
            Network::Allow => "network allowed",
        };
        format!("{writes}; {network}")
    }
}

/// The sandbox as configured, before this system's support is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    /// The mode, and whether someone chose it.
    pub mode: SandboxChoice,
    /// Whether confined commands may use the network.
    pub network: Network,
    /// More folders confined commands may write beneath.
    pub writable_paths: Vec<PathBuf>,
    /// `HARNESS9_SANDBOX_UNAVAILABLE=1`: act as if the kernel had no Landlock (tests).
    pub simulate_unavailable: bool,
}

/// The sandbox mode and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxChoice {
    /// `--sandbox`, `HARNESS9_SANDBOX` or config.toml named it.
    Chosen(SandboxMode),
    /// Nobody did: the approval mode's default.
    Default(SandboxMode),
}

impl SandboxChoice {
    /// The mode either way.
    pub fn mode(self) -> SandboxMode {
        match self {
            SandboxChoice::Chosen(mode) | SandboxChoice::Default(mode) => mode,
        }
    }
}

/// What the session does about the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Commands run confined by this policy.
    Confined(SandboxPolicy),
    /// Commands run unconfined; the warning says why when it was not the user's choice.
    Unconfined {
        /// A start-up warning, if any.
        warning: Option<String>,
    },
}

/// Why a session cannot start with the sandbox as configured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxRefusal {
    /// A sandbox was asked for and this system cannot enforce it.
    #[error(
        "--sandbox {mode} was asked for, but {reason}; run with --sandbox off to accept \
         unconfined commands"
    )]
    Unavailable {
        /// The mode asked for.
        mode: &'static str,
        /// Why it cannot be enforced.
        reason: String,
    },
    /// `full-auto` without a sandbox was not chosen explicitly.
    #[error(
        "--approval-mode full-auto runs commands without asking, and the sandbox that confines \
         them is not available: {reason}. Run with --sandbox off to accept unconfined commands"
    )]
    FullAutoUnconfined {
        /// Why the sandbox is not available.
        reason: String,
    },
}

/// Decides the session's sandbox: the configured mode if this system can enforce it;
/// otherwise a refusal when a sandbox was asked for or `full-auto` would run unconfined
/// by default, else unconfined with a warning.
pub fn decide(
    settings: &SandboxSettings,
    approval_mode: ApprovalMode,
    project: &Path,
) -> Result<Decision, SandboxRefusal> {
    let mode = settings.mode.mode();
    if mode == SandboxMode::Off {
        return Ok(Decision::Unconfined { warning: None });
    }
    match (availability(settings.simulate_unavailable), settings.mode) {
        (Availability::Available, _) => Ok(Decision::Confined(SandboxPolicy::new(
            mode,
            project,
            &settings.writable_paths,
            settings.network,
        ))),
        (Availability::Unavailable { reason }, SandboxChoice::Chosen(mode)) => {
            Err(SandboxRefusal::Unavailable {
                mode: mode.as_str(),
                reason,
            })
        }
        (Availability::Unavailable { reason }, SandboxChoice::Default(_))
            if approval_mode == ApprovalMode::FullAuto =>
        {
            Err(SandboxRefusal::FullAutoUnconfined { reason })
        }
        (Availability::Unavailable { reason }, SandboxChoice::Default(_)) => {
            Ok(Decision::Unconfined {
                warning: Some(format!(
                    "commands run unconfined: the sandbox is not available ({reason}); \
                     `--sandbox off` silences this"
                )),
            })
        }
    }
}

/// Whether this system can enforce a sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// Landlock works here.
    Available,
    /// It cannot: why, in words for a person.
    Unavailable {
        /// Why.
        reason: String,
    },
}

/// Whether Landlock can confine commands on this system (one cheap system call).
/// `simulate_unavailable` is the test hook `HARNESS9_SANDBOX_UNAVAILABLE=1`.
pub fn availability(simulate_unavailable: bool) -> Availability {
    if simulate_unavailable {
        return Availability::Unavailable {
            reason: "HARNESS9_SANDBOX_UNAVAILABLE is set".into(),
        };
    }
    platform_availability()
}

#[cfg(target_os = "linux")]
fn platform_availability() -> Availability {
    linux::availability()
}

#[cfg(not(target_os = "linux"))]
fn platform_availability() -> Availability {
    Availability::Unavailable {
        reason: format!(
            "harness9's sandbox uses Linux Landlock, and this is {}",
            std::env::consts::OS
        ),
    }
}

/// The session's sandbox: the policy and the program that applies it.
#[derive(Debug, Clone)]
pub struct SessionSandbox {
    /// What confined commands may do.
    pub policy: Arc<SandboxPolicy>,
    /// The launcher (this binary).
    pub launcher: PathBuf,
}

static SESSION: OnceLock<SessionSandbox> = OnceLock::new();

/// Sets the session's sandbox, once, at start-up; every command started with
/// `exec::Confinement::SessionSandbox` from then on is confined by it.
pub fn configure(sandbox: SessionSandbox) {
    let _ = SESSION.set(sandbox);
}

/// The session's sandbox, if one was configured.
pub fn session() -> Option<&'static SessionSandbox> {
    SESSION.get()
}

/// The note added to a confined command's output when it failed in a way the sandbox
/// causes (a write refused, a socket refused, a name not resolved), naming what would
/// allow it. `None` when the output shows no such sign.
pub fn denial_note(policy: &SandboxPolicy, output: &str) -> Option<String> {
    const FILE_SIGNS: &[&str] = &[
        "Permission denied",
        "Operation not permitted",
        "Read-only file system",
        "EACCES",
        "EPERM",
    ];
    const NETWORK_SIGNS: &[&str] = &[
        "Network is unreachable",
        "Could not resolve host",
        "Temporary failure in name resolution",
        "Name or service not known",
        "nodename nor servname",
        "socket: Operation not permitted",
        "Failed to connect",
        "Connection refused",
        "failed to lookup address",
        "Couldn't connect to server",
        "getaddrinfo",
    ];
    let network =
        policy.network == Network::Deny && NETWORK_SIGNS.iter().any(|s| output.contains(s));
    let files = FILE_SIGNS.iter().any(|s| output.contains(s));
    if !network && !files {
        return None;
    }
    let mut ways = vec!["`--sandbox off`".to_string()];
    if network {
        ways.push("`network = \"allow\"` under [sandbox] in config.toml".into());
    }
    if files {
        ways.push(match policy.mode {
            SandboxMode::ReadOnly => "`--sandbox workspace-write`".into(),
            _ => "the folder in `writable_paths` under [sandbox] in config.toml".into(),
        });
    }
    Some(format!(
        "[harness9 sandbox: this command ran under --sandbox {} ({}); if it failed because of \
         that, the user can allow it with {}]",
        policy.mode.as_str(),
        policy.describe(),
        ways.join(" or ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_contains;

    #[test]
    fn workspace_write_writes_beneath_the_project_the_temp_folders_and_extras() {
        let p = SandboxPolicy::new(
            SandboxMode::WorkspaceWrite,
            Path::new("/p"),
            &[PathBuf::from("/home/u/.cargo")],
            Network::Deny,
        );
        assert!(p.writable.contains(&PathBuf::from("/p")));
        assert!(p.writable.contains(&PathBuf::from("/tmp")));
        assert!(p.writable.contains(&PathBuf::from("/home/u/.cargo")));
        let read_only =
            SandboxPolicy::new(SandboxMode::ReadOnly, Path::new("/p"), &[], Network::Deny);
        assert!(read_only.writable.is_empty());
        let args: Vec<String> = p
            .launcher_args()
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            &args[..5],
            [
                LAUNCHER_MARKER,
                "--mode",
                "workspace-write",
                "--network",
                "deny"
            ]
        );
        assert!(args.windows(2).any(|w| w == ["--write", "/p"]));
    }

    #[test]
    fn the_note_names_what_would_allow_the_command() {
        let p = SandboxPolicy::new(
            SandboxMode::WorkspaceWrite,
            Path::new("/p"),
            &[],
            Network::Deny,
        );
        let note = denial_note(&p, "touch: cannot touch '/etc/x': Permission denied").unwrap();
        assert!(
            note.contains("--sandbox off") && note.contains("writable_paths"),
            "{note}"
        );
        let note = denial_note(&p, "curl: (6) Could not resolve host: example.com").unwrap();
        assert_contains(&note, "network = \"allow\"");
        assert!(denial_note(&p, "error: test failed").is_none());
        let open = SandboxPolicy::new(
            SandboxMode::WorkspaceWrite,
            Path::new("/p"),
            &[],
            Network::Allow,
        );
        assert!(denial_note(&open, "Could not resolve host: x").is_none());
    }

    #[test]
    fn a_simulated_missing_landlock_is_unavailable() {
        assert!(matches!(
            availability(true),
            Availability::Unavailable { .. }
        ));
    }
}
