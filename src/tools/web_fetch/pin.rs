//! Where a `web_fetch` connects: the URL's host resolved once, every address judged
//! ([`super::address`]), and the client built to connect only to those addresses. The
//! client's own resolver refuses every name (no second lookup can happen: a host is
//! reached through the addresses pinned here or not at all), and it uses no proxy
//! (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY` are ignored: a proxy would
//! resolve the host itself, past the judgement). It must not know rules or how a page
//! is shown.

use std::fmt;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use reqwest::dns::{Name, Resolve, Resolving};
use url::Host;

use super::address::{self, Internal, Reach};
use crate::tools::WebReach;

/// Connecting to one address takes at most this long.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The future of a [`Lookup`].
pub type LookupFuture<'a> = Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send + 'a>>;

/// How a host name becomes addresses: the system's resolver, or a test's.
pub trait Lookup: Send + Sync + fmt::Debug {
    /// The addresses of `host` (a name, never an address).
    fn lookup<'a>(&'a self, host: &'a str, port: u16) -> LookupFuture<'a>;
}

/// The system's resolver (`getaddrinfo`: `/etc/hosts`, then DNS).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemLookup;

impl Lookup for SystemLookup {
    fn lookup<'a>(&'a self, host: &'a str, port: u16) -> LookupFuture<'a> {
        Box::pin(async move {
            let found = tokio::net::lookup_host((host, port)).await?;
            Ok(found.map(|a| a.ip()).collect())
        })
    }
}

/// The addresses a fetch may connect to, judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    /// The host name the addresses were looked up for; `None` when the URL names an
    /// address itself.
    pub name: Option<String>,
    /// The addresses, with the URL's port.
    pub addrs: Vec<SocketAddr>,
}

/// Why a host is not reached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreachable {
    /// The URL has no host.
    #[error("the URL has no host")]
    NoHost,
    /// The name could not be resolved.
    #[error("could not resolve {host}: {reason}")]
    Lookup {
        /// The host.
        host: String,
        /// The resolver's words.
        reason: String,
    },
    /// The name resolved to nothing.
    #[error("{host} resolved to no address")]
    NoAddress {
        /// The host.
        host: String,
    },
    /// An address is not on the public internet and no rule names the host.
    #[error(
        "{host} {}{}: web_fetch reaches such addresses only when an allow rule names this \
         host itself, `web_fetch({host})` (not `web_fetch` or `web_fetch(*.DOMAIN)`)",
        via.words(),
        kind.describe()
    )]
    Internal {
        /// The host as the URL names it.
        host: String,
        /// How the host came to the address.
        via: Via,
        /// What kind of internal address.
        kind: Internal,
    },
}

/// How a host came to an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Via {
    /// The URL names the address itself (in whatever spelling).
    Literal,
    /// The name resolved to it.
    Resolved {
        /// The address.
        ip: IpAddr,
    },
}

impl Via {
    fn words(&self) -> String {
        match self {
            Via::Literal => "is ".to_string(),
            Via::Resolved { ip } => format!("resolves to {ip}, "),
        }
    }
}

/// Resolves `url`'s host once (a name through `lookup`; an address as it is) and judges
/// every address: with [`WebReach::PublicOnly`] one internal address refuses the host.
pub async fn pin(url: &Url, reach: &WebReach, lookup: &dyn Lookup) -> Result<Pinned, Unreachable> {
    let port = url.port_or_known_default().unwrap_or(80);
    let host_text = url.host_str().unwrap_or("").to_string();
    let (name, ips) = match url.host() {
        None => return Err(Unreachable::NoHost),
        Some(Host::Ipv4(ip)) => (None, vec![IpAddr::V4(ip)]),
        Some(Host::Ipv6(ip)) => (None, vec![IpAddr::V6(ip)]),
        Some(Host::Domain(domain)) => {
            let ips = lookup
                .lookup(domain, port)
                .await
                .map_err(|e| Unreachable::Lookup {
                    host: host_text.clone(),
                    reason: e.to_string(),
                })?;
            (Some(domain.to_ascii_lowercase()), ips)
        }
    };
    if ips.is_empty() {
        return Err(Unreachable::NoAddress { host: host_text });
    }
    if *reach == WebReach::PublicOnly {
        for ip in &ips {
            if let Reach::Internal(kind) = address::reach(*ip) {
                let via = match name {
                    Some(_) => Via::Resolved { ip: *ip },
                    None => Via::Literal,
                };
                return Err(Unreachable::Internal {
                    host: host_text,
                    via,
                    kind,
                });
            }
        }
    }
    let mut addrs: Vec<SocketAddr> = Vec::new();
    for ip in ips {
        let addr = SocketAddr::new(ip, port);
        if !addrs.contains(&addr) {
            addrs.push(addr);
        }
    }
    Ok(Pinned { name, addrs })
}

/// A resolver that resolves nothing: every name the client meets that was not pinned
/// fails, so the client never looks a name up again.
#[derive(Debug, Clone, Copy)]
struct NoLookups;

impl Resolve for NoLookups {
    fn resolve(&self, name: Name) -> Resolving {
        let name = name.as_str().to_string();
        Box::pin(async move {
            Err(format!("{name} was not resolved and judged first: not connected").into())
        })
    }
}

/// The client for one fetch: connects only to `pinned`'s addresses, no proxy, no
/// redirects followed by itself, no default headers, no cookies.
pub fn client(pinned: &Pinned) -> Result<reqwest::Client, String> {
    let mut builder = crate::http::builder(false)
        .no_proxy()
        .dns_resolver(Arc::new(NoLookups))
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(concat!("harness9/", env!("CARGO_PKG_VERSION")));
    if let Some(name) = &pinned.name {
        builder = builder.resolve_to_addrs(name, &pinned.addrs);
    }
    builder
        .build()
        .map_err(|e| format!("could not set up the HTTP client: {e}"))
}
