//! A recording keeps what its client left: an exchange the client gave up on (before the response head, or
//! in the middle of the body) is still read from the origin to its end and recorded whole, as a browser that
//! navigates away mid-load leaves subresources its faster replay will ask for. Checked at the proxy with a
//! raw client, then end to end in Chromium: a page left while its picture loaded replays with no miss.

use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::proxy_chromium::{launch, spki_of};
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
        let recording = MemoryRecording::new("left");
        let rec = Arc::new(recording.recorder());
        let served = ServedProxy::start(rec.clone(), &home.path().join("ca")).await;

        let mut tcp = TcpStream::connect(served.addr).await.unwrap();
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
        served.stop().await;
        let stats = rec.stats();
        assert_eq!((stats.recorded, stats.failed, stats.truncated), (1, 0, 0), "{leave:?}: {stats:?}");
        let xs = recording.exchanges();
        assert_eq!(xs.len(), 1, "{leave:?}");
        let x = &xs[0];
        assert!(x.request.url.ends_with(&path), "{leave:?}: {}", x.request.url);
        assert_eq!(x.response.status, 200, "{leave:?}");
        assert!(!x.flags.truncated, "{leave:?}: recorded truncated");
        let body = recording.store.blob_bytes(&x.response.body.as_ref().unwrap().hash).unwrap();
        assert_eq!(body.len(), body_len, "{leave:?}");
    }
}

/// Resolves once the page has loaded, its subresources included.
const LOADED: &str =
    "document.readyState === 'complete' || new Promise(r => addEventListener('load', () => r(true)))";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_picture_a_page_left_while_it_loaded_is_recorded_and_replays_without_a_miss() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let (origin, reach) = https_origin(h, "shop.test").await;
    let mut rec = Webfreeze::spawn_with(h, &["record", "--snapshot", "left"], &reach);
    let spki = spki_of(h);
    let profile = tempfile::tempdir().unwrap();
    let (mut browser, task) = launch(rec.addr, Some(&spki), profile.path()).await;
    let page = browser.new_page("about:blank").await.unwrap();
    // Navigate without waiting for the load event, which the held picture holds back (chromiumoxide's
    // navigation commands wait for it).
    page.evaluate("setTimeout(() => { location.href = 'https://shop.test/site/held' }, 0); true")
        .await
        .unwrap();
    origin.stats.gate_arrived.notified().await;
    // The agent moves on while the picture loads: Chromium cancels its request, then the origin answers.
    page.goto("https://shop.test/site/p3").await.unwrap();
    page.wait_for_navigation().await.unwrap();
    origin.stats.release.notify_one();
    browser.close().await.unwrap();
    let _ = task.await;
    assert!(rec.signal_and_wait("INT").success(), "{}", rec.stderr());

    let out = run_cli(h, &["snapshots", "show", "left", "--json", "--limit", "100"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let xs = shown["exchanges"].as_array().unwrap();
    let urls: Vec<&str> = xs.iter().filter_map(|x| x["request"]["url"].as_str()).collect();
    let picture = xs
        .iter()
        .find(|x| x["request"]["url"] == "https://shop.test/gate?bytes=4096")
        .unwrap_or_else(|| panic!("the picture the page left is not in the recording: {urls:?}"));
    assert_eq!(picture["response"]["status"], 200, "{picture}");
    assert_eq!(picture["response"]["body"]["size"], 4096, "{picture}");
    assert_ne!(picture["flags"]["truncated"], true, "{picture}");
    drop(origin);

    // Replayed, the page loads whole: its picture is answered from the recording.
    let report = h.join("report.json");
    let mut rep =
        Webfreeze::spawn(h, &["replay", "--snapshot", "left", "--report", report.to_str().unwrap()]);
    let profile = tempfile::tempdir().unwrap();
    let (mut browser, task) = launch(rep.addr, Some(&spki), profile.path()).await;
    let page = browser.new_page("about:blank").await.unwrap();
    page.goto("https://shop.test/site/held").await.unwrap();
    page.evaluate(LOADED).await.unwrap();
    let text: String = page.evaluate("document.body.innerText").await.unwrap().into_value().unwrap();
    assert!(text.contains("Held picture"), "{text}");
    browser.close().await.unwrap();
    let _ = task.await;
    assert!(rep.signal_and_wait("INT").success(), "{}", rep.stderr());
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!((r["missed"].as_u64(), r["render_misses"].as_u64()), (Some(0), Some(0)), "{r}");
    assert!(r["exact"].as_u64().unwrap() >= 2, "{r}");
}
