//! Long-lived children that speak on their stdin and stdout (MCP stdio servers): started
//! like every other child (own process group, secrets kept out of the environment,
//! optionally through the sandbox launcher), but handed back running with their three
//! pipes, for the caller to talk to. Dropping the [`Service`] kills its whole group, so a
//! server never outlives the session, and neither does anything it started.
//!
//! It knows processes and pipes; it must not know the protocol spoken on them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

use super::ExecError;
use super::secrets;
use super::supervise::ProcessGroup;
use crate::sandbox::SandboxPolicy;

/// What to start.
#[derive(Debug, Clone)]
pub struct ServiceCommand {
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its working directory.
    pub cwd: PathBuf,
    /// Variables set for it (they win over the environment and over the secrets rule).
    pub env: BTreeMap<String, String>,
    /// Variables of this process passed on although they look like secrets.
    pub keep: Vec<String>,
    /// The sandbox it runs in, if any (through the launcher at `launcher`).
    pub sandbox: Option<(Arc<SandboxPolicy>, PathBuf)>,
}

/// A started service: its pipes (taken by the caller) and its group, killed on drop.
pub struct Service {
    /// Its stdin, until taken.
    pub stdin: Option<ChildStdin>,
    /// Its stdout, until taken.
    pub stdout: Option<ChildStdout>,
    /// Its stderr, until taken.
    pub stderr: Option<ChildStderr>,
    child: Child,
    _group: ProcessGroup,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("pid", &self.child.id())
            .finish()
    }
}

impl Service {
    /// Its exit status, if it has exited (without waiting).
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Its process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}

/// Starts `command` with its three pipes.
pub fn spawn(command: &ServiceCommand) -> Result<Service, ExecError> {
    let mut cmd = match &command.sandbox {
        Some((policy, launcher)) => Command::from(crate::sandbox::command_for(
            launcher,
            policy,
            std::ffi::OsStr::new(&command.program),
            &command.args,
        )),
        None => {
            let mut cmd = Command::new(&command.program);
            cmd.args(&command.args);
            cmd
        }
    };
    cmd.current_dir(existing(&command.cwd))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for name in secrets::to_remove(std::env::vars_os()) {
        cmd.env_remove(name);
    }
    // Named on purpose: passed on with the value the user set (a secret's value is
    // overwritten in harness9's own environment block, so it comes from the policy's
    // memory).
    for name in &command.keep {
        if let Some(value) = secrets::original_var_os(name) {
            cmd.env(name, value);
        }
    }
    for (name, value) in &command.env {
        cmd.env(name, value);
    }
    cmd.process_group(0).kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|source| ExecError::Spawn {
        program: command.program.clone(),
        source,
    })?;
    let group = ProcessGroup::of(&child);
    Ok(Service {
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
        child,
        _group: group,
    })
}

fn existing(dir: &Path) -> &Path {
    if dir.is_dir() { dir } else { Path::new("/") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    #[tokio::test]
    async fn a_service_talks_on_its_pipes_and_dies_with_its_handle() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let command = ServiceCommand {
            program: "sh".into(),
            args: vec![
                "-c".into(),
                format!(
                    "sleep 300 & echo $! > {}; echo started >&2; read line; echo \"got $line $MCP_X\"; wait",
                    pidfile.display()
                ),
            ],
            cwd: dir.path().to_path_buf(),
            env: BTreeMap::from([("MCP_X".to_string(), "x".to_string())]),
            keep: Vec::new(),
            sandbox: None,
        };
        let mut service = spawn(&command).unwrap();
        let mut stdin = service.stdin.take().unwrap();
        let mut stdout = BufReader::new(service.stdout.take().unwrap()).lines();
        let mut stderr = BufReader::new(service.stderr.take().unwrap()).lines();
        assert_eq!(
            stderr.next_line().await.unwrap().as_deref(),
            Some("started")
        );
        stdin.write_all(b"hello\n").await.unwrap();
        assert_eq!(
            stdout.next_line().await.unwrap().as_deref(),
            Some("got hello x")
        );
        assert!(service.exited().is_none());
        let grandchild = crate::exec::test_support::read_pid(&pidfile);
        drop(service);
        crate::exec::test_support::wait_for("the group to die with its handle", || {
            crate::exec::test_support::process_gone(grandchild)
        })
        .await;
    }
}
