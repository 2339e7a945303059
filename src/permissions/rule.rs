//! One permission rule as a person writes it — `bash(cargo test:*)`,
//! `read_file(**/.env*)`, `edit(src/**)`, `*(**/*.pem)`, `bash` — parsed into which
//! tools it names and what of a call it matches: the words of a command (a prefix with
//! `:*`, else the exact command) or a path glob.
//!
//! It owns the rule syntax and matching of one call subject against one rule; it must
//! not know where rules come from, their precedence or the approval mode.

use std::path::Path;

use globset::GlobBuilder;

use super::lazy_glob::LazyGlob;
use super::shell::{self, SimpleCommand};

/// A rule that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rule `{rule}`: {reason}")]
pub struct RuleError {
    /// The rule as written.
    pub rule: String,
    /// What is wrong with it.
    pub reason: String,
}

/// A parsed rule.
#[derive(Debug, Clone)]
pub struct Rule {
    text: String,
    tools: ToolSelector,
    spec: Spec,
}

/// Which tools a rule names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolSelector {
    /// `*`: every tool.
    Any,
    /// `read`: the tools that read files (`read_file`, `grep`, `glob`, `list`).
    Readers,
    /// `edit`: the tools that change files (`edit_file`, `write_file`).
    Editors,
    /// One tool by its name.
    Named(String),
}

/// The tools in the `read` group.
pub const READERS: &[&str] = &["read_file", "grep", "glob", "list", "view_image"];
/// The tools in the `edit` group.
pub const EDITORS: &[&str] = &["edit_file", "write_file"];

impl ToolSelector {
    fn covers(&self, tool: &str) -> bool {
        match self {
            ToolSelector::Any => true,
            ToolSelector::Readers => READERS.contains(&tool),
            ToolSelector::Editors => EDITORS.contains(&tool),
            ToolSelector::Named(name) => name == tool || covers_as_server(name, tool),
        }
    }
}

/// `mcp__NAME` (a server, no tool part) names every tool of that server.
fn covers_as_server(rule: &str, tool: &str) -> bool {
    rule.strip_prefix("mcp__")
        .is_some_and(|server| !server.is_empty() && !server.contains("__"))
        && tool
            .strip_prefix(rule)
            .is_some_and(|rest| rest.starts_with("__") && rest.len() > 2)
}

/// What of a call a rule matches.
#[derive(Debug, Clone)]
enum Spec {
    /// No parentheses: every call of the tool.
    All,
    /// The text inside the parentheses, read both ways; which one applies depends on
    /// the call (a command or a path).
    Given {
        /// The words of the command, when the text reads as one plain command.
        command: Option<CommandSpec>,
        /// The text as a path glob, checked when the rule is read and compiled into a
        /// matcher only when a path could match it (`lazy_glob.rs`): start-up reads
        /// every rule but matches none, and most judged paths need none compiled.
        glob: Box<LazyGlob>,
        /// The same glob where its leading folders really are, when a link moves them
        /// (absolute globs only).
        alternative: Option<Box<LazyGlob>>,
        /// Whether the glob is anchored at the file system root (`/…` or `~/…`).
        absolute: bool,
        /// Whether the glob starts with `**/` (matches at any depth, in or out of the
        /// project).
        any_depth: bool,
        /// The text as a host pattern (`example.com`, `*.example.com`), when it reads
        /// as one: what `web_fetch(…)` rules match.
        domain: Option<DomainPattern>,
    },
}

/// A host pattern: one host exactly, or every host below a domain (`*.example.com`,
/// which does not match `example.com` itself). Stored lowercased; hosts are compared
/// lowercased.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainPattern {
    /// This host.
    Exact {
        /// The host.
        host: String,
    },
    /// Hosts ending in `.suffix`.
    Below {
        /// The domain after `*.`.
        suffix: String,
    },
}

