//! Whether a read-only `git` command is still a read in this repository. A repository's
//! own configuration (`.git/config`, `config.worktree`, anything they include) can name
//! programs git runs during `status`, `diff` or `log`: `core.fsmonitor`, `core.pager`,
//! `diff.<driver>.textconv`, `filter.<driver>.clean`, `log.showSignature`'s gpg, …, and
//! `git status` may run the `post-index-change` hook. A repository is hostile input (the
//! model or an earlier command may have written its config), so `auto-edit` runs a
//! read-only git command without asking only when every key of the repository's own
//! configuration is on a list of keys that never name a program, no include is used, and
//! no `post-index-change` hook exists. It also finds a tracked secret-looking file, for
//! the rules to ask about commands that print file contents (`git log -p` would print it
//! from git's objects even where the sandbox masks the file on disk).
//!
//! It asks git itself (`git config --list --show-scope --no-includes`, `git rev-parse`,
//! `git ls-files`) with a time limit, so a FIFO or a huge repository cannot hang a
//! judgement. The user's global and system configuration are the user's own and are not
//! judged. It must not know rules or modes.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long one probe may take before the command is asked about instead.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);
/// The most of a probe's output read.
const PROBE_OUTPUT_CAP: u64 = 32 * 1024 * 1024;

/// Configuration keys that never make git run a program or read another file, as git
/// writes them (section and key in lower case; `*` stands for a subsection or, last,
/// for any key of the section).
const INERT_KEYS: &[&str] = &[
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "core.autocrlf",
    "core.eol",
    "core.safecrlf",
    "core.checkstat",
    "core.trustctime",
    "core.quotepath",
    "core.abbrev",
    "core.compression",
    "core.loosecompression",
    "core.bigfilethreshold",
    "core.sparsecheckout",
    "core.sparsecheckoutcone",
    "core.splitindex",
    "core.untrackedcache",
    "core.commitgraph",
    "core.multipackindex",
    "core.preloadindex",
    "core.longpaths",
    "core.protectntfs",
    "core.protecthfs",
    "core.whitespace",
    "core.warnambiguousrefs",
    "remote.*.url",
    "remote.*.pushurl",
    "remote.*.fetch",
    "remote.*.push",
    "remote.*.tagopt",
    "remote.*.prune",
    "remote.*.prunetags",
    "remote.*.mirror",
    "remote.*.promisor",
    "remote.*.partialclonefilter",
    "remote.*.skipdefaultupdate",
    "branch.*.remote",
    "branch.*.pushremote",
    "branch.*.merge",
    "branch.*.rebase",
    "branch.*.description",
    "submodule.*.url",
    "submodule.*.active",
    "submodule.*.branch",
    "submodule.active",
    "user.*",
    "author.*",
    "committer.*",
    "init.*",
    "color.*",
    "column.*",
    "advice.*",
    "alias.*",
    "i18n.*",
    "http.*",
    "extensions.objectformat",
    "extensions.worktreeconfig",
    "extensions.refstorage",
    "extensions.partialclone",
    "lfs.repositoryformatversion",
    "lfs.url",
    "index.version",
    "index.threads",
    "index.skiphash",
    "feature.manyfiles",
    "fetch.prune",
    "fetch.prunetags",
    "pull.rebase",
    "pull.ff",
    "push.default",
    "push.autosetupremote",
    "merge.ff",
    "merge.conflictstyle",
    "merge.renames",
    "rebase.autosquash",
    "rebase.autostash",
    "rebase.updaterefs",
    "diff.renames",
    "diff.algorithm",
    "diff.colormoved",
    "diff.mnemonicprefix",
    "diff.noprefix",
    "diff.context",
    "diff.indentheuristic",
    "diff.submodule",
    "diff.ignoresubmodules",
    "diff.*.xfuncname",
    "diff.*.funcname",
    "diff.*.wordregex",
    "diff.*.binary",
    "status.showuntrackedfiles",
    "status.short",
    "status.branch",
    "status.submodulesummary",
    "status.relativepaths",
    "log.decorate",
    "log.abbrevcommit",
    "log.date",
    "log.follow",
    "grep.*",
    "blame.*",
    "gc.auto",
    "gc.autodetach",
    "commit.verbose",
    "tag.sort",
    "maintenance.*",
    "rerere.*",
    // Programs only commands that reach a remote, prompt for credentials or verify
    // signatures run, and the read-only list runs none of those (`--show-signature` is
    // refused, `log.showSignature` is not on this list).
    "core.sshcommand",
    "core.askpass",
    "credential.*",
    "remote.*.uploadpack",
    "remote.*.receivepack",
    "remote.*.proxy",
    "gpg.*",
    "submodule.*.update",
    // Where hooks live: the one hook a read may run, `post-index-change`, is looked for
    // where this setting points (husky and the like set it).
    "core.hookspath",
];

