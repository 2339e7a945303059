//! What a run does first: the allocator told to keep large blocks in mappings of their
//! own (before any large block exists), then, once its configuration is read and before
//! anything else starts, the secrets sealed (kept from children, overwritten in
//! harness9's own environment block and arguments, the process made non-dumpable, and
//! the values registered for redaction in saved sessions), the harness9 home made
//! private, and logging opened on `$HARNESS9_HOME/logs/harness9.log`.
//!
//! It must not know which frontend runs or how anything works inside.

use crate::config::Config;
use crate::exec::secrets::{self, SealError};
use crate::redact::{self, REDACTED, Redactor, SAVED_MIN_LEN};

/// Blocks from this size on get a mapping of their own, returned to the system when
/// freed (glibc's initial threshold).
pub const LARGE_BLOCK: usize = 128 * 1024;

/// Keeps every block of [`LARGE_BLOCK`] or more in a mapping of its own for the whole
/// run. glibc starts so, but raises the threshold to the size of each larger block
/// freed: after a 4 MB answer's saved line is freed, the next multi-megabyte buffers (a
/// copy of the answer, a growing one) come from the heap, where growing copies them and
/// what is freed stays resident. Measured on a 4 MB answer in print mode: 3.5 MB less
/// peak memory (docs/BENCHMARKS.md). Glibc only; elsewhere nothing is changed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub fn keep_large_blocks_mapped() {
    let threshold = libc::c_int::try_from(LARGE_BLOCK).unwrap_or(libc::c_int::MAX);
    // SAFETY: `mallopt` only sets one of the allocator's parameters (under its own lock);
    // it takes no pointers, and a value it refuses only makes it return 0, which is
    // ignored: the allocator then keeps its default behaviour.
    let _ = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, threshold) };
}

/// Elsewhere the allocator is left as it is.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn keep_large_blocks_mapped() {}

/// Once the configuration has read the key and the header values, and before any
/// thread that matters or any child exists: the secrets policy is set, the secrets'
/// values are overwritten in this process's environment block (`/proc/PID/environ`)
/// and arguments (`/proc/PID/cmdline`), and the process is made non-dumpable
/// (docs/SECURITY.md). Nothing reads those variables from the environment after this;
/// what the user names on purpose for an MCP server comes from the policy's memory
/// (`secrets::original_var`). The same values (at least [`SAVED_MIN_LEN`] bytes) are
/// replaced in everything saved in session files. An error leaves the policy in force:
/// commands still never get the secrets.
pub fn seal_secrets(config: &Config) -> Result<(), SealError> {
    let sealed = secrets::seal(config.secret_policy.clone());
    redact::configure_saved(
        Redactor::new()
            .with_all(&config.secret_policy.values, REDACTED, SAVED_MIN_LEN)
            .with_all(secrets::found_values(), REDACTED, SAVED_MIN_LEN),
    );
    sealed
}

/// Whether harness9 can keep files in its home, learnt from opening the log file.
#[derive(Debug)]
pub enum Home {
    /// Logs (and history, caches) are saved.
    Writable,
    /// Nothing is saved this run; the warning says so.
    Unwritable {
        /// The start-up warning.
        warning: String,
    },
}

impl Home {
    /// The warning to show first, if any.
    pub fn warning(&self) -> Option<&str> {
        match self {
            Home::Writable => None,
            Home::Unwritable { warning } => Some(warning),
        }
    }
}

/// Logs go to `$HARNESS9_HOME/logs/harness9.log` (0600 in 0700 folders), never to the
/// screen. The level comes from HARNESS9_LOG (error, warn, info, debug, trace; default
/// warn). Opening the file is also the check that the home can be written. Everything
/// under the home is the user's alone (config.toml may hold keys, the undo store holds
/// copies of project files): a home an older version made wider is tightened to 0700 —
/// unless it is the user's home folder itself.
pub fn init_logging(config: &Config) -> Home {
    let level = std::env::var("HARNESS9_LOG")
        .ok()
        .and_then(|l| l.parse::<tracing::Level>().ok())
        .unwrap_or(tracing::Level::WARN);
    if config.user_home.as_deref() != Some(config.home.as_path()) {
        let _ = crate::private_files::create_private_dir(&config.home);
    }
    let file = match crate::session::open_log_file(&config.home) {
        Ok(file) => file,
        Err(e) => {
            return Home::Unwritable {
                warning: crate::session::unwritable_home_warning(&config.home, &e),
            };
        }
    };
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .try_init();
    Home::Writable
}