impl DomainPattern {
    /// Reads `text` as a host pattern: letters, digits, `-` and `.` (an IPv4 address
    /// too), or a bracketed IPv6 address, optionally after `*.`; `None` otherwise.
    pub fn parse(text: &str) -> Option<DomainPattern> {
        let lower = text.to_ascii_lowercase();
        let (below, host) = match lower.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, lower.as_str()),
        };
        let is_name = !host.is_empty()
            && !host.starts_with('.')
            && !host.ends_with('.')
            && !host.contains("..")
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
        let is_v6 = !below
            && host.len() > 2
            && host.starts_with('[')
            && host.ends_with(']')
            && host[1..host.len() - 1]
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.');
        match (is_name || is_v6, below) {
            (false, _) => None,
            (true, false) => Some(DomainPattern::Exact {
                host: host.to_string(),
            }),
            (true, true) => Some(DomainPattern::Below {
                suffix: host.to_string(),
            }),
        }
    }

    /// Whether `host` (any case) is what this pattern names. An address is compared as
    /// an address, so `[::ffff:127.0.0.1]` names the host a URL spells `[::ffff:7f00:1]`.
    pub fn matches(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        match self {
            DomainPattern::Exact { host: want } => match (address_of(want), address_of(&host)) {
                (Some(a), Some(b)) => a == b,
                _ => host == *want,
            },
            DomainPattern::Below { suffix } => host
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
        }
    }
}

/// `host` as an IP address: dotted IPv4 or bracketed IPv6 (how URLs spell hosts).
fn address_of(host: &str) -> Option<std::net::IpAddr> {
    match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => v6
            .parse::<std::net::Ipv6Addr>()
            .ok()
            .map(std::net::IpAddr::V6),
        None => host
            .parse::<std::net::Ipv4Addr>()
            .ok()
            .map(std::net::IpAddr::V4),
    }
}

/// A command pattern: `cargo test:*` (these words, then anything) or `git status`
/// (exactly these words).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    words: Vec<String>,
    shape: CommandShape,
}

/// Prefix or exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandShape {
    /// `words:*`.
    Prefix,
    /// `words`.
    Exact,
}

impl Rule {
    /// Parses `tool` or `tool(spec)`; `home` expands a leading `~/` in a path glob.
    pub fn parse(text: &str, home: Option<&Path>) -> Result<Rule, RuleError> {
        let err = |reason: &str| RuleError {
            rule: text.to_string(),
            reason: reason.to_string(),
        };
        let trimmed = text.trim();
        let (tool, spec) = match trimmed.find('(') {
            None => (trimmed, None),
            Some(open) => {
                let inner = trimmed[open + 1..]
                    .strip_suffix(')')
                    .ok_or_else(|| err("a rule with `(` must end with `)`"))?;
                (&trimmed[..open], Some(inner.trim()))
            }
        };
        let tools = match tool {
            "" => {
                return Err(err(
                    "it names no tool (write `bash(…)`, `read_file(…)`, `*(…)`)",
                ));
            }
            "*" => ToolSelector::Any,
            "read" => ToolSelector::Readers,
            "edit" => ToolSelector::Editors,
            name if name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
            {
                ToolSelector::Named(name.to_string())
            }
            _ => {
                return Err(err(
                    "a tool name is letters, digits, `_` and `-` (or `*`, `read`, `edit`)",
                ));
            }
        };
        let spec = match spec {
            None => {
                if tools == ToolSelector::Any {
                    return Err(err("`*` needs a path pattern, e.g. `*(**/.env*)`"));
                }
                Spec::All
            }
            Some("") => return Err(err("the parentheses are empty")),
            Some(inner) => given(inner, home).map_err(|reason| err(&reason))?,
        };
        Ok(Rule {
            text: trimmed.to_string(),
            tools,
            spec,
        })
    }

    /// The rule as written (trimmed).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Which tools it names.
    pub fn tools(&self) -> &ToolSelector {
        &self.tools
    }

    /// True when it names `tool`.
    pub fn covers_tool(&self, tool: &str) -> bool {
        self.tools.covers(tool)
    }

    /// True when it names `tool` with no pattern (every call).
    pub fn covers_every_call(&self, tool: &str) -> bool {
        self.covers_tool(tool) && matches!(self.spec, Spec::All)
    }

