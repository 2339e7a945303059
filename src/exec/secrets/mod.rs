//! Secrets kept out of child processes and out of harness9's own environment block.
//! Every command harness9 starts for the model or a skill inherits the user's
//! environment minus the provider's API key and the values of configured headers (under
//! any name), every variable whose name or value looks like a secret ([`shapes`]), the
//! names the user lists in `child_env_remove`, and the variables that change what bash
//! does before it reads a command line (`CDPATH` always; `BASH_ENV`, `ENV`, `SHELLOPTS`,
//! `BASHOPTS` and exported functions unless kept). `child_env_keep` keeps chosen ones.
//! Names in both lists are case-insensitive and may hold `*` (any run of characters).
//!
//! The policy is set once at start-up ([`seal`]): it also remembers the original values
//! of the secrets it found, overwrites them in harness9's own environment block
//! ([`super::self_env`]) so `/proc/PID/environ` no longer shows them (and arguments
//! holding one in `/proc/PID/cmdline`), and makes the process non-dumpable. Before that (tests, tools used alone) the default policy
//! applies. It must not know where the secrets came from or what the commands are.

use std::ffi::{OsStr, OsString};
use std::sync::OnceLock;

mod shapes;

pub use shapes::{name_looks_secret, value_looks_secret};

/// Variables no child gets, whatever the lists say: `CDPATH` changes where `cd x` goes,
/// which the permission rules read as the folder `x` under the working directory.
const ALWAYS_REMOVED: &[&str] = &["CDPATH"];

/// Variables that make a shell run code, or behave differently, before the command line
/// it was given: a file `bash -c` sources first (`BASH_ENV`; `ENV` for `sh`), shell
/// options taken from the environment, and exported functions (`BASH_FUNC_name%%`),
/// which would replace any command the permission rules judged. Removed unless kept.
const SHELL_STARTUP: &[&str] = &["BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "BASH_FUNC_*"];

/// What is removed from a child's environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretPolicy {
    /// Values that must never reach a child under any name (the API key, header values).
    pub values: Vec<String>,
    /// Extra variable names (or `*` patterns) to remove.
    pub remove: Vec<String>,
    /// Variable names (or `*` patterns) to keep even when they look like secrets (the
    /// user's choice).
    pub keep: Vec<String>,
}

impl SecretPolicy {
    /// Whether the variable `name=value` is kept out of children.
    pub fn removes(&self, name: &OsStr, value: &OsStr) -> bool {
        let text = name.to_string_lossy();
        if ALWAYS_REMOVED.iter().any(|p| name_matches(p, &text)) {
            return true;
        }
        if self.keeps(&text) {
            return false;
        }
        SHELL_STARTUP.iter().any(|p| name_matches(p, &text)) || self.is_secret(name, value)
    }

    /// Whether `name=value` holds a secret: removed from children, hidden in harness9's
    /// own environment block, and redacted from saved sessions. A kept name is no
    /// secret (children see it anyway).
    pub fn is_secret(&self, name: &OsStr, value: &OsStr) -> bool {
        let name = name.to_string_lossy();
        if self.keeps(&name) {
            return false;
        }
        if self.remove.iter().any(|p| name_matches(p, &name)) || name_looks_secret(&name) {
            return true;
        }
        let value = value.to_string_lossy();
        let trimmed = value.trim();
        !trimmed.is_empty()
            && (value_looks_secret(&value)
                || self
                    .values
                    .iter()
                    .any(|v| !v.trim().is_empty() && v.trim() == trimmed))
    }

    fn keeps(&self, name: &str) -> bool {
        self.keep.iter().any(|p| name_matches(p, name))
    }
}

