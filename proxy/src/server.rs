//! Accept loop, CONNECT tunnels, TLS interception and the request path through the [`Handler`] phases.
//!
//! Life of a connection: accept (bounded by `max_connections`) -> HTTP/1.1 or h2 on the proxy port ->
//! absolute-form requests go through the handler; `CONNECT host:port` answers 200 and the tunnel's first
//! bytes are sniffed: a TLS ClientHello is terminated with a leaf minted for its SNI (or the CONNECT host)
//! offering h2 and http/1.1, anything starting like an HTTP method is served as plain HTTP, anything else
//! is closed and logged once. Requests inside the tunnel are made absolute from the tunnel's host.
//!
//! Shutdown: when the shutdown future resolves the listener closes, every connection is told to finish
//! its in-flight requests and close, open WebSockets are closed (1001) and their exchanges completed, and
//! `serve` returns once all that is done (or after `shutdown_grace`), exchanges read on after their client
//! left included.
//!
//! Size: the connection path kept in one file (accept, head deadline, CONNECT and TLS, h1/h2 serving,
//! forwarding, WebSocket hand-off, the sink), each phase a method of `Shared`; completion guards, I/O
//! wrappers and exchanges read on after their client left are `server/completion.rs`, `server/io.rs` and
//! `server/abandoned.rs`.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode, Uri, Version};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use crate::body::{boxed, Body, BodyEnd, Observed};
use crate::ca::CertificateAuthority;
use crate::error::{ErrorKind, ProxyError, ServeError, Side};
use crate::handler::{Decision, Handler, RequestInfo, UpstreamInfo};
use crate::headers::{clean_response, is_websocket_upgrade, join_cookies, strip_hop_by_hop};
use crate::hello::{hello_needs, ClientHello, ClientProfile, H2Preface};
use crate::upstream::{ConnectError, Upstream, UpstreamConfig};

mod abandoned;
mod completion;
mod io;

use completion::Completion;
use io::{HeadDeadline, IdleTimeout, Prefixed};

/// Proxy settings (resolved by the binary).
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// Origin connections, trust and DNS overrides.
    pub upstream: UpstreamConfig,
    /// Time allowed for the origin's response head; then 504.
    pub upstream_timeout: Duration,
    /// Time a client connection may sit without sending or receiving a byte.
    pub idle_timeout: Duration,
    /// Time a client has to send its first request head on a connection (and, in a tunnel, its TLS
    /// ClientHello and first head), however slowly its bytes arrive: a slowloris client is closed after
    /// this. Later heads on a keep-alive connection are bounded by `idle_timeout`.
    pub header_timeout: Duration,
    /// Concurrent client connections; a connection past it is answered 503 at once and closed.
    pub max_connections: usize,
    /// Largest request head accepted (bytes); larger gets 431.
    pub max_header_bytes: usize,
    /// How long shutdown waits for in-flight requests (and exchanges read on after their client left, 2 s
    /// of it at most): `serve` returns within it.
    pub shutdown_grace: Duration,
    /// Forward the browser's own background traffic ([`crate::live::BROWSER_BACKGROUND`]) in live and
    /// record modes; by default it is answered 204 here, never dialed (replay handlers answer it themselves).
    pub forward_browser_background: bool,
    /// How much more of a response the proxy reads from the origin after its client went away, for a
    /// handler that [finishes abandoned exchanges](crate::Handler::finishes_abandoned) (bytes).
    pub abandoned_body_limit: u64,
}

impl Default for ProxyConfig {
    fn default() -> Self {
        Self {
            upstream: UpstreamConfig::default(),
            upstream_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(120),
            header_timeout: Duration::from_secs(5),
            max_connections: 1024,
            max_header_bytes: 64 * 1024,
            shutdown_grace: Duration::from_secs(10),
            forward_browser_background: false,
            abandoned_body_limit: 64 << 20,
        }
    }
}

