//! `[web_fetch]` and `[web_search]` in config.toml: the fetch's limits, and the search
//! backend (none by default: `web_search` is offered only when one is configured). It
//! must not know how fetching or searching works.

use std::time::Duration;

use serde::Deserialize;

use super::ConfigError;
use crate::tools::web_fetch::Settings;
use crate::tools::web_search::Backend;

/// `[web_fetch]` in config.toml.
#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct WebFetchFile {
    /// Bytes of a body read at most (default 2 MiB).
    pub max_bytes: Option<usize>,
    /// Seconds a whole fetch may take (default 30).
    pub timeout_secs: Option<u64>,
    /// Same-host redirects followed at most (default 5).
    pub max_redirects: Option<usize>,
}

/// `[web_search]` in config.toml.
#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct WebSearchFile {
    /// A SearXNG instance's URL (its JSON format enabled).
    pub searxng_url: Option<String>,
    /// Results given at most (default 8).
    pub max_results: Option<usize>,
    /// Seconds a search may take (default 20).
    pub timeout_secs: Option<u64>,
}

fn invalid(what: &str, message: &str) -> ConfigError {
    ConfigError::Invalid {
        what: what.to_string(),
        message: message.to_string(),
    }
}

/// The fetch's limits: each within sane bounds, or an error naming the key.
pub fn fetch_settings(file: &WebFetchFile) -> Result<Settings, ConfigError> {
    let mut settings = Settings::default();
    if let Some(bytes) = file.max_bytes {
        if !(1024..=64 * 1024 * 1024).contains(&bytes) {
            return Err(invalid(
                "web_fetch.max_bytes",
                "expected a number of bytes from 1024 to 67108864 (64 MiB)",
            ));
        }
        settings.max_bytes = bytes;
    }
    if let Some(secs) = file.timeout_secs {
        if !(1..=600).contains(&secs) {
            return Err(invalid(
                "web_fetch.timeout_secs",
                "expected seconds from 1 to 600",
            ));
        }
        settings.timeout = Duration::from_secs(secs);
    }
    if let Some(hops) = file.max_redirects {
        if hops > 20 {
            return Err(invalid(
                "web_fetch.max_redirects",
                "expected a number from 0 to 20",
            ));
        }
        settings.max_redirects = hops;
    }
    Ok(settings)
}

/// The search backend, when one is configured.
pub fn search_backend(file: &WebSearchFile) -> Result<Option<Backend>, ConfigError> {
    let Some(text) = &file.searxng_url else {
        if file.max_results.is_some() || file.timeout_secs.is_some() {
            return Err(invalid(
                "web_search",
                "max_results and timeout_secs need searxng_url (the backend)",
            ));
        }
        return Ok(None);
    };
    let url = reqwest::Url::parse(text.trim())
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
        .ok_or_else(|| {
            invalid(
                "web_search.searxng_url",
                "expected an http(s) URL of a SearXNG instance",
            )
        })?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(
            "web_search.searxng_url",
            "credentials in the URL are not sent; use an instance that needs none",
        ));
    }
    let mut backend = Backend::searxng(url);
    if let Some(n) = file.max_results {
        if !(1..=50).contains(&n) {
            return Err(invalid(
                "web_search.max_results",
                "expected a number from 1 to 50",
            ));
        }
        backend.max_results = n;
    }
    if let Some(secs) = file.timeout_secs {
        if !(1..=120).contains(&secs) {
            return Err(invalid(
                "web_search.timeout_secs",
                "expected seconds from 1 to 120",
            ));
        }
        backend.timeout = Duration::from_secs(secs);
    }
    Ok(Some(backend))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file<T: for<'de> Deserialize<'de>>(toml_text: &str) -> T {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn fetch_limits_are_read_and_bounded() {
        let s = fetch_settings(&file(
            "max_bytes = 4096\ntimeout_secs = 5\nmax_redirects = 0",
        ))
        .unwrap();
        assert_eq!(s.max_bytes, 4096);
        assert_eq!(s.timeout, Duration::from_secs(5));
        assert_eq!(s.max_redirects, 0);
        assert_eq!(
            fetch_settings(&WebFetchFile::default()).unwrap(),
            Settings::default()
        );
        for bad in ["max_bytes = 10", "timeout_secs = 0", "max_redirects = 99"] {
            let e = fetch_settings(&file(bad)).unwrap_err().to_string();
            assert!(e.contains("web_fetch."), "{bad}: {e}");
        }
        assert!(toml::from_str::<WebFetchFile>("proxy = \"http://p\"").is_err());
    }

    #[test]
    fn search_is_off_until_a_backend_is_configured() {
        assert_eq!(search_backend(&WebSearchFile::default()).unwrap(), None);
        let b = search_backend(&file(
            "searxng_url = \"http://127.0.0.1:8888/\"\nmax_results = 3",
        ))
        .unwrap()
        .unwrap();
        assert_eq!(b.searxng_url.as_str(), "http://127.0.0.1:8888/");
        assert_eq!(b.max_results, 3);
        for bad in [
            "searxng_url = \"file:///etc/passwd\"",
            "searxng_url = \"not a url\"",
            "searxng_url = \"http://u:p@127.0.0.1/\"",
            "max_results = 3",
            "searxng_url = \"http://127.0.0.1/\"\nmax_results = 0",
        ] {
            let e = search_backend(&file(bad)).unwrap_err().to_string();
            assert!(e.contains("web_search"), "{bad}: {e}");
        }
    }
}
