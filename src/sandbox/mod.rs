//! The OS sandbox for the commands harness9 starts for the model (bash, skill_run,
//! tools.json tools, inline `` !`cmd` ``) and for MCP servers with `sandbox = true`: what
//! a sandbox allows ([`SandboxPolicy`], in `policy`: writes only beneath the project, the
//! temp folders and configured paths, with the project's git hooks and config and its
//! `.harness9/` kept read-only, the user's secrets masked, and no network unless
//! allowed), whether this system can enforce it ([`availability`], and a start-up probe
//! of the namespaces), the session's sandbox ([`configure`], set once at start-up like
//! the secrets policy), and how a confined command is started: harness9 re-executes
//! itself as a small launcher ([`launcher`]) that builds user, mount and PID namespaces
//! (a read-only file system with masks and a fresh `/proc`), confines itself with
//! Landlock and a seccomp filter, and runs the command, so no `unsafe` `pre_exec` hook
//! is needed; a launcher started ahead takes the same arguments as a [`job`] on its
//! stdin. The project's secret files are found by `project_secrets`.
//!
//! It also words the note added to a command's output when it probably failed because
//! of the sandbox ([`denial_note`]) and the start-up warning when the namespaces are
//! missing ([`startup_warning`]). It must not know tools, the model or approvals.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::protocol::ApprovalMode;

pub mod job;
pub mod launcher;
#[cfg(target_os = "linux")]
mod linux;
mod policy;
mod probe_cache;
pub mod project_secrets;

pub use policy::{
    HOME_SECRETS, Namespaces, Network, PROTECTED_IN_PROJECT, SandboxPolicy, SecretPlaces,
    protected_paths, secret_paths,
};

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

/// The sandbox as configured, before this system's support is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    /// The mode, and whether someone chose it.
    pub mode: SandboxChoice,
    /// Whether confined commands may use the network.
    pub network: Network,
    /// More folders confined commands may write beneath.
    pub writable_paths: Vec<PathBuf>,
    /// What confined commands may not read.
    pub secrets: SecretPlaces,
    /// `HARNESS9_SANDBOX_UNAVAILABLE=1`: act as if the kernel had no Landlock (tests).
    pub simulate_unavailable: bool,
    /// Whether to find out if this system can build the namespaces.
    pub namespaces: NamespacesProbe,
}

/// How the session learns whether the launcher can build namespaces here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NamespacesProbe {
    /// Start the launcher once at start-up and see (the default).
    #[default]
    Run,
    /// `HARNESS9_SANDBOX_NO_NAMESPACES=1`: act as if it could not (tests).
    SimulateUnavailable,
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
/// by default, else unconfined with a warning. `project` is the working folder (writable
/// in workspace-write), `root` the project root whose secret files are masked.
pub fn decide(
    settings: &SandboxSettings,
    approval_mode: ApprovalMode,
    project: &Path,
    root: &Path,
) -> Result<Decision, SandboxRefusal> {
    let mode = settings.mode.mode();
    if mode == SandboxMode::Off {
        return Ok(Decision::Unconfined { warning: None });
    }
    match (availability(settings.simulate_unavailable), settings.mode) {
        (Availability::Available, _) => Ok(Decision::Confined(
            SandboxPolicy::new(mode, project, &settings.writable_paths, settings.network)
                .hiding(&settings.secrets)
                .with_namespaces(namespace_support(
                    settings.namespaces,
                    settings.secrets.harness9_home.as_deref(),
                ))
                .with_secrets_root(root),
        )),
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
    /// The launcher (this binary; [`LAUNCHER_BINARY`] beside it is used instead).
    pub launcher: PathBuf,
}

/// The launcher's own binary (`src/bin/harness9-sandbox.rs`), started instead of
/// harness9 when it sits beside harness9's binary: it starts faster.
pub const LAUNCHER_BINARY: &str = "harness9-sandbox";

impl SessionSandbox {
    /// The command that runs `program` with `args` in this sandbox: the launcher with the
    /// policy's arguments (see [`SandboxPolicy::launcher_args`]).
    pub fn command<I, S>(&self, program: &std::ffi::OsStr, args: I) -> std::process::Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        command_for(&self.launcher, &self.policy, program, args)
    }
}

/// The launcher to start for harness9's binary `harness9`: [`LAUNCHER_BINARY`] beside it
/// when that is an executable file, else `harness9` itself.
pub fn launcher_program(harness9: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let small = harness9.with_file_name(LAUNCHER_BINARY);
    match std::fs::metadata(&small) {
        Ok(meta) if meta.is_file() && meta.permissions().mode() & 0o111 != 0 => small,
        _ => harness9.to_path_buf(),
    }
}