/// Whether `name` matches `pattern`, ignoring ASCII case; `*` in the pattern matches any
/// run of characters (none included).
pub fn name_matches(pattern: &str, name: &str) -> bool {
    let pattern = pattern.to_ascii_uppercase();
    let name = name.to_ascii_uppercase();
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The policy in force, and the secrets found in the environment when it was set.
#[derive(Debug)]
struct Sealed {
    policy: SecretPolicy,
    /// Each secret variable with its value as it was before it was hidden.
    found: Vec<(OsString, OsString)>,
}

static SEALED: OnceLock<Sealed> = OnceLock::new();

/// Why harness9's own environment could not be sealed (commands still never get the
/// secrets; only `/proc/PID/environ` or the process's dumpability is affected).
#[derive(Debug, thiserror::Error)]
pub enum SealError {
    /// The values could not be overwritten in the environment block.
    #[error(
        "cannot hide the API key and other secrets in harness9's own environment \
         (/proc/{pid}/environ): {source}"
    )]
    Hide {
        /// harness9's process id.
        pid: u32,
        /// Why.
        #[source]
        source: super::self_env::SelfEnvError,
    },
    /// The process could not be made non-dumpable.
    #[error(
        "cannot make harness9 non-dumpable, so processes of the same user can read its \
         memory: {0}"
    )]
    Dumpable(#[source] super::self_env::SelfEnvError),
}

/// Sets the policy for the rest of the process (the first call wins), remembers the
/// secrets the environment holds now, overwrites their values in this process's
/// environment block (and the arguments that hold one in its command line), and makes
/// the process non-dumpable. Call it once the
/// configuration has read what it needs from the environment and before any child
/// starts. Errors leave the policy set: children still never see the secrets.
pub fn seal(policy: SecretPolicy) -> Result<(), SealError> {
    configure(policy);
    let Some(sealed) = SEALED.get() else {
        return Ok(());
    };
    let hidden = super::self_env::hide_values(&|name, value| {
        sealed.policy.is_secret(name, value)
            || sealed.found.iter().any(|(n, _)| n.as_os_str() == name)
    });
    // An argument that holds one (a base URL with a password, a prompt quoting the key)
    // would show in `ps` to every user.
    let secrets: Vec<String> = sealed
        .policy
        .values
        .iter()
        .cloned()
        .chain(
            sealed
                .found
                .iter()
                .map(|(_, v)| v.to_string_lossy().into_owned()),
        )
        .map(|v| v.trim().to_string())
        .filter(|v| v.len() >= 4)
        .collect();
    let arguments = super::self_env::hide_arguments(&|argument| {
        let argument = argument.to_string_lossy();
        value_looks_secret(&argument) || secrets.iter().any(|s| argument.contains(s.as_str()))
    });
    let dumpable = super::self_env::make_undumpable();
    hidden.and(arguments).map_err(|source| SealError::Hide {
        pid: std::process::id(),
        source,
    })?;
    dumpable.map_err(SealError::Dumpable)
}

/// Sets the policy (the first call wins) and remembers the secrets the environment holds
/// now, without touching the environment block (tests, `mcp` subcommands).
pub fn configure(policy: SecretPolicy) {
    let _ = SEALED.get_or_init(|| {
        let found = std::env::vars_os()
            .filter(|(name, value)| policy.is_secret(name, value))
            .collect();
        Sealed { policy, found }
    });
}

/// The names in `vars` to remove from a child's environment under the configured policy
/// (a secret found at start-up goes whatever its value reads now).
pub fn to_remove(vars: impl Iterator<Item = (OsString, OsString)>) -> Vec<OsString> {
    let default = SecretPolicy::default();
    let sealed = SEALED.get();
    let policy = sealed.map_or(&default, |s| &s.policy);
    vars.filter(|(name, value)| {
        policy.removes(name, value)
            || sealed.is_some_and(|s| s.found.iter().any(|(n, _)| n == name))
    })
    .map(|(name, _)| name)
    .collect()
}

/// A variable as the user set it: the remembered value of a secret (its value in the
/// environment block is overwritten), else the environment's. For what the user names
/// on purpose: an MCP server's `env_vars` and `bearer_token_env`.
pub fn original_var_os(name: &str) -> Option<OsString> {
    SEALED
        .get()
        .and_then(|s| s.found.iter().find(|(n, _)| n == name))
        .map(|(_, value)| value.clone())
        .or_else(|| std::env::var_os(name))
}

/// [`original_var_os`] as text (`None` when unset or not UTF-8).
pub fn original_var(name: &str) -> Option<String> {
    original_var_os(name).and_then(|v| v.into_string().ok())
}

