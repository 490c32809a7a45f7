//! TLS for stand-ins that answer for real host names: a throwaway certificate authority made
//! fresh for each run ([`StandInCa`]), one leaf certificate per host name it signs, and a
//! listener that completes each TLS handshake on its own task ([`TlsListener`]) so one slow
//! client cannot hold up the others.
//!
//! The CA's private key lives only in memory and is dropped with the [`StandInCa`]; its
//! certificate is handed to whichever client should trust the stand-ins (the demo's crawler,
//! through `toolmark_crawler::mcp::Trust::only`) and to nothing else. Certificates carry
//! rcgen's default validity (1975 to 4096): the key, not the dates, limits a throwaway CA.
//!
//! What it does not do: client certificates, revocation, or serving anything but loopback.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// Longest a TLS handshake may take before the connection is dropped.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Handshaken connections waiting for the server to take them.
const ACCEPTED_QUEUE: usize = 64;

/// Most handshakes in progress at once; the acceptor takes no new connection while this many
/// are under way.
pub const MAX_HANDSHAKES: usize = 256;

/// A certificate authority that exists for one run.
pub struct StandInCa {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl std::fmt::Debug for StandInCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StandInCa").finish_non_exhaustive()
    }
}

fn tls_error(what: &str, e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("{what}: {e}"))
}

impl StandInCa {
    /// A new CA named `name` (its certificate's common name), with a fresh P-256 key.
    pub fn new(name: &str) -> io::Result<StandInCa> {
        let key = KeyPair::generate().map_err(|e| tls_error("CA key", e))?;
        let mut params = CertificateParams::new(Vec::<String>::new())
            .map_err(|e| tls_error("CA parameters", e))?;
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let cert = params
            .self_signed(&key)
            .map_err(|e| tls_error("CA certificate", e))?;
        Ok(StandInCa {
            issuer: Issuer::new(params, key),
            pem: cert.pem(),
        })
    }

    /// The CA's certificate, PEM: what a client that should trust the stand-ins is given.
    pub fn certificate_pem(&self) -> &str {
        &self.pem
    }

    /// A TLS server configuration presenting a fresh certificate for `host` (a DNS name),
    /// signed by this CA; ALPN offers HTTP/1.1 only.
    pub fn server_config(&self, host: &str) -> io::Result<Arc<rustls::ServerConfig>> {
        let key = KeyPair::generate().map_err(|e| tls_error("leaf key", e))?;
        let mut params = CertificateParams::new(vec![host.to_owned()])
            .map_err(|e| tls_error(&format!("certificate for {host:?}"), e))?;
        params.distinguished_name.push(DnType::CommonName, host);
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let cert = params
            .signed_by(&key, &self.issuer)
            .map_err(|e| tls_error(&format!("certificate for {host:?}"), e))?;
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| tls_error("TLS versions", e))?
            .with_no_client_auth()
            .with_single_cert(
                vec![CertificateDer::from(cert.der().to_vec())],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
            )
            .map_err(|e| tls_error("TLS server configuration", e))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}

/// A TCP listener whose connections are served over TLS: an acceptor task takes each TCP
/// connection and completes its handshake on a task of its own (at most
/// [`HANDSHAKE_TIMEOUT`], at most [`MAX_HANDSHAKES`] at once); failed handshakes are dropped.
/// Dropping the listener stops the acceptor and every handshake in progress.
pub struct TlsListener {
    accepted: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
    acceptor: tokio::task::JoinHandle<()>,
}

impl TlsListener {
    /// Serve `listener`'s connections with `config`. Must be called within a Tokio runtime.
    pub fn new(listener: TcpListener, config: Arc<rustls::ServerConfig>) -> io::Result<Self> {
        let local = listener.local_addr()?;
        let (tx, accepted) = mpsc::channel(ACCEPTED_QUEUE);
        let tls = TlsAcceptor::from(config);
        let acceptor = tokio::spawn(async move {
            // Owned by the acceptor: aborting it drops the set, which aborts every handshake.
            let mut handshakes = tokio::task::JoinSet::new();
            loop {
                while handshakes.try_join_next().is_some() {}
                if handshakes.len() >= MAX_HANDSHAKES {
                    handshakes.join_next().await;
                    continue;
                }
                let (tcp, peer) = match listener.accept().await {
                    Ok(c) => c,
                    // Out of descriptors and the like: back off briefly, as axum's own loop does.
                    Err(_) => {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                if tx.is_closed() {
                    return;
                }
                let (tls, tx) = (tls.clone(), tx.clone());
                handshakes.spawn(async move {
                    if let Ok(Ok(stream)) =
                        tokio::time::timeout(HANDSHAKE_TIMEOUT, tls.accept(tcp)).await
                    {
                        let _ = tx.send((stream, peer)).await;
                    }
                });
            }
        });
        Ok(TlsListener {
            accepted,
            local,
            acceptor,
        })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.acceptor.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.accepted.recv().await {
            Some(c) => c,
            // The acceptor is gone (only when the listener is being dropped): nothing more comes.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local)
    }
}
