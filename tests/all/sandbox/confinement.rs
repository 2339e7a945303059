//! What the sandbox's namespaces guarantee, through the real binary, as root and as an
//! unprivileged user (uid 65534, through `setpriv`), under `--sandbox read-only` and
//! `workspace-write`: the metadata of files outside the writable folders cannot change
//! (chmod, chown, utimes, xattrs, by several programs); no set-user-ID or set-group-ID
//! bit can be set (chmod, install, cp, python, open(O_CREAT), mknod, file capabilities);
//! no process outside the sandbox is visible and no environment in `/proc` holds a
//! secret; the user's secrets, `$HARNESS9_HOME` and the project's secret files cannot be
//! read; git's hooks and config and `.harness9/` cannot be written while the rest of the
//! project can; no mount, unmount or namespace call undoes any of it; the launcher
//! passes exit codes and signals through and never runs what it could not confine; a
//! timeout stops everything inside; `mcp list` confines `sandbox = true` servers; and
//! without namespaces (simulated) the session says what is lost and keeps Landlock and
//! seccomp.

use std::collections::BTreeSet;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use super::outside_dir;
use crate::support::*;

const MODES: [&str; 2] = ["read-only", "workspace-write"];

/// The project's rule file: a rule that matters for nothing these tests run.
const RULES: &str = "deny = [\"edit(never-edited/**)\"]\n";

/// Fake secrets, each in one place; none may ever appear in what a command prints.
const SSH_KEY: &str = "FAKE-SSH-PRIVATE-KEY-81d2";
const AWS_KEY: &str = "FAKE-AWS-SECRET-77c1";
const NETRC: &str = "FAKE-NETRC-PASSWORD-3e9a";
const H9_CONFIG: &str = "FAKE-HEADER-VALUE-0b4f";
const H9_SESSION: &str = "FAKE-SESSION-TEXT-5d20";
const DOT_ENV: &str = "FAKE-DOTENV-PASSWORD-c3a1";
const NESTED_ENV: &str = "FAKE-NESTED-ENV-TOKEN-9f0e";
const PEM: &str = "FAKE-PEM-PRIVATE-KEY-2a6b";
const API_KEY: &str = "sk-FAKE-API-KEY-1f7d33";
const TOKEN_VAR: &str = "FAKE-TOKEN-VARIABLE-64cc";

const ALL_SECRETS: &[&str] = &[
    SSH_KEY, AWS_KEY, NETRC, H9_CONFIG, H9_SESSION, DOT_ENV, NESTED_ENV, PEM, API_KEY, TOKEN_VAR,
];

/// A home with secrets, a separate `$HARNESS9_HOME`, a git project with secret files and
/// protected paths, and a folder outside every writable one; all owned by the user.
struct World {
    user: User,
    home: TempDir,
    h9: TempDir,
    project: TempDir,
    outside: TempDir,
    /// Where the scripts the model runs are written.
    scripts: TempDir,
}

impl World {
    fn new(user: User) -> World {
        let world = World {
            user,
            home: tempfile::tempdir().unwrap(),
            h9: tempfile::tempdir().unwrap(),
            project: tempfile::tempdir().unwrap(),
            outside: outside_dir(),
            scripts: tempfile::tempdir().unwrap(),
        };
        let home = world.home.path();
        write(&home.join(".ssh/id_rsa"), &format!("{SSH_KEY}\n"));
        write(
            &home.join(".aws/credentials"),
            &format!("[default]\naws_secret_access_key = {AWS_KEY}\n"),
        );
        write(
            &home.join(".netrc"),
            &format!("machine x login u password {NETRC}\n"),
        );
        write(&home.join(".bashrc"), "# ordinary\n");
        let h9 = world.h9.path();
        write(&h9.join("config.toml"), &format!("# {H9_CONFIG}\n"));
        write(&h9.join("sessions/old.jsonl"), &format!("{H9_SESSION}\n"));
        skill(
            &h9.join("skills"),
            "kept",
            "A kept skill",
            "",
            "kept skill\n",
        );
        let p = world.project.path();
        write(&p.join(".env"), &format!("DB_PASSWORD={DOT_ENV}\n"));
        write(
            &p.join("app/config/.env.production"),
            &format!("TOKEN={NESTED_ENV}\n"),
        );
        write(&p.join("certs/server.pem"), &format!("{PEM}\n"));
        write(&p.join(".gitignore"), ".env\n*.pem\n");
        write(&p.join("README.md"), "readable\n");
        write(&p.join(".git/HEAD"), "ref: refs/heads/main\n");
        write(&p.join(".git/config"), "[core]\n\tbare = false\n");
        write(&p.join(".git/hooks/pre-push.sample"), "#!/bin/sh\n");
        write(&p.join(".git/description"), "unnamed\n");
        write(&p.join(".harness9/permissions.toml"), RULES);
        write(&world.outside.path().join("victim"), "keep me\n");
        std::fs::create_dir(world.outside.path().join("dir")).unwrap();
        if user == User::Nobody {
            for dir in [home, h9, p, world.outside.path(), world.scripts.path()] {
                chown_tree(dir, NOBODY);
            }
        }
        world
    }

