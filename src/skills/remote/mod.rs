//! Remote skill roots: an http(s) URL naming a .zip, .tar.gz/.tgz or .tar of skills,
//! downloaded once into a cache folder and refreshed when the server says it changed
//! (ETag / Last-Modified, sent back as If-None-Match / If-Modified-Since).
//!
//! It owns the download (with size and time limits), the cache layout (`cache`) and the
//! safe unpacking (`extract`). A failed refresh never destroys a good cache: a new copy
//! is unpacked beside the old one and swapped in by a rename. With a cached copy, start-up
//! waits for the refresh only briefly ([`RemoteLimits::cached_wait`]): a slow or stalled
//! server means the cached copy is used, with a warning, while the refresh goes on in the
//! background (a new copy it installs is used from the next start). The extracted folder is
//! then searched like any other root, with [`RootKind::Remote`](super::RootKind::Remote).
//! It must not know about the session, the agent loop or terminals: errors and warnings
//! come back as values for the caller to show.

mod cache;
mod extract;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::StatusCode;
use reqwest::header::{ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED, USER_AGENT};
use tokio::sync::watch;
use tokio::time::timeout;

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
    /// How long the server may stay silent: before its answer, or between two pieces of
    /// the body. Without a cached copy, this is how long a stalled server holds start-up.
    pub answer_timeout: Duration,
    /// How long the whole request (headers and body) may take.
    pub timeout: Duration,
    /// With a cached copy, how long start-up waits for the refresh before it uses the
    /// cached copy (the refresh then goes on in the background).
    pub cached_wait: Duration,
}