    /// Whether it matches this simple command of a call to `tool`.
    pub fn matches_command(&self, tool: &str, command: &SimpleCommand) -> bool {
        if !self.covers_tool(tool) || self.tools == ToolSelector::Any {
            return false;
        }
        match &self.spec {
            Spec::All => true,
            Spec::Given { command: spec, .. } => spec
                .as_ref()
                .is_some_and(|spec| spec.matches(&command.words)),
        }
    }

    /// Whether it matches exactly this simple command: an exact command pattern (not a
    /// prefix, not the whole tool). Destructive commands need such a rule.
    pub fn names_exactly(&self, tool: &str, command: &SimpleCommand) -> bool {
        if !self.covers_tool(tool) || self.tools == ToolSelector::Any {
            return false;
        }
        matches!(
            &self.spec,
            Spec::Given { command: Some(spec), .. }
                if spec.shape == CommandShape::Exact && spec.words == command.words
        )
    }

    /// Whether it matches a web request by `tool` to `domain`: a rule naming the tool
    /// with no pattern, or with a host pattern that names this host. `*(…)` rules are
    /// path rules and never match a host.
    pub fn matches_domain(&self, tool: &str, domain: &str) -> bool {
        if !self.covers_tool(tool) || self.tools == ToolSelector::Any {
            return false;
        }
        match &self.spec {
            Spec::All => true,
            Spec::Given { domain: spec, .. } => {
                spec.as_ref().is_some_and(|spec| spec.matches(domain))
            }
        }
    }

    /// Whether it names `host` itself for `tool`: a `tool(HOST)` rule with exactly this
    /// host or address, not the whole tool and not `*.DOMAIN` (what lets web_fetch reach
    /// an internal address).
    pub fn names_host(&self, tool: &str, host: &str) -> bool {
        if !self.covers_tool(tool) || self.tools == ToolSelector::Any {
            return false;
        }
        match &self.spec {
            Spec::All => false,
            Spec::Given { domain, .. } => matches!(
                domain,
                Some(exact @ DomainPattern::Exact { .. }) if exact.matches(host)
            ),
        }
    }

    /// How many glob matchers it has compiled so far, for tests.
    #[cfg(test)]
    pub(crate) fn compiled_globs(&self) -> usize {
        match &self.spec {
            Spec::All => 0,
            Spec::Given {
                glob, alternative, ..
            } => glob.compiled() + alternative.as_ref().map_or(0, |alt| alt.compiled()),
        }
    }

    /// Whether it matches a path a call to `tool` touches; `project` is the project
    /// directory (relative patterns are relative to it). Letters are compared exactly.
    pub fn matches_path(&self, tool: &str, path: &Path, project: &Path) -> bool {
        self.matches_path_as(tool, path, project, Case::Exact)
    }

    /// [`Rule::matches_path`], comparing letters as `case` says: deny and ask rules and
    /// the built-in rules match `.ENV` as `.env`, since on a file system that folds case
    /// (macOS, Windows, a case-folding folder on Linux) both name the same file.
    pub fn matches_path_as(&self, tool: &str, path: &Path, project: &Path, case: Case) -> bool {
        if !self.covers_tool(tool) {
            return false;
        }
        match &self.spec {
            Spec::All => true,
            Spec::Given {
                glob,
                alternative,
                absolute,
                any_depth,
                ..
            } => {
                let path = crate::paths::normalize(path);
                if *absolute {
                    return glob.is_match(&path, case)
                        || alternative
                            .as_ref()
                            .is_some_and(|alt| alt.is_match(&path, case));
                }
                let project = crate::paths::normalize(project);
                let inside = match case {
                    Case::Exact => path.strip_prefix(&project).ok().map(Path::to_path_buf),
                    Case::Folded => strip_prefix_folded(&path, &project),
                };
                match inside {
                    Some(rel) if rel.as_os_str().is_empty() => glob.is_match(Path::new("."), case),
                    Some(rel) => glob.is_match(&rel, case),
                    None => *any_depth && glob.is_match(&path, case),
                }
            }
        }
    }
}

/// How letters are compared when a rule matches a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// Exactly (allow rules: they never widen).
    Exact,
    /// Without regard to case (deny, ask and built-in rules: they never narrow).
    Folded,
}