    /// The binary without a server in this world (`-C` the project, `h9` as
    /// `$HARNESS9_HOME`).
    fn offline(&self) -> Command {
        let mut cmd = harness9_cli(self.home.path(), self.project.path());
        cmd.env("HARNESS9_HOME", self.h9.path());
        cmd
    }

    fn victim(&self) -> PathBuf {
        self.outside.path().join("victim")
    }

    /// `script` as a file the model can run (`bash PATH`): what is tested is the
    /// sandbox, not how the permission rules read a command line.
    fn script(&self, script: &str) -> String {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = self
            .scripts
            .path()
            .join(format!("probe-{}.sh", NEXT.fetch_add(1, Ordering::Relaxed)));
        write(&path, script);
        if self.user == User::Nobody {
            chown_tree(&path, NOBODY);
        }
        format!("bash {}", path.display())
    }

    /// One `-p` run (full-auto, `mode`) in which the model runs `script` with `bash`;
    /// the output and the tool result.
    fn run(&self, mode: &str, script: &str, env: &[(&str, &str)]) -> (Output, String) {
        self.run_from(self.project.path(), mode, script, env)
    }

    /// [`World::run`] started in `folder` (the project or a folder in it).
    fn run_from(
        &self,
        folder: &Path,
        mode: &str,
        script: &str,
        env: &[(&str, &str)],
    ) -> (Output, String) {
        let server = MockServer::start(vec![]);
        let call = serde_json::json!({ "command": self.script(script) }).to_string();
        server.push(tool_reply("c1", "bash", &call));
        server.push(answer("done"));
        let mut cmd = server.harness9(self.home.path(), folder);
        cmd.env("HARNESS9_HOME", self.h9.path())
            .env("OPENAI_API_KEY", API_KEY)
            .env("SERVICE_TOKEN", TOKEN_VAR)
            .args([
                "-p",
                "go",
                "--approval-mode",
                "full-auto",
                "--sandbox",
                mode,
            ]);
        for (name, value) in env {
            cmd.env(name, value);
        }
        let out = as_user(cmd, self.user)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let tool = server
            .chat_requests()
            .get(1)
            .and_then(|r| r.tool_results().into_iter().next())
            .unwrap_or_default();
        (out, tool)
    }
}

/// A fresh world for root, when the launcher can build its namespaces here.
fn root_world() -> Option<World> {
    namespaces_for(User::Root).then(|| World::new(User::Root))
}

/// The users for whom the launcher can build its namespaces here (see
/// [`namespaces_for`]).
fn confinable_users() -> impl Iterator<Item = User> {
    USERS.into_iter().filter(|user| namespaces_for(*user))
}