impl Default for RemoteLimits {
    /// 64 MiB downloaded, 256 MiB unpacked, 20,000 entries, 10 s to connect, 30 s of
    /// silence, 120 s in all; 2 s when a cached copy can be used instead.
    fn default() -> Self {
        RemoteLimits {
            max_download_bytes: 64 << 20,
            max_extracted_bytes: 256 << 20,
            max_entries: 20_000,
            connect_timeout: Duration::from_secs(10),
            answer_timeout: Duration::from_secs(30),
            timeout: Duration::from_secs(120),
            cached_wait: Duration::from_secs(2),
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
    /// The refresh did not finish within [`RemoteLimits::cached_wait`]: the cached copy
    /// is used (a warning says so) and the refresh goes on in the background.
    SlowServer,
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
    /// The server accepted the request but sent no answer in time.
    #[error("remote skills root {url}: the server sent no answer within {}", secs(*waited))]
    NoAnswer {
        /// The URL.
        url: String,
        /// [`RemoteLimits::answer_timeout`].
        waited: Duration,
    },
    /// The server stopped sending in the middle of the archive.
    #[error("remote skills root {url}: the download stalled (nothing for {})", secs(*waited))]
    Stalled {
        /// The URL.
        url: String,
        /// [`RemoteLimits::answer_timeout`].
        waited: Duration,
    },
    /// The download took longer than allowed.
    #[error("remote skills root {url}: the download took longer than {}", secs(*limit))]
    TooSlow {
        /// The URL.
        url: String,
        /// [`RemoteLimits::timeout`].
        limit: Duration,
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

/// How far a refresh got, for the warning when start-up stops waiting for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Progress {
    /// The request is sent; no answer yet.
    Waiting,
    /// A new archive is coming in.
    Downloading {
        /// Bytes received so far.
        received: u64,
    },
    /// The archive is being unpacked.
    Unpacking,
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
    let (progress, watcher) = watch::channel(Progress::Waiting);
    let Some(meta) = slot.current() else {
        return refresh(
            parsed,
            url.to_string(),
            slot,
            None,
            limits.clone(),
            progress,
        )
        .await;
    };
    let task = tokio::spawn(refresh(
        parsed,
        url.to_string(),
        slot.clone(),
        Some(meta.clone()),
        limits.clone(),
        progress,
    ));
    let use_cache = |warning: String, outcome| SyncedRoot {
        dir: slot.tree_dir(&meta),
        warnings: vec![warning],
        outcome,
    };
    let cached = cached_copy(&meta, SystemTime::now());
    match timeout(limits.cached_wait, task).await {
        Ok(Ok(Ok(synced))) => Ok(synced),
        Ok(Ok(Err(e))) => Ok(use_cache(
            format!("{e}; using {cached}"),
            SyncOutcome::OfflineCache,
        )),
        Ok(Err(e)) => Ok(use_cache(
            format!("remote skills root {url}: the refresh failed ({e}); using {cached}"),
            SyncOutcome::OfflineCache,
        )),
        Err(_) => {
            // The task goes on: a slow server's new copy is there for the next start.
            let waited = secs(limits.cached_wait);
            let what = match *watcher.borrow() {
                Progress::Waiting => format!("no answer within {waited}"),
                Progress::Downloading { received } => format!(
                    "a new version is still downloading after {waited} ({received} bytes so far)"
                ),
                Progress::Unpacking => {
                    format!("a new version is still being unpacked after {waited}")
                }
            };
            Ok(use_cache(
                format!(
                    "remote skills root {url}: {what}; using {cached}; the refresh goes on \
                     in the background while harness9 runs"
                ),
                SyncOutcome::SlowServer,
            ))
        }
    }
}

/// One conditional request, and the unpack and swap when the archive is new. Reports how
/// far it got through `progress`.
async fn refresh(
    parsed: reqwest::Url,
    url: String,
    slot: Slot,
    cached: Option<Meta>,
    limits: RemoteLimits,
    progress: watch::Sender<Progress>,
) -> Result<SyncedRoot, RemoteError> {
    let url = url.as_str();
    let unreachable = |e: reqwest::Error| {
        if e.is_timeout() {
            RemoteError::TooSlow {
                url: url.to_string(),
                limit: limits.timeout,
            }
        } else {
            RemoteError::Unreachable {
                url: url.to_string(),
                reason: error_chain(&e.without_url()),
            }
        }
    };
    let client = http_client(&parsed, &limits).map_err(|reason| RemoteError::Unreachable {
        url: url.to_string(),
        reason,
    })?;
    let mut request = client
        .get(parsed.clone())
        .header(USER_AGENT, concat!("harness9/", env!("CARGO_PKG_VERSION")));
    if let Some(meta) = &cached {
        if let Some(etag) = &meta.etag {
            request = request.header(IF_NONE_MATCH, etag);
        }
        if let Some(modified) = &meta.last_modified {
            request = request.header(IF_MODIFIED_SINCE, modified);
        }
    }
    let mut response = timeout(limits.answer_timeout, request.send())
        .await
        .map_err(|_| RemoteError::NoAnswer {
            url: url.to_string(),
            waited: limits.answer_timeout,
        })?
        .map_err(unreachable)?;
    let status = response.status();
    if status == StatusCode::NOT_MODIFIED
        && let Some(meta) = &cached
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
    progress.send_replace(Progress::Downloading { received: 0 });
    loop {
        let chunk = timeout(limits.answer_timeout, response.chunk())
            .await
            .map_err(|_| RemoteError::Stalled {
                url: url.to_string(),
                waited: limits.answer_timeout,
            })?
            .map_err(unreachable)?;
        let Some(chunk) = chunk else { break };
        if (body.len() + chunk.len()) as u64 > limits.max_download_bytes {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
        progress.send_replace(Progress::Downloading {
            received: body.len() as u64,
        });
    }

    progress.send_replace(Progress::Unpacking);
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

/// A whole number of seconds for messages ("2 s").
fn secs(d: Duration) -> String {
    format!("{} s", d.as_secs_f64().ceil() as u64)
}

/// "the copy cached 2025-06-01 14:03 UTC (3 h ago)".
fn cached_copy(meta: &Meta, now: SystemTime) -> String {
    let now = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let at = meta.downloaded_at;
    let age = now.saturating_sub(at);
    let ago = match age {
        0..60 => "just now".to_string(),
        60..3600 => format!("{} min ago", age / 60),
        3600..172_800 => format!("{} h ago", age / 3600),
        _ => format!("{} days ago", age / 86_400),
    };
    let (year, month, day) = civil_from_days(at / 86_400);
    let (hour, minute) = (at % 86_400 / 3600, at % 3600 / 60);
    format!("the copy cached {year}-{month:02}-{day:02} {hour:02}:{minute:02} UTC ({ago})")
}

/// The proleptic Gregorian date of a day count since 1970-01-01.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    // Count in 400-year eras of 146,097 days, from 0000-03-01 so the leap day comes last.
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = era * 400 + year_of_era + u64::from(month <= 2);
    (year, month, day)
}

/// A client for one download, set up like the model client (rustls with ring; no root
/// certificates loaded for plain http).
fn http_client(url: &reqwest::Url, limits: &RemoteLimits) -> Result<reqwest::Client, String> {
    crate::http::builder(url.scheme() == "http")
        .connect_timeout(limits.connect_timeout)
        .timeout(limits.timeout)
        .build()
        .map_err(|e| error_chain(&e))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_match_known_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_017), (2000, 3, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        assert_eq!(civil_from_days(19_783), (2024, 3, 1));
    }

    #[test]
    fn the_cached_copy_is_named_by_its_date_and_age() {
        let meta = |at| Meta {
            url: "http://h/a.zip".into(),
            etag: None,
            last_modified: None,
            tree: "tree-1".into(),
            downloaded_at: at,
        };
        let at = 784_111_777; // 1994-11-06 08:49:37 UTC
        let now = |later: u64| UNIX_EPOCH + Duration::from_secs(at + later);
        let text = |later| cached_copy(&meta(at), now(later));
        assert_eq!(text(5), "the copy cached 1994-11-06 08:49 UTC (just now)");
        assert_eq!(
            text(600),
            "the copy cached 1994-11-06 08:49 UTC (10 min ago)"
        );
        assert_eq!(
            text(30 * 3600),
            "the copy cached 1994-11-06 08:49 UTC (30 h ago)"
        );
        assert_eq!(
            text(9 * 86_400),
            "the copy cached 1994-11-06 08:49 UTC (9 days ago)"
        );
        // A clock set back does not make it "from the future".
        assert!(cached_copy(&meta(at), UNIX_EPOCH).ends_with("(just now)"));
    }

    #[test]
    fn waits_are_whole_seconds() {
        assert_eq!(secs(Duration::from_secs(2)), "2 s");
        assert_eq!(secs(Duration::from_millis(1500)), "2 s");
    }
}
