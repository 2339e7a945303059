//! What a confined command may do, as data: [`SandboxPolicy`] names the project, where
//! writes are allowed, which paths inside those stay read-only (the project's git hooks
//! and config, its `.harness9/` rules), which paths are masked (the user's secret files
//! and folders, `$HARNESS9_HOME`, configured ones) and which stay visible inside a masked
//! folder (skill folders), the network rule and whether the launcher builds namespaces.
//! It also writes the launcher's arguments ([`SandboxPolicy::launcher_args`]), adding the
//! project's secret files known at that moment (`project_secrets`).
//!
//! It must not know how the launcher enforces any of this.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::{LAUNCHER_MARKER, SandboxMode, project_secrets};

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

/// Whether the launcher puts the command in its own namespaces (a read-only file
/// system with masks, a fresh `/proc`) or confines it with Landlock and seccomp only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Namespaces {
    /// User, mount and PID namespaces, then Landlock and seccomp: a launcher that
    /// cannot build them refuses to run the command.
    On,
    /// Landlock and seccomp only (the system cannot build the namespaces).
    Off,
}

/// Paths inside the project that stay read-only even where the project is writable:
/// what git runs or reads code settings from, and harness9's own rule folder.
pub const PROTECTED_IN_PROJECT: &[&str] = &[
    ".git/config",
    ".git/config.worktree",
    ".git/hooks",
    ".git/info/attributes",
    ".harness9",
];

/// The user's secret files and folders, relative to the home folder: masked in every
/// confined command.
pub const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gcloud",
    ".azure",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/gh",
    ".config/hub",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".gem/credentials",
    ".password-store",
    ".local/share/keyrings",
    ".bash_history",
    ".zsh_history",
    ".Xauthority",
    ".ICEauthority",
];

/// Sockets that act with the user's (or root's) authority, for a caller whose user id
/// they trust: a command that reaches one leaves the sandbox. Docker, Podman,
/// containerd, CRI-O, LXD and libvirt start containers or machines as root; systemd's
/// private socket and the system D-Bus start services (as root, for root); snapd
/// installs software; an X server takes synthetic keystrokes into the user's terminals.
const AUTHORITY_SOCKETS: &[&str] = &[
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/podman",
    "/run/containerd",
    "/run/crio",
    "/run/buildkit",
    "/run/libvirt",
    "/var/snap/lxd/common/lxd/unix.socket",
    "/var/lib/lxd/unix.socket",
    "/run/systemd/private",
    "/run/dbus/system_bus_socket",
    "/var/run/dbus/system_bus_socket",
    "/run/snapd.socket",
    "/run/snapd-snap.socket",
    "/tmp/.X11-unix",
];

/// System files only root could read anyway: masked when harness9 runs as root.
const ROOT_SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
];

/// Where the secrets a sandbox masks live (from the configuration).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretPlaces {
    /// The user's home folder, when known.
    pub user_home: Option<PathBuf>,
    /// `$HARNESS9_HOME` (its config.toml holds header values; its sessions, what was said).
    pub harness9_home: Option<PathBuf>,
    /// `[sandbox] masked_paths` from config.toml.
    pub masked_paths: Vec<PathBuf>,
    /// Folders that stay visible inside a masked one (skill folders in `$HARNESS9_HOME`).
    pub visible: Vec<PathBuf>,
}

/// What a confined command may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// Read-only or workspace-write (never off: then there is no policy).
    pub mode: SandboxMode,
    /// The project (writable in workspace-write, unless the policy was narrowed).
    pub project: PathBuf,
    /// Where it may write (beneath each), besides `/dev/null`; empty in read-only.
    pub writable: Vec<PathBuf>,
    /// Paths inside writable ones that stay read-only ([`PROTECTED_IN_PROJECT`], where
    /// they exist when a command starts).
    pub read_only: Vec<PathBuf>,
    /// Files and folders made unreadable (empty and read-only) for the command.
    pub masked: Vec<PathBuf>,
    /// Folders that stay as they are inside a masked folder.
    pub visible: Vec<PathBuf>,
    /// Whether it may use the network.
    pub network: Network,
    /// Whether the launcher builds namespaces.
    pub namespaces: Namespaces,
    /// The folder whose secret files are masked (with namespaces): the project root,
    /// which holds the working folder ([`Self::project`]) when a session starts in a
    /// subfolder of a repository, so a `.env` at the root is masked there too.
    pub secrets_root: PathBuf,
}