/// Whether the launcher can build its namespaces for `user` here (the kernel may forbid
/// unprivileged user namespaces: a sysctl, AppArmor, a container); says so when not,
/// and the test skips that user.
fn namespaces_for(user: User) -> bool {
    use std::sync::OnceLock;
    static USABLE: [OnceLock<bool>; 2] = [OnceLock::new(), OnceLock::new()];
    *USABLE[usize::from(user == User::Nobody)].get_or_init(|| {
        let mut probe = sandbox_launcher();
        probe.arg("--probe");
        let out = as_user(probe, user)
            .current_dir("/")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        if !out.status.success() {
            eprintln!(
                "skipped for {user:?}: this kernel does not let it build the sandbox's \
                 namespaces: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        out.status.success()
    })
}

fn assert_no_secret(text: &str, what: &str) {
    for secret in ALL_SECRETS {
        assert!(!text.contains(secret), "{what}: {secret} leaked:\n{text}");
    }
}

fn python() -> Option<&'static str> {
    ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
}

/// What can be seen of a file's metadata from outside.
#[derive(Debug, PartialEq, Eq)]
struct Meta {
    mode: u32,
    uid: u32,
    gid: u32,
    mtime: i64,
    size: u64,
    xattrs: String,
}

fn meta(path: &Path) -> Meta {
    let m = std::fs::symlink_metadata(path).unwrap();
    let xattrs = python()
        .map(|py| {
            let out = Command::new(py)
                .args([
                    "-c",
                    "import os,sys; print(sorted(os.listxattr(sys.argv[1])))",
                ])
                .arg(path)
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        })
        .unwrap_or_default();
    Meta {
        mode: m.mode(),
        uid: m.uid(),
        gid: m.gid(),
        mtime: m.mtime(),
        size: m.size(),
        xattrs,
    }
}

#[test]
fn metadata_outside_the_writable_folders_cannot_change() {
    for user in confinable_users() {
        for mode in MODES {
            let world = World::new(user);
            let victim = world.victim();
            let dir = world.outside.path().join("dir");
            let (v, d) = (victim.display(), dir.display());
            let py = python().unwrap_or("false");
            let command = format!(
                "chmod o+w {v}; chmod 600 {v}; chmod -R 777 {d}; chown 1:1 {v}; \
                 chown 65534:65534 {v}; chgrp 0 {v}; touch -d 2001-01-01 {v}; touch -m {v}; \
                 touch -a {d}; {py} -c 'import os; os.utime(\"{v}\", (0, 0))'; \
                 {py} -c 'import os; os.chmod(\"{v}\", 0o777)'; \
                 {py} -c 'import os; os.setxattr(\"{v}\", \"user.h9\", b\"x\")'; \
                 {py} -c 'import os; os.chown(\"{v}\", 0, 0)'; \
                 truncate -s 0 {v}; ln -s x {d}/link; mkdir {d}/sub; rm -f {v}; echo done"
            );
            let before = (meta(&victim), meta(&dir));
            let (_, tool) = world.run(mode, &command, &[]);
            assert!(tool.contains("done"), "{user:?} {mode}: {tool}");
            assert_eq!(
                (meta(&victim), meta(&dir)),
                before,
                "{user:?} {mode}: {tool}"
            );
            assert_eq!(
                std::fs::read_dir(&dir).unwrap().count(),
                0,
                "{user:?} {mode}: {tool}"
            );
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
        }
    }
}

/// Every file beneath `dir` with a set-ID bit.
fn set_id_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let meta = entry.path().symlink_metadata().unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            }
            if meta.permissions().mode() & 0o6000 != 0 {
                found.push(entry.path());
            }
        }
    }
    found
}

