//! The upstream side: a pooled hyper-util client over our own connector.
//!
//! The connector exists (instead of hyper-rustls) because the proxy needs three things the stock ones do
//! not give together: curl-style `--resolve` overrides that keep the original name for SNI and
//! certificate checks, the origin's socket address and negotiated ALPN reported to the handler, and a
//! per-origin ALPN choice (h2 when the origin offers it, else HTTP/1.1) independent of the client side.
//!
//! Trust: the webpki roots, the system roots, and `--upstream-ca` files. Verification can only be turned
//! off with an explicit `insecure` setting, which logs a warning.
//!
//! The TLS stack is a seam, [`TlsBackend`]: rustls here ([`RustlsBackend`], the default of the library),
//! BoringSSL in its own crate (`webfreeze-upstream-boring`), which presents the browser's own ClientHello
//! ([`ClientProfile`]) so origins see the browser's fingerprint, not the proxy's. A backend that mirrors
//! also gets the browser's HTTP/2 SETTINGS and WINDOW_UPDATE; [`Upstream`] keeps one pooled client per
//! distinct client profile (a connection made with one fingerprint is never reused for another).

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};

mod tls;

pub use tls::{
    trust_roots, HandshakeError, HandshakeFuture, OriginIo, RustlsBackend, TlsBackend, TlsConnected,
    TlsStack, TrustRoot,
};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use crate::body::{Body, BoxError};
use crate::error::ServeError;
use crate::handler::UpstreamInfo;
use crate::hello::{ClientHello, ClientProfile, H2Preface};

/// How the proxy reaches origins.
#[derive(Debug, Clone)]
pub struct UpstreamConfig {
    /// Extra PEM CA files to trust for origins.
    pub extra_ca_files: Vec<PathBuf>,
    /// `host:port` -> address overrides (curl's `--resolve`).
    pub resolve: HashMap<(String, u16), SocketAddr>,
    /// Accept any origin certificate. Logged as a warning.
    pub insecure: bool,
    /// Trust the system root store as well as the webpki roots.
    pub system_roots: bool,
    /// TCP connect timeout.
    pub connect_timeout: Duration,
    /// The TLS stack for origins; None: rustls.
    pub tls: Option<TlsStack>,
}

impl Default for UpstreamConfig {
    fn default() -> Self {
        Self {
            extra_ca_files: Vec::new(),
            resolve: HashMap::new(),
            insecure: false,
            system_roots: true,
            connect_timeout: Duration::from_secs(10),
            tls: None,
        }
    }
}

/// Parse one `--resolve HOST:PORT:ADDR` entry. ADDR is an IP (`127.0.0.1`, `[::1]`) or `IP:PORT`, the
/// latter also redirecting the port (so `shop.test:443:127.0.0.1:8443` reaches a local test origin).
pub fn parse_resolve(s: &str) -> Result<((String, u16), SocketAddr), ServeError> {
    let bad = || ServeError::Resolve(s.to_string());
    let (host, rest) = s.split_once(':').ok_or_else(bad)?;
    let (port, addr) = rest.split_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    let addr = addr.trim();
    let sock = if let Ok(sa) = addr.parse::<SocketAddr>() {
        sa
    } else {
        let ip = addr.trim_matches(['[', ']']).parse::<std::net::IpAddr>().map_err(|_| bad())?;
        SocketAddr::new(ip, port)
    };
    if host.is_empty() {
        return Err(bad());
    }
    Ok(((host.to_ascii_lowercase(), port), sock))
}

/// Establishes origin connections: override or DNS, TCP, then TLS for https.
#[derive(Clone)]
pub struct Connector {
    tls: Arc<dyn TlsBackend>,
    /// The ALPN protocols offered.
    alpn: Vec<String>,
    /// The browser ClientHello presented (mirroring backends).
    hello: Option<Arc<ClientHello>>,
    resolve: Arc<HashMap<(String, u16), SocketAddr>>,
    connect_timeout: Duration,
}

/// The stream to an origin.
pub enum OriginStream {
    /// Plain TCP (http://).
    Plain(TcpStream, UpstreamInfo),
    /// TLS over TCP (https://).
    Tls(Box<dyn OriginIo>, UpstreamInfo),
}

impl Connection for OriginStream {
    fn connected(&self) -> Connected {
        match self {
            OriginStream::Plain(_, info) => Connected::new().extra(info.clone()),
            OriginStream::Tls(_, info) => {
                let c = Connected::new().extra(info.clone());
                if info.alpn.as_deref() == Some("h2") {
                    c.negotiated_h2()
                } else {
                    c
                }
            }
        }
    }
}