/// A plain-text response.
pub fn text_response(status: StatusCode, text: &str) -> Response<Body> {
    let mut r = Response::new(crate::body::full(Bytes::copy_from_slice(text.as_bytes())));
    *r.status_mut() = status;
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

struct Shared<H> {
    handler: Arc<H>,
    ca: Arc<CertificateAuthority>,
    upstream: Upstream,
    cfg: ProxyConfig,
    next_id: AtomicU64,
    /// Turns true when the proxy shuts down: open WebSockets close.
    closing: tokio::sync::watch::Sender<bool>,
    /// Open WebSocket connections (hyper no longer tracks a connection once it is upgraded).
    websockets: tokio_util::task::TaskTracker,
    /// Exchanges read on after their client went away (`server/abandoned.rs`), and what cuts them short
    /// when shutdown has waited long enough.
    abandoned: tokio_util::task::TaskTracker,
    abandoned_cut: tokio_util::sync::CancellationToken,
    /// The label of the control the agent is clicking (`guard::CONTROL_PATH`).
    control: crate::guard::ControlSlot,
}

/// The MITM proxy, generic over its handler.
pub struct Proxy<H: Handler> {
    shared: Arc<Shared<H>>,
}

impl<H: Handler> Proxy<H> {
    /// Build a proxy (loads upstream trust roots).
    pub fn new(handler: Arc<H>, ca: Arc<CertificateAuthority>, cfg: ProxyConfig) -> Result<Self, ServeError> {
        let upstream = Upstream::new(&cfg.upstream)?;
        Ok(Self {
            shared: Arc::new(Shared {
                handler,
                ca,
                upstream,
                cfg,
                next_id: AtomicU64::new(0),
                closing: tokio::sync::watch::Sender::new(false),
                websockets: tokio_util::task::TaskTracker::new(),
                abandoned: tokio_util::task::TaskTracker::new(),
                abandoned_cut: tokio_util::sync::CancellationToken::new(),
                control: Default::default(),
            }),
        })
    }

    /// Serve connections from `listener` until `shutdown` resolves, then drain gracefully.
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), ServeError> {
        let graceful = GracefulShutdown::new();
        let max = self.shared.cfg.max_connections.max(1);
        let limit = Arc::new(Semaphore::new(max));
        // Connections past the limit are told so at once; at most this many such answers are in flight.
        let refusals = Arc::new(Semaphore::new(256));
        tokio::pin!(shutdown);
        loop {
            let (tcp, peer) = tokio::select! {
                r = listener.accept() => match r {
                    Ok(x) => x,
                    Err(e) => {
                        // EMFILE and friends: back off briefly instead of spinning.
                        tracing::warn!("accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                _ = &mut shutdown => break,
            };
            let _ = tcp.set_nodelay(true);
            let Ok(permit) = limit.clone().try_acquire_owned() else {
                if let Ok(r) = refusals.clone().try_acquire_owned() {
                    tokio::spawn(async move {
                        let _r = r;
                        refuse(tcp, max).await;
                    });
                }
                tracing::debug!("connection from {peer} refused: {max} connections open (--max-connections)");
                continue;
            };
            let shared = self.shared.clone();
            let outer = graceful.watcher();
            let tunnel = graceful.watcher();
            tokio::spawn(async move {
                shared.serve_outer(tcp, peer, outer, (tunnel, Some(permit))).await;
            });
        }
        drop(listener);
        let deadline = tokio::time::Instant::now() + self.shared.cfg.shutdown_grace;
        self.shared.closing.send_replace(true);
        self.shared.websockets.close();
        let drained = async {
            graceful.shutdown().await;
            self.shared.websockets.wait().await;
        };
        tokio::select! {
            _ = drained => {}
            _ = tokio::time::sleep_until(deadline) => {
                tracing::warn!("shutdown: some connections were still busy after {:?}; closing them", self.shared.cfg.shutdown_grace);
            }
        }
        self.shared.finish_abandoned(deadline).await;
        Ok(())
    }
}

/// What a CONNECT tunnel takes over from its client connection: the shutdown watcher and the connection's
/// `max_connections` permit (none for [`Proxy::serve_stream`]).
type TunnelHold = (Watcher, Option<tokio::sync::OwnedSemaphorePermit>);

impl<H: Handler> Proxy<H> {
    /// Serve one client connection on any byte stream, as [`Proxy::serve`] serves each accepted TCP
    /// connection (its first-byte sniffing, request heads, CONNECT tunnels, TLS), returning when the client
    /// is done. The fuzz target `proxy_conn` drives it over an in-memory pipe.
    pub async fn serve_stream<S>(&self, io: S, peer: SocketAddr)
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let graceful = GracefulShutdown::new();
        let (outer, tunnel) = (graceful.watcher(), graceful.watcher());
        self.shared.clone().serve_outer(io, peer, outer, (tunnel, None)).await;
        graceful.shutdown().await;
    }
}

/// Answer a connection past `--max-connections`: read its request head (briefly), answer 503 with
/// Retry-After, close. The client learns at once instead of waiting in the accept queue.
async fn refuse(mut tcp: TcpStream, max: usize) {
    use tokio::io::AsyncWriteExt;
    let mut buf = [0u8; 4096];
    // Reading first means the close does not reset the connection under the answer.
    let _ = tokio::time::timeout(Duration::from_millis(500), tcp.read(&mut buf)).await;
    let body =
        format!("webfreeze: too many client connections ({max} open, --max-connections); retry shortly\n");
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        tcp.write_all(head.as_bytes()).await?;
        tcp.write_all(body.as_bytes()).await?;
        tcp.shutdown().await
    })
    .await;
}