#[test]
fn no_set_id_bit_can_be_set_in_the_project_or_tmp() {
    let py = python().unwrap_or("false");
    // A file capability granting CAP_SETUID (VFS_CAP_REVISION_2, effective).
    let capability = "bytes.fromhex(\"0100000280000000\" + \"00\" * 12)";
    for user in USERS {
        let world = World::new(user);
        let scratch = tempfile::tempdir().unwrap();
        if user == User::Nobody {
            chown_tree(scratch.path(), NOBODY);
        }
        for dir in [world.project.path(), scratch.path()] {
            let command = format!(
                "cd {d} && cp /bin/sh a && chmod 4755 a; chmod u+s a; chmod g+s a; \
                 chmod 2755 a; chmod 6777 a; install -m 4755 /bin/sh b; \
                 cp --preserve=mode /usr/bin/gpasswd c; cp -p /usr/bin/gpasswd e; \
                 {py} -c 'import os; os.chmod(\"a\", 0o4755)'; \
                 {py} -c 'import os; os.close(os.open(\"f\", os.O_CREAT | os.O_WRONLY, 0o4755))'; \
                 {py} -c 'import os, stat; os.mknod(\"g\", stat.S_IFREG | 0o2755)'; \
                 {py} -c 'import os; fd = os.open(\"a\", os.O_RDONLY); os.fchmod(fd, 0o6755)'; \
                 {py} -c 'import os; os.setxattr(\"a\", \"security.capability\", {capability})'; \
                 chmod 755 a && echo plain-chmod-works",
                d = dir.display()
            );
            let (_, tool) = world.run("workspace-write", &command, &[]);
            assert!(tool.contains("plain-chmod-works"), "{user:?}: {tool}");
            if python().is_some() {
                assert_eq!(
                    tool.matches("PermissionError").count(),
                    5,
                    "{user:?}: {tool}"
                );
            }
            assert_eq!(set_id_files(dir), Vec::<PathBuf>::new(), "{user:?}: {tool}");
            let caps = Command::new(py)
                .args([
                    "-c",
                    "import os,sys; print('security.capability' in os.listxattr(sys.argv[1]))",
                ])
                .arg(dir.join("a"))
                .output()
                .unwrap();
            if python().is_some() {
                assert_eq!(
                    String::from_utf8_lossy(&caps.stdout).trim(),
                    "False",
                    "{user:?}: {tool}"
                );
            }
        }
    }
}

/// The processes a command inside sees: `PROC <pid> <comm>` lines.
fn processes(tool: &str) -> Vec<(u32, String)> {
    tool.lines()
        .filter_map(|l| l.strip_prefix("PROC "))
        .filter_map(|l| {
            let (pid, comm) = l.split_once(' ')?;
            Some((pid.parse().ok()?, comm.to_string()))
        })
        .collect()
}

#[test]
fn no_process_outside_the_sandbox_is_visible_and_no_environment_holds_a_secret() {
    for user in confinable_users() {
        for mode in MODES {
            let world = World::new(user);
            let command = "echo PPID=$PPID; cat /proc/$PPID/environ; \
                 for e in /proc/[0-9]*/environ; do cat $e; done; \
                 echo; for p in /proc/[0-9]*; do echo \"PROC ${p#/proc/} $(cat $p/comm)\"; done; \
                 cat /proc/1/cmdline; env; echo; echo listed";
            let (out, tool) = world.run(mode, command, &[]);
            assert_exit(&out, 0);
            assert!(tool.contains("listed"), "{user:?} {mode}: {tool}");
            assert_no_secret(&tool, &format!("{user:?} {mode}"));
            let seen = processes(&tool);
            // PID 1 (the launcher), the shell, and what it runs: nothing of the host's.
            assert!(
                (2..=6).contains(&seen.len()),
                "{user:?} {mode}: {seen:?}\n{tool}"
            );
            assert_eq!(seen[0].0, 1, "{seen:?}");
            // The launcher is harness9 or its own binary (`harness9-sandbox`, cut to 15).
            let launcher = |comm: &str| comm == "harness9" || comm == "harness9-sandbo";
            let comms: BTreeSet<&str> = seen.iter().map(|(_, c)| c.as_str()).collect();
            for comm in &comms {
                assert!(
                    launcher(comm) || ["bash", "cat", "sh"].contains(comm),
                    "{user:?} {mode}: a process from outside: {comm} in {seen:?}"
                );
            }
            assert_eq!(
                seen.iter().filter(|(_, c)| launcher(c)).count(),
                1,
                "only the launcher: {seen:?}"
            );
            assert!(launcher(&seen[0].1), "{seen:?}");
        }
    }
}

