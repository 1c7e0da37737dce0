//! The TLS seam of origin connections: the [`TlsBackend`] trait every stack implements, the trust roots
//! all of them share ([`trust_roots`]), and rustls's backend ([`RustlsBackend`], the library's default;
//! BoringSSL's lives in `webfreeze-upstream-boring`).

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use super::UpstreamConfig;
use crate::error::ServeError;
use crate::hello::ClientHello;

/// A [`TlsBackend`] in a config (Debug shows its name).
#[derive(Clone)]
pub struct TlsStack(pub Arc<dyn TlsBackend>);

impl std::fmt::Debug for TlsStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name())
    }
}

/// An origin stream of any TLS backend.
pub trait OriginIo: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> OriginIo for T {}

/// A finished client handshake with an origin.
pub struct TlsConnected {
    /// The encrypted stream.
    pub io: Box<dyn OriginIo>,
    /// The protocol the origin chose.
    pub alpn: Option<String>,
}

/// The future of [`TlsBackend::handshake`].
pub type HandshakeFuture = Pin<Box<dyn Future<Output = Result<TlsConnected, HandshakeError>> + Send>>;

/// Why a [`TlsBackend`]'s handshake with an origin failed: our side (the client could not be set up) or
/// the origin's (the handshake ran and failed).
#[derive(Debug, thiserror::Error)]
pub enum HandshakeError {
    /// The TLS client could not be set up for this handshake (its roots, the ALPN list, the hello to
    /// present): a configuration problem on our side, the same for every origin.
    #[error("cannot set up the TLS client: {0}")]
    Setup(String),
    /// The host is not a name a certificate can be checked against.
    #[error("{0:?} is not a valid TLS server name")]
    ServerName(String),
    /// The handshake with the origin failed: its certificate was refused, it speaks no common protocol,
    /// or it closed the connection. The origin's side; another origin may work.
    #[error("{0}")]
    Origin(String),
}

/// A TLS stack for origin connections: the upstream-connector seam. Each backend lives in its own crate
/// (pingora's layout), so a build carries only the stacks it uses.
pub trait TlsBackend: Send + Sync + 'static {
    /// The name `--upstream-tls` takes.
    fn name(&self) -> &'static str;
    /// Whether handshakes present the client's ClientHello (and, by the same switch, the upstream h2
    /// connection the client's SETTINGS).
    fn mirrors(&self) -> bool;
    /// TLS over `tcp` to `host` (SNI and certificate name), offering `alpn`. `hello` is the browser's
    /// ClientHello to present; None: the backend's fixed browser profile (if it mirrors at all).
    fn handshake(
        &self,
        tcp: TcpStream,
        host: String,
        alpn: Vec<String>,
        hello: Option<Arc<ClientHello>>,
    ) -> HandshakeFuture;
}