/// The launcher command for `policy` (see [`SessionSandbox::command`]).
pub fn command_for<I, S>(
    launcher: &Path,
    policy: &SandboxPolicy,
    program: &std::ffi::OsStr,
    args: I,
) -> std::process::Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut command = std::process::Command::new(launcher_program(launcher));
    command
        .args(policy.launcher_args())
        .arg("--")
        .arg(program)
        .args(args);
    command
}

static SESSION: OnceLock<SessionSandbox> = OnceLock::new();

/// Sets the session's sandbox, once, at start-up; every command started with
/// `exec::Confinement::SessionSandbox` from then on is confined by it. With namespaces,
/// the walk for the project's secret files starts now, in the background.
pub fn configure(sandbox: SessionSandbox) {
    if sandbox.policy.namespaces == Namespaces::On {
        project_secrets::start(&sandbox.policy.secrets_root);
    }
    let _ = SESSION.set(sandbox);
}

/// The session's sandbox, if one was configured.
pub fn session() -> Option<&'static SessionSandbox> {
    SESSION.get()
}

/// Where a read-only sandbox would be built when the session has none (set at start-up
/// by [`prepare_read_only`]; built only when a read-only command first needs it).
struct ReadOnlyPlaces {
    settings: SandboxSettings,
    project: PathBuf,
    root: PathBuf,
}

static READ_ONLY_PLACES: OnceLock<ReadOnlyPlaces> = OnceLock::new();
static READ_ONLY_BUILT: OnceLock<Result<SessionSandbox, ReadOnlyRefusal>> = OnceLock::new();

/// Why a read-only command cannot be confined, so it does not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadOnlyRefusal {
    /// This system cannot enforce a sandbox.
    #[error(
        "plan mode runs commands only inside the read-only sandbox, and this system cannot \
         enforce one ({reason}), so the command was not run"
    )]
    Unavailable {
        /// Why.
        reason: String,
    },
    /// Nothing said where this process's sandbox would be (unit tests, subcommands).
    #[error(
        "plan mode runs commands only inside the read-only sandbox, and none was set up \
         for this process, so the command was not run"
    )]
    NotPrepared,
}

/// Remembers, once, what a read-only sandbox needs when the session has none of its own
/// (`suggest`'s default, `--sandbox off`): plan mode confines its commands all the same.
/// Cheap: nothing is probed until a read-only command runs.
pub fn prepare_read_only(settings: &SandboxSettings, project: &Path, root: &Path) {
    let _ = READ_ONLY_PLACES.set(ReadOnlyPlaces {
        settings: settings.clone(),
        project: project.to_path_buf(),
        root: root.to_path_buf(),
    });
}

/// The sandbox for a command that may write nothing (plan mode): the session's made
/// read-only, else one built (once) from [`prepare_read_only`]'s settings; an error
/// saying why when this system cannot confine, and then the command must not run.
pub fn read_only() -> Result<SessionSandbox, ReadOnlyRefusal> {
    if let Some(session) = session() {
        return Ok(SessionSandbox {
            policy: Arc::new(session.policy.read_only()),
            launcher: session.launcher.clone(),
        });
    }
    let places = READ_ONLY_PLACES.get().ok_or(ReadOnlyRefusal::NotPrepared)?;
    READ_ONLY_BUILT
        .get_or_init(|| build_read_only(places))
        .clone()
}

fn build_read_only(places: &ReadOnlyPlaces) -> Result<SessionSandbox, ReadOnlyRefusal> {
    let settings = &places.settings;
    if let Availability::Unavailable { reason } = availability(settings.simulate_unavailable) {
        return Err(ReadOnlyRefusal::Unavailable { reason });
    }
    let launcher = std::env::current_exe().map_err(|e| ReadOnlyRefusal::Unavailable {
        reason: format!("cannot find harness9's own binary: {e}"),
    })?;
    let namespaces = namespace_support(
        settings.namespaces,
        settings.secrets.harness9_home.as_deref(),
    );
    let policy = SandboxPolicy::new(
        SandboxMode::ReadOnly,
        &places.project,
        &[],
        settings.network,
    )
    .hiding(&settings.secrets)
    .with_namespaces(namespaces)
    .with_secrets_root(&places.root);
    if namespaces == Namespaces::On {
        project_secrets::start(&places.root);
    }
    Ok(SessionSandbox {
        policy: Arc::new(policy),
        launcher,
    })
}

