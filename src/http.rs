//! The one way harness9 builds an HTTP client (the model's endpoint, the window probe,
//! remote skill archives, MCP servers over HTTP): reqwest with rustls and ring, the
//! process-wide crypto provider installed once, and no root certificates loaded for plain
//! `http://`. It must not know what the clients send.

use std::sync::Once;

/// A reqwest builder set up the way every harness9 HTTP client is: rustls with ring (the
/// process-wide crypto provider installed once), and for `plain_http` no root
/// certificates loaded, since loading them takes tens of milliseconds and plain HTTP
/// never needs them. Callers add their own timeouts.
pub fn builder(plain_http: bool) -> reqwest::ClientBuilder {
    install_crypto_provider();
    let builder = reqwest::Client::builder();
    if plain_http {
        builder.tls_certs_only(Vec::new())
    } else {
        builder
    }
}

fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Fails only when a provider is already installed, which is what we want.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
