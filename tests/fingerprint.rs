//! Open-web recording as a browser would: through webfreeze, Chromium's upstream connection carries
//! Chromium's own TLS and HTTP/2 fingerprints (measured by a fingerprinting origin against a direct
//! Chromium in the same test), a non-browser client gets Chrome's, and a bot wall that checks them lets
//! the agent through, while with the mirroring off (or the automation disclosed) the wall answers and the
//! task ends `blocked` with its evidence, counted apart by `eval` and `compare`.

use std::path::Path;

use trajectory::Outcome;

use crate::proxy_chromium::spki_of;
use crate::support::*;

/// Chromium's own fingerprint, loading `path` directly from the origin.
fn direct(home: &Path, origin: &FingerprintOrigin, path: &str) -> serde_json::Value {
    let args = vec![
        format!("--host-resolver-rules=MAP {} {}", origin.name, origin.addr),
        "--ignore-certificate-errors".to_string(),
    ];
    let dom = chromium_dump(
        &home.join(format!("profile-direct{}", path.replace('/', "-"))),
        &format!("https://{}{path}", origin.name),
        &args,
    );
    assert!(dom.contains("Welcome to the shop"), "direct load: {dom}");
    origin.seen_for(path)
}

/// A real Chromium through the proxy at `wf` (its CA pinned); the origin's view of the request.
fn via(home: &Path, wf: &Webfreeze, origin: &FingerprintOrigin, path: &str) -> serde_json::Value {
    let args = vec![
        format!("--proxy-server=http://{}", wf.addr),
        format!("--ignore-certificate-errors-spki-list={}", spki_of(home)),
    ];
    let dom = chromium_dump(
        &home.join(format!("profile-via{}", path.replace('/', "-"))),
        &format!("https://{}{path}", origin.name),
        &args,
    );
    assert!(dom.contains("Welcome to the shop"), "load through webfreeze: {dom}\n{}", wf.stderr());
    origin.seen_for(path)
}

