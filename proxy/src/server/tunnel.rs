//! `CONNECT host:port`: the tunnel is answered (in live and record modes once the origin takes a
//! connection), its first bytes are sniffed, and a TLS ClientHello is read whole (origin connections
//! mirror it) and terminated with a leaf minted for its SNI; plain HTTP inside a tunnel is served as is.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::Watcher;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};

use super::conn::ConnCtx;
use super::io::Prefixed;
use super::{Shared, TunnelHold};
use crate::body::{text_response, Body};
use crate::handler::Handler;
use crate::hello::{hello_needs, ClientHello, ClientProfile, H2Preface};

/// Read TLS records into `buf` (which holds the first bytes) until it holds the whole ClientHello; the
/// parsed hello when it is a browser's. A malformed hello is left for rustls to refuse.
async fn read_hello<S: AsyncRead + Unpin>(
    io: &mut S,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<ClientHello>> {
    loop {
        match hello_needs(buf) {
            Ok(None) => {
                return Ok(ClientHello::from_records(buf)
                    .ok()
                    .filter(ClientHello::is_browser)
                    .map(ClientHello::canonical))
            }
            Err(_) => return Ok(None),
            Ok(Some(more)) => {
                let at = buf.len();
                buf.resize(at + more.max(1), 0);
                let n = io.read(&mut buf[at..]).await?;
                buf.truncate(at + n);
                if n == 0 {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "closed inside its ClientHello",
                    ));
                }
            }
        }
    }
}

/// Read the h2 preface and SETTINGS (and a WINDOW_UPDATE if it came with them) into `buf`.
async fn read_h2_preface<S: AsyncRead + Unpin>(
    io: &mut S,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<H2Preface>> {
    let mut chunk = [0u8; 4096];
    loop {
        match H2Preface::parse(buf) {
            Ok(Some(p)) => return Ok(Some(p)),
            Err(_) => return Ok(None),
            Ok(None) if buf.len() > 64 * 1024 => return Ok(None),
            Ok(None) => {
                let n = io.read(&mut chunk).await?;
                if n == 0 {
                    return Ok(None);
                }
                buf.extend_from_slice(&chunk[..n]);
            }
        }
    }
}

fn authority_host(authority: &str) -> String {
    match authority.rsplit_once(':') {
        Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) => h.trim_matches(['[', ']']).to_string(),
        _ => authority.trim_matches(['[', ']']).to_string(),
    }
}

impl<H: Handler> Shared<H> {
    pub(super) async fn connect(
        self: &Arc<Self>,
        mut req: Request<Incoming>,
        peer: SocketAddr,
        watcher: Arc<Mutex<Option<TunnelHold>>>,
    ) -> Response<Body> {
        let Some(auth) = req.uri().authority().cloned() else {
            return text_response(StatusCode::BAD_REQUEST, "CONNECT needs a host:port target\n");
        };
        let authority = auth.to_string();
        if self.handler.forwards_to_origins() && !self.answers_background_locally(auth.host()) {
            // Live and record: answer 200 only once the origin takes a connection.
            let port = auth.port_u16().unwrap_or(443);
            if let Err(e) = self.upstream.probe(auth.host(), port).await {
                let text = format!("webfreeze: cannot reach {authority}: {e}\n");
                tracing::info!("{}", text.trim_end());
                return text_response(StatusCode::BAD_GATEWAY, &text);
            }
        }
        let on_upgrade = hyper::upgrade::on(&mut req);
        let this = self.clone();
        let watcher = watcher.lock().ok().and_then(|mut w| w.take());
        tokio::spawn(async move {
            match on_upgrade.await {
                Ok(up) => {
                    let (watcher, _permit) = match watcher {
                        Some((w, p)) => (Some(w), p),
                        None => (None, None),
                    };
                    this.tunnel(TokioIo::new(up), authority, peer, watcher).await
                }
                Err(e) => tracing::debug!("CONNECT {authority} from {peer}: upgrade failed: {e}"),
            }
        });
        Response::new(crate::body::empty())
    }

