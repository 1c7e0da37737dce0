//! The proxy forwards faithfully: every case runs direct and through `webfreeze proxy`, and the client
//! must see the same thing (HTTP and HTTPS, client h1/h2, origin h1/h2).

use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http_body_util::Full;

use crate::support::*;

fn req(method: &str, body: &str, headers: &[(&str, &str)]) -> Request<Full<Bytes>> {
    let mut b = Request::builder().method(method).uri("/");
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Full::new(Bytes::from(body.to_string()))).unwrap()
}

/// Headers that legitimately differ between a direct and a proxied fetch: the date, and framing
/// (`transfer-encoding` exists only in HTTP/1.1, and the two legs may speak different versions).
fn comparable(g: &Got) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut h: Vec<(String, String)> =
        g.headers.iter().filter(|(k, _)| k != "date" && k != "transfer-encoding").cloned().collect();
    h.sort();
    (g.status, h, g.body.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_answers_direct_and_through_the_proxy() {
    let home = tempfile::tempdir().unwrap();
    for (origin_alpn, label) in
        [(&[b"h2".as_slice(), b"http/1.1"][..], "origin h2"), (&[b"http/1.1".as_slice()][..], "origin h1")]
    {
        let tls_origin = Origin::start(Some(origin_tls(&["origin.test"], origin_alpn))).await;
        let plain_origin = Origin::start(None).await;
        let ca_file = home.path().join("origin-ca.pem");
        std::fs::write(&ca_file, tls_origin.ca_pem.as_ref().unwrap()).unwrap();
        let resolve = format!("origin.test:443:{}", tls_origin.addr);
        let wf = Webfreeze::spawn(
            home.path(),
            &["proxy", "--upstream-ca", ca_file.to_str().unwrap(), "--resolve", &resolve],
        );
        let our_ca = std::fs::read_to_string(wf.ca_pem_path()).unwrap();
        let origin_ca = tls_origin.ca_pem.clone().unwrap();
        for path in ["/hello", "/chunked", "/gzip", "/br", "/redirect", "/cookie", "/altsvc", "/missing"] {
            for h2 in [false, true] {
                // Direct to the HTTPS origin (by IP; it has an IP SAN) vs through the proxy by name.
                let direct = fetch(
                    Via::Direct,
                    &format!("https://origin.test:{}{path}", tls_origin.addr.port()),
                    tls_origin.addr,
                    &[&origin_ca],
                    h2 && origin_alpn.len() == 2,
                    req("GET", "", &[("cookie", "a=1")]),
                )
                .await;
                let proxied = fetch(
                    Via::Proxy(wf.addr),
                    &format!("https://origin.test{path}"),
                    tls_origin.addr,
                    &[&our_ca],
                    h2,
                    req("GET", "", &[("cookie", "a=1")]),
                )
                .await;
                let mut d = comparable(&direct);
                // What the proxy must change: Alt-Svc and hop-by-hop headers are gone.
                d.1.retain(|(k, _)| k != "alt-svc" && k != "x-hop" && k != "connection");
                assert_eq!(comparable(&proxied), d, "{label} https {path} client-h2={h2}");
            }
            let direct = fetch(
                Via::Direct,
                &format!("http://{}{path}", plain_origin.addr),
                plain_origin.addr,
                &[],
                false,
                req("GET", "", &[("cookie", "a=1")]),
            )
            .await;
            let proxied = fetch(
                Via::Proxy(wf.addr),
                &format!("http://{}{path}", plain_origin.addr),
                plain_origin.addr,
                &[],
                false,
                req("GET", "", &[("cookie", "a=1")]),
            )
            .await;
            let mut d = comparable(&direct);
            d.1.retain(|(k, _)| k != "alt-svc" && k != "x-hop" && k != "connection");
            assert_eq!(comparable(&proxied), d, "{label} http {path}");
        }
        // Specific checks on what went through.
        let g = fetch(
            Via::Proxy(wf.addr),
            "https://origin.test/gzip",
            tls_origin.addr,
            &[&our_ca],
            true,
            req("GET", "", &[]),
        )
        .await;
        assert_eq!(g.header("content-encoding"), Some("gzip"));
        assert_eq!(g.body, gzip(HELLO.as_bytes()), "compressed bytes pass through untouched");
        let g = fetch(
            Via::Proxy(wf.addr),
            "https://origin.test/cookie",
            tls_origin.addr,
            &[&our_ca],
            false,
            req("GET", "", &[]),
        )
        .await;
        assert_eq!(g.headers.iter().filter(|(k, _)| k == "set-cookie").count(), 2);
        let g = fetch(
            Via::Proxy(wf.addr),
            "https://origin.test/altsvc",
            tls_origin.addr,
            &[&our_ca],
            false,
            req("GET", "", &[]),
        )
        .await;
        assert_eq!(g.header("alt-svc"), None);
        assert_eq!(g.header("x-hop"), None);
        assert_eq!(g.header("x-kept"), Some("yes"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_bodies_and_hygiene_reach_the_origin() {
    let home = tempfile::tempdir().unwrap();
    let (origin, reach) = https_origin(home.path(), "origin.test").await;
    let wf = Webfreeze::spawn_with(home.path(), &["proxy"], &reach);
    let our_ca = std::fs::read_to_string(wf.ca_pem_path()).unwrap();
    for h2 in [false, true] {
        let g = fetch(
            Via::Proxy(wf.addr),
            "https://origin.test/echo?x=1",
            origin.addr,
            &[&our_ca],
            h2,
            req(
                "POST",
                "{\"q\":\"socks\"}",
                &[
                    ("content-type", "application/json"),
                    ("proxy-authorization", "secret"),
                    ("x-custom", "kept"),
                    // The agent's click label is for the guards only.
                    ("x-webfreeze-control", "Place order"),
                ],
            ),
        )
        .await;
        let t = g.text();
        assert!(t.starts_with("POST https /echo?x=1"), "{t}");
        assert!(t.ends_with("{\"q\":\"socks\"}"), "{t}");
        assert!(t.contains("x-custom: kept"), "{t}");
        assert!(!t.contains("proxy-authorization"), "hop-by-hop removed: {t}");
        assert!(!t.contains("x-webfreeze-control"), "the agent's click label never reaches an origin: {t}");
        assert!(!t.to_ascii_lowercase().contains("via:"), "no Via added: {t}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_through_the_proxy_h1_and_h2() {
    let home = tempfile::tempdir().unwrap();
    let (_origin, reach) = https_origin(home.path(), "origin.test").await;
    let plain = Origin::start(None).await;
    let wf = Webfreeze::spawn_with(home.path(), &["proxy"], &reach);
    let proxy = format!("http://{}", wf.addr);
    for (flag, expect_version) in [("--http1.1", "1.1"), ("--http2", "2")] {
        let out = tokio::process::Command::new("curl")
            .args(["-sS", "--fail", "--proxy", &proxy, "--cacert", wf.ca_pem_path().to_str().unwrap(), flag])
            .args(["-w", "\n%{http_version}", "https://origin.test/hello"])
            .output()
            .await
            .expect("curl must be installed: apt-get install -y curl");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "curl {flag}: {stdout} {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(stdout, format!("{HELLO}\n{expect_version}"));
    }
    // Without our CA, curl must refuse: the chain is really checked.
    let out = tokio::process::Command::new("curl")
        .args(["-sS", "--proxy", &proxy, "https://origin.test/hello"])
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    // Plain HTTP in absolute form, with gzip decoded by curl.
    let out = tokio::process::Command::new("curl")
        .args(["-sS", "--fail", "--compressed", "--proxy", &proxy, &format!("http://{}/gzip", plain.addr)])
        .output()
        .await
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), HELLO);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_upgrades_are_tunnelled_both_ways() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let home = tempfile::tempdir().unwrap();
    let (_origin, reach) = https_origin(home.path(), "origin.test").await;
    let wf = Webfreeze::spawn_with(home.path(), &["proxy"], &reach);
    let our_ca = std::fs::read_to_string(wf.ca_pem_path()).unwrap();
    let mut tcp = tokio::net::TcpStream::connect(wf.addr).await.unwrap();
    tcp.write_all(b"CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n\r\n").await.unwrap();
    let mut buf = vec![0u8; 1024];
    let n = tcp.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
    let mut tls = tokio_rustls::TlsConnector::from(client_tls(&[&our_ca], &[b"http/1.1"]))
        .connect(rustls::pki_types::ServerName::try_from("origin.test").unwrap(), tcp)
        .await
        .unwrap();
    tls.write_all(
        b"GET /ws HTTP/1.1\r\nHost: origin.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
    )
    .await
    .unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        tls.read_exact(&mut byte).await.unwrap();
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 101"), "{head}");
    assert!(head.contains("upgrade: websocket"), "{head}");
    for msg in ["ping-1", "ping-2"] {
        tls.write_all(msg.as_bytes()).await.unwrap();
        let mut got = vec![0u8; 5 + msg.len()];
        tokio::time::timeout(Duration::from_secs(10), tls.read_exact(&mut got)).await.unwrap().unwrap();
        assert_eq!(String::from_utf8_lossy(&got), format!("echo:{msg}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_finishes_in_flight_requests() {
    let home = tempfile::tempdir().unwrap();
    let origin = Origin::start(None).await;
    let mut wf = Webfreeze::spawn(home.path(), &["proxy"]);
    let addr = wf.addr;
    let url = format!("http://{}/gate", origin.addr);
    let o = origin.addr;
    let inflight =
        tokio::spawn(async move { fetch(Via::Proxy(addr), &url, o, &[], false, req("GET", "", &[])).await });
    origin.stats.gate_arrived.notified().await;
    // The request is at the origin: ask the proxy to stop, then let the origin answer.
    std::process::Command::new("kill").args(["-INT", &wf.child.id().to_string()]).status().unwrap();
    // The proxy closes its listener before draining; wait until new connections are refused.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while tokio::net::TcpStream::connect(addr).await.is_ok() {
        assert!(tokio::time::Instant::now() < deadline, "the proxy kept accepting after SIGINT");
        tokio::task::yield_now().await;
    }
    origin.stats.release.notify_one();
    let got = inflight.await.unwrap();
    assert_eq!((got.status, got.text()), (200, "released".to_string()));
    let status = wf.child.wait().unwrap();
    assert!(status.success(), "proxy exit: {status:?}; {}", wf.stderr());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_gib_streams_through_with_bounded_memory() {
    use http_body_util::BodyExt;
    let home = tempfile::tempdir().unwrap();
    let origin = Origin::start(None).await;
    let wf = Webfreeze::spawn(home.path(), &["proxy"]);
    let total: u64 = 1 << 30;
    let tcp = tokio::net::TcpStream::connect(wf.addr).await.unwrap();
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp)).await.unwrap();
    tokio::spawn(conn);
    let r = Request::builder()
        .uri(format!("http://{}/stream?bytes={total}", origin.addr))
        .header("host", origin.addr.to_string())
        .body(Full::new(Bytes::new()))
        .unwrap();
    let res = sender.send_request(r).await.unwrap();
    let mut body = res.into_body();
    let mut n = 0u64;
    while let Some(f) = body.frame().await {
        if let Ok(d) = f.unwrap().into_data() {
            n += d.len() as u64;
        }
    }
    assert_eq!(n, total);
    let rss_mib = wf.peak_rss_kib() / 1024;
    eprintln!("proxy peak RSS after 1 GiB: {rss_mib} MiB");
    assert!(rss_mib < 100, "proxy peak RSS {rss_mib} MiB >= 100 MiB");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_requests_are_answered_in_order() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let home = tempfile::tempdir().unwrap();
    let origin = Origin::start(None).await;
    let wf = Webfreeze::spawn(home.path(), &["proxy"]);
    let mut tcp = tokio::net::TcpStream::connect(wf.addr).await.unwrap();
    let o = origin.addr;
    // Three requests in one write, before any response: answered in the order sent.
    let reqs = format!(
        "GET http://{o}/hello HTTP/1.1\r\nHost: {o}\r\n\r\nGET http://{o}/cookie HTTP/1.1\r\nHost: {o}\r\n\r\nGET http://{o}/missing HTTP/1.1\r\nHost: {o}\r\nConnection: close\r\n\r\n"
    );
    tcp.write_all(reqs.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), tcp.read_to_end(&mut out)).await.unwrap().unwrap();
    let text = String::from_utf8_lossy(&out);
    let first = text.find(HELLO).expect("first answer");
    let second = text.find("cookie=").expect("second answer");
    let third = text.find("HTTP/1.1 404").expect("third answer");
    assert!(first < second && second < third, "{text}");
    assert_eq!(text.matches("HTTP/1.1 ").count(), 3, "{text}");
}

/// A recorder that tells the test when its completion hook ran (and how).
struct Told {
    rec: recorder::Recorder,
    completed: std::sync::Mutex<Vec<Result<(), String>>>,
    notify: tokio::sync::Notify,
}

impl proxy::Handler for Told {
    type Ctx = recorder::RecCtx;
    fn new_ctx(&self, info: &proxy::RequestInfo) -> Self::Ctx {
        self.rec.new_ctx(info)
    }
    fn request(
        &self,
        ctx: &Self::Ctx,
        req: Request<proxy::Body>,
    ) -> impl std::future::Future<Output = proxy::Decision> + Send {
        self.rec.request(ctx, req)
    }
    fn response_head(&self, ctx: &Self::Ctx, up: &proxy::UpstreamInfo, res: &mut http::response::Parts) {
        self.rec.response_head(ctx, up, res)
    }
    fn complete(&self, ctx: &Self::Ctx, outcome: Result<(), proxy::ProxyError>) {
        self.completed.lock().unwrap().push(outcome.as_ref().map(|_| ()).map_err(|e| e.to_string()));
        self.rec.complete(ctx, outcome);
        self.notify.notify_one();
    }
}

/// Issue 10: `complete` runs exactly once even when the client leaves before the origin's response head
/// (for a handler that does not read abandoned exchanges on; the recorder does: `tests/abandoned.rs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue_10_client_gone_before_the_head_still_completes_once() {
    use std::sync::Arc;
    let home = tempfile::tempdir().unwrap();
    let origin = Origin::start(None).await;
    let recording = MemoryRecording::new("gone");
    let told = Arc::new(Told {
        rec: recording.recorder(),
        completed: Default::default(),
        notify: tokio::sync::Notify::new(),
    });
    let served = ServedProxy::start(told.clone(), &home.path().join("ca")).await;
    let addr = served.addr;
    let url = format!("http://{}/gate", origin.addr);
    let o = origin.addr;
    let client =
        tokio::spawn(async move { fetch(Via::Proxy(addr), &url, o, &[], false, req("GET", "", &[])).await });
    origin.stats.gate_arrived.notified().await;
    // The request waits at the origin: the client leaves before any response head.
    client.abort();
    let _ = client.await;
    tokio::time::timeout(Duration::from_secs(10), told.notify.notified())
        .await
        .expect("complete never ran for a client that left before the head");
    let done = told.completed.lock().unwrap().clone();
    assert_eq!(done.len(), 1, "{done:?}");
    assert!(done[0].as_ref().is_err_and(|e| e.contains("went away")), "{done:?}");
    // The recorder saw the exchange end without a response: counted, nothing half-written appended.
    let stats = told.rec.stats();
    assert_eq!((stats.failed, stats.recorded), (1, 0), "{stats:?}");
    origin.stats.release.notify_one();
    assert_eq!(recording.exchanges().len(), 0);
    assert_eq!(told.completed.lock().unwrap().len(), 1, "complete ran more than once");
    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_background_traffic_is_answered_locally_unless_forwarding_is_asked() {
    let home = tempfile::tempdir().unwrap();
    // Even if the proxy dialed, these names resolve to a closed loopback port: nothing leaves the machine.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let resolve: Vec<String> = ["accounts.google.com", "update.googleapis.com"]
        .iter()
        .flat_map(|h| {
            [
                "--resolve".to_string(),
                format!("{h}:443:{closed}"),
                "--resolve".into(),
                format!("{h}:80:{closed}"),
            ]
        })
        .collect();
    let wf = Webfreeze::spawn_with(home.path(), &["proxy"], &resolve);
    let ca = std::fs::read_to_string(wf.ca_pem_path()).unwrap();
    for url in
        ["https://accounts.google.com/ListAccounts", "http://update.googleapis.com/service/update2/json"]
    {
        let got = fetch(Via::Proxy(wf.addr), url, closed, &[&ca], false, req("POST", "{}", &[])).await;
        assert_eq!(got.status, 204, "{url} answered by the proxy: {}", got.text());
    }
    drop(wf);
    // Asked to forward, the proxy dials (the closed port: a CONNECT answered 502 naming the cause).
    let args = [resolve.clone(), vec!["--forward-browser-background".to_string()]].concat();
    let wf = Webfreeze::spawn_with(home.path(), &["proxy"], &args);
    let got = fetch(
        Via::Proxy(wf.addr),
        "http://update.googleapis.com/x",
        closed,
        &[&ca],
        false,
        req("GET", "", &[]),
    )
    .await;
    assert_eq!(got.status, 502, "{}", got.text());
}

/// A tap that keeps what it is handed.
#[derive(Debug, Default)]
struct Kept(std::sync::Mutex<Vec<trajectory::proxy_report::wire::WireEntry>>, tokio::sync::Notify);

impl trajectory::proxy_report::wire::WireTap for Kept {
    fn record(&self, entry: trajectory::proxy_report::wire::WireEntry) {
        self.0.lock().unwrap().push(entry);
        self.1.notify_one();
    }
}

impl Kept {
    /// The `i`-th entry, once handed over (the exchange completes as the client reads the body's end).
    async fn nth(&self, i: usize) -> trajectory::proxy_report::wire::WireEntry {
        loop {
            if let Some(e) = self.0.lock().unwrap().get(i).cloned() {
                return e;
            }
            tokio::time::timeout(Duration::from_secs(10), self.1.notified()).await.expect("no wire entry");
        }
    }
}

/// Issue 47: a live run keeps its own wire. Each request forwarded to the live web, and each the guards
/// refused, reaches the tap once its exchange is over: JSON bodies kept as text (no store holds them),
/// HTML not, a refusal marked blocked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_wire_tap_keeps_each_exchange() {
    use std::sync::Arc;
    use trajectory::proxy_report::wire::Answer;
    let home = tempfile::tempdir().unwrap();
    let origin = Origin::start(None).await;
    let kept = Arc::new(Kept::default());
    let tapped = Arc::new(proxy::wire_tap::WireTapped::new(Arc::new(proxy::PassThrough), kept.clone()));
    let guard = proxy::guard::Guard::new(
        tapped,
        Arc::new(proxy::guard::GuardConfig::standard(Vec::new())),
        Arc::default(),
    );
    #[allow(clippy::disallowed_methods)]
    let now = time::OffsetDateTime::now_utc();
    let ca = Arc::new(proxy::CertificateAuthority::init(&home.path().join("ca"), true, now).unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let p = proxy::Proxy::new(Arc::new(guard), ca, proxy::ProxyConfig::default()).unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(p.serve(listener, async move {
        let _ = stopped.await;
    }));
    let o = origin.addr;
    let base = format!("http://{o}");
    let json = ("content-type", "application/json");
    let form = ("content-type", "application/x-www-form-urlencoded");
    /// Method, path, body, headers, what answered, status, text the kept response body holds.
    type Case<'a> = (&'a str, &'a str, &'a str, &'a [(&'a str, &'a str)], Answer, u16, Option<&'a str>);
    let cases: [Case<'_>; 3] = [
        ("POST", "/site/api/search", "{\"q\":\"socks\"}", &[json], Answer::Live, 200, Some("wool socks")),
        ("GET", "/page", "", &[], Answer::Live, 200, None),
        (
            "POST",
            "/checkout/pay",
            "cc_number=4111111111111111&cvv=123&place_order=1",
            &[form],
            Answer::Blocked,
            403,
            None,
        ),
    ];
    for (i, (method, path, body, headers, answer, status, text)) in cases.into_iter().enumerate() {
        let g = fetch(Via::Proxy(addr), &format!("{base}{path}"), o, &[], false, req(method, body, headers))
            .await;
        assert_eq!(g.status, status, "{method} {path}: {}", g.text());
        let e = kept.nth(i).await;
        assert_eq!((e.method.as_str(), e.url.as_str()), (method, format!("{base}{path}").as_str()));
        assert_eq!((e.answer, e.status), (answer, status), "{path}");
        assert_eq!(e.request_body.as_deref(), (!body.is_empty()).then_some(body), "{path}");
        match text {
            Some(t) => assert!(e.response_text.as_deref().is_some_and(|r| r.contains(t)), "{e:?}"),
            None => assert_eq!(e.response_text, None, "{path}"),
        }
        assert_eq!(e.control, None, "{path}: no control was named");
    }
    // The control the agent names (here by the header agents may send) is the entry's, and is what the
    // guard judged with: a path that says nothing, refused for its "Place order" button.
    let label = ("x-webfreeze-control", "Place order");
    let g = fetch(
        Via::Proxy(addr),
        &format!("{base}/s/42/go"),
        o,
        &[],
        false,
        req("POST", "x=1", &[form, label]),
    )
    .await;
    assert_eq!(g.status, 403, "{}", g.text());
    let e = kept.nth(3).await;
    assert_eq!((e.answer, e.control.as_deref()), (Answer::Blocked, Some("Place order")), "{e:?}");
    assert!(!e.request_headers.iter().any(|(n, _)| n == "x-webfreeze-control"), "the header is taken off");
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}
