//! What a secret looks like, by a variable's name and by its value: the word lists and
//! token shapes the policy in [`super`] applies. Pure text tests: it must not know the
//! environment, the configuration or any process.

/// Parts of a name that make it a secret wherever they appear (upper case):
/// `PGPASSWORD`, `SECRET_KEY_BASE`, `GOOGLE_APPLICATION_CREDENTIALS`, `SESSION_COOKIE`.
const SECRET_INFIXES: &[&str] = &[
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "PRIVATE",
    "COOKIE",
    "APIKEY",
];

/// Words of a name (split at `_`, `-`, `.`) that make it a secret: `GITHUB_TOKEN`,
/// `AWS_ACCESS_KEY_ID`, `GITLAB_PAT`, `SENTRY_DSN`, `SLACK_WEBHOOK_URL`, `SMTP_PASS`.
const SECRET_WORDS: &[&str] = &[
    "TOKEN",
    "TOKENS",
    "KEY",
    "KEYS",
    "PAT",
    "PASS",
    "DSN",
    "WEBHOOK",
    "WEBHOOKS",
    "JWT",
    "BEARER",
    "SALT",
    "OTP",
    "SIGNATURE",
];

/// Whole names that are secrets although no word of theirs says so.
const SECRET_NAMES: &[&str] = &["DATABASE_URL", "MYSQL_PWD", "PGSERVICEFILE"];

/// Words that begin with `AUTH` but are not credentials (`GIT_AUTHOR_NAME`).
const AUTH_LOOKALIKES: &[&str] = &["AUTHOR", "AUTHORS", "AUTHORITY", "AUTHORITIES"];

/// Whether a variable's name says it holds a secret (case-insensitive).
///
/// A name is a secret when it holds one of [`SECRET_INFIXES`] anywhere, has one of
/// [`SECRET_WORDS`] as a word (or a word ending in `TOKEN`), a word that starts with
/// `AUTH` (`*_AUTH*`: `AUTH`, `AUTHZ`, `AUTHORIZATION`, `AUTHTOKEN`; not `AUTHOR`), a
/// `PWD` word beside others (`DB_PWD`, not the working directory's `PWD`), or is one of
/// [`SECRET_NAMES`]. Socket paths (`SSH_AUTH_SOCK`, `*_SOCKET`) are not secrets: the
/// socket is found in the file system anyway, and tools need the variable.
pub fn name_looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let words: Vec<&str> = upper
        .split(['_', '-', '.'])
        .filter(|w| !w.is_empty())
        .collect();
    if matches!(words.last(), Some(&("SOCK" | "SOCKET"))) {
        return false;
    }
    SECRET_NAMES.contains(&upper.as_str())
        || SECRET_INFIXES.iter().any(|part| upper.contains(part))
        || words.iter().any(|w| {
            SECRET_WORDS.contains(w)
                || w.ends_with("TOKEN")
                || (w.starts_with("AUTH") && !AUTH_LOOKALIKES.contains(w))
        })
        || (words.len() > 1 && words.contains(&"PWD"))
}

/// A well-known token shape: a prefix, then at least `min` characters of `charset`.
struct Shape {
    prefix: &'static str,
    charset: Charset,
    min: usize,
}

/// The characters a token's body is made of.
#[derive(Clone, Copy)]
enum Charset {
    /// Letters and digits.
    Alnum,
    /// Letters, digits, `_` and `-` (base64url and most API keys).
    Url,
    /// Upper-case letters and digits.
    UpperAlnum,
}

impl Charset {
    fn has(self, c: char) -> bool {
        match self {
            Charset::Alnum => c.is_ascii_alphanumeric(),
            Charset::Url => c.is_ascii_alphanumeric() || c == '_' || c == '-',
            Charset::UpperAlnum => c.is_ascii_uppercase() || c.is_ascii_digit(),
        }
    }
}