#[test]
fn secrets_are_unreadable_by_any_spelling() {
    for user in confinable_users() {
        for mode in MODES {
            let world = World::new(user);
            let h9 = world.h9.path().display();
            let command = format!(
                "cat ~/.ssh/id_rsa; cat ~/.aws/credentials; cat ~/.netrc; ls -la ~/.ssh; \
                 cat {h9}/config.toml; cat {h9}/sessions/*; ls {h9}; \
                 cat .env; cat .e*; cat .[e]nv; cat app/config/.env.production; \
                 cat certs/server.pem; grep -r FAKE . ~ {h9}; \
                 ln -s ~/.ssh/id_rsa link 2>/dev/null; cat link; cat /proc/self/root$HOME/.ssh/id_rsa; \
                 cp .env /tmp/h9-copied-env-$$ 2>/dev/null && cat /tmp/h9-copied-env-$$; \
                 tar cf - . 2>/dev/null | strings | grep FAKE; \
                 cat README.md; cat {h9}/skills/kept/SKILL.md; echo finished"
            );
            let (out, tool) = world.run(mode, &command, &[]);
            assert_exit(&out, 0);
            assert!(tool.contains("finished"), "{user:?} {mode}: {tool}");
            assert_no_secret(&tool, &format!("{user:?} {mode}"));
            // What is not secret stays readable, skills in $HARNESS9_HOME included.
            assert!(tool.contains("readable"), "{user:?} {mode}: {tool}");
            assert!(tool.contains("kept skill"), "{user:?} {mode}: {tool}");
            assert_eq!(
                std::fs::read_to_string(world.project.path().join(".env")).unwrap(),
                format!("DB_PASSWORD={DOT_ENV}\n")
            );
        }
    }
}

/// Started in a subfolder of the repository, the project is the repository: its root's
/// secret files are masked as they are from the root.
#[test]
fn from_a_subfolder_the_roots_secret_files_are_masked_too() {
    for user in confinable_users() {
        let world = World::new(user);
        let sub = world.project.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        if user == User::Nobody {
            chown_tree(&sub, NOBODY);
        }
        for mode in MODES {
            let (out, tool) = world.run_from(
                &sub,
                mode,
                "cat ../.env; cat ../app/config/.env.production; cat ../certs/server.pem; \
                 grep -r FAKE .. 2>/dev/null; cat ../README.md; echo finished",
                &[],
            );
            assert_exit(&out, 0);
            assert!(tool.contains("finished"), "{user:?} {mode}: {tool}");
            assert_no_secret(&tool, &format!("{user:?} {mode} from sub/"));
            assert!(tool.contains("readable"), "{user:?} {mode}: {tool}");
        }
    }
}

#[test]
fn git_hooks_and_config_and_the_rules_stay_read_only_in_a_writable_project() {
    for user in confinable_users() {
        let world = World::new(user);
        let p = world.project.path();
        let command = "echo evil > .git/hooks/pre-commit; \
             printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config; \
             echo 'allow = [\"bash\"]' > .harness9/permissions.toml; \
             rm -rf .git/hooks; mv .git/config .git/config.old; mv .harness9 moved; \
             chmod 777 .git/config; ln -sf /tmp .git/hooks/post-checkout; \
             mkdir -p .git/info && echo '* filter=x' > .git/info/attributes; \
             echo ok > fine.txt; echo more >> .git/description; mkdir made; echo ran";
        let (_, tool) = world.run("workspace-write", command, &[]);
        assert!(tool.contains("ran"), "{user:?}: {tool}");
        assert!(!p.join(".git/hooks/pre-commit").exists(), "{tool}");
        assert!(!p.join(".git/hooks/post-checkout").exists(), "{tool}");
        assert!(p.join(".git/hooks/pre-push.sample").exists(), "{tool}");
        assert_eq!(
            std::fs::read_to_string(p.join(".git/config")).unwrap(),
            "[core]\n\tbare = false\n"
        );
        assert_eq!(
            std::fs::metadata(p.join(".git/config")).unwrap().mode() & 0o777,
            0o644
        );
        assert_eq!(
            std::fs::read_to_string(p.join(".harness9/permissions.toml")).unwrap(),
            RULES
        );
        assert!(!p.join("moved").exists() && !p.join(".git/config.old").exists());
        assert_eq!(
            std::fs::read_to_string(p.join(".git/info/attributes")).unwrap(),
            ""
        );
        // The rest of the project, .git's own files included, is writable.
        assert!(p.join("fine.txt").exists(), "{tool}");
        assert!(p.join("made").is_dir(), "{tool}");
        assert_eq!(
            std::fs::read_to_string(p.join(".git/description")).unwrap(),
            "unnamed\nmore\n"
        );
    }
}