impl SandboxPolicy {
    /// The policy for a session in `project`: in workspace-write the project, the temp
    /// folders and `extra` are writable; the project's protected paths stay read-only.
    /// Nothing is masked and no namespaces are built until [`Self::hiding`] and
    /// [`Self::with_namespaces`] say so.
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
            project: project.to_path_buf(),
            writable,
            read_only: protected_paths(project),
            masked: Vec::new(),
            visible: Vec::new(),
            network,
            namespaces: Namespaces::Off,
            secrets_root: project.to_path_buf(),
        }
    }

    /// This policy masking the secret files found beneath `root` (the project root, at
    /// or above the working folder) rather than beneath the working folder alone.
    pub fn with_secrets_root(mut self, root: &Path) -> Self {
        self.secrets_root = root.to_path_buf();
        self
    }

    /// This policy masking the secrets in `places` (see [`secret_paths`]).
    pub fn hiding(mut self, places: &SecretPlaces) -> Self {
        self.masked = secret_paths(places, is_root());
        self.visible = places.visible.clone();
        self
    }

    /// This policy with the namespaces on or off.
    pub fn with_namespaces(mut self, namespaces: Namespaces) -> Self {
        self.namespaces = namespaces;
        self
    }

    /// This policy with writes allowed only beneath `writable` (workspace-write, the
    /// same network rule, masks and namespaces), for a command that must keep to its own
    /// folders.
    pub fn writing_only(&self, writable: &[PathBuf]) -> SandboxPolicy {
        SandboxPolicy {
            mode: SandboxMode::WorkspaceWrite,
            writable: writable.to_vec(),
            ..self.clone()
        }
    }

    /// This policy with `seen` (files or folders) kept visible, read-only, inside the
    /// folders it masks; what it masks otherwise, and what may be written, unchanged.
    pub fn seeing(&self, seen: &[PathBuf]) -> SandboxPolicy {
        let mut policy = self.clone();
        policy.visible.extend(seen.iter().cloned());
        policy
    }

    /// This policy with nothing writable but `/dev/null` (the same network rule, masks
    /// and namespaces): plan mode's commands.
    pub fn read_only(&self) -> SandboxPolicy {
        SandboxPolicy {
            mode: SandboxMode::ReadOnly,
            writable: Vec::new(),
            ..self.clone()
        }
    }

    /// The launcher's arguments before `--`: mode, network, namespaces and paths. With
    /// namespaces, the masks include the project's secret files as known now (a walk of
    /// the project kept fresh in the background, and a look at its top folder now).
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
            "--namespaces".into(),
            match self.namespaces {
                Namespaces::On => "on".into(),
                Namespaces::Off => "off".into(),
            },
            "--project".into(),
            self.project.clone().into_os_string(),
        ];
        let mut paths = |flag: &str, list: &[PathBuf]| {
            for path in list {
                args.push(flag.into());
                args.push(path.clone().into_os_string());
            }
        };
        paths("--write", &self.writable);
        paths("--read-only", &self.read_only);
        paths("--mask", &self.masked);
        paths("--visible", &self.visible);
        if self.namespaces == Namespaces::On {
            let found = project_secrets::current(&self.secrets_root);
            let new: Vec<PathBuf> = found
                .into_iter()
                .filter(|p| !self.masked.contains(p))
                .collect();
            paths("--mask", &new);
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
        let secrets = match self.namespaces {
            Namespaces::On => "; secret files masked",
            Namespaces::Off => "",
        };
        format!("{writes}; {network}{secrets}")
    }
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// The project's protected paths ([`PROTECTED_IN_PROJECT`]); when `.git` is a file (a
/// linked worktree or a submodule's checkout) that file too, since it names the folder
/// git reads its config and hooks from; and the same files of each submodule's git
/// folder in `.git/modules`.
pub fn protected_paths(project: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = PROTECTED_IN_PROJECT
        .iter()
        .map(|p| project.join(p))
        .collect();
    let git = project.join(".git");
    match std::fs::symlink_metadata(&git) {
        Ok(meta) if !meta.is_dir() => paths.push(git),
        Ok(_) => submodule_git_dirs(&git.join("modules"), 0, &mut paths),
        Err(_) => {}
    }
    paths
}

/// How deep submodules nest in `.git/modules` before we stop looking.
const MAX_MODULE_DEPTH: usize = 6;

fn submodule_git_dirs(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > MAX_MODULE_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let path = entry.path();
        if path.join("HEAD").is_file() {
            for name in ["config", "config.worktree", "hooks", "info/attributes"] {
                out.push(path.join(name));
            }
            submodule_git_dirs(&path.join("modules"), depth + 1, out);
        } else {
            // A submodule named `a/b` lives in `modules/a/b`.
            submodule_git_dirs(&path, depth + 1, out);
        }
    }
}