/// Providers' key formats, as they publish them.
const SHAPES: &[Shape] = &[
    // OpenAI (`sk-`, `sk-proj-`), Anthropic (`sk-ant-`), DeepSeek, OpenRouter (`sk-or-`).
    shape("sk-", Charset::Url, 20),
    // GitHub: personal, OAuth, user-to-server, server-to-server, refresh tokens.
    shape("ghp_", Charset::Alnum, 30),
    shape("gho_", Charset::Alnum, 30),
    shape("ghu_", Charset::Alnum, 30),
    shape("ghs_", Charset::Alnum, 30),
    shape("ghr_", Charset::Alnum, 30),
    shape("github_pat_", Charset::Url, 20),
    // Slack: app, bot, user, refresh, workspace tokens.
    shape("xoxa-", Charset::Url, 10),
    shape("xoxb-", Charset::Url, 10),
    shape("xoxp-", Charset::Url, 10),
    shape("xoxr-", Charset::Url, 10),
    shape("xoxs-", Charset::Url, 10),
    shape("glpat-", Charset::Url, 20),
    // AWS access key ids (long-lived and temporary).
    shape("AKIA", Charset::UpperAlnum, 16),
    shape("ASIA", Charset::UpperAlnum, 16),
    // Google API keys, Hugging Face, npm and PyPI tokens, Stripe secret keys.
    shape("AIza", Charset::Url, 30),
    shape("hf_", Charset::Alnum, 30),
    shape("npm_", Charset::Alnum, 30),
    shape("pypi-", Charset::Url, 50),
    shape("sk_live_", Charset::Alnum, 20),
    shape("rk_live_", Charset::Alnum, 20),
];

const fn shape(prefix: &'static str, charset: Charset, min: usize) -> Shape {
    Shape {
        prefix,
        charset,
        min,
    }
}

/// Whether a value is, or holds, a credential whatever its variable is called: a URL
/// with a password (`scheme://user:pass@host`), a well-known token shape starting at a
/// word boundary ([`SHAPES`]), a JSON Web Token, or PEM private-key text.
pub fn value_looks_secret(value: &str) -> bool {
    value.contains("PRIVATE KEY-----")
        || url_with_password(value)
        || SHAPES.iter().any(|s| has_shape(value, s))
        || has_jwt(value)
}