/// Why the namespaces are missing, once the start-up probe (or the test hook) found so.
static NAMESPACES_MISSING: Mutex<Option<String>> = Mutex::new(None);

/// Whether the launcher can build namespaces here: [`NamespacesProbe::Run`] starts it
/// once (`--probe`: it builds them with an empty policy and runs nothing). Remembers why
/// not, for [`startup_warning`].
pub fn namespace_support(probe: NamespacesProbe, home: Option<&Path>) -> Namespaces {
    let result = match probe {
        NamespacesProbe::SimulateUnavailable => {
            Err("HARNESS9_SANDBOX_NO_NAMESPACES is set".to_string())
        }
        NamespacesProbe::Run => remembered_or_probe(home),
    };
    match result {
        Ok(()) => Namespaces::On,
        Err(reason) => {
            *NAMESPACES_MISSING
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(reason);
            Namespaces::Off
        }
    }
}

/// The remembered answer (`probe_cache`), else a probe, remembered.
fn remembered_or_probe(home: Option<&Path>) -> Result<(), String> {
    let launcher = std::env::current_exe().ok();
    if let (Some(home), Some(launcher)) = (home, &launcher)
        && let Some(answer) = probe_cache::remembered(home, launcher)
    {
        return answer;
    }
    let answer = probe_namespaces();
    if let (Some(home), Some(launcher)) = (home, &launcher) {
        probe_cache::remember(home, launcher, &answer);
    }
    answer
}

#[cfg(target_os = "linux")]
fn probe_namespaces() -> Result<(), String> {
    let launcher =
        std::env::current_exe().map_err(|e| format!("cannot find harness9's own binary: {e}"))?;
    let out = std::process::Command::new(launcher)
        .args([LAUNCHER_MARKER, "--probe"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output()
        .map_err(|e| format!("cannot start the launcher: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.trim_start_matches("harness9 sandbox: ").to_string())
        .unwrap_or_else(|| format!("the launcher's probe ended with {}", out.status));
    Err(match linux::userns_restriction() {
        Some(why) => format!("{said}; {why}"),
        None => said,
    })
}

#[cfg(not(target_os = "linux"))]
fn probe_namespaces() -> Result<(), String> {
    Err(format!(
        "namespaces are Linux's, and this is {}",
        std::env::consts::OS
    ))
}

/// The start-up warning when the session's sandbox runs without namespaces: which
/// guarantees are gone. `None` with namespaces, or without a sandbox.
pub fn startup_warning() -> Option<String> {
    let sandbox = session()?;
    if sandbox.policy.namespaces == Namespaces::On {
        return None;
    }
    let reason = NAMESPACES_MISSING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()?;
    Some(namespaces_warning(&reason))
}

/// The words of [`startup_warning`].
pub fn namespaces_warning(reason: &str) -> String {
    format!(
        "the sandbox runs without its namespaces ({reason}): commands are confined by \
         Landlock and seccomp only, so they can still change the metadata of files outside \
         the writable folders (chmod, chown, timestamps, extended attributes), read secret \
         files (~/.ssh, ~/.aws, $HARNESS9_HOME, the project's .env files), reach sockets \
         such as Docker's, and see other processes in /proc (their command lines, and the \
         environment of your own)"
    )
}

/// The sandbox for MCP servers with `sandbox = true`: the session's, or, when the
/// session has none (`--sandbox off`, or `suggest`'s default), a workspace-write one
/// for them alone: such a server never starts unconfined. Where this system cannot
/// confine at all, the launcher refuses to start it (exit 126, with the reason). The
/// secret files masked are those beneath `root`, the project root.
pub fn for_servers(settings: &SandboxSettings, project: &Path, root: &Path) -> SessionSandbox {
    if let Some(sandbox) = session() {
        return sandbox.clone();
    }
    let launcher = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("/proc/self/exe"));
    let namespaces = match availability(settings.simulate_unavailable) {
        Availability::Available => namespace_support(
            settings.namespaces,
            settings.secrets.harness9_home.as_deref(),
        ),
        Availability::Unavailable { .. } => Namespaces::Off,
    };
    let policy = SandboxPolicy::new(
        SandboxMode::WorkspaceWrite,
        project,
        &settings.writable_paths,
        settings.network,
    )
    .hiding(&settings.secrets)
    .with_namespaces(namespaces)
    .with_secrets_root(root);
    if namespaces == Namespaces::On {
        project_secrets::start(root);
    }
    SessionSandbox {
        policy: Arc::new(policy),
        launcher,
    }
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
