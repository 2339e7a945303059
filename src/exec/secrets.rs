//! Secrets kept out of child processes: every command harness9 starts for the model or a
//! skill inherits the user's environment minus the provider's API key, the values of
//! configured headers, and every variable whose name looks like a secret (`*_API_KEY`,
//! `*_TOKEN`, `*_SECRET`, `*_PASSWORD`, and a few well-known credential names), with
//! user-configured lists of names to keep or to remove as well.
//!
//! The policy is set once at start-up ([`configure`]) and applied by the launcher to
//! every command; before that (tests, tools used alone) the default policy applies. It
//! must not know where the secrets came from or what the commands are.

use std::ffi::{OsStr, OsString};
use std::sync::OnceLock;

/// Name endings that mark a variable as a secret (compared in upper case).
const SECRET_SUFFIXES: &[&str] = &[
    "_API_KEY",
    "_APIKEY",
    "_TOKEN",
    "_SECRET",
    "_SECRET_KEY",
    "_PASSWORD",
    "_PASSWD",
    "_ACCESS_KEY",
    "_PRIVATE_KEY",
    "_CREDENTIALS",
];

/// Whole names that are secrets although they do not end like one.
const SECRET_NAMES: &[&str] = &[
    "API_KEY",
    "TOKEN",
    "PASSWORD",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "NPM_TOKEN",
    "HF_TOKEN",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
];

/// What is removed from a child's environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretPolicy {
    /// Values that must never reach a child under any name (the API key, header values).
    pub values: Vec<String>,
    /// Extra variable names to remove.
    pub remove: Vec<String>,
    /// Variable names to keep even when they look like secrets (the user's choice).
    pub keep: Vec<String>,
}

static POLICY: OnceLock<SecretPolicy> = OnceLock::new();

/// Sets the policy for the rest of the process (the first call wins).
pub fn configure(policy: SecretPolicy) {
    let _ = POLICY.set(policy);
}

/// The names in `vars` to remove from a child's environment under the configured policy.
pub fn to_remove(vars: impl Iterator<Item = (OsString, OsString)>) -> Vec<OsString> {
    let default = SecretPolicy::default();
    let policy = POLICY.get().unwrap_or(&default);
    vars.filter(|(name, value)| policy.removes(name, value))
        .map(|(name, _)| name)
        .collect()
}

impl SecretPolicy {
    /// Whether the variable `name=value` is kept out of children.
    pub fn removes(&self, name: &OsStr, value: &OsStr) -> bool {
        let name = name.to_string_lossy();
        if self.keep.iter().any(|k| *k == name) {
            return false;
        }
        if self.remove.iter().any(|r| *r == name) || looks_secret(&name) {
            return true;
        }
        let value = value.to_string_lossy();
        !value.is_empty() && self.values.iter().any(|v| !v.is_empty() && *v == value)
    }
}

/// Whether a variable name looks like it holds a secret.
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAMES.contains(&upper.as_str()) || SECRET_SUFFIXES.iter().any(|s| upper.ends_with(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Iterator<Item = (OsString, OsString)> {
        pairs
            .iter()
            .map(|(n, v)| (OsString::from(n), OsString::from(v)))
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn secret_looking_names_go_and_ordinary_ones_stay() {
        for name in [
            "OPENAI_API_KEY",
            "my_service_token",
            "DB_PASSWORD",
            "AWS_SECRET_ACCESS_KEY",
            "GITHUB_TOKEN",
            "STRIPE_SECRET",
            "TOKEN",
        ] {
            assert!(looks_secret(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "TOKENIZERS_PARALLELISM",
            "KEYBOARD",
            "TERM",
            "LANG",
        ] {
            assert!(!looks_secret(name), "{name}");
        }
    }

    #[test]
    fn the_key_goes_under_any_name_and_keep_and_remove_lists_win() {
        let policy = SecretPolicy {
            values: vec!["sk-live-123".into(), String::new()],
            remove: vec!["CORP_CREDS".into()],
            keep: vec!["CI_JOB_TOKEN".into()],
        };
        let env = [
            ("MY_KEY_COPY", "sk-live-123"),
            ("CORP_CREDS", "x"),
            ("CI_JOB_TOKEN", "keep me"),
            ("EMPTY", ""),
            ("PATH", "/usr/bin"),
        ];
        let removed: Vec<String> = env
            .iter()
            .filter(|(n, v)| policy.removes(OsStr::new(n), OsStr::new(v)))
            .map(|(n, _)| n.to_string())
            .collect();
        assert_eq!(removed, vec!["MY_KEY_COPY", "CORP_CREDS"]);
    }

    #[test]
    fn without_configuration_the_default_rule_applies() {
        let removed = to_remove(vars(&[("A_TOKEN", "t"), ("PATH", "/bin")]));
        assert_eq!(removed, vec![OsString::from("A_TOKEN")]);
    }
}