fn builder(cfg: &ProxyConfig) -> auto::Builder<TokioExecutor> {
    let mut b = auto::Builder::new(TokioExecutor::new());
    b.http1()
        .timer(TokioTimer::new())
        // hyper's header timer also runs while a keep-alive connection waits for its next request, so it
        // stays at the idle bound; the first head's tighter bound is `HeadDeadline`'s.
        .header_read_timeout(cfg.idle_timeout)
        .max_buf_size(cfg.max_header_bytes.max(8192))
        .keep_alive(true);
    // No HTTP/2 keep-alive PINGs: each one (and the client's automatic ACK) counted as traffic for
    // `IdleTimeout`, so a client that stopped sending kept its slot for ever (issue 35). A silent h2
    // connection closes after `idle_timeout` like an HTTP/1 one; a dead peer is found the same way.
    b.http2().timer(TokioTimer::new()).keep_alive_interval(None);
    b
}

/// Where requests on a connection are headed.
#[derive(Clone)]
struct ConnCtx {
    peer: SocketAddr,
    /// Some for connections inside a CONNECT tunnel: the tunnel's `host:port`.
    tunnel: Option<String>,
    tls: bool,
    alpn: Option<String>,
    /// What the client presented (its ClientHello when it is a browser's, its h2 preface).
    profile: Arc<ClientProfile>,
}

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

fn host_of(authority: &str) -> String {
    match authority.rsplit_once(':') {
        Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) => h.trim_matches(['[', ']']).to_string(),
        _ => authority.trim_matches(['[', ']']).to_string(),
    }
}

/// `host:port` without the scheme's default port.
fn authority_for(scheme: &str, authority: &str) -> String {
    let default = if scheme == "https" { ":443" } else { ":80" };
    authority.strip_suffix(default).unwrap_or(authority).to_string()
}

fn classify(host: &str, e: &hyper_util::client::legacy::Error) -> ProxyError {
    let mut src: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = src {
        if let Some(ce) = s.downcast_ref::<ConnectError>() {
            let kind = match ce {
                ConnectError::Resolve { .. } => ErrorKind::Resolve,
                ConnectError::Connect { .. } => ErrorKind::Connect,
                ConnectError::Tls { .. } => ErrorKind::Tls,
                ConnectError::NoHost(_) => ErrorKind::BadRequest,
            };
            return ProxyError::new(Side::Origin, kind, host, ce.to_string());
        }
        src = s.source();
    }
    let mut msg = e.to_string();
    if let Some(s) = std::error::Error::source(e) {
        msg = format!("{msg}: {s}");
    }
    ProxyError::new(Side::Origin, ErrorKind::Closed, host, msg)
}

