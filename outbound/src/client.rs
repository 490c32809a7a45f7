//! The HTTP clients toolmark builds, and the rules every one of them follows.
//!
//! [`pinned`] is the client of one guarded request (a crawl observation, a package download, a
//! webhook, a witness submission): connected only to the addresses [`crate::guard::check`]
//! checked (reqwest `resolve_to_addrs`, and a resolver that refuses every other name), no
//! redirect followed, no proxy from the environment, [`Outbound::connect_timeout`], the
//! [`Outbound::user_agent`], TLS by [`Outbound::trust`], and `Accept-Encoding: gzip, deflate`
//! (the body is decompressed by [`crate::body`], under its caps). [`unguarded`] is the client for
//! a host the operator named (a registry to harvest, a remote log to verify): no redirect
//! followed, reqwest's own TLS and resolver.
//!
//! Each client is built per request: a pinned client reaches one host at the addresses checked
//! for that request, so it cannot be shared. What it costs is the TLS configuration, built once
//! and shared ([`Trust::platform`]).

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{self, HeaderMap, HeaderValue};

use crate::guard::{self, Pinned, Policy, Resolve};

/// The settings of toolmark's own outbound requests: what the SSRF guard allows, how names are
/// resolved, the `User-Agent`, which certificates are trusted and how long connecting may take.
/// What webhooks and witness submissions need; the crawler's configuration adds its crawl-only
/// limits and memory budget to these.
#[derive(Clone)]
pub struct Outbound {
    /// What the SSRF guard allows.
    pub policy: Policy,
    /// How host names are resolved (once per request, by the guard).
    pub resolver: Arc<dyn Resolve>,
    /// The `User-Agent` sent.
    pub user_agent: String,
    /// Which server certificates are accepted.
    pub trust: Trust,
    /// How long the TCP connection and TLS handshake may take
    /// ([`CONNECT_TIMEOUT`](crate::limits::CONNECT_TIMEOUT) by default).
    pub connect_timeout: Duration,
    /// The local address connections are made from (reqwest's `local_address`); `None`: the
    /// one the system picks. The crawler's second look dials from the address the operator
    /// configures for it (`crawl.second_source`), so a server keying what it serves on the
    /// client's address is seen from two.
    pub local_address: Option<std::net::IpAddr>,
}

impl Default for Outbound {
    /// The strict policy, the system resolver, the platform's verifier, `toolmark/VERSION`.
    fn default() -> Self {
        Outbound {
            policy: Policy::default(),
            resolver: guard::system(),
            user_agent: format!("toolmark/{}", env!("CARGO_PKG_VERSION")),
            trust: Trust::platform(),
            connect_timeout: crate::limits::CONNECT_TIMEOUT,
            local_address: None,
        }
    }
}

impl std::fmt::Debug for Outbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbound")
            .field("policy", &self.policy)
            .field("user_agent", &self.user_agent)
            .field("trust", &self.trust)
            .field("connect_timeout", &self.connect_timeout)
            .field("local_address", &self.local_address)
            .finish_non_exhaustive()
    }
}

/// Why a client could not be built (the request is not sent).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    /// The TLS configuration could not be made (the platform's verifier, the protocol versions).
    #[error("{0}")]
    Tls(String),
    /// reqwest refused the configuration.
    #[error("{0}")]
    Build(String),
}

/// Which server certificates a client's TLS accepts.
///
/// [`Trust::platform`] (the default, every real request): the platform's verifier — system
/// roots, the name checked against the URL's host. [`Trust::only`]: the given roots and
/// nothing else — how `toolmark demo` reaches its https stand-ins for real registry URLs with
/// certificates of its own throwaway CA, which no other client trusts.
#[derive(Clone, Default)]
pub struct Trust(Option<Arc<rustls::ClientConfig>>);

impl std::fmt::Debug for Trust {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            None => "Trust::platform",
            Some(_) => "Trust::only(..)",
        })
    }
}

/// PEM that [`Trust::only`] could not take as root certificates.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("trusted roots: {0}")]
pub struct TrustError(String);