/// `path` below `base`, comparing each part without regard to case.
fn strip_prefix_folded(path: &Path, base: &Path) -> Option<std::path::PathBuf> {
    let mut parts = path.components();
    for expected in base.components() {
        let got = parts.next()?;
        let same = got.as_os_str().to_string_lossy().to_lowercase()
            == expected.as_os_str().to_string_lossy().to_lowercase();
        if !same {
            return None;
        }
    }
    Some(parts.as_path().to_path_buf())
}

impl CommandSpec {
    fn matches(&self, words: &[String]) -> bool {
        match self.shape {
            CommandShape::Exact => words == self.words.as_slice(),
            CommandShape::Prefix => words.starts_with(&self.words),
        }
    }
}

fn given(inner: &str, home: Option<&Path>) -> Result<Spec, String> {
    let domain = DomainPattern::parse(inner);
    let (command_text, shape) = match inner.strip_suffix(":*") {
        Some(prefix) => (prefix, CommandShape::Prefix),
        None => (inner, CommandShape::Exact),
    };
    let parsed = shell::parse(command_text);
    let command = match (parsed.is_plain(), parsed.commands.as_slice()) {
        (true, [one]) if one.assignments.is_empty() && one.redirects.is_empty() => {
            Some(CommandSpec {
                words: one.words.clone(),
                shape,
            })
        }
        _ => None,
    };
    let (pattern, absolute) = match (inner.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => (format!("{}/{rest}", home.display()), true),
        (Some(_), None) => return Err("`~/` is used but the home directory is unknown".into()),
        (None, _) => (inner.to_string(), inner.starts_with('/')),
    };
    let build = |pattern: &str| {
        GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| format!("not a valid path pattern: {}", e.kind()))
    };
    let glob = build(&pattern)?;
    // An absolute pattern through a symlinked folder (`/home/u` -> `/data/u`) also
    // matches where the folder really is: paths are judged by where they lead.
    let alternative = if absolute {
        real_prefix(&pattern).and_then(|real| build(&real).ok())
    } else {
        None
    };
    Ok(Spec::Given {
        command,
        glob: Box::new(LazyGlob::new(glob)),
        alternative: alternative.map(|glob| Box::new(LazyGlob::new(glob))),
        absolute,
        domain,
        any_depth: pattern.starts_with("**/"),
    })
}

/// `pattern` with its literal leading folders (those before the first glob character)
/// replaced by where they really lead, when a link makes that differ.
fn real_prefix(pattern: &str) -> Option<String> {
    let parts: Vec<&str> = pattern.split('/').collect();
    let literal = parts
        .iter()
        .take_while(|p| !p.contains(['*', '?', '[', '{']))
        .count();
    // The last part is the file (or the pattern): only folders are resolved.
    let folders = literal.min(parts.len().saturating_sub(1));
    if folders <= 1 {
        return None;
    }
    let prefix = parts[..folders].join("/");
    let real = super::resolve::real_path(Path::new(&prefix));
    let real = real.to_string_lossy();
    (real != prefix).then(|| {
        let rest = parts[folders..].join("/");
        format!("{}/{rest}", globset::escape(real.trim_end_matches('/')))
    })
}

/// The rule text proposed for "always" on this simple command: its name, plus the
/// subcommand for tools that have subcommands (`cargo test:*`, `git status:*`), else the
/// name alone (`ls:*`).
pub fn proposed_prefix(tool: &str, command: &SimpleCommand) -> Option<String> {
    const WITH_SUBCOMMANDS: &[&str] = &[
        "git",
        "cargo",
        "npm",
        "pnpm",
        "yarn",
        "bun",
        "go",
        "docker",
        "kubectl",
        "pip",
        "pip3",
        "uv",
        "poetry",
        "make",
        "just",
        "gh",
        "dotnet",
        "mvn",
        "gradle",
        "rustup",
        "deno",
        "npx",
        "python",
        "python3",
        "node",
        "brew",
        "apt",
        "helm",
        "terraform",
    ];
    let name = command.words.first()?;
    let mut words = vec![name.as_str()];
    if WITH_SUBCOMMANDS.contains(&name.as_str())
        && let Some(sub) = command.words.get(1)
        && !sub.starts_with('-')
        && sub
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
    {
        words.push(sub);
    }
    let joined = words
        .iter()
        .map(|w| quote_word(w))
        .collect::<Vec<_>>()
        .join(" ");
    Some(format!("{tool}({joined}:*)"))
}

