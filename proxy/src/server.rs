//! The proxy server: the accept loop and its limits, and each connection's path through the [`Handler`]
//! phases, one room per stage.
//!
//! Life of a connection: accept (bounded by `max_connections`) -> HTTP/1.1 or h2 on the proxy port
//! (`server/conn.rs`) -> absolute-form requests go through the handler; `CONNECT host:port` answers 200
//! and the tunnel's first bytes are sniffed (`server/tunnel.rs`): a TLS ClientHello is terminated with a
//! leaf minted for its SNI (or the CONNECT host) offering h2 and http/1.1, anything starting like an HTTP
//! method is served as plain HTTP, anything else is closed and logged once. Requests inside the tunnel
//! are made absolute from the tunnel's host. A request the handler forwards goes to its origin, a
//! WebSocket or a sink (`server/forward.rs`).
//!
//! Shutdown: when the shutdown future resolves the listener closes, every connection is told to finish
//! its in-flight requests and close, open WebSockets are closed (1001) and their exchanges completed, and
//! `serve` returns once all that is done (or after `shutdown_grace`), exchanges read on after their client
//! left included (`server/abandoned.rs`). Completion guards and I/O wrappers are `server/completion.rs`
//! and `server/io.rs`.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use crate::ca::CertificateAuthority;
use crate::error::ServeError;
use crate::handler::Handler;
use crate::upstream::{Upstream, UpstreamConfig};

mod abandoned;
mod completion;
mod conn;
mod forward;
mod io;
mod tunnel;

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
