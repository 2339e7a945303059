//! Whether reasoning goes back to the provider on later requests, decided with no
//! configuration: `send_reasoning` when set, else what this provider said about this
//! model before (remembered in a small cache file), else known hosts and models. Also
//! reads a refusal that says which way was wrong (DeepSeek's and Kimi's "must be passed
//! back" 400, or a 400 naming an unknown reasoning field), so the client retries once
//! the other way and remembers it. It must not know how the wire spells the echo.

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

/// What config.toml's `send_reasoning` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReasoningEcho {
    /// Not set: decided per model ([`decide`]).
    #[default]
    Auto,
    /// `send_reasoning = true`: always sent back.
    Always,
    /// `send_reasoning = false`: never sent back.
    Never,
}

/// Whether one request carries the reasoning of earlier assistant messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Echo {
    /// Sent back: `reasoning_details` verbatim when the provider returned them, else the
    /// text in the field it arrived in.
    Send,
    /// Only `reasoning_details` go back (verbatim): the dialect that returns them
    /// (OpenRouter's) documents sending them back; plain text stays out.
    DetailsOnly,
    /// Left out.
    Omit,
}

/// Why a request echoes or omits reasoning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EchoBecause {
    /// `send_reasoning` in config.toml.
    Configured,
    /// The provider refused a request the other way before (remembered).
    Learned,
    /// A host or model known to want it back.
    Known,
    /// Nothing known: only `reasoning_details` go back.
    Unknown,
}

/// What a provider taught about one model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Learned {
    /// It refused a request without the reasoning ("must be passed back").
    Required,
    /// It refused a request with the reasoning (an unknown field).
    Refused,
}

impl Learned {
    /// The echo this lesson asks for.
    pub fn echo(self) -> Echo {
        match self {
            Learned::Required => Echo::Send,
            Learned::Refused => Echo::Omit,
        }
    }
}

/// Hosts whose API wants reasoning back after tool calls, with where that is documented:
/// DeepSeek ("reasoning_content must be passed back" in thinking mode with tools),
/// OpenRouter (reasoning_details preserved across tool calls, "Preserving Reasoning
/// Blocks"), Moonshot (Kimi thinking models: "reasoning_content is missing in assistant
/// tool call message"), Z.ai / Zhipu (GLM "interleaved thinking": "thinking blocks should
/// be explicitly preserved and returned together with the tool results").
const KNOWN_HOSTS: &[&str] = &[
    "api.deepseek.com",
    "openrouter.ai",
    "api.moonshot.ai",
    "api.moonshot.cn",
    "api.z.ai",
    "open.bigmodel.cn",
];

/// The decision for `model` at `base_url`.
pub fn decide(
    setting: ReasoningEcho,
    learned: Option<Learned>,
    base_url: &str,
    model: &str,
) -> (Echo, EchoBecause) {
    match setting {
        ReasoningEcho::Always => return (Echo::Send, EchoBecause::Configured),
        ReasoningEcho::Never => return (Echo::Omit, EchoBecause::Configured),
        ReasoningEcho::Auto => {}
    }
    if let Some(learned) = learned {
        return (learned.echo(), EchoBecause::Learned);
    }
    if known_host(base_url) || known_model(model) {
        return (Echo::Send, EchoBecause::Known);
    }
    (Echo::DetailsOnly, EchoBecause::Unknown)
}

/// The host of a base URL, lowercased, without port or credentials.
fn host_of(base_url: &str) -> String {
    let rest = base_url
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    let host = host.split(':').next().unwrap_or("");
    host.to_ascii_lowercase()
}

fn known_host(base_url: &str) -> bool {
    let host = host_of(base_url);
    KNOWN_HOSTS
        .iter()
        .any(|known| host == *known || host.ends_with(&format!(".{known}")))
}

/// DeepSeek's reasoner and thinking models wherever they are served, and Kimi's
/// thinking models (the id's last path segment).
fn known_model(model: &str) -> bool {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let deepseek_thinking = name.contains("deepseek")
        && ["reasoner", "-r1", "think"]
            .iter()
            .any(|m| name.contains(m));
    let kimi_thinking = name.starts_with("kimi-k2")
        && ["thinking", "k2.5", "k2-5", "k2.6", "k2-6"]
            .iter()
            .any(|m| name.contains(m));
    deepseek_thinking || kimi_thinking
}

