//! Helpers for tests that check processes really went away: whether a pid is gone,
//! waiting on a condition or on live output with a deadline, reading a pid a script
//! wrote and waiting for that process to die. Test-only; knows `/proc`, nothing of tools.

use std::path::Path;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

/// True when `pid` no longer exists or is a zombie waiting to be reaped.
pub(crate) fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Waits until `condition` holds; panics naming `what` after 10 s.
pub(crate) async fn wait_for(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A pid a test script wrote to `path`.
pub(crate) fn read_pid(path: &Path) -> i32 {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Waits (at most 10 s) for the process whose pid a test script wrote to `pid_file` to
/// die; panics naming `what` otherwise.
pub(crate) async fn expect_killed(pid_file: &Path, what: &str) {
    let pid = read_pid(pid_file);
    wait_for(what, || process_gone(pid)).await;
}

/// Aborts `task`, as dropping a call does, and waits for the background job whose pid a
/// test script wrote to `pid_file` to die.
pub(crate) async fn abort_and_expect_killed<T>(task: tokio::task::JoinHandle<T>, pid_file: &Path) {
    task.abort();
    let _ = task.await;
    expect_killed(pid_file, "the background job to die").await;
}

/// Collects live output until it contains `needle`; panics after 10 s without it.
pub(crate) async fn wait_live(rx: &mut UnboundedReceiver<String>, needle: &str) -> String {
    let mut seen = String::new();
    while !seen.contains(needle) {
        match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
            Ok(Some(piece)) => seen.push_str(&piece),
            _ => panic!("no {needle:?} in live output: {seen:?}"),
        }
    }
    seen
}

/// Cancels a running call and waits (at most 10 s) for it to end; asserts that its result
/// is what `interrupted` expects of a call cut short.
pub(crate) async fn cancel_and_expect<T: std::fmt::Debug>(
    cancel: &tokio_util::sync::CancellationToken,
    task: tokio::task::JoinHandle<T>,
    interrupted: impl Fn(&T) -> bool,
) {
    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("the call ends promptly once cancelled")
        .expect("the call's task did not panic");
    assert!(interrupted(&result), "{result:?}");
}