/// Why a read-only git command cannot run without asking here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotARead {
    /// A key of the repository's own configuration may name a program.
    #[error("the repository's own configuration sets `{key}`, which can make git run a program")]
    Config {
        /// The key, as git lists it.
        key: String,
    },
    /// A hook git may run during this command.
    #[error("the repository has a `{hook}` hook, which `git status` may run")]
    Hook {
        /// The hook's name.
        hook: String,
    },
    /// The repository tracks a file that looks like a secret.
    #[error(
        "the repository tracks `{path}`, which looks like a secret file this command could print"
    )]
    TracksSecret {
        /// The tracked path.
        path: String,
    },
    /// The repository could not be looked at.
    #[error("harness9 could not look at the repository's configuration ({why})")]
    Unknown {
        /// Why.
        why: String,
    },
}

/// Whether a read-only `git` command run in `cwd` stays a read: the repository's own
/// configuration names no program and no hook may run. (Tracked secret files are
/// [`tracked_secret`]'s.)
pub fn check(cwd: &Path) -> Result<(), NotARead> {
    let listing = probe(
        cwd,
        &["config", "--list", "-z", "--show-scope", "--no-includes"],
    )
    .map_err(|why| NotARead::Unknown { why })?;
    if let Some(key) = first_live_key(&listing) {
        return Err(NotARead::Config { key });
    }
    let Some(repository) = Repository::around(cwd) else {
        // Not a repository: git reads no repository configuration here.
        return Ok(());
    };
    if std::fs::symlink_metadata(&repository.post_index_change).is_ok() {
        return Err(NotARead::Hook {
            hook: "post-index-change".into(),
        });
    }
    Ok(())
}

/// Where a repository's work tree and its `post-index-change` hook are.
struct Repository {
    top: String,
    post_index_change: std::path::PathBuf,
}

impl Repository {
    /// The repository `cwd` is in (one `git rev-parse`), if any.
    fn around(cwd: &Path) -> Option<Repository> {
        let answer = probe(
            cwd,
            &[
                "rev-parse",
                "--show-toplevel",
                "--git-path",
                "hooks/post-index-change",
            ],
        )
        .ok()?;
        let mut lines = answer.lines();
        let top = lines.next()?.to_string();
        let hook = cwd.join(lines.next()?);
        Some(Repository {
            top,
            post_index_change: hook,
        })
    }
}

/// The first file the repository around `cwd` tracks that looks like a secret (a
/// command printing file contents from git's objects could show it, where no sandbox
/// mask reaches), relative to the repository's top. `None` outside a repository.
pub fn tracked_secret(cwd: &Path) -> Result<Option<String>, NotARead> {
    let Some(Repository { top, .. }) = Repository::around(cwd) else {
        return Ok(None);
    };
    let files =
        probe(Path::new(&top), &["ls-files", "-z"]).map_err(|why| NotARead::Unknown { why })?;
    Ok(files
        .split('\0')
        .find(|p| !p.is_empty() && super::is_secret_file(Path::new(p)))
        .map(|p| format!("{top}/{p}")))
}

/// The first key of the repository's own configuration (scopes `local` and `worktree`)
/// that is not inert, from `git config --list -z --show-scope` output.
fn first_live_key(listing: &str) -> Option<String> {
    let mut fields = listing.split('\0');
    while let Some(scope) = fields.next() {
        let Some(entry) = fields.next() else {
            break;
        };
        if !matches!(scope, "local" | "worktree") {
            continue;
        }
        let key = entry.split_once('\n').map_or(entry, |(key, _)| key);
        if !inert(key) {
            return Some(key.to_string());
        }
    }
    None
}

/// Whether `key` (`section.key` or `section.subsection.key`) is on the inert list.
fn inert(key: &str) -> bool {
    let Some((section, rest)) = key.split_once('.') else {
        return false;
    };
    let (subsection, name) = match rest.rsplit_once('.') {
        Some((subsection, name)) => (Some(subsection), name),
        None => (None, rest),
    };
    let section = section.to_ascii_lowercase();
    let name = name.to_ascii_lowercase();
    INERT_KEYS.iter().any(|pattern| {
        let parts: Vec<&str> = pattern.split('.').collect();
        match (parts.as_slice(), subsection) {
            ([s, "*"], _) => *s == section,
            ([s, k], None) => *s == section && *k == name,
            ([s, "*", k], Some(_)) => *s == section && *k == name,
            _ => false,
        }
    })
}

