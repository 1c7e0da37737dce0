//! Bad input, each case with a test, while good traffic runs concurrently and must be unaffected.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::*;

async fn raw(addr: std::net::SocketAddr, bytes: &[u8]) -> String {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(bytes).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(20), tcp.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

fn get() -> Request<Full<Bytes>> {
    Request::builder().uri("/").body(Full::new(Bytes::new())).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_clear_answers_and_disturbs_nobody() {
    let home = tempfile::tempdir().unwrap();
    let origin = Origin::start(None).await;
    let wf = Webfreeze::spawn(home.path(), &["proxy", "--upstream-timeout", "1"]);
    let addr = wf.addr;

    // Good traffic, concurrently, for the whole test.
    let stop = Arc::new(AtomicBool::new(false));
    let ok = Arc::new(AtomicUsize::new(0));
    let bad = Arc::new(AtomicUsize::new(0));
    let mut good = Vec::new();
    for _ in 0..3 {
        let (stop, ok, bad) = (stop.clone(), ok.clone(), bad.clone());
        let o = origin.addr;
        good.push(tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                let g = fetch(Via::Proxy(addr), &format!("http://{o}/hello"), o, &[], false, get()).await;
                if g.status == 200 && g.text() == HELLO {
                    ok.fetch_add(1, Ordering::SeqCst);
                } else {
                    bad.fetch_add(1, Ordering::SeqCst);
                }
            }
        }));
    }

    // Malformed request line -> 400 and close.
    let r = raw(addr, b"GARBAGE\x01 LINE\r\n\r\n").await;
    assert!(r.starts_with("HTTP/1.1 400"), "{r:?}");
    // Malformed header -> 400.
    let r = raw(addr, b"GET http://a.test/ HTTP/1.1\r\nBad Header Without Colon\r\n\r\n").await;
    assert!(r.starts_with("HTTP/1.1 400"), "{r:?}");
    // Headers over the limit -> 431.
    let big = format!(
        "GET http://{}/hello HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        origin.addr,
        "a".repeat(200_000)
    );
    let r = raw(addr, big.as_bytes()).await;
    assert!(r.starts_with("HTTP/1.1 431"), "{:?}", &r[..r.len().min(80)]);
    // Neither TLS nor HTTP after CONNECT -> closed (and logged once).
    let r = raw(
        addr,
        b"CONNECT somewhere.test:443 HTTP/1.1\r\nHost: somewhere.test:443\r\n\r\n\x00\x01\x02garbage",
    )
    .await;
    assert!(r.starts_with("HTTP/1.1 200"), "{r:?}");
    assert!(!r.contains("HTTP/1.1 4"), "nothing more than the 200: {r:?}");
    // TLS garbage after CONNECT: a handshake record that is not a ClientHello -> closed.
    let r = raw(addr, b"CONNECT somewhere.test:443 HTTP/1.1\r\n\r\n\x16\x03\x01\x00\x05hello").await;
    assert!(r.starts_with("HTTP/1.1 200"), "{r:?}");
    // Upstream refused -> 502 naming host and cause.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let g = fetch(Via::Proxy(addr), &format!("http://{closed}/x"), closed, &[], false, get()).await;
    assert_eq!(g.status, 502);
    assert!(g.text().contains("127.0.0.1") && g.text().to_lowercase().contains("refused"), "{}", g.text());
    // Unresolvable -> 502 naming the host.
    let g = fetch(Via::Proxy(addr), "http://no-such-host.invalid/x", closed, &[], false, get()).await;
    assert_eq!(g.status, 502);
    assert!(g.text().contains("no-such-host.invalid") && g.text().contains("resolve"), "{}", g.text());
    // Too slow -> 504 after the configured timeout (1 s here).
    let g = fetch(Via::Proxy(addr), &format!("http://{}/hang", origin.addr), origin.addr, &[], false, get())
        .await;
    assert_eq!(g.status, 504, "{}", g.text());
    assert!(g.text().contains("did not answer"), "{}", g.text());
    // Request to the proxy itself (origin-form) -> 400 explaining.
    let r = raw(addr, b"GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await;
    assert!(r.starts_with("HTTP/1.1 400") && r.contains("proxy"), "{r:?}");
    // Client gone mid-body -> the upstream request is cancelled (the origin sees its body dropped).
    {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.write_all(format!("GET http://{}/infinite HTTP/1.1\r\nHost: x\r\n\r\n", origin.addr).as_bytes())
            .await
            .unwrap();
        let mut buf = vec![0u8; 64 * 1024];
        let mut got = 0;
        while got < 200_000 {
            got += tcp.read(&mut buf).await.unwrap();
        }
        drop(tcp);
        tokio::time::timeout(Duration::from_secs(20), async {
            while !origin.stats.infinite_dropped.load(Ordering::SeqCst) {
                origin.stats.dropped.notified().await;
            }
        })
        .await
        .expect("origin body dropped after the client left");
    }

    stop.store(true, Ordering::SeqCst);
    for g in good {
        g.await.unwrap();
    }
    assert!(ok.load(Ordering::SeqCst) > 0);
    assert_eq!(bad.load(Ordering::SeqCst), 0, "good traffic was disturbed");
    let log = wf.stderr();
    assert_eq!(log.matches("neither TLS nor HTTP").count(), 1, "logged once: {log}");
}

#[test]
fn non_loopback_listen_needs_allow_remote() {
    let home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(bin())
        .args(["proxy", "--listen", "0.0.0.0:0"])
        .env("WEBFREEZE_HOME", home.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-remote"));
    let out = std::process::Command::new(bin())
        .args(["proxy", "--resolve", "nonsense"])
        .env("WEBFREEZE_HOME", home.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed() {
    let home = tempfile::tempdir().unwrap();
    let wf = Webfreeze::spawn(home.path(), &["proxy", "--idle-timeout", "1"]);
    let mut tcp = TcpStream::connect(wf.addr).await.unwrap();
    // Send nothing: the proxy must close the connection (EOF), well before our 30 s guard.
    let mut buf = [0u8; 64];
    let started = std::time::Instant::now();
    let n =
        tokio::time::timeout(Duration::from_secs(30), tcp.read(&mut buf)).await.expect("closed by the proxy");
    assert!(matches!(n, Ok(0) | Err(_)) || String::from_utf8_lossy(&buf).contains("408"), "{n:?}");
    assert!(started.elapsed() < Duration::from_secs(15));

    // A keep-alive connection that made one request and then goes silent is closed too.
    let origin = Origin::start(None).await;
    let mut tcp = TcpStream::connect(wf.addr).await.unwrap();
    tcp.write_all(format!("GET http://{0}/hello HTTP/1.1\r\nHost: {0}\r\n\r\n", origin.addr).as_bytes())
        .await
        .unwrap();
    let mut got = Vec::new();
    let end = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(end.is_ok(), "idle keep-alive connection was not closed");
    assert!(String::from_utf8_lossy(&got).contains(HELLO));
}
