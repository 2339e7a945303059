//! Remote skill roots: an http(s) URL naming a .zip, .tar.gz/.tgz or .tar of skills,
//! downloaded once into a cache folder and refreshed when the server says it changed
//! (ETag / Last-Modified, sent back as If-None-Match / If-Modified-Since).
//!
//! It owns the download (with size and time limits), the cache layout ([`cache`]) and the
//! safe unpacking ([`extract`]). A failed refresh never destroys a good cache: a new copy
//! is unpacked beside the old one and swapped in by a rename. The extracted folder is
//! then searched like any other root, with [`RootKind::Remote`](super::RootKind::Remote).
//! It must not know about the session, the agent loop or terminals: errors and warnings
//! come back as values for the caller to show.

mod cache;
mod extract;

use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED, USER_AGENT};

use cache::{CacheError, Meta, Slot};
use extract::ExtractError;

/// Limits on what a remote root may cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteLimits {
    /// Largest download accepted (the archive as sent), in bytes.
    pub max_download_bytes: u64,
    /// Largest total size of the unpacked files, in bytes.
    pub max_extracted_bytes: u64,
    /// Most entries (files, directories, links) an archive may hold.
    pub max_entries: usize,
    /// How long to wait for the connection.
    pub connect_timeout: Duration,
    /// How long the whole request (headers and body) may take.
    pub timeout: Duration,
}

impl Default for RemoteLimits {
    /// 64 MiB downloaded, 256 MiB unpacked, 20,000 entries, 10 s to connect, 120 s in all.
    fn default() -> Self {
        RemoteLimits {
            max_download_bytes: 64 << 20,
            max_extracted_bytes: 256 << 20,
            max_entries: 20_000,
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(120),
        }
    }
}

/// How a sync went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncOutcome {
    /// The archive was downloaded and unpacked (first run, or it changed).
    Downloaded,
    /// The server said the cached copy is current (HTTP 304).
    NotModified,
    /// The refresh failed (server unreachable, an HTTP error, or an archive refused) and
    /// the cached copy from an earlier run is used; a warning says why.
    OfflineCache,
}

/// A remote root ready to search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncedRoot {
    /// The extracted tree (search it as a skills root).
    pub dir: PathBuf,
    /// Things the user should hear: skipped entries, a failed refresh.
    pub warnings: Vec<String>,
    /// What happened.
    pub outcome: SyncOutcome,
}

/// Why a remote root cannot be used (there is no usable cache either).
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The root is not an http(s) URL.
    #[error("remote skills root {url}: not an http(s) URL")]
    NotHttp {
        /// The root as configured.
        url: String,
    },
    /// The request failed before a response came (and there is no cache yet).
    #[error("remote skills root {url}: cannot download it: {reason}")]
    Unreachable {
        /// The URL.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The server answered with an unexpected status.
    #[error("remote skills root {url}: the server answered HTTP {status}")]
    Status {
        /// The URL.
        url: String,
        /// The HTTP status code.
        status: u16,
    },
    /// The archive as sent is over the download limit.
    #[error("remote skills root {url}: refused, the download is over the limit of {limit} bytes")]
    DownloadTooLarge {
        /// The URL.
        url: String,
        /// [`RemoteLimits::max_download_bytes`].
        limit: u64,
    },
    /// The unpacked files would be over the size limit.
    #[error(
        "remote skills root {url}: refused, the archive unpacks to more than the limit of {limit} bytes"
    )]
    ExtractedTooLarge {
        /// The URL.
        url: String,
        /// [`RemoteLimits::max_extracted_bytes`].
        limit: u64,
    },
    /// The archive holds too many entries.
    #[error(
        "remote skills root {url}: refused, the archive has more than the limit of {limit} entries"
    )]
    TooManyEntries {
        /// The URL.
        url: String,
        /// [`RemoteLimits::max_entries`].
        limit: usize,
    },
    /// The body is not an archive at all.
    #[error("remote skills root {url}: not a .zip, .tar.gz/.tgz or .tar archive: {detail}")]
    NotAnArchive {
        /// The URL.
        url: String,
        /// What it looked like instead.
        detail: String,
    },
    /// The archive is damaged.
    #[error("remote skills root {url}: the archive cannot be unpacked: {reason}")]
    Damaged {
        /// The URL.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// The cache folder cannot be written.
    #[error("remote skills root {url}: {source}")]
    Cache {
        /// The URL.
        url: String,
        /// What failed, and where.
        source: CacheError,
    },
}

impl RemoteError {
    fn from_extract(url: &str, e: ExtractError) -> RemoteError {
        let url = url.to_string();
        match e {
            ExtractError::NotAnArchive { detail } => RemoteError::NotAnArchive { url, detail },
            ExtractError::Damaged { reason } => RemoteError::Damaged { url, reason },
            ExtractError::TooManyEntries { limit } => RemoteError::TooManyEntries { url, limit },
            ExtractError::TooLarge { limit } => RemoteError::ExtractedTooLarge { url, limit },
            ExtractError::Io { path, source } => RemoteError::Cache {
                url,
                source: CacheError::Io { path, source },
            },
        }
    }
}

