//! A proxy for a browser outside a task (`snapshots explore`'s revisits, `snapshots crawl`): served on
//! `127.0.0.1:0` in this process until its handle stops it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use proxy::{CertificateAuthority, Handler, Proxy, ProxyConfig};

use crate::error::SessionError;

/// How long a stopping proxy may take to drain.
const DRAIN: Duration = Duration::from_secs(10);

/// A running loopback proxy.
pub(crate) struct Loopback {
    /// Its address.
    pub(crate) addr: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<Result<(), proxy::ServeError>>,
}

impl Loopback {
    /// Serve `handler` on `127.0.0.1:0`.
    pub(crate) async fn start<H: Handler>(
        handler: Arc<H>,
        ca: Arc<CertificateAuthority>,
        cfg: ProxyConfig,
    ) -> Result<Loopback, SessionError> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(SessionError::Bind)?;
        let addr = listener.local_addr().map_err(SessionError::Bind)?;
        let proxy = Proxy::new(handler, ca, cfg)?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(proxy.serve(listener, async move {
            let _ = stopped.await;
        }));
        Ok(Loopback { addr, stop, server })
    }

    /// Stop it (requests in flight get [`DRAIN`]).
    pub(crate) async fn stop(self) {
        let _ = self.stop.send(());
        let _ = tokio::time::timeout(DRAIN, self.server).await;
    }
}
