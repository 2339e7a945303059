//! Remembering whether this system can build the sandbox's namespaces, so that only the
//! first start after a change pays for finding out (starting the launcher, building and
//! tearing down the namespaces: about 4 ms before the first request). The answer is
//! kept in `$HARNESS9_HOME/cache/sandbox-namespaces` with a stamp of everything it
//! depends on: the boot, the user, the kernel, the launcher binary and the kernel
//! settings that allow or forbid unprivileged user namespaces. Any change to one of
//! them asks again.
//!
//! A stale "yes" cannot weaken anything: a launcher that then fails to build the
//! namespaces refuses to run the command (exit 126, with the reason). It must not know
//! how the probe is made.

use std::path::{Path, PathBuf};

/// The cache file, in `$HARNESS9_HOME/cache/`.
const FILE: &str = "sandbox-namespaces";

/// Kernel settings that decide whether unprivileged user namespaces work.
const SETTINGS: &[&str] = &[
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    "/proc/sys/kernel/osrelease",
    "/proc/sys/kernel/random/boot_id",
];

/// What was remembered, if it still holds.
pub fn remembered(home: &Path, launcher: &Path) -> Option<Result<(), String>> {
    let text = crate::plain_file::read_to_string(&home.join("cache").join(FILE)).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    if value.get("stamp")?.as_str()? != stamp(launcher)? {
        return None;
    }
    match value.get("reason").and_then(|r| r.as_str()) {
        None => Some(Ok(())),
        Some(reason) => Some(Err(reason.to_string())),
    }
}

/// Remembers the answer (best effort: a cache that cannot be written is asked again).
pub fn remember(home: &Path, launcher: &Path, answer: &Result<(), String>) {
    let Some(stamp) = stamp(launcher) else {
        return;
    };
    let value = match answer {
        Ok(()) => serde_json::json!({ "stamp": stamp }),
        Err(reason) => serde_json::json!({ "stamp": stamp, "reason": reason }),
    };
    let mode = crate::private_files::UpdateMode {
        links: crate::private_files::Links::Follow,
        privacy: crate::private_files::Privacy::Private,
    };
    let path: PathBuf = home.join("cache").join(FILE);
    let _ = crate::private_files::update(&path, mode, |_| {
        Ok::<_, crate::private_files::UpdateIoError>((Some(value.to_string()), ()))
    });
}

/// Everything the answer depends on, as one string; `None` when the launcher cannot
/// be looked at.
fn stamp(launcher: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(launcher).ok()?;
    let mut stamp = format!(
        "uid={} launcher={}:{}:{}:{}",
        nix::unistd::geteuid(),
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime_nsec() + meta.mtime() * 1_000_000_000
    );
    for setting in SETTINGS {
        let value = std::fs::read_to_string(setting).unwrap_or_default();
        stamp.push_str(&format!(" {}={}", setting, value.trim()));
    }
    Some(stamp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_holds_until_what_it_depends_on_changes() {
        let home = tempfile::tempdir().unwrap();
        let launcher = home.path().join("launcher");
        std::fs::write(&launcher, "v1").unwrap();
        assert_eq!(remembered(home.path(), &launcher), None);
        remember(home.path(), &launcher, &Ok(()));
        assert_eq!(remembered(home.path(), &launcher), Some(Ok(())));
        remember(home.path(), &launcher, &Err("no user namespaces".into()));
        assert_eq!(
            remembered(home.path(), &launcher),
            Some(Err("no user namespaces".into()))
        );
        // A new launcher binary asks again.
        std::fs::write(&launcher, "version two").unwrap();
        assert_eq!(remembered(home.path(), &launcher), None);
    }
}