#[test]
fn a_missing_hooks_folder_or_a_worktrees_git_file_cannot_be_planted() {
    for user in confinable_users() {
        // A repository without .git/hooks: the command cannot give it one.
        let world = World::new(user);
        let p = world.project.path();
        std::fs::remove_dir_all(p.join(".git/hooks")).unwrap();
        let (_, tool) = world.run(
            "workspace-write",
            "mkdir -p .git/hooks; echo evil > .git/hooks/post-checkout; echo ran",
            &[],
        );
        assert!(tool.contains("ran"), "{tool}");
        assert!(!p.join(".git/hooks/post-checkout").exists(), "{tool}");
        // A linked worktree's .git file names the git folder: it cannot be redirected.
        let world = World::new(user);
        let p = world.project.path();
        std::fs::remove_dir_all(p.join(".git")).unwrap();
        write(&p.join(".git"), "gitdir: /srv/real/.git/worktrees/w\n");
        if user == User::Nobody {
            chown_tree(p, NOBODY);
        }
        let (_, tool) = world.run(
            "workspace-write",
            "echo 'gitdir: /tmp/evil' > .git; rm -f .git; echo ok > fine.txt; echo ran",
            &[],
        );
        assert!(tool.contains("ran"), "{tool}");
        assert_eq!(
            std::fs::read_to_string(p.join(".git")).unwrap(),
            "gitdir: /srv/real/.git/worktrees/w\n"
        );
        assert!(p.join("fine.txt").exists(), "{tool}");
    }
}

#[test]
fn no_mount_or_namespace_call_undoes_a_mask_or_a_read_only_bind() {
    let py = python().unwrap_or("false");
    for user in confinable_users() {
        let world = World::new(user);
        let p = world.project.path();
        let command = format!(
            "umount ~/.ssh; umount -l ~/.ssh; umount .env; umount .git/hooks; \
             mount -o remount,rw /; mount -o remount,rw .git/hooks; \
             mount -t tmpfs none ~/.ssh; mount --bind /tmp /etc; \
             unshare -Urm sh -c 'umount ~/.ssh; cat ~/.ssh/id_rsa'; \
             unshare -m sh -c 'umount -l ~/.ssh; cat ~/.ssh/id_rsa'; \
             {py} -c 'import ctypes; l = ctypes.CDLL(None); print(\"umount2\", l.umount2(b\"{home}/.ssh\", 2))'; \
             {py} -c 'import os; os.unshare(os.CLONE_NEWUSER | os.CLONE_NEWNS)'; \
             chroot / true; nsenter -t 1 -m true; \
             cat ~/.ssh/id_rsa; cat .env; echo evil > .git/hooks/pre-commit; \
             touch /etc/h9-planted; echo ran",
            home = world.home.path().display()
        );
        let (_, tool) = world.run("workspace-write", &command, &[]);
        assert!(tool.contains("ran"), "{user:?}: {tool}");
        assert_no_secret(&tool, &format!("{user:?}"));
        assert!(!p.join(".git/hooks/pre-commit").exists(), "{tool}");
        assert!(!Path::new("/etc/h9-planted").exists(), "{tool}");
        if python().is_some() {
            assert!(tool.contains("umount2 -1"), "{user:?}: {tool}");
        }
    }
}

#[test]
fn without_namespaces_the_session_says_what_is_lost_and_keeps_landlock_and_seccomp() {
    let Some(world) = root_world() else {
        return;
    };
    let outside = world.outside.path().display();
    let command = format!("touch {outside}/new; cp /bin/sh x && chmod 4755 x; cat .env; echo ran");
    let (out, tool) = world.run(
        "workspace-write",
        &command,
        &[("HARNESS9_SANDBOX_NO_NAMESPACES", "1")],
    );
    assert_exit(&out, 0);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("without its namespaces").count(),
        1,
        "{stderr}"
    );
    for lost in ["HARNESS9_SANDBOX_NO_NAMESPACES", "chmod", "~/.ssh", "/proc"] {
        assert!(stderr.contains(lost), "{lost}: {stderr}");
    }
    assert!(tool.contains("ran"), "{tool}");
    // Landlock still refuses writes outside, seccomp still the set-user-ID bit ...
    assert!(!world.outside.path().join("new").exists(), "{tool}");
    assert_eq!(set_id_files(world.project.path()), Vec::<PathBuf>::new());
    // ... and what the namespaces would hide is readable, as the warning said.
    assert!(tool.contains(DOT_ENV), "{tool}");
    // With namespaces, no such warning.
    let (out, _) = world.run("workspace-write", "true", &[]);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("without its namespaces"),
        "{out:?}"
    );
}