/// The secret values the environment held at start-up, for redaction.
pub fn found_values() -> Vec<String> {
    SEALED
        .get()
        .map(|s| {
            s.found
                .iter()
                .map(|(_, v)| v.to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn removed(policy: &SecretPolicy, env: &[(&str, &str)]) -> Vec<String> {
        env.iter()
            .filter(|(n, v)| policy.removes(OsStr::new(n), OsStr::new(v)))
            .map(|(n, _)| n.to_string())
            .collect()
    }

    #[test]
    fn the_key_goes_under_any_name_and_keep_and_remove_lists_win() {
        let policy = SecretPolicy {
            values: vec!["sk-live-123".into(), String::new(), " hdr-value ".into()],
            remove: vec!["CORP_CREDS".into(), "acme_*".into()],
            keep: vec!["ci_job_token".into(), "KEEP_*_TOKEN".into()],
        };
        let env = [
            ("MY_KEY_COPY", "sk-live-123"),
            ("HDR_COPY", "hdr-value"),
            ("corp_creds", "x"),
            ("ACME_THING", "x"),
            ("CI_JOB_TOKEN", "keep me"),
            ("KEEP_BUILD_TOKEN", "keep me"),
            ("EMPTY", ""),
            ("PATH", "/usr/bin"),
        ];
        assert_eq!(
            removed(&policy, &env),
            vec!["MY_KEY_COPY", "HDR_COPY", "corp_creds", "ACME_THING"]
        );
    }

    /// `CDPATH` goes even when kept; the shell's start-up variables go unless kept.
    #[test]
    fn variables_that_change_what_bash_runs_are_removed() {
        let env = [
            ("CDPATH", "/elsewhere"),
            ("BASH_ENV", "/home/u/.bash_env"),
            ("ENV", "/home/u/.shrc"),
            ("SHELLOPTS", "xtrace"),
            ("BASHOPTS", "extglob"),
            ("BASH_FUNC_ls%%", "() { rm -rf ~; }"),
            ("PATH", "/usr/bin"),
        ];
        let default = SecretPolicy::default();
        assert_eq!(
            removed(&default, &env),
            vec![
                "CDPATH",
                "BASH_ENV",
                "ENV",
                "SHELLOPTS",
                "BASHOPTS",
                "BASH_FUNC_ls%%"
            ]
        );
        let keeping = SecretPolicy {
            keep: vec!["CDPATH".into(), "BASH_ENV".into(), "bash_func_*".into()],
            ..SecretPolicy::default()
        };
        assert_eq!(
            removed(&keeping, &env),
            vec!["CDPATH", "ENV", "SHELLOPTS", "BASHOPTS"]
        );
        // None of them is a secret to hide or redact.
        for (name, value) in env {
            assert!(!default.is_secret(OsStr::new(name), OsStr::new(value)));
        }
    }

    #[test]
    fn secrets_by_value_go_whatever_the_name() {
        let env = [
            ("DEPLOY_TARGET", "postgres://app:hunter2@db/prod"),
            ("X", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            ("SOMETHING", "-----BEGIN PRIVATE KEY-----\nabc"),
            ("HOMEPAGE", "https://example.com/"),
        ];
        assert_eq!(
            removed(&SecretPolicy::default(), &env),
            vec!["DEPLOY_TARGET", "X", "SOMETHING"]
        );
    }

    #[test]
    fn patterns_match_whole_names_ignoring_case() {
        for (pattern, name) in [
            ("CORP_CREDS", "corp_creds"),
            ("CORP_*", "CORP_X"),
            ("CORP_*", "CORP_"),
            ("*_SECRET_*", "A_SECRET_B"),
            ("*", "ANY"),
            ("A*B*C", "AxxBxxC"),
            ("bash_func_*", "BASH_FUNC_ls%%"),
        ] {
            assert!(name_matches(pattern, name), "{pattern} {name}");
        }
        for (pattern, name) in [
            ("CORP_CREDS", "CORP_CREDS_2"),
            ("CORP_*", "XCORP_A"),
            ("A*B*C", "AxxCxxB"),
            ("AB*BA", "ABA"),
        ] {
            assert!(!name_matches(pattern, name), "{pattern} {name}");
        }
    }

    #[test]
    fn without_configuration_the_default_rule_applies() {
        let vars = [("A_TOKEN", "t"), ("PATH", "/bin")]
            .map(|(n, v)| (OsString::from(n), OsString::from(v)));
        let removed = to_remove(vars.into_iter());
        assert_eq!(removed, vec![OsString::from("A_TOKEN")]);
    }
}