/// Every path a sandbox masks for `places`: [`HOME_SECRETS`] in the home folder,
/// `$HARNESS9_HOME`, sockets that act with the user's authority (`$SSH_AUTH_SOCK`,
/// `$XDG_RUNTIME_DIR` as a whole, the container engines', systemd's, the system D-Bus,
/// X11), the configured `masked_paths`, and for root the system's password hashes and
/// host keys. Paths that do not exist are skipped when a command starts.
pub fn secret_paths(places: &SecretPlaces, root: bool) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    if let Some(home) = &places.user_home {
        paths.extend(HOME_SECRETS.iter().map(|p| home.join(p)));
    }
    paths.extend(places.harness9_home.iter().cloned());
    paths.extend(AUTHORITY_SOCKETS.iter().map(PathBuf::from));
    if let Some(sock) = std::env::var_os("SSH_AUTH_SOCK").map(PathBuf::from)
        && sock.is_absolute()
    {
        paths.push(sock);
    }
    // The session's sockets: its D-Bus (which starts services outside the sandbox), the
    // accessibility bus and Wayland (keystrokes), PipeWire (the screen), agents, Docker
    // and Podman.
    if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from)
        && runtime.is_absolute()
        && runtime.parent().is_some()
    {
        paths.push(runtime);
    }
    if root {
        paths.extend(ROOT_SECRETS.iter().map(PathBuf::from));
        paths.extend(host_keys());
    }
    paths.extend(places.masked_paths.iter().cloned());
    let mut seen = std::collections::HashSet::new();
    paths.retain(|p| seen.insert(p.clone()));
    paths
}

/// The SSH host keys (`/etc/ssh/ssh_host_*_key`).
fn host_keys() -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir("/etc/ssh") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("ssh_host_") && name.ends_with("_key")
        })
        .map(|e| e.path())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(p.project, PathBuf::from("/p"));
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
        assert!(
            args.windows(2)
                .any(|w| w == ["--read-only", "/p/.git/hooks"])
        );
    }

    #[test]
    fn the_projects_git_code_settings_and_rules_stay_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path();
        let paths = protected_paths(project);
        for name in [
            ".git/config",
            ".git/hooks",
            ".git/info/attributes",
            ".harness9",
        ] {
            assert!(paths.contains(&project.join(name)), "{name}: {paths:?}");
        }
        assert!(!paths.contains(&project.join(".git")));
        // A linked worktree's `.git` file names where git reads config and hooks.
        std::fs::write(project.join(".git"), "gitdir: /elsewhere\n").unwrap();
        assert!(protected_paths(project).contains(&project.join(".git")));
        // Submodules have their own hooks and config in .git/modules.
        std::fs::remove_file(project.join(".git")).unwrap();
        let module = project.join(".git/modules/lib/nested");
        std::fs::create_dir_all(&module).unwrap();
        std::fs::write(module.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        let paths = protected_paths(project);
        assert!(paths.contains(&module.join("hooks")), "{paths:?}");
        assert!(paths.contains(&module.join("config")), "{paths:?}");
    }

    #[test]
    fn the_users_secrets_and_harness9s_home_are_masked() {
        let places = SecretPlaces {
            user_home: Some(PathBuf::from("/home/u")),
            harness9_home: Some(PathBuf::from("/home/u/.harness9")),
            masked_paths: vec![PathBuf::from("/srv/keys")],
            visible: vec![PathBuf::from("/home/u/.harness9/skills")],
        };
        let masked = secret_paths(&places, false);
        for path in [
            "/home/u/.ssh",
            "/home/u/.aws",
            "/home/u/.gnupg",
            "/home/u/.config/gcloud",
            "/home/u/.azure",
            "/home/u/.kube",
            "/home/u/.docker/config.json",
            "/home/u/.netrc",
            "/home/u/.git-credentials",
            "/home/u/.npmrc",
            "/home/u/.pypirc",
            "/home/u/.pgpass",
            "/home/u/.harness9",
            "/srv/keys",
            "/var/run/docker.sock",
        ] {
            assert!(masked.contains(&PathBuf::from(path)), "{path}: {masked:?}");
        }
        assert!(!masked.contains(&PathBuf::from("/etc/shadow")));
        assert!(secret_paths(&places, true).contains(&PathBuf::from("/etc/shadow")));
        let policy = SandboxPolicy::new(
            SandboxMode::WorkspaceWrite,
            Path::new("/p"),
            &[],
            Network::Deny,
        )
        .hiding(&places);
        assert_eq!(policy.visible, places.visible);
        // Narrowing keeps the masks.
        let narrow = policy.writing_only(&[PathBuf::from("/w")]);
        assert_eq!(narrow.masked, policy.masked);
        assert_eq!(narrow.writable, vec![PathBuf::from("/w")]);
    }
}
