//! Every process group harness9 started that may still run: commands while they run,
//! the background jobs a command left running ([`super::Leftovers::Leave`]), and
//! long-lived services (MCP servers). [`stop_all`] stops them all when harness9 itself
//! is told to end (SIGTERM, SIGHUP), so nothing it started outlives it.
//!
//! A group is remembered with its leader's start time: once every process of a group
//! is gone its number may be reused, and the new owner of that number (whose leader
//! starts later) is never signalled. It knows process groups and `/proc`; it must not
//! know what the commands are.

use std::sync::Mutex;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// How long the groups get between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(1);
/// How often [`stop_all`] looks whether they are gone.
const POLL: Duration = Duration::from_millis(10);

/// One group: its id, and its leader's start time (clock ticks since boot) when it was
/// started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Group {
    pgid: i32,
    leader_start: Option<u64>,
}

static GROUPS: Mutex<Vec<Group>> = Mutex::new(Vec::new());

fn groups() -> std::sync::MutexGuard<'static, Vec<Group>> {
    GROUPS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Remembers the group `pgid` (its leader has just been spawned, so it runs), and
/// forgets the remembered ones that are gone.
pub(super) fn register(pgid: Pid) {
    let group = Group {
        pgid: pgid.as_raw(),
        leader_start: start_time(pgid.as_raw()),
    };
    let mut all = groups();
    all.retain(|g| g.pgid != group.pgid && still_there(*g));
    all.push(group);
}

/// Forgets the group `pgid` (it was stopped, or its command ended and left nothing).
pub(super) fn unregister(pgid: Pid) {
    groups().retain(|g| g.pgid != pgid.as_raw());
}

/// Whether the group `pgid` is remembered (tests).
#[cfg(test)]
pub(super) fn remembered(pgid: Pid) -> bool {
    groups().iter().any(|g| g.pgid == pgid.as_raw())
}

/// Stops every remembered group: SIGTERM, then SIGKILL for what is left after a grace
/// of a second (or at once when all are gone). Returns how many groups were signalled.
pub async fn stop_all() -> usize {
    let all = std::mem::take(&mut *groups());
    stop(all).await
}

/// Stops `groups` as [`stop_all`] says.
async fn stop(groups: Vec<Group>) -> usize {
    let doomed: Vec<Group> = groups.into_iter().filter(|g| still_there(*g)).collect();
    for group in &doomed {
        let _ = killpg(Pid::from_raw(group.pgid), Signal::SIGTERM);
    }
    let deadline = tokio::time::Instant::now() + GRACE;
    while doomed.iter().any(|g| still_there(*g)) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(POLL).await;
    }
    for group in &doomed {
        if still_there(*group) {
            let _ = killpg(Pid::from_raw(group.pgid), Signal::SIGKILL);
        }
    }
    doomed.len()
}

/// Whether the group still has a process, and is still ours: a process whose id is the
/// group's number but that started after our leader did means the number was reused.
fn still_there(group: Group) -> bool {
    let reused = match (group.leader_start, start_time(group.pgid)) {
        (Some(ours), Some(now)) => now != ours,
        _ => false,
    };
    !reused && killpg(Pid::from_raw(group.pgid), None).is_ok()
}

/// A process's start time (field 22 of `/proc/PID/stat`); `None` when it is gone.
fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after_name) = stat.rsplit_once(')')?;
    // Field 3 (the state) is the first after the name.
    after_name.split_whitespace().nth(22 - 3)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    fn spawn_group(script: &str) -> std::process::Child {
        std::process::Command::new("sh")
            .args(["-c", script])
            .process_group(0)
            .spawn()
            .unwrap()
    }

    #[test]
    fn start_times_are_read_and_a_reused_number_is_not_ours() {
        let mut child = spawn_group("exec sleep 30");
        let pgid = i32::try_from(child.id()).unwrap();
        let ours = Group {
            pgid,
            leader_start: start_time(pgid),
        };
        assert!(ours.leader_start.is_some());
        assert!(still_there(ours));
        let reused = Group {
            leader_start: ours.leader_start.map(|s| s + 1),
            ..ours
        };
        assert!(!still_there(reused));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!still_there(ours));
    }

    /// A group whose leader left a background job: both go.
    #[tokio::test]
    async fn stopping_ends_the_group_and_what_it_left_running() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let mut child = spawn_group(&format!(
            "sleep 300 & echo $! > {}; wait",
            pidfile.display()
        ));
        let pgid = Pid::from_raw(i32::try_from(child.id()).unwrap());
        register(pgid);
        assert!(remembered(pgid));
        crate::exec::test_support::wait_for("the job's pid", || {
            std::fs::read_to_string(&pidfile).is_ok_and(|t| t.ends_with('\n'))
        })
        .await;
        let job = crate::exec::test_support::read_pid(&pidfile);
        // The leader is reaped on a thread, as tokio does for commands.
        let reaper = std::thread::spawn(move || child.wait());
        // Only this group: other tests' commands run in this process too.
        let group = groups().iter().copied().find(|g| g.pgid == pgid.as_raw());
        unregister(pgid);
        assert!(!remembered(pgid));
        assert_eq!(stop(group.into_iter().collect()).await, 1);
        reaper.join().unwrap().unwrap();
        crate::exec::test_support::wait_for("the background job to die", || {
            crate::exec::test_support::process_gone(job)
        })
        .await;
    }
}