/// The launcher, run directly with namespaces and a workspace-write policy in `dir`.
fn launcher(dir: &Path, command: &[&str]) -> Command {
    let mut cmd = sandbox_launcher();
    cmd.args([
        "--mode",
        "workspace-write",
        "--namespaces",
        "on",
        "--project",
    ])
    .arg(dir)
    .arg("--write")
    .arg(dir)
    .arg("--")
    .args(command)
    .current_dir(dir);
    cmd
}

#[test]
fn the_launcher_passes_exit_codes_and_signals_through_and_runs_nothing_unconfined() {
    if !namespaces_for(User::Root) {
        return;
    }
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let run = |command: &[&str]| launcher(dir.path(), command).output().unwrap();
    assert_eq!(run(&["sh", "-c", "exit 7"]).status.code(), Some(7));
    assert_eq!(run(&["sh", "-c", "exit 0"]).status.code(), Some(0));
    assert_eq!(
        run(&["sh", "-c", "kill -TERM $$"]).status.signal(),
        Some(15)
    );
    assert_eq!(run(&["sh", "-c", "kill -KILL $$"]).status.signal(), Some(9));
    assert_eq!(run(&["no-such-program-h9"]).status.code(), Some(127));
    // A launcher inside the sandbox cannot build namespaces (seccomp refuses them): it
    // says so and runs nothing, rather than running the command less confined.
    let bin = env!("CARGO_BIN_EXE_harness9");
    let d = dir.path().display().to_string();
    let inner = format!(
        "{bin} __harness9-sandbox-exec --mode workspace-write --namespaces on --project {d} \
         --write {d} -- touch {d}/inner-ran"
    );
    let out = run(&["sh", "-c", &inner]);
    assert_eq!(out.status.code(), Some(126), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("harness9 sandbox: "),
        "{out:?}"
    );
    assert!(!dir.path().join("inner-ran").exists());
}

/// Processes on the host whose command line holds `marker`.
fn host_processes_with(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .collect()
}