/// Brings the cache of the remote root at `url` up to date (see the module docs) and
/// returns the folder to search. Fails only when there is no usable cache to fall back on.
pub async fn sync_remote_root(
    url: &str,
    cache_dir: &Path,
    limits: &RemoteLimits,
) -> Result<SyncedRoot, RemoteError> {
    let parsed = reqwest::Url::parse(url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| RemoteError::NotHttp {
            url: url.to_string(),
        })?;
    let slot = Slot::for_url(cache_dir, url);
    let cached = slot.current();
    match refresh(&parsed, url, &slot, cached.as_ref(), limits).await {
        Ok(synced) => Ok(synced),
        Err(e) => match cached {
            Some(meta) => Ok(SyncedRoot {
                dir: slot.tree_dir(&meta),
                warnings: vec![format!("{e}; using the copy cached earlier")],
                outcome: SyncOutcome::OfflineCache,
            }),
            None => Err(e),
        },
    }
}

/// One conditional request, and the unpack and swap when the archive is new.
async fn refresh(
    parsed: &reqwest::Url,
    url: &str,
    slot: &Slot,
    cached: Option<&Meta>,
    limits: &RemoteLimits,
) -> Result<SyncedRoot, RemoteError> {
    let unreachable = |e: reqwest::Error| RemoteError::Unreachable {
        url: url.to_string(),
        reason: error_chain(&e.without_url()),
    };
    let client = http_client(parsed, limits).map_err(|reason| RemoteError::Unreachable {
        url: url.to_string(),
        reason,
    })?;
    let mut request = client
        .get(parsed.clone())
        .header(USER_AGENT, concat!("harness9/", env!("CARGO_PKG_VERSION")));
    if let Some(meta) = cached {
        if let Some(etag) = &meta.etag {
            request = request.header(IF_NONE_MATCH, etag);
        }
        if let Some(modified) = &meta.last_modified {
            request = request.header(IF_MODIFIED_SINCE, modified);
        }
    }
    let mut response = request.send().await.map_err(unreachable)?;
    let status = response.status();
    if status == StatusCode::NOT_MODIFIED
        && let Some(meta) = cached
    {
        return Ok(SyncedRoot {
            dir: slot.tree_dir(meta),
            warnings: Vec::new(),
            outcome: SyncOutcome::NotModified,
        });
    }
    if status != StatusCode::OK {
        return Err(RemoteError::Status {
            url: url.to_string(),
            status: status.as_u16(),
        });
    }
    let header = |name| {
        response
            .headers()
            .get(name)
            .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
            .map(str::to_string)
    };
    let etag = header(ETAG);
    let last_modified = header(LAST_MODIFIED);
    let too_large = || RemoteError::DownloadTooLarge {
        url: url.to_string(),
        limit: limits.max_download_bytes,
    };
    if response
        .content_length()
        .is_some_and(|n| n > limits.max_download_bytes)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(unreachable)? {
        if (body.len() + chunk.len()) as u64 > limits.max_download_bytes {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }

    let job_slot = slot.clone();
    let job_limits = limits.clone();
    let installed = tokio::task::spawn_blocking(move || {
        job_slot.install(&body, etag, last_modified, &job_limits)
    })
    .await
    .map_err(|e| RemoteError::Cache {
        url: url.to_string(),
        source: CacheError::Worker {
            reason: e.to_string(),
        },
    })?;
    let (dir, extracted) = installed.map_err(|e| match e {
        cache::InstallError::Extract(e) => RemoteError::from_extract(url, e),
        cache::InstallError::Cache(source) => RemoteError::Cache {
            url: url.to_string(),
            source,
        },
    })?;
    Ok(SyncedRoot {
        dir,
        warnings: extracted
            .warnings
            .into_iter()
            .map(|w| format!("remote skills root {url}: {w}"))
            .collect(),
        outcome: SyncOutcome::Downloaded,
    })
}

/// A client for one download, set up like the model client (rustls with ring; no root
/// certificates loaded for plain http).
fn http_client(url: &reqwest::Url, limits: &RemoteLimits) -> Result<reqwest::Client, String> {
    crate::llm::client::install_crypto_provider();
    let mut builder = reqwest::Client::builder()
        .connect_timeout(limits.connect_timeout)
        .timeout(limits.timeout);
    if url.scheme() == "http" {
        builder = builder.tls_certs_only(Vec::new());
    }
    builder.build().map_err(|e| error_chain(&e))
}

/// An error and its causes on one line ("error sending request: connection refused").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = s.source();
    }
    text
}

/// What a session gets from its remote root: the folders to search and the warnings to
/// show at start-up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemoteRoots {
    /// Extracted trees to search ([`super::DiscoveryOptions::remote_dirs`]).
    pub dirs: Vec<PathBuf>,
    /// Start-up warnings.
    pub warnings: Vec<String>,
}

/// Syncs the configured remote root, if any, for a session that must start anyway: an
/// error becomes a warning and the other roots still load.
pub async fn sync_for_session(
    url: Option<&str>,
    cache_dir: &Path,
    limits: &RemoteLimits,
) -> RemoteRoots {
    let Some(url) = url else {
        return RemoteRoots::default();
    };
    match sync_remote_root(url, cache_dir, limits).await {
        Ok(synced) => RemoteRoots {
            dirs: vec![synced.dir],
            warnings: synced.warnings,
        },
        Err(e) => RemoteRoots {
            dirs: Vec::new(),
            warnings: vec![format!("{e}; its skills are not loaded")],
        },
    }
}
