//! The guards of live and recording runs, end to end in Chromium on a local origin: an order placed by
//! clicking "Place order" is refused (the origin never sees it), by its path and, where the path says
//! nothing, by the button's label (clicked, or the default button of a form a Type's Enter submits), a
//! search form passes, a page quoting a
//! task with its reference answer and a link to where WebVoyager's answers are published are flagged as
//! contamination; the trajectory, run.json and eval say so per task and per site; the refused order
//! replays identically from the snapshot; with `--allow-writes` the order goes through.

use std::sync::atomic::Ordering;

use crate::support::*;

fn tasks() -> String {
    [
        serde_json::json!({"web_name": "Guard", "id": "Guard--order", "ques": "Buy the glass jar.",
            "web": "https://guard.test/shop/"}),
        serde_json::json!({"web_name": "Guard", "id": "Guard--label", "ques": "Buy the glass jar quickly.",
            "web": "https://guard.test/quick/"}),
        serde_json::json!({"web_name": "Guard", "id": "Guard--type", "ques": "Buy two glass jars quickly.",
            "web": "https://guard.test/quick-qty/"}),
        serde_json::json!({"web_name": "Guard", "id": "Guard--search", "ques": "Search for the jar.",
            "web": "https://guard.test/find/"}),
        serde_json::json!({"web_name": "Guard", "id": "Guard--leak", "ques": LEAK_QUESTION,
            "web": "https://guard.test/leak/", "eval": {"must_include": [LEAK_ANSWER]}}),
        serde_json::json!({"web_name": "Answers", "id": "Answers--1", "ques": "Open the WebVoyager link.",
            "web": "https://guard.test/links/"}),
    ]
    .iter()
    .map(|t| format!("{t}\n"))
    .collect()
}