/// What a refused request teaches, when it says the echo was wrong: `sent` is how the
/// refused request was sent, `status` and `message` what the provider answered.
pub fn lesson(sent: Echo, status: Option<u16>, message: &str) -> Option<Learned> {
    if !matches!(status, Some(400 | 422)) {
        return None;
    }
    let message = message.to_ascii_lowercase();
    let wants_it = message.contains("reasoning")
        && (message.contains("must be passed back")
            || message.contains("reasoning_content is missing"));
    match sent {
        Echo::Omit | Echo::DetailsOnly if wants_it => Some(Learned::Required),
        Echo::Send | Echo::DetailsOnly if !wants_it && names_a_reasoning_field(&message) => {
            Some(Learned::Refused)
        }
        _ => None,
    }
}

/// Whether an error names one of the fields an echo adds (the bare word `reasoning`
/// only quoted, as field names are in validation errors).
fn names_a_reasoning_field(message: &str) -> bool {
    message.contains("reasoning_content")
        || message.contains("reasoning_details")
        || ["'reasoning'", "\"reasoning\"", "`reasoning`", ".reasoning"]
            .iter()
            .any(|quoted| message.contains(quoted))
}

// ---------------------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------------------

/// A memory file larger than this is taken for garbage.
const MEMORY_MAX_BYTES: u64 = 256 << 10;
/// At most this many models are remembered (the oldest lessons go first).
const MEMORY_MAX_ENTRIES: usize = 200;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Entry {
    echo: Learned,
    learned_ms: u64,
}

/// Why a lesson could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {path}: {source}")]
pub struct MemoryError {
    /// The file (or its temporary sibling).
    pub path: PathBuf,
    /// The I/O error.
    pub source: io::Error,
}

impl From<crate::private_files::UpdateIoError> for MemoryError {
    fn from(e: crate::private_files::UpdateIoError) -> Self {
        MemoryError {
            path: e.path,
            source: e.source,
        }
    }
}

/// Lessons on disk, beside the learned windows (`$HARNESS9_HOME/cache/reasoning_echo.json`):
/// one JSON object keyed by `"{base_url} {model}"`, each `{ "echo": "required" |
/// "refused", "learned_ms": ms }`. A missing or corrupt file knows nothing; at most 200
/// entries; written under the folder's lock through a temporary file and a rename.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EchoMemory {
    path: PathBuf,
}