impl AsyncRead for OriginStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            OriginStream::Plain(s, _) => Pin::new(s).poll_read(cx, buf),
            OriginStream::Tls(s, _) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for OriginStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            OriginStream::Plain(s, _) => Pin::new(s).poll_write(cx, buf),
            OriginStream::Tls(s, _) => Pin::new(s).poll_write(cx, buf),
        }
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            OriginStream::Plain(s, _) => Pin::new(s).poll_write_vectored(cx, bufs),
            OriginStream::Tls(s, _) => Pin::new(s).poll_write_vectored(cx, bufs),
        }
    }
    fn is_write_vectored(&self) -> bool {
        match self {
            OriginStream::Plain(s, _) => s.is_write_vectored(),
            OriginStream::Tls(s, _) => s.is_write_vectored(),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            OriginStream::Plain(s, _) => Pin::new(s).poll_flush(cx),
            OriginStream::Tls(s, _) => Pin::new(s).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            OriginStream::Plain(s, _) => Pin::new(s).poll_shutdown(cx),
            OriginStream::Tls(s, _) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

/// A connect failure, classified for the 502 body.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// DNS failed.
    #[error("cannot resolve {host}: {detail}")]
    Resolve {
        /// Host.
        host: String,
        /// Resolver message.
        detail: String,
    },
    /// TCP failed.
    #[error("cannot connect to {host} ({addr}): {detail}")]
    Connect {
        /// Host.
        host: String,
        /// Address tried last.
        addr: String,
        /// Socket error.
        detail: String,
    },
    /// TLS failed.
    #[error("TLS handshake with {host} failed: {error}")]
    Tls {
        /// Host.
        host: String,
        /// Which side failed, and the TLS stack's message.
        #[source]
        error: HandshakeError,
    },
    /// The URI has no host.
    #[error("request URI {0} has no host")]
    NoHost(String),
}

impl tower_service::Service<Uri> for Connector {
    type Response = TokioIo<OriginStream>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { this.connect(uri).await.map(TokioIo::new).map_err(Into::into) })
    }
}

impl Connector {
    /// Resolve (`--resolve` first, else DNS) and open TCP to the first address that answers.
    async fn dial(&self, host: &str, port: u16) -> Result<(TcpStream, SocketAddr), ConnectError> {
        let host = host.trim_matches(['[', ']']).to_ascii_lowercase();
        let addrs: Vec<SocketAddr> = match self.resolve.get(&(host.clone(), port)) {
            Some(a) => vec![*a],
            None => {
                let found =
                    tokio::net::lookup_host((host.as_str(), port)).await.map(|it| it.collect::<Vec<_>>());
                match found {
                    Ok(v) => v,
                    Err(e) => return Err(ConnectError::Resolve { host, detail: e.to_string() }),
                }
            }
        };
        if addrs.is_empty() {
            return Err(ConnectError::Resolve { host, detail: "no addresses".into() });
        }
        let mut last = String::new();
        let mut last_addr = String::new();
        for addr in addrs {
            match tokio::time::timeout(self.connect_timeout, TcpStream::connect(addr)).await {
                Ok(Ok(tcp)) => {
                    let _ = tcp.set_nodelay(true);
                    return Ok((tcp, addr));
                }
                Ok(Err(e)) => {
                    last = e.to_string();
                    last_addr = addr.to_string();
                }
                Err(_) => {
                    last = format!("connect timed out after {:?}", self.connect_timeout);
                    last_addr = addr.to_string();
                }
            }
        }
        Err(ConnectError::Connect { host, addr: last_addr, detail: last })
    }

    async fn connect(&self, uri: Uri) -> Result<OriginStream, ConnectError> {
        let host = uri.host().ok_or_else(|| ConnectError::NoHost(uri.to_string()))?;
        let host = host.trim_matches(['[', ']']).to_ascii_lowercase();
        let https = uri.scheme_str() == Some("https") || uri.scheme_str() == Some("wss");
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let (tcp, addr) = self.dial(&host, port).await?;
        let mut info = UpstreamInfo { server_addr: Some(addr), alpn: None, version: None };
        if !https {
            return Ok(OriginStream::Plain(tcp, info));
        }
        let tls = self
            .tls
            .handshake(tcp, host.clone(), self.alpn.clone(), self.hello.clone())
            .await
            .map_err(|error| ConnectError::Tls { host: host.clone(), error })?;
        info.alpn = tls.alpn;
        Ok(OriginStream::Tls(tls.io, info))
    }
}

/// The pooled clients of one client profile: one negotiating h2 or HTTP/1.1, one HTTP/1.1-only for
/// upgrades (WebSocket).
#[derive(Clone)]
pub struct Clients {
    /// h2 when the origin offers it, else HTTP/1.1.
    pub client: Client<Connector, Body>,
    /// HTTP/1.1 only (upgrades need it).
    pub client_h1: Client<Connector, Body>,
}

/// Distinct client profiles kept with their own pools; the least recently used is dropped past this.
const PROFILES: usize = 32;