/// Click the page's only control, then answer (the leak task answers at once).
fn model(body: &serde_json::Value) -> Reply {
    let task = first_user_text(body);
    let turn = body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").count();
    let reply = if task.contains(LEAK_QUESTION) {
        format!("Thought: the page says it.\nAction: ANSWER; {LEAK_ANSWER}")
    } else if turn == 0 && task.contains("two glass jars") {
        // Type 2 in the quantity field: Enter submits its form.
        "Thought: type the quantity.\nAction: Type [0]; 2".to_string()
    } else if turn == 0 {
        "Thought: use the page's control.\nAction: Click [0]".to_string()
    } else {
        "Thought: done.\nAction: ANSWER; done".to_string()
    };
    Reply::Text(reply)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guards_refuse_writes_and_flag_contamination_in_live_and_record_runs() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let origin = GuardOrigin::start("guard.test").await;
    let ca_file = h.join("origin-ca.pem");
    std::fs::write(&ca_file, &origin.ca_pem).unwrap();
    let tasks_file = h.join("tasks.jsonl");
    std::fs::write(&tasks_file, tasks()).unwrap();
    let llm = FakeLlm::start(model).await;
    // github.com resolves to the loopback origin: the guard answers before any request could reach it.
    let reach = strs(&[
        "--upstream-ca",
        ca_file.to_str().unwrap(),
        "--resolve",
        &format!("guard.test:443:{}", origin.addr),
        "--resolve",
        &format!("github.com:443:{}", origin.addr),
    ]);
    let run = |mode: &str, out: &std::path::Path, extra: &[&str]| {
        RunArgs::new(&tasks_file, mode, out)
            .settle_ms(100)
            .model(&llm.api_base())
            .args(&reach)
            .args(extra)
            .build()
    };

    let rec = h.join("rec");
    let out = cli(h, run("record", &rec, &[]), vec![]).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(origin.orders.load(Ordering::SeqCst), 0, "the order never reached the site");
    assert_eq!(origin.searches.load(Ordering::SeqCst), 1, "the search form passed");

    let order = traj(&rec, "Guard--order");
    let g = order.guard.as_ref().expect("the order task was guarded");
    assert_eq!(g.writes.len(), 1, "{g:?}");
    assert_eq!(g.writes[0].step, 1, "{g:?}");
    assert!(g.writes[0].what.starts_with("POST https://guard.test/checkout: places an order"), "{g:?}");
    assert_eq!(order.steps[0].proxy.blocked_writes, 1, "{:?}", order.steps[0].proxy);
    // The end-of-task report keeps the refusal beside the recording's counts, typed.
    let report = order.proxy_report.as_ref().expect("a proxy report");
    assert!(matches!(report.mode, trajectory::proxy_report::ModeReport::Record(_)), "{report:?}");
    assert_eq!(report.blocked.len(), 1, "{report:?}");
    assert_eq!(report.blocked[0].kind, trajectory::proxy_report::BlockedKind::Write);
    assert!(!g.contaminated());
    // A path that says nothing: the label of the button the agent clicked tells.
    let label = traj(&rec, "Guard--label");
    let g = label.guard.as_ref().expect("the quick order was guarded");
    assert_eq!(g.writes.len(), 1, "{g:?}");
    assert!(g.writes[0].what.ends_with(r#"(purchase; label "Place order")"#), "{g:?}");
    // Issue 60 part 3: a WebVoyager Type whose Enter submits the form tells the form's button too.
    let typed = traj(&rec, "Guard--type");
    let g = typed.guard.as_ref().expect("the typed quick order was guarded");
    assert_eq!(g.writes.len(), 1, "{g:?}");
    assert!(g.writes[0].what.ends_with(r#"(purchase; label "Place order")"#), "{g:?}");
    assert!(traj(&rec, "Guard--search").guard.is_none());
    let leak = traj(&rec, "Guard--leak");
    let g = leak.guard.as_ref().expect("the leak was flagged");
    assert_eq!((g.answer_pages.len(), g.answer_pages[0].step), (1, 1), "{g:?}");
    assert_eq!(g.answer_pages[0].answer, LEAK_ANSWER);
    assert_eq!(g.answer_pages[0].url, "https://guard.test/leak/");
    let answers = traj(&rec, "Answers--1");
    let g = answers.guard.as_ref().expect("the answer place was refused");
    assert_eq!(g.answer_places.len(), 1, "{g:?}");
    assert!(g.answer_places[0].what.starts_with("GET https://github.com/MinorJerry/WebVoyager"), "{g:?}");
    assert!(g.answer_places[0].what.contains("WebVoyager"), "{g:?}");
    let run_json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(rec.join("run.json")).unwrap()).unwrap();
    assert_eq!(run_json["config"]["guards"]["write_guard"], true, "{run_json}");
    assert_eq!(run_json["config"]["guards"]["answer_guard"], true, "{run_json}");

    // eval: contaminated tasks apart, refused writes shown, per site.
    let out = cli(h, strs(&["eval", rec.to_str().unwrap(), "--judge", "reference"]), vec![]).await;
    assert!(out.status.success(), "eval: {}", String::from_utf8_lossy(&out.stderr));
    let ev: serde_json::Value =
        serde_json::from_slice(&std::fs::read(rec.join("eval.json")).unwrap()).unwrap();
    assert_eq!(ev["contaminated"], serde_json::json!(["Answers--1", "Guard--leak"]), "{ev}");
    assert_eq!(
        ev["writes_blocked"],
        serde_json::json!(["Guard--label", "Guard--order", "Guard--type"]),
        "{ev}"
    );
    assert_eq!(ev["sites"]["Guard"]["contaminated"], 1, "{ev}");
    assert_eq!(ev["sites"]["Guard"]["writes_blocked"], 3, "{ev}");
    assert_eq!(ev["sites"]["Answers"]["contaminated"], 1, "{ev}");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("Guard--leak (contaminated, not counted in n)"), "{table}");

    // The refused order replays from the snapshot as it was recorded, sealed.
    let rep = h.join("rep");
    let policy = format!("trajectory:{}", rec.display());
    let args = RunArgs::new(&tasks_file, "replay", &rep)
        .opt("--policy", &policy)
        .filter("Guard--order")
        .settle_ms(100);
    let out = cli(h, args.build(), vec![]).await;
    assert!(out.status.success(), "replay: {}", String::from_utf8_lossy(&out.stderr));
    let replayed = traj(&rep, "Guard--order");
    for s in &replayed.steps {
        let r = s.reproduced.as_ref().unwrap();
        assert!(r.url && r.screenshot, "step {}: {r:?}", s.n);
        assert_eq!(s.proxy.missed, 0, "step {}: {:?}", s.n, s.proxy.miss_urls);
    }
    assert_eq!(origin.orders.load(Ordering::SeqCst), 0);

    // A host the user allows: the order goes through.
    let allowed = h.join("allowed");
    let args = run("live", &allowed, &["--task-filter", "Guard--order", "--allow-writes", "guard.test"]);
    let out = cli(h, args, vec![]).await;
    assert!(out.status.success(), "allowed: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(origin.orders.load(Ordering::SeqCst), 1, "the allowed host's order went through");
    assert!(traj(&allowed, "Guard--order").guard.is_none());
}

fn form(method: &str, body: &str) -> http::Request<http_body_util::Full<bytes::Bytes>> {
    http::Request::builder()
        .method(method)
        .uri("/")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(http_body_util::Full::new(bytes::Bytes::from(body.to_string())))
        .unwrap()
}

/// The demo shop's checkout and the demo forum's post through a guarded live task proxy: refused with the
/// guard's page (the rule named); add-to-cart and a search pass; a place WebVoyager's answers are
/// published (resolved to loopback) is refused; with the sites owned, checkout and post reach them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_shops_checkout_and_forum_post_are_refused_unless_the_host_is_allowed() {
    use std::sync::Arc;

    use session::{ProxyMode, TaskProxy, TaskProxyOptions};

    let home = tempfile::tempdir().unwrap();
    let sites = DemoSites::start(home.path()).await;
    #[allow(clippy::disallowed_methods)]
    let now = time::OffsetDateTime::now_utc();
    let ca = Arc::new(proxy::CertificateAuthority::init(&home.path().join("ca"), true, now).unwrap());
    let our_ca = ca.cert_pem().to_string();
    let mut proxy_cfg = sites.proxy_config();
    proxy_cfg.upstream.resolve.insert(("github.com".into(), 443), sites.addr());
    let opts = |own: Vec<String>| TaskProxyOptions {
        task_id: "t".into(),
        web_name: "demo".into(),
        proxy: proxy_cfg.clone(),
        clock: Arc::new(clock::FixedClock::new(1_000)),
        time_zone: "UTC".into(),
        locale: "en_US".into(),
        explore: false,
        guard: Some(Arc::new(proxy::guard::GuardConfig::standard(own))),
        wire: None,
    };
    let addr = sites.addr();
    // (method, url, form body, the guard header expected or "" for passed through)
    let rows: &[(&str, &str, &str, &str)] = &[
        ("POST", "https://shop.test/cart/add", "slug=glass-jar", ""),
        ("GET", "https://shop.test/?q=jar", "", ""),
        ("POST", "https://shop.test/checkout", "", "write; rule=purchase"),
        ("POST", "https://forum.test/submit", "title=Hello&body=World", "write; rule=post"),
        ("GET", "https://github.com/MinorJerry/WebVoyager", "", "answers; family=WebVoyager"),
        // Ordinary forms an agent needs on the open web (issue 48): none refused.
        ("POST", "https://shop.test/flights/results", "from=LHR&to=JFK&depart=2026-12-01", ""),
        ("POST", "https://shop.test/translate", "text=Bonjour%20tout%20le%20monde&target=en", ""),
        ("POST", "https://shop.test/jobs", "title=nurse&where=Leeds", ""),
        ("POST", "https://shop.test/authenticate", "username=alice&password=x", ""),
        ("POST", "https://shop.test/checkout/cart/updatePost/", "cart%5B1%5D%5Bqty%5D=2", ""),
    ];
    let tp = TaskProxy::start(&ProxyMode::Live, ca.clone(), &opts(Vec::new())).await.unwrap();
    for (method, url, body, want) in rows {
        let got = fetch(Via::Proxy(tp.addr()), url, addr, &[&our_ca], false, form(method, body)).await;
        assert_eq!(got.header("x-webfreeze-blocked").unwrap_or(""), *want, "{method} {url}: {}", got.text());
        if !want.is_empty() {
            assert_eq!(got.status, 403, "{url}");
            assert!(got.text().contains("was not sent"), "{}", got.text());
        }
    }
    let c = tp.probe().counters();
    assert_eq!((c.blocked_writes, c.blocked_answers), (2, 1), "{c:?}");
    tp.finish().await.unwrap();

    // The sites owned: the writes reach them (the forum sends a visitor without a session to sign in).
    let tp = TaskProxy::start(
        &ProxyMode::Live,
        ca.clone(),
        &opts(vec!["shop.test".into(), "*.forum.test".into()]),
    )
    .await
    .unwrap();
    for (method, url, body) in
        [("POST", "https://shop.test/checkout", ""), ("POST", "https://forum.test/submit", "title=Hi&body=x")]
    {
        let got = fetch(Via::Proxy(tp.addr()), url, addr, &[&our_ca], false, form(method, body)).await;
        assert_eq!(got.header("x-webfreeze-blocked"), None, "{url}: {}", got.text());
        assert_ne!(got.status, 403, "{url}");
    }
    assert_eq!(tp.probe().counters().blocked_writes, 0);
    tp.finish().await.unwrap();

    // A replay whose misses go live is guarded too: what the snapshot answers never leaves, a miss that
    // would act is refused.
    let store = snapshots::Store::open(&home.path().join("store")).unwrap();
    let run_dir = home.path().join("rec");
    let mode = ProxyMode::record(store.clone(), &run_dir).unwrap();
    let tp = TaskProxy::start(&mode, ca.clone(), &opts(Vec::new())).await.unwrap();
    let got =
        fetch(Via::Proxy(tp.addr()), "https://shop.test/", addr, &[&our_ca], false, form("GET", "")).await;
    assert_eq!(got.status, 200);
    tp.finish().await.unwrap();
    let replay = ProxyMode::Replay {
        store,
        run: "rec".into(),
        on_miss: session::MissPolicy::Live,
        frozen_web: session::FrozenWeb::recorded(),
    };
    let tp = TaskProxy::start(&replay, ca, &opts(Vec::new())).await.unwrap();
    let got =
        fetch(Via::Proxy(tp.addr()), "https://shop.test/", addr, &[&our_ca], false, form("GET", "")).await;
    assert_eq!((got.status, got.header("x-webfreeze-blocked")), (200, None));
    let got =
        fetch(Via::Proxy(tp.addr()), "https://shop.test/checkout", addr, &[&our_ca], false, form("POST", ""))
            .await;
    assert_eq!(got.header("x-webfreeze-blocked"), Some("write; rule=purchase"), "{}", got.text());
    assert_eq!(tp.probe().counters().blocked_writes, 1);
    tp.finish().await.unwrap();

    // The standalone replay too: guarded by default when its misses go live, unguarded with `--guard none`.
    for (guard, want) in [(None, Some("write; rule=purchase")), (Some("none"), None)] {
        let mut args = vec!["replay", "--snapshot", "rec/t", "--on-miss", "live", "--no-inject-shim"];
        if let Some(g) = guard {
            args.extend(["--guard", g]);
        }
        let reach: Vec<&str> = sites.reach.iter().map(String::as_str).collect();
        args.extend(reach);
        let wf = Webfreeze::spawn(home.path(), &args);
        let got = fetch(
            Via::Proxy(wf.addr),
            "https://shop.test/checkout",
            addr,
            &[&our_ca],
            false,
            form("POST", ""),
        )
        .await;
        assert_eq!(got.header("x-webfreeze-blocked"), want, "--guard {guard:?}: {}", got.text());
    }
}

/// `webfreeze guard check`: what the guards would refuse in a recording (a HAR file here), and why; a file
/// that is not a HAR is a clear error.
#[test]
fn guard_check_lists_what_a_recording_would_have_refused() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let entry = |method: &str, url: &str, mime: &str, text: &str| {
        serde_json::json!({"request": {"method": method, "url": url, "headers": [],
            "postData": {"mimeType": mime, "text": text}}, "response": {"status": 200}})
    };
    let har = serde_json::json!({"log": {"version": "1.2", "entries": [
        entry("GET", "https://shop.example/", "", ""),
        entry("POST", "https://air.example/flights/results", "application/x-www-form-urlencoded", "from=LHR&to=JFK"),
        entry("POST", "https://shop.example/checkout", "application/x-www-form-urlencoded", "item=jar"),
        entry("POST", "https://shop.example/checkout/cart/couponPost/", "application/x-www-form-urlencoded", "coupon_code=X"),
        entry("GET", "https://github.com/MinorJerry/WebVoyager", "", ""),
    ]}});
    let file = h.join("rec.har");
    std::fs::write(&file, har.to_string()).unwrap();
    let out = run_cli(h, &["guard", "check", file.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (report["requests"].as_u64(), report["unparsed"].as_array().map(Vec::len)),
        (Some(5), Some(0))
    );
    let got: Vec<(String, String)> = report["refused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["url"].as_str().unwrap().to_string(), b["rule"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        got,
        [
            ("https://shop.example/checkout".to_string(), "purchase".to_string()),
            ("https://github.com/MinorJerry/WebVoyager".to_string(), "WebVoyager".to_string())
        ]
    );
    // The table form names the count; a host allowed is not judged.
    let out = run_cli(h, &["guard", "check", file.to_str().unwrap(), "--allow-writes", "shop.example"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("5 requests (3 writes); the guards would refuse 1; 0 could not be read"), "{text}");
    // Not a HAR file: said, exit 1.
    std::fs::write(&file, "not json").unwrap();
    let out = run_cli(h, &["guard", "check", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is not a HAR file"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `webfreeze guard check` on a HAR whose entries carry labels, WebSocket messages and requests it cannot
/// read (issue 60 parts 3 and 4): each row's verdict, the unread ones listed with their reason (not
/// skipped) and the exit status 1 after the report; without them, 0.
#[test]
fn guard_check_reads_labels_and_sockets_and_lists_what_it_cannot_read() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let form = |url: &str| {
        serde_json::json!({"request": {"method": "POST", "url": url, "headers": [],
            "postData": {"mimeType": "application/x-www-form-urlencoded", "text": "item=jar"}}, "response": {"status": 200}})
    };
    let labelled = |url: &str, label: &str| {
        let mut e = form(url);
        e["_webfreeze"] = serde_json::json!({"control": label});
        e
    };
    let header = |url: &str, label: &str| {
        let mut e = form(url);
        e["request"]["headers"] = serde_json::json!([{"name": "x-webfreeze-control", "value": label}]);
        e
    };
    let socket = |sent: &[&str]| {
        let msgs: Vec<serde_json::Value> = sent
            .iter()
            .map(|m| serde_json::json!({"type": "send", "time": 1.0, "opcode": 1, "data": m}))
            .collect();
        serde_json::json!({"request": {"method": "GET", "url": "wss://chat.example/graphql", "headers": []},
            "response": {"status": 101}, "_resourceType": "websocket", "_webSocketMessages": msgs})
    };
    // (entry, what guard check says of it: "pass", "refused RULE EVIDENCE" or "unread REASON")
    let rows: Vec<(serde_json::Value, &str)> = vec![
        // A write no rule names: the learned judge's to read (it reads `tx` with an item as an act).
        (form("https://shop.example/api/v2/tx"), "refused learned"),
        (
            labelled("https://shop.example/api/v2/tx?n=1", "Place order"),
            r#"refused purchase label "Place order""#,
        ),
        (header("https://shop.example/api/v2/tx?n=2", "Pay now"), r#"refused payment label "Pay now""#),
        (labelled("https://shop.example/search", "Search"), "pass"),
        (
            socket(&[
                r#"{"type":"connection_init"}"#,
                r#"{"id":"1","type":"subscribe","payload":{"query":"subscription { messageAdded { id } }"}}"#,
                r#"{"id":"2","type":"subscribe","payload":{"query":"mutation { createTweet(text: \"hi\") { id } }"}}"#,
            ]),
            "refused post graphql operation",
        ),
        (serde_json::json!({"request": {"url": "https://shop.example/"}}), "unread no method"),
        (
            serde_json::json!({"request": {"method": "POST", "url": "/api/v2/tx"}}),
            "unread the URL is not absolute (no host)",
        ),
        (serde_json::json!({"response": {"status": 200}}), "unread the entry has no request"),
    ];
    let har = |rows: &[(serde_json::Value, &str)]| {
        let entries: Vec<&serde_json::Value> = rows.iter().map(|r| &r.0).collect();
        serde_json::json!({"log": {"version": "1.2", "entries": entries}}).to_string()
    };
    let file = h.join("rec.har");
    std::fs::write(&file, har(&rows)).unwrap();
    let out = run_cli(h, &["guard", "check", file.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("3 of 8 requests could not be read"));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut got: Vec<String> = vec!["pass".to_string(); rows.len()];
    for b in report["refused"].as_array().unwrap() {
        let url = b["url"].as_str().unwrap();
        // A refused row is found by its URL (a socket's as the proxy sees it).
        let i = rows
            .iter()
            .position(|(e, _)| {
                e["request"]["url"].as_str().map(|u| u.replace("wss://", "https://")) == Some(url.into())
            })
            .unwrap_or_else(|| panic!("no row for {b}"));
        got[i] = match b["rule"].as_str().unwrap() {
            // The model's evidence is the features that weighed most: its weights', not this test's.
            "learned" => "refused learned".to_string(),
            rule => format!("refused {rule} {}", b["evidence"].as_str().unwrap()),
        };
    }
    for u in report["unparsed"].as_array().unwrap() {
        got[u["index"].as_u64().unwrap() as usize] = format!("unread {}", u["reason"].as_str().unwrap());
    }
    let want: Vec<&str> = rows.iter().map(|r| r.1).collect();
    assert_eq!(got, want);
    assert_eq!(report["websocket_messages"], 3);
    // The rules alone (`--no-learned-guard`): the write no rule names passes.
    let out = run_cli(h, &["guard", "check", file.to_str().unwrap(), "--json", "--no-learned-guard"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let refused: Vec<&str> =
        report["refused"].as_array().unwrap().iter().filter_map(|b| b["url"].as_str()).collect();
    assert!(!refused.contains(&"https://shop.example/api/v2/tx"), "{refused:?}");
    assert!(refused.contains(&"https://shop.example/api/v2/tx?n=1"), "{refused:?}");
    // The table lists what it could not read; a HAR it reads whole exits 0.
    let out = run_cli(h, &["guard", "check", file.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("8 requests (5 writes, 3 WebSocket messages sent); the guards would refuse 4; 3 could not be read"), "{text}");
    assert!(text.contains("| 6 | POST | /api/v2/tx | the URL is not absolute (no host) |"), "{text}");
    std::fs::write(&file, har(&rows[..5])).unwrap();
    let out = run_cli(h, &["guard", "check", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