/// Accepts any certificate: only with `--insecure-upstream`.
#[derive(Debug)]
struct NoVerify(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// rustls for origins: today's default, and the choice when mirroring is not wanted. It presents rustls's
/// own ClientHello whatever the browser sent.
pub struct RustlsBackend {
    /// By ALPN list offered.
    connectors: Mutex<HashMap<Vec<String>, TlsConnector>>,
    cfg: UpstreamConfig,
}

impl RustlsBackend {
    /// Load the trust roots of `cfg` (checked here, so a bad `--upstream-ca` fails at start).
    pub fn new(cfg: &UpstreamConfig) -> Result<Self, ServeError> {
        let this = Self { connectors: Mutex::new(HashMap::new()), cfg: cfg.clone() };
        this.connector(&["h2".into(), "http/1.1".into()])?;
        Ok(this)
    }

    fn connector(&self, alpn: &[String]) -> Result<TlsConnector, ServeError> {
        let mut map = self.connectors.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = map.get(alpn) {
            return Ok(c.clone());
        }
        let protos: Vec<&[u8]> = alpn.iter().map(|a| a.as_bytes()).collect();
        let c = TlsConnector::from(Arc::new(client_tls(&self.cfg, &protos)?));
        map.insert(alpn.to_vec(), c.clone());
        Ok(c)
    }
}

impl TlsBackend for RustlsBackend {
    fn name(&self) -> &'static str {
        "rustls"
    }
    fn mirrors(&self) -> bool {
        false
    }
    fn handshake(
        &self,
        tcp: TcpStream,
        host: String,
        alpn: Vec<String>,
        _hello: Option<Arc<ClientHello>>,
    ) -> HandshakeFuture {
        let connector = self.connector(&alpn);
        Box::pin(async move {
            let connector = connector.map_err(|e| HandshakeError::Setup(e.to_string()))?;
            let name = ServerName::try_from(host.clone()).map_err(|_| HandshakeError::ServerName(host))?;
            let tls =
                connector.connect(name, tcp).await.map_err(|e| HandshakeError::Origin(e.to_string()))?;
            let alpn = tls.get_ref().1.alpn_protocol().map(|p| String::from_utf8_lossy(p).into_owned());
            Ok(TlsConnected { io: Box::new(tls), alpn })
        })
    }
}

/// One certificate an origin's chain may end in.
pub struct TrustRoot {
    /// The certificate.
    pub der: CertificateDer<'static>,
    /// The `--upstream-ca` file it came from; None for Mozilla's roots and the system's.
    pub file: Option<PathBuf>,
}

/// The trust roots of `cfg`, for every TLS backend: Mozilla's (webpki-root-certs), the system's
/// (`system_roots`) and the `extra_ca_files`; none when verification is off (`insecure`). A file that
/// cannot be read or holds no PEM certificate is an error naming it. A backend skips a built-in or system
/// certificate it cannot load, and refuses a file's.
pub fn trust_roots(cfg: &UpstreamConfig) -> Result<Vec<TrustRoot>, ServeError> {
    if cfg.insecure {
        return Ok(Vec::new());
    }
    let mut roots: Vec<TrustRoot> = webpki_root_certs::TLS_SERVER_ROOT_CERTS
        .iter()
        .map(|c| TrustRoot { der: c.clone(), file: None })
        .collect();
    if cfg.system_roots {
        roots.extend(
            rustls_native_certs::load_native_certs()
                .certs
                .into_iter()
                .map(|der| TrustRoot { der, file: None }),
        );
    }
    for path in &cfg.extra_ca_files {
        let err = |detail: String| ServeError::UpstreamCa { path: path.display().to_string(), detail };
        let pem = std::fs::read(path).map_err(|e| err(e.to_string()))?;
        let before = roots.len();
        for c in CertificateDer::pem_slice_iter(&pem) {
            roots.push(TrustRoot { der: c.map_err(|e| err(e.to_string()))?, file: Some(path.clone()) });
        }
        if roots.len() == before {
            return Err(err("no PEM certificate in it".into()));
        }
    }
    Ok(roots)
}

fn client_tls(cfg: &UpstreamConfig, alpn: &[&[u8]]) -> Result<ClientConfig, ServeError> {
    let provider = crate::crypto_provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| ServeError::Tls(e.to_string()))?;
    let mut tls = if cfg.insecure {
        tracing::warn!("origin certificate verification is OFF (--insecure-upstream): recordings may contain impostor content");
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
            .with_no_client_auth()
    } else {
        let mut roots = RootCertStore::empty();
        for r in trust_roots(cfg)? {
            // A built-in or system certificate rustls cannot use is left out; a file's is an error.
            if let (Err(e), Some(path)) = (roots.add(r.der), &r.file) {
                return Err(ServeError::UpstreamCa {
                    path: path.display().to_string(),
                    detail: e.to_string(),
                });
            }
        }
        builder.with_root_certificates(roots).with_no_client_auth()
    };
    tls.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(tls)
}