    pub(super) async fn tunnel<S>(
        self: Arc<Self>,
        mut io: S,
        authority: String,
        peer: SocketAddr,
        watcher: Option<Watcher>,
    ) where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let mut first = [0u8; 8];
        let n = match tokio::time::timeout(self.cfg.idle_timeout, io.read(&mut first)).await {
            Ok(Ok(0)) | Err(_) => return,
            Ok(Ok(n)) => n,
            Ok(Err(e)) => {
                tracing::debug!("tunnel {authority} from {peer}: {e}");
                return;
            }
        };
        let mut prefix = first[..n].to_vec();
        let mut hello = None;
        if first[0] == 0x16 {
            // Read the whole ClientHello first: it is what origin connections mirror.
            let read = read_hello(&mut io, &mut prefix);
            match tokio::time::timeout(self.cfg.header_timeout, read).await {
                Ok(Ok(h)) => hello = h,
                Ok(Err(e)) => {
                    tracing::debug!("tunnel {authority} from {peer}: {e}");
                    return;
                }
                Err(_) => return,
            }
        }
        let pre = Prefixed { prefix, pos: 0, inner: io };
        if first[0] == 0x16 {
            let acceptor = tokio_rustls::LazyConfigAcceptor::new(rustls::server::Acceptor::default(), pre);
            let start = match tokio::time::timeout(self.cfg.header_timeout, acceptor).await {
                Ok(Ok(s)) => s,
                Ok(Err(e)) => {
                    tracing::warn!(
                        "tunnel to {authority} from {peer}: bad TLS ClientHello ({e}); connection closed"
                    );
                    return;
                }
                Err(_) => return,
            };
            let host = start
                .client_hello()
                .server_name()
                .map(str::to_string)
                .unwrap_or_else(|| authority_host(&authority));
            let cfg = match self.ca.server_config(&host) {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!("cannot mint a certificate for {host}: {e}");
                    return;
                }
            };
            let tls = match start.into_stream(cfg).await {
                Ok(t) => t,
                Err(e) => {
                    if crate::live::is_browser_background(&host) {
                        // The browser's own traffic, cut when the browser closes: not the user's concern.
                        tracing::debug!("TLS handshake with client {peer} for {host} failed: {e}");
                    } else {
                        // Usually the client rejected our certificate: it does not trust the webfreeze CA.
                        tracing::warn!("TLS handshake with client {peer} for {host} failed: {e} (does the client trust the webfreeze CA? see `webfreeze ca show`)");
                    }
                    return;
                }
            };
            let alpn = tls.get_ref().1.alpn_protocol().map(|p| String::from_utf8_lossy(p).into_owned());
            let mut tls = Prefixed { prefix: Vec::new(), pos: 0, inner: tls };
            let mut profile = ClientProfile { hello, h2: None };
            // A non-browser client's h2 settings are not mirrored either: it gets Chrome's, like its hello.
            if alpn.as_deref() == Some("h2") && profile.hello.is_some() {
                let read = read_h2_preface(&mut tls.inner, &mut tls.prefix);
                match tokio::time::timeout(self.cfg.header_timeout, read).await {
                    Ok(Ok(p)) => profile.h2 = p,
                    Ok(Err(e)) => tracing::debug!("tunnel {authority} from {peer}: {e}"),
                    Err(_) => return,
                }
            }
            let profile = Arc::new(profile);
            let conn = ConnCtx { peer, tunnel: Some(authority), tls: true, alpn, profile };
            self.serve_inner(tls, conn, watcher).await;
        } else if first[0].is_ascii_uppercase() {
            let conn = ConnCtx {
                peer,
                tunnel: Some(authority),
                tls: false,
                alpn: None,
                profile: Default::default(),
            };
            self.serve_inner(pre, conn, watcher).await;
        } else {
            let hex: String = first[..n].iter().map(|b| format!("{b:02x}")).collect();
            tracing::warn!("tunnel to {authority} from {peer}: first bytes are neither TLS nor HTTP ({hex}); connection closed");
        }
    }
}