impl<H: Handler> Shared<H> {
    /// Serve one client connection. `tunnel` is what a CONNECT tunnel takes over from the connection: the
    /// graceful-shutdown watcher and the `max_connections` permit, so a tunnel counts against the limit for
    /// as long as it lives (found by the load benchmark: the permit went back when the CONNECT was
    /// answered, and 10,000 tunnels ran past a limit of 1,024).
    async fn serve_outer<S>(self: Arc<Self>, tcp: S, peer: SocketAddr, outer: Watcher, tunnel: TunnelHold)
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let tunnel = Arc::new(Mutex::new(Some(tunnel)));
        let conn = ConnCtx { peer, tunnel: None, tls: false, alpn: None, profile: Default::default() };
        let this = self.clone();
        let svc = service_fn(move |req: Request<Incoming>| {
            let this = this.clone();
            let conn = conn.clone();
            let tunnel = tunnel.clone();
            async move {
                if req.method() == Method::CONNECT {
                    return Ok::<_, Infallible>(this.connect(req, conn.peer, tunnel).await);
                }
                if req.uri().scheme().is_some() && req.uri().authority().is_some() {
                    Ok(this.handle(req, &conn).await)
                } else if req.uri().path() == crate::guard::CONTROL_PATH {
                    Ok(this.control(req).await)
                } else {
                    let (parts, body) = req.into_parts();
                    Ok(this.handler.direct(Request::from_parts(parts, boxed(body))).await)
                }
            }
        });
        let b = builder(&self.cfg);
        let io = HeadDeadline::new(IdleTimeout::new(tcp, self.cfg.idle_timeout), self.cfg.header_timeout);
        let c = b.serve_connection_with_upgrades(TokioIo::new(io), svc).into_owned();
        if let Err(e) = outer.watch(c).await {
            tracing::debug!("client connection {peer}: {e}");
        }
    }

    /// `PUT /__webfreeze/control` (the label of the control being clicked, as the body, at most 200 bytes)
    /// and `DELETE` (the click is over).
    async fn control(&self, req: Request<Incoming>) -> Response<Body> {
        use http_body_util::BodyExt as _;
        let method = req.method().clone();
        let answer = |status: StatusCode, text: &str| text_response(status, text);
        match method {
            Method::PUT => match http_body_util::Limited::new(req.into_body(), 200).collect().await {
                Ok(b) => {
                    let label = String::from_utf8_lossy(&b.to_bytes()).into_owned();
                    self.control.set(Some(label));
                    answer(StatusCode::NO_CONTENT, "")
                }
                Err(_) => answer(StatusCode::PAYLOAD_TOO_LARGE, "a control label is at most 200 bytes\n"),
            },
            Method::DELETE => {
                self.control.set(None);
                answer(StatusCode::NO_CONTENT, "")
            }
            _ => answer(StatusCode::METHOD_NOT_ALLOWED, "PUT the clicked control's label, or DELETE it\n"),
        }
    }

    /// The browser's background traffic is answered here (live and record modes) unless forwarding it
    /// was asked for.
    fn answers_background_locally(&self, host: &str) -> bool {
        !self.cfg.forward_browser_background && crate::live::is_browser_background(host)
    }

    async fn connect(
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

    async fn tunnel<S>(
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
            let host =
                start.client_hello().server_name().map(str::to_string).unwrap_or_else(|| host_of(&authority));
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

    async fn serve_inner<S>(self: Arc<Self>, io: S, conn: ConnCtx, watcher: Option<Watcher>)
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let peer = conn.peer;
        let this = self.clone();
        let h2 = conn.alpn.as_deref() == Some("h2");
        let svc = service_fn(move |req: Request<Incoming>| {
            let this = this.clone();
            let conn = conn.clone();
            async move { Ok::<_, Infallible>(this.handle(req, &conn).await) }
        });
        let mut b = builder(&self.cfg);
        if h2 {
            b = b.http2_only();
        }
        let io = HeadDeadline::new(io, self.cfg.header_timeout);
        let c = b.serve_connection_with_upgrades(TokioIo::new(io), svc).into_owned();
        let r = match watcher {
            Some(w) => w.watch(c).await,
            None => c.await,
        };
        if let Err(e) = r {
            tracing::debug!("tunnel connection {peer}: {e}");
        }
    }

    /// Make the request URI absolute (inside tunnels requests arrive in origin-form).
    fn absolute_uri(req: &Request<Incoming>, conn: &ConnCtx) -> Result<Uri, http::uri::InvalidUri> {
        let scheme = if conn.tls { "https" } else { "http" };
        let uri = req.uri();
        let Some(tunnel) = &conn.tunnel else {
            return Ok(uri.clone());
        };
        let authority = uri
            .authority()
            .map(|a| a.to_string())
            .or_else(|| req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).map(str::to_string))
            .unwrap_or_else(|| tunnel.clone());
        let pq = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
        format!("{scheme}://{}{pq}", authority_for(scheme, &authority)).parse::<Uri>()
    }

    async fn handle(self: &Arc<Self>, mut req: Request<Incoming>, conn: &ConnCtx) -> Response<Body> {
        let uri = match Self::absolute_uri(&req, conn) {
            Ok(u) => u,
            Err(e) => return text_response(StatusCode::BAD_REQUEST, &format!("bad request target: {e}\n")),
        };
        *req.uri_mut() = uri;
        let host = req.uri().host().unwrap_or_default().to_string();
        if self.handler.forwards_to_origins() && self.answers_background_locally(&host) {
            let mut r = Response::new(crate::body::empty());
            *r.status_mut() = StatusCode::NO_CONTENT;
            return r;
        }
        let info = RequestInfo {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            client_addr: conn.peer,
            tls: conn.tls,
            client_alpn: conn.alpn.clone(),
            client_version: req.version(),
        };
        let done = Completion::new(self.handler.clone(), Arc::new(self.handler.new_ctx(&info)), &host);
        let ctx = done.ctx.clone();
        let ws = is_websocket_upgrade(req.headers());
        let mut client_upgrade = ws.then(|| hyper::upgrade::on(&mut req));
        let (mut parts, body) = req.into_parts();
        strip_hop_by_hop(&mut parts.headers);
        join_cookies(&mut parts.headers);
        // The agent's label of the control it clicked is for the guards, never for an origin or a record.
        if let Some(label) = parts.headers.remove(crate::guard::CONTROL_HEADER) {
            if let Ok(l) = label.to_str() {
                parts.extensions.insert(crate::guard::ControlLabel(l.to_string()));
            }
        } else if let Some(l) = self.control.get() {
            parts.extensions.insert(crate::guard::ControlLabel(l));
        }
        if ws {
            parts.headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
            parts.headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
            if self.handler.observes_websocket() {
                // Messages are relayed (and recorded) as payloads: no compression is negotiated.
                parts.headers.remove(header::SEC_WEBSOCKET_EXTENSIONS);
            }
        }
        let req = Request::from_parts(parts, boxed(body));
        match self.handler.request(&ctx, req).await {
            Decision::Respond(mut res) => {
                let scripted = res.extensions_mut().remove::<crate::websocket::Scripted>();
                if let (Some(script), Some(up), StatusCode::SWITCHING_PROTOCOLS) =
                    (scripted, client_upgrade.take(), res.status())
                {
                    self.play_websocket(up, script, done, host);
                    return res;
                }
                let (parts, body) = res.into_parts();
                let body = Observed::new(body, |_| {}, done.at_body_end());
                Response::from_parts(parts, boxed(body))
            }
            Decision::Forward(req) if crate::sink::is_sink(req.uri()) => self.sink(req, done).await,
            Decision::Forward(req) if client_upgrade.is_none() && self.handler.finishes_abandoned() => {
                self.forward_detached(req, done, host, conn.profile.clone()).await
            }
            Decision::Forward(req) => self.forward(req, done, host, client_upgrade, &conn.profile).await,
        }
    }

    async fn forward(
        self: &Arc<Self>,
        req: Request<Body>,
        done: Completion<H>,
        host: String,
        client_upgrade: Option<hyper::upgrade::OnUpgrade>,
        profile: &Arc<ClientProfile>,
    ) -> Response<Body> {
        let ctx = done.ctx.clone();
        let (mut parts, body) = req.into_parts();
        // The upstream client picks h2 or HTTP/1.1 per origin; the client's version does not constrain it.
        parts.version = Version::HTTP_11;
        let (h, c) = (self.handler.clone(), ctx.clone());
        let body = Observed::new(body, move |chunk| h.request_chunk(&c, chunk), |_| {});
        let req = Request::from_parts(parts, boxed(body));
        let clients = self.upstream.clients(profile);
        let client = if client_upgrade.is_some() { &clients.client_h1 } else { &clients.client };
        let res = match tokio::time::timeout(self.cfg.upstream_timeout, client.request(req)).await {
            Err(_) => {
                let e = ProxyError::new(
                    Side::Origin,
                    ErrorKind::Timeout,
                    &host,
                    format!("no response within {:?}", self.cfg.upstream_timeout),
                );
                done.fire(Err(e));
                return text_response(
                    StatusCode::GATEWAY_TIMEOUT,
                    &format!("webfreeze: {host} did not answer within {:?}\n", self.cfg.upstream_timeout),
                );
            }
            Ok(Err(e)) => {
                let pe = classify(&host, &e);
                let text = format!("webfreeze: cannot reach {host}: {}\n", pe.message);
                tracing::info!("{}", text.trim_end());
                done.fire(Err(pe));
                return text_response(StatusCode::BAD_GATEWAY, &text);
            }
            Ok(Ok(r)) => r,
        };
        let mut up = res.extensions().get::<UpstreamInfo>().cloned().unwrap_or_default();
        up.version = Some(res.version());
        if let (Some(client_up), StatusCode::SWITCHING_PROTOCOLS) = (client_upgrade, res.status()) {
            return self.websocket(res, client_up, done, host, up);
        }
        let (mut parts, body) = res.into_parts();
        clean_response(&mut parts.headers);
        parts.version = Version::HTTP_11;
        self.handler.response_head(&ctx, &up, &mut parts);
        let (h1, c1) = (self.handler.clone(), ctx.clone());
        let mut body =
            Observed::new(boxed(body), move |chunk| h1.response_chunk(&c1, chunk), done.at_body_end());
        if self.handler.finishes_abandoned()
            && abandoned::worth_reading_on(&parts, self.cfg.abandoned_body_limit)
        {
            body = body.on_abandon(self.read_on_abandoned());
        }
        self.handler.to_client(&ctx, Response::from_parts(parts, boxed(body))).await
    }

    fn websocket(
        self: &Arc<Self>,
        mut res: Response<Incoming>,
        client_up: hyper::upgrade::OnUpgrade,
        done: Completion<H>,
        host: String,
        up: UpstreamInfo,
    ) -> Response<Body> {
        let origin_up = hyper::upgrade::on(&mut res);
        let (mut parts, _) = res.into_parts();
        self.handler.response_head(&done.ctx, &up, &mut parts);
        let observe = self.handler.observes_websocket();
        let (handler, closing) = (self.handler.clone(), self.closing.subscribe());
        self.websockets.spawn(async move {
            let outcome = match tokio::try_join!(client_up, origin_up) {
                Ok((c, o)) if observe => {
                    let ctx = done.ctx.clone();
                    crate::websocket::relay(c, o, |m| handler.websocket_verdict(&ctx, m), closing)
                        .await
                        .map_err(|e| {
                            let side = if e.side == "client" { Side::Client } else { Side::Origin };
                            ProxyError::new(side, ErrorKind::Closed, &host, e.to_string())
                        })
                }
                Ok((c, o)) => {
                    let mut c = TokioIo::new(c);
                    let mut o = TokioIo::new(o);
                    let mut closing = closing;
                    let copied = tokio::select! {
                        r = tokio::io::copy_bidirectional(&mut c, &mut o) => r.map(|_| ()),
                        _ = crate::websocket::closing(&mut closing) => Ok(()),
                    };
                    copied.map_err(|e| {
                        ProxyError::new(Side::Origin, ErrorKind::Closed, &host, format!("websocket: {e}"))
                    })
                }
                Err(e) => Err(upgrade_failed(&host, e)),
            };
            done.fire(outcome);
        });
        Response::from_parts(parts, crate::body::empty())
    }

    /// Answer a request to a sink ([`crate::sink`]) here, never forwarding it; the handler sees the
    /// exchange as if an origin had answered (its request body, the sink's head and body).
    async fn sink(self: &Arc<Self>, req: Request<Body>, done: Completion<H>) -> Response<Body> {
        use http_body_util::BodyExt as _;
        let ctx = done.ctx.clone();
        // The form's fields, up to 16 MiB (a sink takes no uploads beyond that).
        let mut body = req.into_body();
        let mut got = Vec::new();
        while let Some(Ok(frame)) = body.frame().await {
            if let Ok(d) = frame.into_data() {
                got.extend_from_slice(&d);
            }
            if got.len() > 16 << 20 {
                break;
            }
        }
        if !got.is_empty() {
            self.handler.request_chunk(&ctx, &Bytes::from(got));
        }
        let (mut parts, body) = crate::sink::answer().into_parts();
        self.handler.response_head(&ctx, &UpstreamInfo::default(), &mut parts);
        let bytes = body.collect().await.map(|c| c.to_bytes()).unwrap_or_default();
        self.handler.response_chunk(&ctx, &bytes);
        let body = Observed::new(crate::body::full(bytes), |_| {}, done.at_body_end());
        Response::from_parts(parts, boxed(body))
    }

    /// Serve a WebSocket the handler plays itself (its 101 carried a [`crate::websocket::Scripted`]).
    fn play_websocket(
        self: &Arc<Self>,
        client_up: hyper::upgrade::OnUpgrade,
        script: crate::websocket::Scripted,
        done: Completion<H>,
        host: String,
    ) {
        let closing = self.closing.subscribe();
        self.websockets.spawn(async move {
            let outcome = match client_up.await {
                Ok(c) => crate::websocket::play(c, &script, closing)
                    .await
                    .map_err(|e| ProxyError::new(Side::Client, ErrorKind::Closed, &host, e.to_string())),
                Err(e) => Err(upgrade_failed(&host, e)),
            };
            done.fire(outcome);
        });
    }
}

/// The client's side of a WebSocket upgrade failed (it went away before switching protocols).
fn upgrade_failed(host: &str, e: hyper::Error) -> ProxyError {
    ProxyError::new(Side::Client, ErrorKind::Closed, host, format!("websocket upgrade: {e}"))
}

fn end_to_outcome(end: BodyEnd, host: &str) -> Result<(), ProxyError> {
    match end {
        BodyEnd::Complete => Ok(()),
        BodyEnd::Failed(m) => Err(ProxyError::new(Side::Origin, ErrorKind::BodyCut, host, m)),
        BodyEnd::Dropped => Err(ProxyError::new(
            Side::Client,
            ErrorKind::Closed,
            host,
            "the client went away before the end of the response",
        )),
    }
}