#[test]
fn a_timeout_stops_the_command_and_everything_it_started_inside() {
    let world = World::new(User::Root);
    let server = MockServer::start(vec![]);
    let call = serde_json::json!({
        "command": world.script("(trap '' TERM; exec sleep 4242.5) & trap '' TERM; sleep 4243.5"),
        "timeout_secs": 1
    })
    .to_string();
    server.push(tool_reply("c1", "bash", &call));
    server.push(answer("done"));
    let out = server
        .harness9(world.home.path(), world.project.path())
        .args(["-p", "go", "--approval-mode", "full-auto"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !host_processes_with("4242.5").is_empty() || !host_processes_with("4243.5").is_empty() {
        assert!(
            Instant::now() < deadline,
            "still running: {:?} {:?}",
            host_processes_with("4242.5"),
            host_processes_with("4243.5")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let tool = server.chat_requests()[1].tool_results().join("\n");
    assert!(
        tool.contains("timed out") || tool.contains("timeout"),
        "{tool}"
    );
}

#[test]
fn mcp_list_and_tools_confine_sandboxed_servers_when_commands_are_not() {
    let Some(world) = root_world() else {
        return;
    };
    let outside = world.outside.path().display();
    let probe = format!(
        "{{ touch {outside}/from-server; cat {home}/.ssh/id_rsa; echo probed; }} >&2 2>&1; exec {fixture}",
        home = world.home.path().display(),
        fixture = mcp_fixture().display()
    );
    write(
        &world.h9.path().join("config.toml"),
        &format!(
            "[mcp_servers.boxed]\ncommand = \"sh\"\nargs = [\"-c\", {probe:?}]\nsandbox = true\n"
        ),
    );
    for args in [&["mcp", "list"][..], &["mcp", "tools", "boxed"]] {
        let out = output_of(world.offline().args(args));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_exit(&out, 0);
        assert!(!stdout.contains("failed"), "{args:?}: {stdout}");
        assert!(
            !world.outside.path().join("from-server").exists(),
            "{args:?}: {stdout}"
        );
    }
    let log = std::fs::read_to_string(world.h9.path().join("logs/mcp/boxed.log")).unwrap();
    assert!(log.contains("probed"), "{log}");
    assert!(!log.contains(SSH_KEY), "{log}");
    assert!(log.contains("Read-only file system"), "{log}");
    // Where no sandbox can be had, such a server does not start at all.
    let out = output_of(
        world
            .offline()
            .args(["mcp", "list"])
            .env("HARNESS9_SANDBOX_UNAVAILABLE", "1"),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_has(&stdout, &["failed", "sandbox is not available"]);
    let log = std::fs::read_to_string(world.h9.path().join("logs/mcp/boxed.log")).unwrap();
    assert_eq!(
        log.matches("probed").count(),
        2,
        "it never ran unconfined: {log}"
    );
}

#[test]
fn devices_kernel_settings_and_the_users_sockets_are_out_of_reach() {
    use std::os::unix::net::UnixListener;
    let py = python().unwrap_or("false");
    for user in confinable_users() {
        for mode in MODES {
            let world = World::new(user);
            // The session's bus and an SSH agent, as a desktop session has them.
            let runtime = tempfile::tempdir().unwrap();
            let bus = UnixListener::bind(runtime.path().join("bus")).unwrap();
            let agent_dir = tempfile::tempdir().unwrap();
            let agent = UnixListener::bind(agent_dir.path().join("agent.sock")).unwrap();
            if user == User::Nobody {
                chown_tree(runtime.path(), NOBODY);
                chown_tree(agent_dir.path(), NOBODY);
            }
            bus.set_nonblocking(true).unwrap();
            agent.set_nonblocking(true).unwrap();
            let script = format!(
                "for d in /dev/vda /dev/sda /dev/nvme0n1 /dev/loop0 /dev/mem /dev/port /dev/kmsg \
                 /dev/tty /dev/console; do \
                   [ -e $d ] && head -c 1 $d > /dev/null 2>&1 && echo \"READ $d\"; \
                 done; \
                 for d in /dev/kmsg /dev/tty /dev/console; do \
                   [ -e $d ] && (echo x > $d) 2>/dev/null && echo \"WROTE $d\"; \
                 done; \
                 v=$(cat /proc/sys/vm/swappiness); (echo $v > /proc/sys/vm/swappiness) 2>/dev/null \
                   && echo 'WROTE a kernel setting'; \
                 for s in \"$XDG_RUNTIME_DIR/bus\" \"$SSH_AUTH_SOCK\"; do \
                   {py} -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' \"$s\" \
                     2>/dev/null && echo \"CONNECTED $s\"; \
                 done; \
                 head -c 1 /dev/urandom > /dev/null && echo x > /dev/null && echo devices-work"
            );
            let runtime_dir = runtime.path().display().to_string();
            let agent_sock = agent_dir.path().join("agent.sock").display().to_string();
            let (_, tool) = world.run(
                mode,
                &script,
                &[
                    ("XDG_RUNTIME_DIR", &runtime_dir),
                    ("SSH_AUTH_SOCK", &agent_sock),
                ],
            );
            assert!(tool.contains("devices-work"), "{user:?} {mode}: {tool}");
            for reached in ["READ", "WROTE", "CONNECTED"] {
                assert!(!tool.contains(reached), "{user:?} {mode}: {tool}");
            }
            for listener in [&bus, &agent] {
                assert_eq!(
                    listener.accept().map(|_| ()).unwrap_err().kind(),
                    std::io::ErrorKind::WouldBlock,
                    "{user:?} {mode}: {tool}"
                );
            }
        }
    }
}
