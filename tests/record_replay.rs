//! Record through the binary, then replay: sealed (zero origin connections), decoded bodies, canonical
//! request keys, truncation, miss policies and the report.

use std::sync::atomic::Ordering;

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

/// GET /counter at the origin through a proxy; the body names the origin's request number.
async fn counter(proxy: std::net::SocketAddr, origin: std::net::SocketAddr) -> String {
    fetch(Via::Proxy(proxy), &format!("http://{origin}/counter"), origin, &[], false, req("GET", "", &[]))
        .await
        .text()
}

fn show(home: &std::path::Path, name: &str) -> serde_json::Value {
    let out = run_cli(home, &["snapshots", "show", name, "--json", "--limit", "1000"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_then_sealed_replay_serves_the_same_bytes_without_dialing_out() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let (origin, reach) = https_origin(h, "origin.test").await;
    let cut = truncating_origin().await;

    // Record.
    let mut rec = Webfreeze::spawn_with(h, &["record", "--snapshot", "site"], &reach);
    let ca = std::fs::read_to_string(rec.ca_pem_path()).unwrap();
    let json_a = r#"{"q": "socks", "page": 1}"#;
    let cases: Vec<(&str, &str, &str)> = vec![
        ("GET", "https://origin.test/hello", ""),
        ("GET", "https://origin.test/gzip", ""),
        ("GET", "https://origin.test/br", ""),
        ("GET", "https://origin.test/chunked", ""),
        ("GET", "https://origin.test/cookie", ""),
        ("GET", "https://origin.test/redirect", ""),
        ("POST", "https://origin.test/echo", json_a),
    ];
    let mut recorded: Vec<Got> = Vec::new();
    for (m, url, body) in &cases {
        for h2 in [false, true] {
            let g = fetch(
                Via::Proxy(rec.addr),
                url,
                origin.addr,
                &[&ca],
                h2,
                req(m, body, &[("content-type", "application/json")]),
            )
            .await;
            assert!(g.status < 400, "{url}: {}", g.status);
            recorded.push(g);
        }
    }
    // An origin that cuts its response short: the client sees the failure.
    let cut_url = format!("http://{cut}/cut");
    let tcp = tokio::net::TcpStream::connect(rec.addr).await.unwrap();
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp)).await.unwrap();
    tokio::spawn(conn);
    let sent = sender
        .send_request(
            Request::builder()
                .uri(&cut_url)
                .header("host", cut.to_string())
                .body(Full::new(Bytes::new()))
                .unwrap(),
        )
        .await;
    // Either the head arrives and the body fails, or (when the cut reaches the proxy before it passed the
    // head on, as it can on a loaded machine) the connection closes before a head: both are the failure
    // the client must see. What it must never see is a whole response.
    use http_body_util::BodyExt;
    match sent {
        Ok(res) => {
            assert!(res.into_body().collect().await.is_err(), "client must see the cut-short body fail")
        }
        Err(e) => assert!(e.is_incomplete_message(), "the cut is an incomplete message, not {e}"),
    }
    let status = rec.signal_and_wait("INT");
    assert!(status.success(), "{}", rec.stderr());

    let snap = show(h, "site");
    assert_eq!(snap["manifest"]["state"], "complete");
    let xs = snap["exchanges"].as_array().unwrap();
    assert_eq!(xs.len(), cases.len() * 2 + 1, "{}", rec.stderr());
    let gz = xs.iter().find(|x| x["request"]["url"] == "https://origin.test/gzip").unwrap();
    assert_eq!(gz["response"]["content_encoding"], "gzip");
    assert_eq!(gz["response"]["body"]["size"], HELLO.len(), "stored decoded");
    let br = xs.iter().find(|x| x["request"]["url"] == "https://origin.test/br").unwrap();
    assert_eq!(br["response"]["body"]["size"], HELLO.len(), "stored decoded");
    assert!(xs.iter().any(|x| x["alpn"] == "h2"), "ALPN recorded");
    let truncated: Vec<_> = xs.iter().filter(|x| x["flags"]["truncated"] == true).collect();
    assert_eq!(truncated.len(), 1, "only the cut response is flagged: {truncated:?}");
    assert_eq!(truncated[0]["request"]["url"], cut_url);
    assert_eq!(truncated[0]["response"]["body"]["size"], 10);
    let verify = run_cli(h, &["snapshots", "verify"]);
    assert!(verify.status.success());

    // Sealed replay: the origin must see no connection at all.
    let before = origin.stats.connections.load(Ordering::SeqCst);
    let report = h.join("report.json");
    let mut rep =
        Webfreeze::spawn(h, &["replay", "--snapshot", "site", "--report", report.to_str().unwrap()]);
    let json_b = r#"{"page":1,"q":"socks"}"#; // same JSON, other key order and spacing
    let mut recorded = recorded.iter();
    for (m, url, body) in &cases {
        let body = if *body == json_a { json_b } else { body };
        for h2 in [false, true] {
            // Identical requests get the recorded responses in recorded order (h1 first, then h2).
            let original = recorded.next().unwrap();
            let g = fetch(
                Via::Proxy(rep.addr),
                url,
                origin.addr,
                &[&ca],
                h2,
                req(m, body, &[("content-type", "application/json")]),
            )
            .await;
            assert_eq!(g.status, original.status, "{url}");
            if url.ends_with("/gzip") || url.ends_with("/br") {
                assert_eq!(g.text(), HELLO, "served decoded");
                assert_eq!(g.header("content-encoding"), None);
            } else {
                assert_eq!(g.body, original.body, "{url} h2={h2}");
            }
            assert_eq!(
                g.header("content-length").map(|v| v.parse::<usize>().unwrap()),
                Some(g.body.len()),
                "{url}"
            );
        }
    }
    let miss = fetch(
        Via::Proxy(rep.addr),
        "https://origin.test/never",
        origin.addr,
        &[&ca],
        false,
        req("GET", "", &[]),
    )
    .await;
    assert_eq!(miss.status, 404);
    assert!(miss.text().contains("https://origin.test/never"), "{}", miss.text());
    assert!(rep.signal_and_wait("INT").success(), "{}", rep.stderr());
    assert_eq!(
        origin.stats.connections.load(Ordering::SeqCst),
        before,
        "sealed replay opened an origin connection"
    );

    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(r["missed"], 1);
    assert_eq!(r["misses"][0]["url"], "https://origin.test/never");
    assert_eq!(
        r["exact"].as_u64().unwrap() + r["normalised"].as_u64().unwrap() + r["fuzzy"].as_u64().unwrap(),
        (cases.len() * 2) as u64
    );
    assert_eq!(r["fuzzy"], 0);
    assert!(rep.stderr().contains("1 missed"), "{}", rep.stderr());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misses_go_live_or_get_recorded_when_asked() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let origin = Origin::start(None).await;
    let base = format!("http://{}", origin.addr);
    let mut rec = Webfreeze::spawn(h, &["record", "--snapshot", "s"]);
    let first =
        fetch(Via::Proxy(rec.addr), &format!("{base}/counter"), origin.addr, &[], false, req("GET", "", &[]))
            .await;
    assert!(rec.signal_and_wait("INT").success());

    // --on-miss live: recorded URL stays frozen, a new one is served live.
    let mut rep = Webfreeze::spawn(h, &["replay", "--snapshot", "s", "--on-miss", "live"]);
    for _ in 0..2 {
        let g = fetch(
            Via::Proxy(rep.addr),
            &format!("{base}/counter"),
            origin.addr,
            &[],
            false,
            req("GET", "", &[]),
        )
        .await;
        assert_eq!(g.text(), first.text(), "frozen");
    }
    let live =
        fetch(Via::Proxy(rep.addr), &format!("{base}/hello"), origin.addr, &[], false, req("GET", "", &[]))
            .await;
    assert_eq!(live.text(), HELLO);
    assert!(rep.signal_and_wait("INT").success());

    // --on-miss record: misses land in SNAPSHOT/misses.
    let mut rep = Webfreeze::spawn(h, &["replay", "--snapshot", "s", "--on-miss", "record"]);
    let g =
        fetch(Via::Proxy(rep.addr), &format!("{base}/chunked"), origin.addr, &[], false, req("GET", "", &[]))
            .await;
    assert_eq!(g.status, 200);
    assert!(rep.signal_and_wait("INT").success(), "{}", rep.stderr());
    let m = show(h, "s/misses");
    assert_eq!(m["manifest"]["labels"]["misses_of"], "s");
    assert_eq!(m["exchanges"][0]["request"]["url"], format!("{base}/chunked"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_starts_a_new_episode_and_report_is_served() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let origin = Origin::start(None).await;
    let mut rec = Webfreeze::spawn(h, &["record", "--snapshot", "seq"]);
    let mut recorded = Vec::new();
    for _ in 0..3 {
        recorded.push(counter(rec.addr, origin.addr).await);
    }
    assert!(rec.signal_and_wait("INT").success());
    let wire_dir = h.join("wire");
    let mut rep =
        Webfreeze::spawn(h, &["replay", "--snapshot", "seq", "--wire-dir", wire_dir.to_str().unwrap()]);
    let direct = |path: &str, method: &str| {
        let addr = rep.addr;
        let (path, method) = (path.to_string(), method.to_string());
        async move {
            let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
            let (mut s, c) =
                hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp)).await.unwrap();
            tokio::spawn(c);
            let r = s
                .send_request(
                    Request::builder()
                        .method(method.as_str())
                        .uri(path)
                        .header("host", "x")
                        .body(Full::new(Bytes::new()))
                        .unwrap(),
                )
                .await
                .unwrap();
            use http_body_util::BodyExt;
            String::from_utf8(r.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap()
        }
    };
    for round in 0..2 {
        let mut got = Vec::new();
        for _ in 0..4 {
            got.push(counter(rep.addr, origin.addr).await);
        }
        let mut expect = recorded.clone();
        expect.push(recorded[2].clone());
        assert_eq!(got, expect, "round {round}: recorded order, then the last repeats");
        assert!(direct("/__webfreeze/reset", "POST").await.starts_with("episode "));
    }
    let report: serde_json::Value =
        serde_json::from_str(&direct("/__webfreeze/report", "GET").await).unwrap();
    assert_eq!(report["episodes"], 3);
    assert_eq!(report["exact"], 8);
    assert_eq!(report["coverage"], 1.0);
    // --wire-dir: each episode's own requests in its own log (the proxy-direct calls are not requests of
    // the episode); the third episode made none.
    assert!(rep.signal_and_wait("INT").success(), "{}", rep.stderr());
    for (n, want) in [(1, 4), (2, 4), (3, 0)] {
        let path = session::episode_dir(&wire_dir, n).join(trajectory::wire::WIRE_FILE);
        let log = trajectory::wire::read_any(&path).unwrap();
        assert_eq!(
            (log.header.task_id.as_str(), log.header.run.as_str()),
            (session::episode_id(n).as_str(), "seq")
        );
        assert_eq!(log.entries.len(), want, "episode {n}: {:?}", log.entries);
        assert!(log
            .entries
            .iter()
            .all(|e| e.answer == trajectory::proxy_report::wire::Answer::Exact && e.status == 200));
        assert!(log.truncated.is_none(), "episode {n}");
    }
}

/// Issue 10: one key builder. A JSON body over the recorder's old 4 MiB in-memory limit was keyed by its
/// raw bytes while replay canonicalised it, so it never matched; now both derive the key the same way and
/// a replay with the object's keys in another order hits exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue_10_a_5_mib_json_post_replays_exact_with_its_keys_reordered() {
    use std::sync::Arc;

    use session::{MissPolicy, ProxyMode, TaskProxy, TaskProxyOptions};

    let home = tempfile::tempdir().unwrap();
    let origin = Origin::start(None).await;
    let store = snapshots::Store::in_memory();
    #[allow(clippy::disallowed_methods)]
    let now = time::OffsetDateTime::now_utc();
    let ca = Arc::new(proxy::CertificateAuthority::init(&home.path().join("ca"), true, now).unwrap());
    let opts = TaskProxyOptions {
        task_id: "big".into(),
        web_name: "test".into(),
        proxy: proxy::ProxyConfig::default(),
        clock: Arc::new(clock::FixedClock::new(1_000)),
        time_zone: "UTC".into(),
        locale: "en_US".into(),
        explore: false,
        guard: None,
        wire: None,
    };
    let blob = "x".repeat(5 << 20);
    let recorded_body = format!(r#"{{"a":1,"blob":"{blob}","list":[1,2],"z":{{"q":true,"p":null}}}}"#);
    let replayed_body = format!(r#"{{ "z": {{"p":null, "q":true}}, "list":[1,2], "blob":"{blob}", "a":1 }}"#);
    assert_ne!(recorded_body, replayed_body);
    let url = format!("http://{}/echo", origin.addr);
    let json = [("content-type", "application/json")];

    let mode = ProxyMode::Record { store: store.clone(), run: "r".into(), run_dir: "test".into() };
    let rec = TaskProxy::start(&mode, ca.clone(), &opts).await.unwrap();
    let live =
        fetch(Via::Proxy(rec.addr()), &url, origin.addr, &[], false, req("POST", &recorded_body, &json))
            .await;
    assert_eq!(live.status, 200);
    assert_eq!(rec.probe().counters().recorded, 1);
    rec.finish().await.unwrap();

    let before = origin.stats.requests.load(Ordering::SeqCst);
    let mode = ProxyMode::Replay {
        store,
        run: "r".into(),
        on_miss: MissPolicy::NotFound,
        frozen_web: session::FrozenWeb::recorded(),
    };
    let rep = TaskProxy::start(&mode, ca, &opts).await.unwrap();
    let got =
        fetch(Via::Proxy(rep.addr()), &url, origin.addr, &[], false, req("POST", &replayed_body, &json))
            .await;
    let c = rep.probe().counters();
    assert_eq!((c.exact, c.normalised, c.fuzzy, c.missed), (1, 0, 0, 0), "{c:?}");
    assert_eq!((got.status, got.body.len()), (200, live.body.len()));
    assert!(got.body == live.body, "replay served other bytes");
    assert_eq!(origin.stats.requests.load(Ordering::SeqCst), before, "replay dialled the origin");
    rep.finish().await.unwrap();
}

/// Issue 22: two recordings of one site that took different paths, merged with `snapshots merge`: the
/// first alone misses the second's page; the union serves both paths, and a page both recorded answers with
/// the first recording's response, then the second's, then the last again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merged_recordings_replay_every_path_in_precedence_order() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let har = |pages: &[(&str, &str)]| {
        let entries: Vec<serde_json::Value> = pages
            .iter()
            .map(|(url, text)| {
                serde_json::json!({
                    "startedDateTime": "2025-01-02T03:04:05.000Z", "time": 1,
                    "request": {"method": "GET", "url": url, "httpVersion": "HTTP/1.1", "headers": []},
                    "response": {"status": 200, "httpVersion": "HTTP/1.1", "headers": [{"name": "content-type", "value": "text/plain"}],
                        "content": {"size": text.len(), "mimeType": "text/plain", "text": text}},
                })
            })
            .collect();
        serde_json::json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": entries}}).to_string()
    };
    let runs = [
        ("agent-a", har(&[("http://shop.test/", "home as A saw it"), ("http://shop.test/a", "page a")])),
        ("agent-b", har(&[("http://shop.test/", "home as B saw it"), ("http://shop.test/b", "page b")])),
    ];
    for (name, text) in &runs {
        let f = h.join(format!("{name}.har"));
        std::fs::write(&f, text).unwrap();
        let out = run_cli(h, &["snapshots", "import", f.to_str().unwrap(), "--snapshot", name]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let out = run_cli(h, &["snapshots", "merge", "agent-a", "agent-b", "--into", "both"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("4 exchanges"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let again = run_cli(h, &["snapshots", "merge", "agent-a", "agent-b", "--into", "both"]);
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("exists already"));

    let get = |addr, path: &'static str| async move {
        let url = format!("http://shop.test{path}");
        fetch(Via::Proxy(addr), &url, addr, &[], false, req("GET", "", &[])).await
    };
    let mut first = Webfreeze::spawn(h, &["replay", "--snapshot", "agent-a"]);
    assert_eq!(get(first.addr, "/b").await.status, 404, "agent A never saw /b");
    assert!(first.signal_and_wait("INT").success());
    let mut union = Webfreeze::spawn(h, &["replay", "--snapshot", "both"]);
    for (path, want) in [
        ("/", "home as A saw it"),
        ("/a", "page a"),
        ("/b", "page b"),
        ("/", "home as B saw it"),
        ("/", "home as B saw it"),
    ] {
        let g = get(union.addr, path).await;
        assert_eq!((g.status, g.text()), (200, want.to_string()), "{path}");
    }
    assert!(union.signal_and_wait("INT").success(), "{}", union.stderr());
}

/// WebArena-Verified's "fill in but do not submit" sink: a POST to `.../dummy_bin` is answered 200 by the
/// proxy in record mode (the demo shop has no such page: forwarded, it would be a 404), stored with its
/// form, and answered the same by replay; replay answers an unrecorded sink too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dummy_bin_sink_is_answered_locally_recorded_and_replayed() {
    use std::sync::Arc;

    use session::{MissPolicy, ProxyMode, TaskProxy, TaskProxyOptions};

    let home = tempfile::tempdir().unwrap();
    let sites = DemoSites::start(home.path()).await;
    let store = snapshots::Store::in_memory();
    #[allow(clippy::disallowed_methods)]
    let now = time::OffsetDateTime::now_utc();
    let ca = Arc::new(proxy::CertificateAuthority::init(&home.path().join("ca"), true, now).unwrap());
    let our_ca = ca.cert_pem().to_string();
    let opts = TaskProxyOptions {
        task_id: "sink".into(),
        web_name: "demo".into(),
        proxy: sites.proxy_config(),
        clock: Arc::new(clock::FixedClock::new(1_000)),
        time_zone: "UTC".into(),
        locale: "en_US".into(),
        explore: false,
        guard: Some(Arc::new(proxy::guard::GuardConfig::standard(Vec::new()))),
        wire: None,
    };
    let form = [("content-type", "application/x-www-form-urlencoded")];
    let body = "form_id=contact-form&name=Emma+Lopez&comment=I+need+a+refund";
    let post = |proxy: std::net::SocketAddr, url: &'static str| {
        let ca = our_ca.clone();
        let addr = sites.addr();
        async move { fetch(Via::Proxy(proxy), url, addr, &[&ca], false, req("POST", body, &form)).await }
    };
    let mode = ProxyMode::Record { store: store.clone(), run: "r".into(), run_dir: "test".into() };
    let rec = TaskProxy::start(&mode, ca.clone(), &opts).await.unwrap();
    let got = post(rec.addr(), "https://shop.test/dummy_bin").await;
    assert_eq!((got.status, got.header("x-webfreeze-sink")), (200, Some("dummy_bin")), "{}", got.text());
    rec.finish().await.unwrap();
    let m = store.manifest("r/sink").unwrap();
    let x = store.exchanges(&m).next().unwrap().unwrap();
    assert_eq!((x.request.method.as_str(), x.response.status), ("POST", 200));
    assert_eq!(store.blob_bytes(&x.request.body.unwrap().hash).unwrap(), body.as_bytes());

    let mode = ProxyMode::Replay {
        store,
        run: "r".into(),
        on_miss: MissPolicy::NotFound,
        frozen_web: session::FrozenWeb::recorded(),
    };
    let rep = TaskProxy::start(&mode, ca, &opts).await.unwrap();
    let again = post(rep.addr(), "https://shop.test/dummy_bin").await;
    assert_eq!((again.status, again.body.clone()), (200, got.body.clone()));
    let other = post(rep.addr(), "https://shop.test/contact/dummy_bin").await;
    assert_eq!((other.status, other.header("x-webfreeze-sink")), (200, Some("dummy_bin")));
    let c = rep.probe().counters();
    assert_eq!((c.exact, c.missed), (1, 0), "{c:?}");
    rep.finish().await.unwrap();
}

/// A form's body is recorded whole even when the origin answers without reading it (the sign-in app's
/// `POST /app/login` never reads its body; an h2 origin that answers at once resets the stream, and a
/// body still streaming was then never sent on, nor teed into the recording, so a replay of the same form
/// missed). Each of 12 sign-ins (h2 and HTTP/1.1, a distinct body each) is replayed, sealed, exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_body_the_origin_never_read_is_recorded_whole() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let (origin, reach) = https_origin(h, "app.test").await;
    let form = [("content-type", "application/x-www-form-urlencoded")];
    let bodies: Vec<(String, bool)> =
        (0..12).map(|i| (format!("user=ann&n={i}&pad={}", "x".repeat(i * 700)), i % 2 == 0)).collect();
    for (mode, args) in
        [("record", &["record", "--snapshot", "app"][..]), ("replay", &["replay", "--snapshot", "app"])]
    {
        let mut p =
            if mode == "record" { Webfreeze::spawn_with(h, args, &reach) } else { Webfreeze::spawn(h, args) };
        let ca = std::fs::read_to_string(p.ca_pem_path()).unwrap();
        for (body, h2) in &bodies {
            let g = fetch(
                Via::Proxy(p.addr),
                "https://app.test/app/login",
                origin.addr,
                &[&ca],
                *h2,
                req("POST", body, &form),
            )
            .await;
            assert_eq!(
                (g.status, g.text().contains("Welcome ann")),
                (200, true),
                "{mode} {}: {}",
                &body[..14],
                g.text()
            );
        }
        assert!(p.signal_and_wait("INT").success(), "{}", p.stderr());
    }
    let shown = show(h, "app");
    let bodies_recorded: Vec<u64> = shown["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["request"]["body"]["size"].as_u64().unwrap_or(0))
        .collect();
    let sent: Vec<u64> = bodies.iter().map(|(b, _)| b.len() as u64).collect();
    assert_eq!(bodies_recorded, sent, "each body recorded whole");
}