#[test]
fn chromium_through_webfreeze_presents_chromiums_own_tls_and_http2_fingerprints() {
    let home = tempfile::tempdir().unwrap();
    let origin = FingerprintOrigin::start(home.path(), "fp.test", None);
    let d = direct(home.path(), &origin, "/direct");
    assert!(d["tls"]["grease"].as_bool().unwrap(), "Chromium sends GREASE: {d}");
    assert!(d["h2"].as_str().unwrap().ends_with("|m,a,s,p"), "{d}");

    // Through webfreeze (BoringSSL, the default): field by field the same.
    let wf = Webfreeze::spawn_with(home.path(), &["proxy"], &origin.reach);
    let p = via(home.path(), &wf, &origin, "/proxied");
    for field in ["ja4", "ciphers", "extensions", "sigalgs", "sigalgs_grease", "alpn", "grease"] {
        assert_eq!(p["tls"][field], d["tls"][field], "TLS {field}: through webfreeze vs direct");
    }
    for field in ["h2", "headers_priority", "headers", "user_agent"] {
        assert_eq!(p[field], d[field], "{field}: through webfreeze vs direct");
    }

    // A client that is not a browser (Python's urllib over OpenSSL, HTTP/1.1) gets Chrome's profile.
    let ca = wf.ca_pem_path();
    let script = format!(
        "import ssl, urllib.request\n\
         ctx = ssl.create_default_context(cafile={ca:?})\n\
         h = urllib.request.ProxyHandler({{'https': 'http://{addr}'}})\n\
         o = urllib.request.build_opener(h, urllib.request.HTTPSHandler(context=ctx))\n\
         print(o.open('https://fp.test/python', timeout=20).status)\n",
        ca = ca.display().to_string(),
        addr = wf.addr
    );
    let out = std::process::Command::new(test_python()).arg("-c").arg(&script).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let py = origin.seen_for("/python");
    assert_eq!(py["tls"]["ja4"], d["tls"]["ja4"], "a non-browser client gets Chrome's ClientHello");
    assert_eq!(py["h2_settings"].as_str(), Some("1:65536;2:0;4:6291456;6:262144|15663105"), "{py}");
    assert_eq!(py["pseudo"], "m,a,s,p");
    drop(wf);

    // With rustls (no mirroring) the origin sees a different client: the comparison above can fail.
    let wf = Webfreeze::spawn_with(home.path(), &["proxy", "--upstream-tls", "rustls"], &origin.reach);
    let r = via(home.path(), &wf, &origin, "/rustls");
    assert_ne!(r["tls"]["ja4"], d["tls"]["ja4"], "rustls's handshake is not Chromium's");
    assert_ne!(r["h2_settings"], d["h2_settings"], "nor its SETTINGS");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_wall_lets_the_agent_through_and_a_walled_task_ends_blocked_counted_apart() {
    let home = tempfile::tempdir().unwrap();
    // What this machine's Chromium presents, measured now (the wall's expectation, as a real wall's).
    let probe = FingerprintOrigin::start(home.path(), "fp.test", None);
    let d = direct(home.path(), &probe, "/");
    drop(probe);
    let expect = serde_json::json!({"ja4": d["tls"]["ja4"], "h2": d["h2"]});
    let wall = FingerprintOrigin::start(home.path(), "fp.test", Some(&expect));

    let tasks = home.path().join("tasks.jsonl");
    std::fs::write(
        &tasks,
        r#"{"web_name": "FpShop", "id": "FpShop--0", "ques": "What does the page welcome you to?", "web": "https://fp.test/", "eval": {"must_include": ["shop"]}}"#,
    )
    .unwrap();
    let llm = FakeLlm::start(|_: &serde_json::Value| {
        Reply::Text("Thought: The page welcomes me.\nAction: ANSWER; the shop".into())
    })
    .await;
    let run = |out: &str, extra: &[&str]| {
        let args = RunArgs::new(&tasks, "record", &home.path().join(out))
            .settle_ms(100)
            .model(&llm.api_base())
            .args(extra)
            .args(&wall.reach);
        cli(home.path(), args.build(), vec![])
    };

    // Default: the wall sees Chromium (handshake, h2, User-Agent) and serves the page.
    let out = run("rec", &[]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = traj(&home.path().join("rec"), "FpShop--0");
    assert_eq!((t.outcome, t.answer.as_deref()), (Outcome::Answered, Some("the shop")), "{:?}", t.error);
    assert!(t.blocked.is_none());
    let ua = t.user_agent.clone().unwrap();
    assert!(ua.contains("Chrome/") && !ua.contains("Headless"), "{ua}");
    let seen = wall.seen_for("/");
    assert_eq!(seen["user_agent"].as_str(), Some(ua.as_str()));

    // Mirroring off, or the automation disclosed: the wall answers, the task ends blocked, with evidence.
    for (out_dir, flags) in
        [("walled", &["--upstream-tls", "rustls"][..]), ("disclosed", &["--disclose-automation"][..])]
    {
        let out = run(out_dir, flags).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let t = traj(&home.path().join(out_dir), "FpShop--0");
        assert_eq!(t.outcome, Outcome::Blocked, "{out_dir}: {:?}", t.error);
        let b = t.blocked.clone().unwrap();
        assert_eq!(
            (b.host.as_str(), b.status, b.marker.as_str()),
            ("fp.test", 403, "header cf-mitigated: challenge")
        );
        assert_eq!(t.steps.len(), 1, "stopped at the wall, before asking the model");
        let run_json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(home.path().join(out_dir).join("run.json")).unwrap())
                .unwrap();
        assert_eq!(run_json["tasks"]["FpShop--0"]["status"], "blocked");
    }
    let ua_disclosed =
        wall.seen().iter().rev().find_map(|v| v["user_agent"].as_str().map(str::to_string)).unwrap();
    assert!(ua_disclosed.contains("HeadlessChrome"), "{ua_disclosed}");

    // eval counts the blocked task apart; compare shows it per site.
    for dir in ["rec", "walled"] {
        let p = home.path().join(dir);
        let out =
            cli(home.path(), strs(&["eval", p.to_str().unwrap(), "--judge", "reference"]), vec![]).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let e = |dir: &str| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(home.path().join(dir).join("eval.json")).unwrap()).unwrap()
    };
    let (rec, walled) = (e("rec"), e("walled"));
    assert_eq!(
        (rec["overall"]["n"].as_u64(), rec["overall"]["success"].as_u64()),
        (Some(1), Some(1)),
        "{rec}"
    );
    assert_eq!(walled["blocked"], serde_json::json!(["FpShop--0"]), "{walled}");
    assert_eq!((walled["overall"]["n"].as_u64(), walled["overall"]["blocked"].as_u64()), (Some(0), Some(1)));
    assert_eq!(walled["sites"]["FpShop"]["blocked"], 1);
    let (a, b) = (home.path().join("rec"), home.path().join("walled"));
    let out = cli(home.path(), strs(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]), vec![]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("Blocked by the site") && text.contains("| FpShop | 0 | 1 |"), "{text}");
    assert!(text.contains("FpShop--0 in B: fp.test: header cf-mitigated: challenge"), "{text}");

    // The frozen wall replays as a wall: the task ends blocked again and the replay report names it.
    let rep = home.path().join("walled-replay");
    let policy = format!("trajectory:{}", b.display());
    let args = RunArgs::new(&tasks, "replay", &rep).opt("--policy", &policy).settle_ms(100);
    let out = cli(home.path(), args.build(), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = traj(&rep, "FpShop--0");
    assert_eq!(t.outcome, Outcome::Blocked, "{:?}", t.error);
    let walls = &t.proxy_report.as_ref().and_then(|r| r.replay()).expect("a replay report").walls;
    assert_eq!(walls[0].marker, "header cf-mitigated: challenge", "{walls:?}");
    assert_eq!(walls[0].url, "https://fp.test/");

    // A plain rerun keeps the blocked task; --retry-blocked re-records it, now through the wall.
    let out = run("walled", &["--upstream-tls", "rustls"]).await;
    assert!(out.status.success());
    assert_eq!(traj(&b, "FpShop--0").outcome, Outcome::Blocked);
    let out = run("walled", &["--retry-blocked"]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(traj(&b, "FpShop--0").outcome, Outcome::Answered);
    llm.check();
}
