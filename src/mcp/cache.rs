//! What harness9 remembers of each MCP server between runs
//! (`$HARNESS9_HOME/cache/mcp-servers.json`): the instructions it gave, its name and
//! version, its tool count and its prompts, from its last successful start, keyed by
//! server name and valid only while the server's definition is unchanged. The system
//! prompt's index lines and the slash-command popup read it, so neither needs to start a
//! server. Written through a temporary file and a rename; a missing or unreadable file
//! is an empty cache. It knows the file, nothing of connections.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::config::McpServerConfig;
use super::connection::PromptInfo;

/// The largest cache file read.
const MAX_BYTES: u64 = 4 * 1024 * 1024;

/// What one start of a server learned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerMemo {
    /// The definition it was learned from ([`fingerprint`]).
    pub fingerprint: String,
    /// Its instructions for the model.
    #[serde(default)]
    pub instructions: Option<String>,
    /// Its name and version.
    #[serde(default)]
    pub implementation: Option<String>,
    /// How many tools it offered.
    #[serde(default)]
    pub tools: usize,
    /// Its prompts.
    #[serde(default)]
    pub prompts: Vec<PromptInfo>,
}

/// The definition of a server as the cache keys it.
pub fn fingerprint(config: &McpServerConfig) -> String {
    serde_json::to_string(&config.transport).unwrap_or_default()
}

/// The cache file.
#[derive(Debug, Clone)]
pub struct IndexCache {
    path: Option<PathBuf>,
}

impl IndexCache {
    /// The cache at `path`.
    pub fn new(path: PathBuf) -> Self {
        IndexCache { path: Some(path) }
    }

    /// No cache (tests, and sessions without servers).
    pub fn disabled() -> Self {
        IndexCache { path: None }
    }

    /// Everything remembered; empty when there is nothing usable.
    pub fn read(&self) -> BTreeMap<String, ServerMemo> {
        let Some(path) = &self.path else {
            return BTreeMap::new();
        };
        let too_big = std::fs::metadata(path).map_or(true, |m| m.len() > MAX_BYTES);
        if too_big {
            return BTreeMap::new();
        }
        std::fs::read_to_string(path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    /// Replaces the file's content with `memos`; failures are logged, not fatal.
    pub fn write(&self, memos: &BTreeMap<String, ServerMemo>) {
        let Some(path) = &self.path else {
            return;
        };
        let result = (|| -> std::io::Result<()> {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let tmp = path.with_extension(format!("tmp{}", std::process::id()));
            std::fs::write(&tmp, serde_json::to_vec_pretty(memos).unwrap_or_default())?;
            std::fs::rename(&tmp, path)
        })();
        if let Err(e) = result {
            tracing::warn!("cannot write the MCP cache {}: {e}", path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memos_round_trip_and_a_bad_file_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let cache = IndexCache::new(dir.path().join("c/mcp.json"));
        assert!(cache.read().is_empty());
        let memo = ServerMemo {
            fingerprint: "f".into(),
            instructions: Some("Use me".into()),
            implementation: None,
            tools: 3,
            prompts: vec![],
        };
        cache.write(&BTreeMap::from([("a".to_string(), memo.clone())]));
        assert_eq!(cache.read().get("a"), Some(&memo));
        std::fs::write(dir.path().join("c/mcp.json"), "{oops").unwrap();
        assert!(cache.read().is_empty());
        assert!(IndexCache::disabled().read().is_empty());
    }
}
