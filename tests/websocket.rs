//! WebSocket connections recorded and replayed, in Chromium, offline: a page with a ticker (pushes from
//! connect), an echo and a JSON-RPC socket (whose calls carry a timestamp that differs on every run) is
//! recorded through `webfreeze record`; with the origin stopped it is replayed sealed twice and renders the
//! same text as the recording, every server message the recording's (the origin's generation in each);
//! a client message never recorded is reported as a WebSocket miss; the snapshot exported as HAR
//! (`_webSocketMessages`) imports and replays the same.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::AddScriptToEvaluateOnNewDocumentParams;

use crate::proxy_chromium::{launch, spki_of};
use crate::support::*;

const PAGE: &str = "https://live.test/ws/";

/// Open the page, wait for its `#done`, return its text; with `extra`, then send a message the recording
/// never had and wait until the proxy reports it as a WebSocket miss.
async fn visit(browser: &chromiumoxide::Browser, shim: &str, proxy: Option<std::net::SocketAddr>) -> String {
    let page = browser.new_page("about:blank").await.unwrap();
    page.execute(AddScriptToEvaluateOnNewDocumentParams::new(shim.to_string())).await.unwrap();
    page.goto(PAGE).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let done: bool =
            page.evaluate("!!document.getElementById('done')").await.unwrap().into_value().unwrap();
        if done {
            break;
        }
        let text: String = page.evaluate("document.body.innerText").await.unwrap().into_value().unwrap();
        assert!(tokio::time::Instant::now() < deadline, "the sockets never finished: {text}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let text: String = page.evaluate("document.body.innerText").await.unwrap().into_value().unwrap();
    if let Some(proxy) = proxy {
        page.evaluate("window.sendExtra()").await.unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let r = proxy_report(proxy).await;
            if r["websocket_missed"] == 1 {
                assert!(r["websocket_misses"][0]["message"] == "never recorded", "{r}");
                assert_eq!(r["websocket_misses"][0]["url"], "https://live.test/ws/echo", "{r}");
                break;
            }
            assert!(tokio::time::Instant::now() < deadline, "no WebSocket miss reported: {r}");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
    page.close().await.unwrap();
    text
}

/// The replay proxy's report (`GET /__webfreeze/report` sent to the proxy itself).
async fn proxy_report(proxy: std::net::SocketAddr) -> serde_json::Value {
    let url = format!("http://{proxy}/__webfreeze/report");
    let got = fetch(
        Via::Direct,
        &url,
        proxy,
        &[],
        false,
        http::Request::builder()
            .uri("/__webfreeze/report")
            .body(http_body_util::Full::new(bytes::Bytes::new()))
            .unwrap(),
    )
    .await;
    serde_json::from_str(&got.text()).unwrap()
}

fn shim_for(home: &std::path::Path, snapshot: &str) -> String {
    let out = run_cli(home, &["snapshots", "show", snapshot, "--json", "--limit", "0"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    replay::shim::for_snapshot(snapshot, v["manifest"]["seed"]["start_ms"].as_i64().unwrap(), 1)
}

async fn close(mut b: chromiumoxide::Browser, task: tokio::task::JoinHandle<()>) {
    b.close().await.unwrap();
    let _ = b.wait().await;
    task.abort();
}

/// Replay `snapshot` sealed in a fresh browser: the page's text, and the report written on exit.
async fn replay_visit(home: &std::path::Path, snapshot: &str, extra: bool) -> (String, serde_json::Value) {
    let report = home.join(format!("report-{}.json", snapshot.replace('/', "-")));
    let mut rep =
        Webfreeze::spawn(home, &["replay", "--snapshot", snapshot, "--report", report.to_str().unwrap()]);
    let profile = tempfile::tempdir().unwrap();
    let (browser, task) = launch(rep.addr, Some(&spki_of(home)), profile.path()).await;
    let text = visit(&browser, &shim_for(home, snapshot), extra.then_some(rep.addr)).await;
    close(browser, task).await;
    assert!(rep.signal_and_wait("INT").success(), "{}", rep.stderr());
    (text, serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_websockets_record_and_replay_sealed() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let origin = WsOrigin::start("live.test").await;
    let ca_file = h.join("origin-ca.pem");
    std::fs::write(&ca_file, &origin.ca_pem).unwrap();
    let resolve = format!("live.test:443:{}", origin.addr);

    let mut rec = Webfreeze::spawn(
        h,
        &["record", "--snapshot", "ws", "--upstream-ca", ca_file.to_str().unwrap(), "--resolve", &resolve],
    );
    let profile = tempfile::tempdir().unwrap();
    let (browser, task) = launch(rec.addr, Some(&spki_of(h)), profile.path()).await;
    let recorded = visit(&browser, &shim_for(h, "ws"), None).await;
    close(browser, task).await;
    assert!(rec.signal_and_wait("INT").success(), "{}", rec.stderr());
    let gen = format!("@{}", origin.generation);
    for line in
        ["ticker: tick 1", "ticker: tick 5", "ticker: ticker done", "echo: echo: hello", "echo: echo: world"]
    {
        assert!(recorded.contains(&format!("{line} {gen}")), "{line} missing from {recorded}");
    }
    assert!(recorded.contains(&format!(r#"rpc: {{"id":2,"result":"volume ok {gen}"}}"#)), "{recorded}");

    // What the snapshot holds: three connections with their messages, in the v2 record format.
    let out = run_cli(h, &["snapshots", "show", "ws", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let shown = String::from_utf8_lossy(&out.stdout);
    drop(origin); // the live site is gone

    for round in 0..2 {
        let (text, r) = replay_visit(h, "ws", round == 1).await;
        assert_eq!(text, recorded, "round {round}");
        assert_eq!(r["missed"], 0, "round {round}: {r}");
        let want_ws_missed = if round == 1 { 1 } else { 0 };
        assert_eq!(r["websocket_missed"], want_ws_missed, "round {round}: {r}");
    }

    // HAR with _webSocketMessages, as Chromium writes it: export, import, replay.
    let har = h.join("ws.har");
    let out = run_cli(h, &["snapshots", "export", "ws", "--format", "har", "--out", har.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&har).unwrap()).unwrap();
    let sockets: Vec<&serde_json::Value> = doc["log"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["_resourceType"] == "websocket")
        .collect();
    assert_eq!(sockets.len(), 3, "{shown}");
    for s in &sockets {
        assert!(s["request"]["url"].as_str().unwrap().starts_with("wss://live.test/ws/"), "{s}");
        assert!(!s["_webSocketMessages"].as_array().unwrap().is_empty(), "{s}");
    }
    let out = run_cli(h, &["snapshots", "import", har.to_str().unwrap(), "--snapshot", "ws-har"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("3 WebSocket connections"));
    // Message payloads are bodies like any other: gc keeps those a snapshot still names, verify checks them.
    for args in [&["snapshots", "rm", "ws"][..], &["snapshots", "gc"], &["snapshots", "verify"]] {
        let out = run_cli(h, args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let (text, r) = replay_visit(h, "ws-har", false).await;
    assert_eq!(text, recorded, "replayed from the imported HAR");
    assert_eq!((r["missed"].as_u64(), r["websocket_missed"].as_u64()), (Some(0), Some(0)), "{r}");
}

/// The same page as a task: `run --mode record` (the fake model waits once, then answers), then replayed
/// sealed twice from its own trajectory: every step's screenshot is the recording's, nothing missed,
/// WebSocket messages included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_record_then_replay_reproduces_websocket_pages_at_every_step() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let origin = WsOrigin::start("live.test").await;
    let ca_file = h.join("origin-ca.pem");
    std::fs::write(&ca_file, &origin.ca_pem).unwrap();
    let tasks = h.join("tasks.jsonl");
    let task = serde_json::json!({"web_name": "Sockets", "id": "Sockets--0", "web": PAGE,
        "ques": "What does the sockets page say once every socket has answered?"});
    std::fs::write(&tasks, format!("{task}\n")).unwrap();
    let llm = FakeLlm::start(|body| {
        let turn = body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").count();
        Reply::Text(
            if turn == 0 {
                "Thought: let the page finish.\nAction: Wait"
            } else {
                "Thought: done.\nAction: ANSWER; all sockets done"
            }
            .into(),
        )
    })
    .await;
    let resolve = format!("live.test:443:{}", origin.addr);
    // Settling waits out a burst of WebSocket messages once nothing arrived for this long.
    let timing = ["--settle-ms", "300", "--wait-ms", "200"];
    let rec = h.join("rec");
    let args = RunArgs::new(&tasks, "record", &rec)
        .model(&llm.api_base())
        .opt("--upstream-ca", ca_file.to_str().unwrap())
        .opt("--resolve", &resolve)
        .args(timing)
        .build();
    let out = cli(h, args, vec![]).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    let a = traj(&rec, "Sockets--0");
    assert_eq!(a.steps.len(), 2, "{a:?}");
    assert_eq!(a.answer.as_deref(), Some("all sockets done"));
    drop(origin);
    for round in 0..2 {
        let rep = h.join(format!("rep-{round}"));
        let policy = format!("trajectory:{}", rec.display());
        let args = RunArgs::new(&tasks, "replay", &rep).opt("--policy", &policy).args(timing).build();
        let out = cli(h, args, vec![]).await;
        assert!(out.status.success(), "replay {round}: {}", String::from_utf8_lossy(&out.stderr));
        let b = traj(&rep, "Sockets--0");
        assert_eq!(b.steps.len(), a.steps.len(), "round {round}");
        for (x, y) in a.steps.iter().zip(&b.steps) {
            let r = y.reproduced.as_ref().unwrap();
            assert!(r.url && r.screenshot, "round {round} step {}: {r:?}", y.n);
            assert_eq!(x.screenshot_blake3, y.screenshot_blake3, "round {round} step {}", y.n);
            assert_eq!(
                (y.proxy.missed, y.proxy.websocket_missed),
                (0, 0),
                "round {round} step {}: {:?}",
                y.n,
                y.proxy
            );
        }
        let c = b.coverage.as_ref().unwrap();
        assert_eq!((c.websocket_missed, c.documents_missed), (0, 0), "round {round}: {c:?}");
    }
}

/// A WebSocket still open when the recorder stops: both sides get a close (1001, going away), and the
/// messages relayed so far are in the sealed snapshot (nothing relayed is lost at shutdown).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_websocket_is_closed_and_kept_when_the_recorder_stops() {
    use futures_util::{SinkExt, StreamExt};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_tungstenite::tungstenite::Message;
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let origin = WsOrigin::start("live.test").await;
    let ca_file = h.join("origin-ca.pem");
    std::fs::write(&ca_file, &origin.ca_pem).unwrap();
    let resolve = format!("live.test:443:{}", origin.addr);
    let mut rec = Webfreeze::spawn(
        h,
        &["record", "--snapshot", "open", "--upstream-ca", ca_file.to_str().unwrap(), "--resolve", &resolve],
    );
    let our_ca = std::fs::read_to_string(rec.ca_pem_path()).unwrap();
    let mut tcp = tokio::net::TcpStream::connect(rec.addr).await.unwrap();
    tcp.write_all(b"CONNECT live.test:443 HTTP/1.1\r\nHost: live.test:443\r\n\r\n").await.unwrap();
    let mut buf = [0u8; 1024];
    let n = tcp.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&buf[..n]));
    let tls = tokio_rustls::TlsConnector::from(client_tls(&[&our_ca], &[b"http/1.1"]))
        .connect(rustls::pki_types::ServerName::try_from("live.test").unwrap(), tcp)
        .await
        .unwrap();
    let (mut ws, res) = tokio_tungstenite::client_async("wss://live.test/ws/echo", tls).await.unwrap();
    assert_eq!(res.status(), 101);
    // The relay negotiates no compression: what it records is the payload.
    assert!(res.headers().get("sec-websocket-extensions").is_none());
    ws.send(Message::text("still here")).await.unwrap();
    let echo = tokio::time::timeout(Duration::from_secs(10), ws.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(echo.to_text().unwrap(), format!("echo: still here @{}", origin.generation));
    let stopping = tokio::task::spawn_blocking(move || {
        let status = rec.signal_and_wait("INT");
        (status, rec.stderr())
    });
    let closed = tokio::time::timeout(Duration::from_secs(10), ws.next()).await.unwrap();
    match closed {
        Some(Ok(Message::Close(Some(f)))) => assert_eq!(u16::from(f.code), 1001, "{f:?}"),
        other => panic!("expected a going-away close, got {other:?}"),
    }
    let (status, stderr) = stopping.await.unwrap();
    assert!(status.success(), "{stderr}");
    let out = run_cli(h, &["snapshots", "show", "open", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["manifest"]["state"], "complete", "{v}");
    let x = &v["exchanges"][0];
    assert_eq!(x["response"]["status"], 101, "{v}");
    let kinds: Vec<(String, String)> = x["websocket"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["from"].as_str().unwrap().to_string(), m["opcode"].as_str().unwrap().to_string()))
        .collect();
    // The proxy's own closes at shutdown are not the site's messages: not recorded.
    let want = [("client", "text"), ("server", "text")].map(|(a, b)| (a.to_string(), b.to_string()));
    assert_eq!(kinds, want, "{v}");
}