fn key(base_url: &str, model: &str) -> String {
    format!("{} {model}", base_url.trim_end_matches('/'))
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn parse(text: &[u8]) -> BTreeMap<String, Entry> {
    let Ok(object) = serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(text)
    else {
        return BTreeMap::new();
    };
    object
        .into_iter()
        .filter_map(|(k, v)| Some((k, serde_json::from_value(v).ok()?)))
        .collect()
}

impl EchoMemory {
    /// The memory kept in `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        EchoMemory { path: path.into() }
    }

    /// What was learned about `model` at `base_url`.
    pub fn get(&self, base_url: &str, model: &str) -> Option<Learned> {
        let mut text = Vec::new();
        let read = std::fs::File::open(&self.path)
            .and_then(|f| f.take(MEMORY_MAX_BYTES + 1).read_to_end(&mut text));
        if read.is_err() || text.len() as u64 > MEMORY_MAX_BYTES {
            return None;
        }
        parse(&text).remove(&key(base_url, model)).map(|e| e.echo)
    }

    /// Remembers `learned` for `model` at `base_url`.
    pub fn put(&self, base_url: &str, model: &str, learned: Learned) -> Result<(), MemoryError> {
        let mode = crate::private_files::UpdateMode {
            links: crate::private_files::Links::Follow,
            privacy: crate::private_files::Privacy::Private,
        };
        let path = self.path.clone();
        let now = now_ms();
        crate::private_files::update(&self.path, mode, |old| {
            let mut entries = old
                .filter(|t| t.len() as u64 <= MEMORY_MAX_BYTES)
                .map(|t| parse(t.as_bytes()))
                .unwrap_or_default();
            entries.insert(
                key(base_url, model),
                Entry {
                    echo: learned,
                    learned_ms: now,
                },
            );
            while entries.len() > MEMORY_MAX_ENTRIES {
                let oldest = entries
                    .iter()
                    .min_by_key(|(_, e)| e.learned_ms)
                    .map(|(k, _)| k.clone());
                match oldest {
                    Some(k) => entries.remove(&k),
                    None => break,
                };
            }
            let text = serde_json::to_string_pretty(&entries).map_err(|e| MemoryError {
                path,
                source: io::Error::other(e),
            })?;
            Ok((Some(text), ()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_hosts_and_models_echo_and_the_setting_overrides() {
        let auto = ReasoningEcho::Auto;
        for (url, model) in [
            ("https://api.deepseek.com/v1", "deepseek-chat"),
            ("https://openrouter.ai/api/v1", "anthropic/claude-sonnet-4"),
            ("https://api.moonshot.ai/v1", "kimi-k2.5"),
            ("https://api.z.ai/api/paas/v4", "glm-4.7"),
            ("https://open.bigmodel.cn/api/paas/v4", "glm-5"),
            (
                "http://127.0.0.1:8000/v1",
                "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
            ),
            ("http://localhost/v1", "deepseek-reasoner"),
            ("http://localhost/v1", "moonshotai/kimi-k2-thinking"),
        ] {
            assert_eq!(
                decide(auto, None, url, model),
                (Echo::Send, EchoBecause::Known),
                "{url} {model}"
            );
        }
        for (url, model) in [
            ("https://api.openai.com/v1", "gpt-4o"),
            ("http://127.0.0.1:8080/v1", "qwen3-8b"),
            ("https://openrouter.ai.evil.example/v1", "x"),
            ("https://evil.example/openrouter.ai/v1", "x"),
            ("https://openrouter.ai@evil.example/v1", "x"),
            ("http://localhost/v1", "deepseek-chat"),
        ] {
            assert_eq!(
                decide(auto, None, url, model),
                (Echo::DetailsOnly, EchoBecause::Unknown),
                "{url} {model}"
            );
        }
        let ds = "https://api.deepseek.com/v1";
        assert_eq!(decide(ReasoningEcho::Never, None, ds, "m").0, Echo::Omit);
        assert_eq!(
            decide(ReasoningEcho::Never, Some(Learned::Required), ds, "m").0,
            Echo::Omit
        );
        assert_eq!(
            decide(
                ReasoningEcho::Always,
                Some(Learned::Refused),
                "http://x",
                "m"
            )
            .0,
            Echo::Send
        );
        assert_eq!(
            decide(auto, Some(Learned::Refused), ds, "m"),
            (Echo::Omit, EchoBecause::Learned)
        );
        assert_eq!(
            decide(auto, Some(Learned::Required), "http://x/v1", "m"),
            (Echo::Send, EchoBecause::Learned)
        );
    }

    #[test]
    fn refusals_teach_the_other_way_only_when_they_say_so() {
        let deepseek =
            "The `reasoning_content` in the thinking mode must be passed back to the API.";
        let kimi = "thinking is enabled but reasoning_content is missing in assistant tool call message at index 2";
        assert_eq!(
            lesson(Echo::Omit, Some(400), deepseek),
            Some(Learned::Required)
        );
        assert_eq!(lesson(Echo::Omit, Some(400), kimi), Some(Learned::Required));
        assert_eq!(
            lesson(Echo::DetailsOnly, Some(400), deepseek),
            Some(Learned::Required)
        );
        // Already sent: a retry would change nothing.
        assert_eq!(lesson(Echo::Send, Some(400), deepseek), None);
        assert_eq!(lesson(Echo::Omit, Some(500), deepseek), None);
        for unknown in [
            "Additional properties are not allowed ('reasoning_content' was unexpected) - 'messages.2'",
            "[{'type': 'extra_forbidden', 'loc': ('body', 'messages', 2, 'assistant', 'reasoning_details'), 'msg': 'Extra inputs are not permitted'}]",
            "Unrecognized field \"reasoning\" in message",
        ] {
            assert_eq!(
                lesson(Echo::Send, Some(400), unknown),
                Some(Learned::Refused),
                "{unknown}"
            );
            assert_eq!(lesson(Echo::Omit, Some(400), unknown), None, "{unknown}");
        }
        assert_eq!(
            lesson(
                Echo::Send,
                Some(400),
                "the model does not support reasoning effort"
            ),
            None
        );
        assert_eq!(
            lesson(Echo::Send, Some(400), "context length exceeded"),
            None
        );
    }

    #[test]
    fn lessons_are_remembered_per_url_and_model_and_survive_garbage() {
        let dir = tempfile::tempdir().unwrap();
        let memory = EchoMemory::new(dir.path().join("cache/reasoning_echo.json"));
        assert_eq!(memory.get("http://a/v1", "m"), None);
        memory.put("http://a/v1/", "m", Learned::Required).unwrap();
        memory.put("http://b/v1", "m", Learned::Refused).unwrap();
        assert_eq!(memory.get("http://a/v1", "m"), Some(Learned::Required));
        assert_eq!(memory.get("http://b/v1", "m"), Some(Learned::Refused));
        assert_eq!(memory.get("http://a/v1", "other"), None);
        std::fs::write(dir.path().join("cache/reasoning_echo.json"), "not json").unwrap();
        assert_eq!(memory.get("http://a/v1", "m"), None);
        memory.put("http://a/v1", "m", Learned::Refused).unwrap();
        assert_eq!(memory.get("http://a/v1", "m"), Some(Learned::Refused));
    }
}
