//! A proxy served in this process, for tests that watch a handler's phases: a recording into a snapshot of
//! an in-memory store (clock fixed at 1 s), and a [`proxy::Proxy`] on loopback serving any handler until
//! stopped.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// A new snapshot of an in-memory store and its writer.
pub(crate) struct MemoryRecording {
    pub store: snapshots::Store,
    pub writer: Arc<snapshots::SnapshotWriter>,
}

impl MemoryRecording {
    pub(crate) fn new(name: &str) -> Self {
        let store = snapshots::Store::in_memory();
        let writer = Arc::new(
            store
                .create_snapshot(snapshots::NewSnapshot {
                    name: name.into(),
                    created_ms: 1_000,
                    seed: snapshots::Seed { start_ms: 1_000, time_zone: "UTC".into() },
                    source: snapshots::SnapshotSource::Record,
                    labels: Default::default(),
                })
                .unwrap(),
        );
        Self { store, writer }
    }

    /// A recorder into it, recording every host.
    pub(crate) fn recorder(&self) -> recorder::Recorder {
        let clock: Arc<dyn clock::Clock> = Arc::new(clock::FixedClock::new(1_000));
        recorder::Recorder::new(self.writer.clone(), clock, recorder::HostFilter::new(&[], &[]))
    }

    /// Seal it; its exchanges.
    pub(crate) fn exchanges(&self) -> Vec<snapshots::Exchange> {
        let m = self.writer.finalize(2_000).unwrap();
        self.store.exchanges(&m).map(Result::unwrap).collect()
    }
}

/// A proxy serving a handler on a loopback port (its CA made under `ca_dir`).
pub(crate) struct ServedProxy {
    pub addr: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<Result<(), proxy::ServeError>>,
}

impl ServedProxy {
    pub(crate) async fn start<H: proxy::Handler>(handler: Arc<H>, ca_dir: &Path) -> Self {
        #[allow(clippy::disallowed_methods)]
        let now = time::OffsetDateTime::now_utc();
        let ca = Arc::new(proxy::CertificateAuthority::init(ca_dir, true, now).unwrap());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let p = proxy::Proxy::new(handler, ca, proxy::ProxyConfig::default()).unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(p.serve(listener, async move {
            let _ = stopped.await;
        }));
        Self { addr, stop, server }
    }

    /// Shut it down and wait until `serve` returns (what it waits for included).
    pub(crate) async fn stop(self) {
        let _ = self.stop.send(());
        tokio::time::timeout(Duration::from_secs(30), self.server).await.expect("shutdown").unwrap().unwrap();
    }
}