/// The exact rule naming this simple command.
pub fn exact_rule(tool: &str, command: &SimpleCommand) -> String {
    let joined = command
        .words
        .iter()
        .map(|w| quote_word(w))
        .collect::<Vec<_>>()
        .join(" ");
    format!("{tool}({joined})")
}

/// A word as it must be written in a rule so it reads back as the same word.
fn quote_word(word: &str) -> String {
    super::shell::quote_unless_plain(word, |c| {
        c.is_ascii_alphanumeric()
            || matches!(c, '-' | '_' | '.' | '/' | ':' | '=' | '+' | '@' | ',')
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::shell::first_command as cmd;

    #[test]
    fn domain_rules_name_one_host_or_the_hosts_below_a_domain() {
        let exact = Rule::parse("web_fetch(Docs.RS)", None).unwrap();
        assert!(exact.matches_domain("web_fetch", "docs.rs"));
        assert!(exact.matches_domain("web_fetch", "DOCS.rs"));
        assert!(!exact.matches_domain("web_fetch", "evil-docs.rs"));
        assert!(!exact.matches_domain("web_fetch", "docs.rs.evil.com"));
        assert!(!exact.matches_domain("web_fetch", "api.docs.rs"));
        assert!(!exact.matches_domain("bash", "docs.rs"));
        let below = Rule::parse("web_fetch(*.example.com)", None).unwrap();
        assert!(below.matches_domain("web_fetch", "a.example.com"));
        assert!(below.matches_domain("web_fetch", "a.b.example.com"));
        assert!(!below.matches_domain("web_fetch", "example.com"));
        assert!(!below.matches_domain("web_fetch", "badexample.com"));
        assert!(!below.matches_domain("web_fetch", ".example.com"));
        let ip = Rule::parse("web_fetch(127.0.0.1)", None).unwrap();
        assert!(ip.matches_domain("web_fetch", "127.0.0.1"));
        assert!(!ip.matches_domain("web_fetch", "127.0.0.10"));
        let whole = Rule::parse("web_fetch", None).unwrap();
        assert!(whole.matches_domain("web_fetch", "anything.org"));
        // Addresses compare as addresses.
        let mapped = Rule::parse("web_fetch([::FFFF:127.0.0.1])", None).unwrap();
        assert!(mapped.matches_domain("web_fetch", "[::ffff:7f00:1]"));
        assert!(!mapped.matches_domain("web_fetch", "127.0.0.1"));
        // Only an exact host is named: not the whole tool, not a domain's hosts.
        assert!(exact.names_host("web_fetch", "docs.rs"));
        assert!(ip.names_host("web_fetch", "127.0.0.1"));
        assert!(mapped.names_host("web_fetch", "[::ffff:7f00:1]"));
        assert!(!ip.names_host("bash", "127.0.0.1"));
        assert!(!whole.names_host("web_fetch", "127.0.0.1"));
        assert!(!below.names_host("web_fetch", "a.example.com"));
        // A path rule for every tool is no host rule.
        let any = Rule::parse("*(docs.rs)", None).unwrap();
        assert!(!any.matches_domain("web_fetch", "docs.rs"));
        assert!(!any.names_host("web_fetch", "docs.rs"));
        // Not a host: never matches one.
        for text in [
            "web_fetch(docs.rs/*)",
            "web_fetch(*)",
            "web_fetch(a..b)",
            "web_fetch(*.)",
        ] {
            let rule = Rule::parse(text, None).unwrap();
            assert!(!rule.matches_domain("web_fetch", "docs.rs"), "{text}");
            assert!(!rule.matches_domain("web_fetch", "a..b"), "{text}");
        }
    }

    #[test]
    fn command_rules_match_prefixes_or_exact_words() {
        let rule = Rule::parse("bash(cargo test:*)", None).unwrap();
        assert!(rule.matches_command("bash", &cmd("cargo test")));
        assert!(rule.matches_command("bash", &cmd("cargo test -q --lib")));
        assert!(!rule.matches_command("bash", &cmd("cargo testx")));
        assert!(!rule.matches_command("bash", &cmd("cargo build")));
        assert!(!rule.matches_command("skill_run", &cmd("cargo test")));
        let exact = Rule::parse("bash(git status)", None).unwrap();
        assert!(exact.matches_command("bash", &cmd("git status")));
        assert!(!exact.matches_command("bash", &cmd("git status --short")));
        assert!(exact.names_exactly("bash", &cmd("git  'status'")));
        assert!(!rule.names_exactly("bash", &cmd("cargo test")));
        let whole = Rule::parse("bash", None).unwrap();
        assert!(whole.matches_command("bash", &cmd("anything at all")));
        assert!(whole.covers_every_call("bash"));
    }

    #[test]
    fn path_rules_match_relative_to_the_project_or_anywhere() {
        let project = Path::new("/p");
        let env = Rule::parse("read_file(**/.env*)", None).unwrap();
        assert!(env.matches_path("read_file", Path::new("/p/.env"), project));
        assert!(env.matches_path("read_file", Path::new("/p/a/b/.env.local"), project));
        assert!(env.matches_path("read_file", Path::new("/home/u/.env"), project));
        assert!(!env.matches_path("read_file", Path::new("/p/src/env.rs"), project));
        assert!(!env.matches_path("grep", Path::new("/p/.env"), project));
        let src = Rule::parse("edit(src/**)", None).unwrap();
        assert!(src.matches_path("edit_file", Path::new("/p/src/a/b.rs"), project));
        assert!(src.matches_path("write_file", Path::new("/p/src/x.rs"), project));
        assert!(!src.matches_path("edit_file", Path::new("/p/tests/x.rs"), project));
        assert!(!src.matches_path("edit_file", Path::new("/q/src/x.rs"), project));
        assert!(
            !src.matches_path("edit_file", Path::new("/p/src/../../etc/passwd"), project),
            "`..` is resolved before matching"
        );
        let abs = Rule::parse("read(/usr/share/**)", None).unwrap();
        assert!(abs.matches_path("grep", Path::new("/usr/share/doc/x"), project));
        let home = Rule::parse("*(~/.ssh/**)", Some(Path::new("/home/u"))).unwrap();
        assert!(home.matches_path("bash", Path::new("/home/u/.ssh/id_rsa"), project));
        // `*` in a segment does not cross `/`.
        let one = Rule::parse("edit_file(src/*.rs)", None).unwrap();
        assert!(!one.matches_path("edit_file", Path::new("/p/src/a/b.rs"), project));
    }

    #[test]
    fn bad_rules_are_refused_with_a_reason() {
        for bad in ["", "bash(", "bash()", "*", "b a(x)", "read_file([)"] {
            let e = Rule::parse(bad, None).unwrap_err();
            assert!(!e.reason.is_empty(), "{bad}");
        }
        assert!(Rule::parse("*(~/x)", None).is_err());
    }

    #[test]
    fn proposals_name_the_command_and_its_subcommand() {
        assert_eq!(
            proposed_prefix("bash", &cmd("cargo test -q")).as_deref(),
            Some("bash(cargo test:*)")
        );
        assert_eq!(
            proposed_prefix("bash", &cmd("ls -la src")).as_deref(),
            Some("bash(ls:*)")
        );
        assert_eq!(
            proposed_prefix("bash", &cmd("git --no-pager log")).as_deref(),
            Some("bash(git:*)")
        );
        assert_eq!(
            exact_rule("bash", &cmd("git push --force origin 'my branch'")),
            "bash(git push --force origin 'my branch')"
        );
        // What is proposed reads back as a rule matching the command.
        let c = cmd("git push --force origin 'my branch'");
        let rule = Rule::parse(&exact_rule("bash", &c), None).unwrap();
        assert!(rule.names_exactly("bash", &c));
        let c = cmd("npm run build");
        let rule = Rule::parse(&proposed_prefix("bash", &c).unwrap(), None).unwrap();
        assert!(rule.matches_command("bash", &c));
    }
}
