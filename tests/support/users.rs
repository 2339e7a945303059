//! Who runs the binary in the tests that run it both as root and as an unprivileged
//! user: [`User`], [`as_user`] (a command re-run through `setpriv` as uid and gid
//! 65534) and [`chown_tree`] (a folder handed to a user). Only processes and paths.

use std::path::Path;
use std::process::Command;

/// Who runs harness9.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum User {
    Root,
    /// uid and gid 65534, no supplementary groups.
    Nobody,
}

/// Both users.
pub const USERS: [User; 2] = [User::Root, User::Nobody];

/// The unprivileged user's uid and gid.
pub const NOBODY: u32 = 65534;

/// Gives `path` and everything below it to `uid` (as its group too).
pub fn chown_tree(path: &Path, uid: u32) {
    let status = Command::new("chown")
        .arg("-R")
        .arg(format!("{uid}:{uid}"))
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// `cmd` as `user` would run it: unchanged for root, else through `setpriv` with the
/// same arguments, folder and environment (and nothing else of the test's).
pub fn as_user(cmd: Command, user: User) -> Command {
    if user == User::Root {
        return cmd;
    }
    let mut wrapped = Command::new("setpriv");
    wrapped
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .env_clear();
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    for (name, value) in cmd.get_envs() {
        if let Some(value) = value {
            wrapped.env(name, value);
        }
    }
    wrapped
}