/// Origin connections: pooled clients per client profile.
pub struct Upstream {
    tls: Arc<dyn TlsBackend>,
    /// The clients when nothing is mirrored (and for a mirroring backend, Chrome's profile).
    default: Clients,
    by_profile: Mutex<lru::LruCache<Arc<ClientProfile>, Clients>>,
    /// Dials for [`Upstream::probe`].
    dialer: Connector,
}

impl Upstream {
    /// Build the clients (loads the trust roots).
    pub fn new(cfg: &UpstreamConfig) -> Result<Self, ServeError> {
        let tls: Arc<dyn TlsBackend> = match &cfg.tls {
            Some(t) => t.0.clone(),
            None => Arc::new(RustlsBackend::new(cfg)?),
        };
        let dialer = Connector {
            tls: tls.clone(),
            alpn: vec!["http/1.1".into()],
            hello: None,
            resolve: Arc::new(cfg.resolve.clone()),
            connect_timeout: cfg.connect_timeout,
        };
        Ok(Self {
            default: build_clients(&dialer, &ClientProfile::default()),
            tls,
            by_profile: Mutex::new(lru::LruCache::new(
                NonZeroUsize::new(PROFILES).unwrap_or(NonZeroUsize::MIN),
            )),
            dialer,
        })
    }

    /// The TLS backend's name.
    pub fn tls_name(&self) -> &'static str {
        self.tls.name()
    }

    /// The clients for requests of a client that presented `profile`: its own pools when the backend
    /// mirrors and the client is a browser, else the default ones.
    pub fn clients(&self, profile: &Arc<ClientProfile>) -> Clients {
        if !self.tls.mirrors() || (profile.hello.is_none() && profile.h2.is_none()) {
            return self.default.clone();
        }
        let mut map = self.by_profile.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = map.get(profile) {
            return c.clone();
        }
        let c = build_clients(&self.dialer, profile);
        map.put(profile.clone(), c.clone());
        c
    }

    /// Whether `host:port` accepts a TCP connection (the connection is closed again): a CONNECT in live
    /// and record modes is answered only once the origin is known to be reachable.
    pub async fn probe(&self, host: &str, port: u16) -> Result<(), ConnectError> {
        self.dialer.dial(host, port).await.map(drop)
    }
}

/// The clients presenting `profile` (when the backend mirrors), dialing as `base` does.
fn build_clients(base: &Connector, profile: &ClientProfile) -> Clients {
    let mirror = base.tls.mirrors();
    let hello = profile.hello.clone().map(Arc::new);
    let alpn: Vec<String> = match &hello {
        Some(h) if !h.alpn.is_empty() => h.alpn.clone(),
        _ => vec!["h2".into(), "http/1.1".into()],
    };
    let connector = |alpn: Vec<String>| Connector { alpn, hello: hello.clone(), ..base.clone() };
    let h2 = profile.h2.clone().unwrap_or_else(H2Preface::chrome);
    let mk = |c: Connector| {
        let mut b = Client::builder(TokioExecutor::new());
        b.timer(TokioTimer::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(Duration::from_secs(60))
            .pool_max_idle_per_host(64);
        if mirror {
            // The browser's SETTINGS (hyper sends them in ascending order, as Chromium does; it always
            // sends ENABLE_PUSH=0, INITIAL_WINDOW_SIZE and MAX_HEADER_LIST_SIZE).
            b.http2_header_table_size(h2.get(1))
                .http2_max_concurrent_streams(h2.get(3))
                .http2_initial_stream_window_size(h2.get(4).unwrap_or(65_535))
                .http2_max_frame_size(h2.get(5))
                .http2_max_header_list_size(h2.get(6).unwrap_or(16 * 1024))
                .http2_initial_connection_window_size(65_535 + h2.window_update.unwrap_or(0));
        }
        b.build(c)
    };
    Clients { client: mk(connector(alpn)), client_h1: mk(connector(vec!["http/1.1".into()])) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_entries_table() {
        for (input, expect) in [
            ("shop.test:443:127.0.0.1", Some((("shop.test", 443), "127.0.0.1:443"))),
            ("Shop.Test:443:127.0.0.1:8443", Some((("shop.test", 443), "127.0.0.1:8443"))),
            ("h:80:[::1]", Some((("h", 80), "[::1]:80"))),
            ("h:80:[::1]:81", Some((("h", 80), "[::1]:81"))),
            ("h:x:127.0.0.1", None),
            ("h:80", None),
            (":80:127.0.0.1", None),
            ("h:80:not-an-ip", None),
        ] {
            let got = parse_resolve(input).ok().map(|((h, p), a)| ((h, p), a.to_string()));
            let want = expect.map(|((h, p), a)| ((h.to_string(), p), a.to_string()));
            assert_eq!(got, want, "{input}");
        }
    }
}