impl Trust {
    /// The platform's verifier and roots.
    pub fn platform() -> Trust {
        Trust(None)
    }

    /// Only the root certificates in `pem` (at least one), instead of the platform's.
    pub fn only(pem: &[u8]) -> Result<Trust, TrustError> {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject;
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| TrustError(e.to_string()))?;
            roots.add(cert).map_err(|e| TrustError(e.to_string()))?;
        }
        if roots.is_empty() {
            return Err(TrustError("no certificate in the PEM".into()));
        }
        let config = tls_config(|b| Ok(b.with_root_certificates(roots))).map_err(TrustError)?;
        Ok(Trust(Some(Arc::new(config))))
    }

    /// The TLS configuration for one client.
    fn config(&self) -> Result<rustls::ClientConfig, ClientError> {
        match &self.0 {
            None => shared_tls().map_err(ClientError::Tls),
            Some(config) => Ok(config.as_ref().clone()),
        }
    }
}

/// rustls with `verifier` chosen by the caller, TLS 1.2 and 1.3, ALPN h2 and http/1.1.
fn tls_config(
    verifier: impl FnOnce(
        rustls::ConfigBuilder<rustls::ClientConfig, rustls::WantsVerifier>,
    ) -> Result<
        rustls::ConfigBuilder<rustls::ClientConfig, rustls::client::WantsClientCert>,
        String,
    >,
) -> Result<rustls::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS versions: {e}"))?;
    let mut config = verifier(builder)?.with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// The TLS configuration every client shares under [`Trust::platform`]: the platform's
/// certificate verifier (system roots, name checked against the URL's host). Built once:
/// reqwest would otherwise build a verifier per client, which costs about 14 ms each
/// (`docs/benchmarks.md`).
fn shared_tls() -> Result<rustls::ClientConfig, String> {
    static TLS: std::sync::OnceLock<Result<rustls::ClientConfig, String>> =
        std::sync::OnceLock::new();
    TLS.get_or_init(|| {
        tls_config(|b| {
            let provider = b.crypto_provider().clone();
            let verifier = rustls_platform_verifier::Verifier::new(provider)
                .map_err(|e| format!("certificate verifier: {e}"))?;
            Ok(b.dangerous()
                .with_custom_certificate_verifier(Arc::new(verifier)))
        })
    })
    .clone()
}

/// The client of one guarded request to `pinned`, sending `headers` (besides
/// `Accept-Encoding: gzip, deflate`, which [`crate::body`] decodes) with every request.
pub fn pinned(
    settings: &Outbound,
    pinned: &Pinned,
    headers: HeaderMap,
) -> Result<reqwest::Client, ClientError> {
    let mut defaults = HeaderMap::new();
    defaults.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("gzip, deflate"),
    );
    for (name, value) in headers.iter() {
        defaults.append(name.clone(), value.clone());
    }
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .connect_timeout(settings.connect_timeout)
        .user_agent(settings.user_agent.clone())
        .default_headers(defaults)
        .pool_max_idle_per_host(2)
        .dns_resolver(Arc::new(guard::RefuseAll))
        .local_address(settings.local_address)
        .tls_backend_preconfigured(settings.trust.config()?);
    if let url::Host::Domain(_) = pinned.url.host().unwrap_or(url::Host::Domain("")) {
        builder = builder.resolve_to_addrs(&pinned.host, &pinned.addrs);
    }
    builder
        .build()
        .map_err(|e| ClientError::Build(crate::error_chain(&e)))
}

/// A client for a host the operator named (a registry to harvest, a remote log to verify):
/// no redirect followed, and the whole of each request within `timeout` when one is given.
/// Not guarded: the operator chose the host, and may name a private one.
pub fn unguarded(timeout: Option<Duration>) -> Result<reqwest::Client, ClientError> {
    let mut builder = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none());
    if let Some(timeout) = timeout {
        builder = builder.timeout(timeout);
    }
    builder
        .build()
        .map_err(|e| ClientError::Build(crate::error_chain(&e)))
}