/// Whether any `scheme://…` in `value` carries a password in its user information.
fn url_with_password(value: &str) -> bool {
    value.match_indices("://").any(|(at, _)| {
        let rest = &value[at + 3..];
        let authority = rest
            .split(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
            .next()
            .unwrap_or("");
        authority.rsplit_once('@').is_some_and(|(userinfo, _)| {
            userinfo
                .split_once(':')
                .is_some_and(|(_, password)| !password.is_empty())
        })
    })
}

/// Whether `value` holds `shape` starting at a word boundary (so `desk-…` is no `sk-`).
fn has_shape(value: &str, shape: &Shape) -> bool {
    value.match_indices(shape.prefix).any(|(at, _)| {
        let boundary = value[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !Charset::Url.has(c));
        boundary
            && value[at + shape.prefix.len()..]
                .chars()
                .take_while(|c| shape.charset.has(*c))
                .count()
                >= shape.min
    })
}

/// `eyJ…​.eyJ…​.…`: a JSON Web Token (its header and payload are base64url JSON).
fn has_jwt(value: &str) -> bool {
    value.match_indices("eyJ").any(|(at, _)| {
        let mut parts = value[at..].split('.');
        let header = parts.next().unwrap_or("");
        let payload = parts.next().unwrap_or("");
        header.len() >= 10
            && header.chars().all(|c| Charset::Url.has(c))
            && payload.starts_with("eyJ")
            && payload.chars().take_while(|c| Charset::Url.has(*c)).count() >= 10
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_by_word_part_and_whole_name() {
        for name in [
            "OPENAI_API_KEY",
            "my_service_token",
            "DB_PASSWORD",
            "PGPASSWORD",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "AWS_SESSION_TOKEN",
            "GITHUB_TOKEN",
            "GHTOKEN",
            "STRIPE_SECRET",
            "TOKEN",
            "API_KEY",
            "DATABASE_URL",
            "database_url",
            "SECRET_KEY_BASE",
            "SLACK_WEBHOOK_URL",
            "SENTRY_DSN",
            "GITHUB_PAT",
            "gitlab-pat",
            "NPM_AUTH",
            "REGISTRY_AUTH_TOKEN",
            "BASIC_AUTHZ",
            "PROXY_AUTHORIZATION",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "CORP_CREDENTIAL_FILE",
            "MY_PRIVATE_THING",
            "SESSION_COOKIE",
            "cookiejar",
            "SMTP_PASS",
            "DB_PWD",
            "MYSQL_PWD",
            "JWT",
            "DJANGO_SALT",
            "OPENAI.API.KEY",
        ] {
            assert!(name_looks_secret(name), "{name} should be a secret");
        }
    }

    /// Everything ordinary a shell, a build or a desktop sets, kept.
    #[test]
    fn ordinary_names_stay() {
        for name in [
            "PATH",
            "HOME",
            "TERM",
            "LANG",
            "LC_ALL",
            "USER",
            "SHELL",
            "PWD",
            "OLDPWD",
            "EDITOR",
            "TOKENIZERS_PARALLELISM",
            "KEYBOARD",
            "KEYMAP",
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "GIT_COMMITTER_NAME",
            "XAUTHORITY",
            "SSH_AUTH_SOCK",
            "GPG_AGENT_SOCKET",
            "SSH_CONNECTION",
            "DISPLAY",
            "XDG_RUNTIME_DIR",
            "DBUS_SESSION_BUS_ADDRESS",
            "CARGO_HOME",
            "RUSTUP_TOOLCHAIN",
            "VIRTUAL_ENV",
            "NODE_ENV",
            "JAVA_HOME",
            "KUBECONFIG",
            "SSL_CERT_FILE",
            "PASSENGER_APP_ENV",
            "MONKEYPATCH",
            "COLORTERM",
            "HOSTNAME",
        ] {
            assert!(!name_looks_secret(name), "{name} should stay");
        }
    }

    #[test]
    fn secret_values_by_shape_whatever_the_name() {
        for value in [
            "postgres://app:hunter2@db.internal:5432/prod",
            "redis://:pw@localhost:6379/0",
            "amqps://user:p%40ss@mq/vhost",
            "jdbc:mysql://root:toor@127.0.0.1/x",
            "see https://u:p@host/path and more",
            "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
            "sk-ant-api03-abcdefghijklmnopqrstuvwx",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "github_pat_11ABCDEFG0123456789_abcdefghijkl",
            "xoxb-1234567890-abcdefghij",
            "xoxp-1234567890-abcdefghij",
            "glpat-abcdefghij0123456789",
            "AKIAIOSFODNN7EXAMPLE",
            "ASIAIOSFODNN7EXAMPLE",
            "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
            "hf_abcdefghijklmnopqrstuvwxyz0123456789",
            "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n",
            "-----BEGIN RSA PRIVATE KEY-----",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig",
        ] {
            assert!(value_looks_secret(value), "{value} should be a secret");
        }
    }

    #[test]
    fn ordinary_values_stay() {
        for value in [
            "/usr/local/bin:/usr/bin:/bin",
            "https://example.com/path?q=1",
            "https://user@example.com/",
            "postgres://localhost/dev",
            "ssh://git@github.com/org/repo.git",
            "xterm-256color",
            "en_US.UTF-8",
            "desk-abcdefghijklmnopqrstuvwxyz0123",
            "sk-short",
            "task-runner",
            "AKIA",
            "-----BEGIN CERTIFICATE-----",
            "false",
            "",
        ] {
            assert!(!value_looks_secret(value), "{value} should stay");
        }
    }
}