/// Runs `git ARGS` in `cwd` (no pager, no optional locks, no fsmonitor, stdin closed;
/// none of the commands used runs hooks) and returns its standard output, or why it failed; killed after
/// [`PROBE_TIMEOUT`].
fn probe(cwd: &Path, args: &[&str]) -> Result<String, String> {
    let mut child = Command::new("git")
        .args(["-c", "core.fsmonitor=false"])
        .args(args)
        .current_dir(cwd)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run git: {e}"))?;
    let stdout = child.stdout.take();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = Vec::new();
        if let Some(stdout) = stdout {
            let _ = stdout.take(PROBE_OUTPUT_CAP).read_to_end(&mut text);
        }
        let _ = sender.send(text);
    });
    let output = match receiver.recv_timeout(PROBE_TIMEOUT) {
        Ok(output) => output,
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("`git {}` took too long", args.join(" ")));
        }
    };
    let status = child.wait().map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("`git {}` failed ({status})", args.join(" ")));
    }
    String::from_utf8(output).map_err(|_| "git printed text that is not UTF-8".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let status = Command::new("git")
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn keys_are_inert_only_when_listed() {
        for key in [
            "core.filemode",
            "remote.origin.url",
            "remote.my.fork.url",
            "branch.main.remote",
            "color.ui",
            "http.https://github.com/.extraheader",
            "diff.rust.xfuncname",
            "user.name",
        ] {
            assert!(inert(key), "{key}");
        }
        for key in [
            "core.fsmonitor",
            "core.pager",
            "core.worktree",
            "core.editor",
            "diff.external",
            "diff.foo.textconv",
            "diff.foo.command",
            "filter.lfs.clean",
            "filter.x.process",
            "merge.x.driver",
            "pager.log",
            "log.showsignature",
            "include.path",
            "includeif.gitdir:/x.path",
            "log.showsignature",
            "status",
        ] {
            assert!(!inert(key), "{key}");
        }
    }

    #[test]
    fn a_repository_that_names_programs_or_tracks_secrets_is_not_a_read() {
        let dir = tempfile::tempdir().unwrap();
        let repo = &std::fs::canonicalize(dir.path()).unwrap();
        git(repo, &["init", "-q"]);
        assert_eq!(check(repo), Ok(()));
        git(repo, &["config", "core.fsmonitor", "touch PWNED; false"]);
        assert_eq!(
            check(repo),
            Err(NotARead::Config {
                key: "core.fsmonitor".into()
            })
        );
        git(repo, &["config", "--unset", "core.fsmonitor"]);
        git(repo, &["config", "diff.evil.textconv", "sh"]);
        assert!(matches!(check(repo), Err(NotARead::Config { .. })));
        git(repo, &["config", "--unset", "diff.evil.textconv"]);
        std::fs::write(repo.join(".git/hooks/post-index-change"), "#!/bin/sh\n").unwrap();
        assert!(matches!(check(repo), Err(NotARead::Hook { .. })));
        std::fs::remove_file(repo.join(".git/hooks/post-index-change")).unwrap();
        // Hooks elsewhere (husky's `core.hooksPath`) are looked for where they are.
        std::fs::create_dir(repo.join(".husky")).unwrap();
        git(repo, &["config", "core.hooksPath", ".husky"]);
        assert_eq!(check(repo), Ok(()));
        std::fs::write(repo.join(".husky/post-index-change"), "#!/bin/sh\n").unwrap();
        assert!(matches!(check(repo), Err(NotARead::Hook { .. })));
        git(repo, &["config", "--unset", "core.hooksPath"]);
        assert_eq!(tracked_secret(repo), Ok(None));
        std::fs::create_dir(repo.join("sub")).unwrap();
        std::fs::write(repo.join("sub/.env"), "KEY=1\n").unwrap();
        git(repo, &["add", "sub/.env"]);
        assert_eq!(check(repo), Ok(()));
        let expected = format!("{}/sub/.env", repo.display());
        assert_eq!(tracked_secret(&repo.join("sub")), Ok(Some(expected)));
        assert!(!repo.join("PWNED").exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_for_a_config_file_does_not_hang_the_judgement() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        git(repo, &["init", "-q"]);
        std::fs::remove_file(repo.join(".git/config")).unwrap();
        let made = Command::new("mkfifo")
            .arg(repo.join(".git/config"))
            .status()
            .unwrap();
        assert!(made.success());
        let started = std::time::Instant::now();
        assert!(check(repo).is_err());
        assert!(started.elapsed() < PROBE_TIMEOUT * 3);
    }
}
