//! A recording keeps what its client left: an exchange the client gave up on (before the response head, or
//! in the middle of the body) is still read from the origin to its end and recorded whole, as a browser that
//! navigates away mid-load leaves subresources its faster replay will ask for.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::*;

const REST: usize = 4 << 20;

/// When the client leaves.
#[derive(Debug, Clone, Copy)]
enum Leave {
    /// While the origin holds the request (no response head yet).
    BeforeHead,
    /// After the head and the body's first 64 KiB.
    MidBody,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_reads_on_what_its_client_left() {
    // Rows: when the client leaves, the path, the body the recording must hold.
    for (leave, path, body_len) in [
        (Leave::BeforeHead, format!("/gate?bytes={REST}"), REST),
        (Leave::MidBody, format!("/gate-body?bytes={REST}"), 64 * 1024 + REST),
    ] {
        let home = tempfile::tempdir().unwrap();
        let origin = Origin::start(None).await;
        let store = snapshots::Store::in_memory();
        let clock: Arc<dyn clock::Clock> = Arc::new(clock::FixedClock::new(1_000));
        let writer = Arc::new(
            store
                .create_snapshot(snapshots::NewSnapshot {
                    name: "left".into(),
                    created_ms: 1_000,
                    seed: snapshots::Seed { start_ms: 1_000, time_zone: "UTC".into() },
                    source: snapshots::SnapshotSource::Record,
                    labels: Default::default(),
                })
                .unwrap(),
        );
        let rec =
            Arc::new(recorder::Recorder::new(writer.clone(), clock, recorder::HostFilter::new(&[], &[])));
        #[allow(clippy::disallowed_methods)]
        let now = time::OffsetDateTime::now_utc();
        let ca = Arc::new(proxy::CertificateAuthority::init(&home.path().join("ca"), true, now).unwrap());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let p = proxy::Proxy::new(rec.clone(), ca, proxy::ProxyConfig::default()).unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(p.serve(listener, async move {
            let _ = stopped.await;
        }));

        let mut tcp = TcpStream::connect(addr).await.unwrap();
        let head = format!("GET http://{}{path} HTTP/1.1\r\nHost: {}\r\n\r\n", origin.addr, origin.addr);
        tcp.write_all(head.as_bytes()).await.unwrap();
        match leave {
            Leave::BeforeHead => origin.stats.gate_arrived.notified().await,
            Leave::MidBody => {
                // The head and some of the first 64 KiB have come through.
                let mut got = Vec::new();
                let mut buf = vec![0u8; 16 * 1024];
                while !String::from_utf8_lossy(&got).contains("aaaa") {
                    let n = tcp.read(&mut buf).await.unwrap();
                    assert!(n > 0, "{leave:?}: the proxy closed before the body began");
                    got.extend_from_slice(&buf[..n]);
                }
            }
        }
        drop(tcp);
        // The rest is larger than any socket buffer: a proxy that kept writing to the client it lost fails
        // on it, and one that stopped reading never sees it.
        origin.stats.release.notify_one();

        // Shutdown waits for exchanges read on after their client left.
        let _ = stop.send(());
        tokio::time::timeout(Duration::from_secs(30), server).await.expect("shutdown").unwrap().unwrap();
        let stats = rec.stats();
        assert_eq!((stats.recorded, stats.failed, stats.truncated), (1, 0, 0), "{leave:?}: {stats:?}");
        let m = writer.finalize(2_000).unwrap();
        let xs: Vec<_> = store.exchanges(&m).map(Result::unwrap).collect();
        assert_eq!(xs.len(), 1, "{leave:?}");
        let x = &xs[0];
        assert!(x.request.url.ends_with(&path), "{leave:?}: {}", x.request.url);
        assert_eq!(x.response.status, 200, "{leave:?}");
        assert!(!x.flags.truncated, "{leave:?}: recorded truncated");
        let body = store.blob_bytes(&x.response.body.as_ref().unwrap().hash).unwrap();
        assert_eq!(body.len(), body_len, "{leave:?}");
    }
}
