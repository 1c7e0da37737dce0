//! `webfreeze snapshots ...` end to end through the binary: import a generated HAR, list, show, verify,
//! export and re-import, damage, rm, gc; and the errors users hit.

use crate::support::*;

fn har(n: usize) -> String {
    let entries: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            serde_json::json!({
                "startedDateTime": "2025-01-02T03:04:05.000Z",
                "time": 3.5,
                "request": {"method": "GET", "url": format!("https://site.test/page/{}?v={i}", i % 7), "httpVersion": "HTTP/2", "headers": []},
                "response": {"status": 200, "httpVersion": "HTTP/2",
                    "headers": [{"name": "content-type", "value": "text/html"}],
                    "content": {"size": 10, "mimeType": "text/html", "text": format!("<p>page {}</p>", i % 5)}},
            })
        })
        .collect();
    serde_json::json!({"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": entries}}).to_string()
}

fn ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn import_list_show_verify_export_rm_gc() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let file = h.join("site.har");
    std::fs::write(&file, har(40)).unwrap();
    let out =
        ok(&run_cli(h, &["snapshots", "import", file.to_str().unwrap(), "--snapshot", "site", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["entries"].as_u64(), v["imported"].as_u64(), v["with_body"].as_u64()),
        (Some(40), Some(40), Some(40))
    );

    let list: serde_json::Value =
        serde_json::from_str(&ok(&run_cli(h, &["snapshots", "list", "--json"]))).unwrap();
    assert_eq!(list[0]["name"], "site");
    assert_eq!(list[0]["state"], "imported");
    assert_eq!(list[0]["counts"]["exchanges"], 40);
    let table = ok(&run_cli(h, &["snapshots", "list"]));
    assert!(table.starts_with("NAME") && table.contains("site") && table.contains("imported"), "{table}");

    let show = ok(&run_cli(h, &["snapshots", "show", "site", "--limit", "3"]));
    assert!(show.contains("exchanges    40") && show.contains("https://site.test/page/0?v=0"), "{show}");
    assert!(show.contains("... 37 more"), "{show}");

    let verify = ok(&run_cli(h, &["snapshots", "verify"]));
    // 5 distinct bodies and the snapshot's search index (stored at import).
    assert!(verify.contains("6 blob(s)") && verify.trim_end().ends_with("ok"), "{verify}");

    let exported = h.join("out.har");
    ok(&run_cli(h, &["snapshots", "export", "site", "--format", "har", "--out", exported.to_str().unwrap()]));
    ok(&run_cli(h, &["snapshots", "import", exported.to_str().unwrap(), "--snapshot", "again"]));
    let a: serde_json::Value =
        serde_json::from_str(&ok(&run_cli(h, &["snapshots", "show", "site", "--json", "--limit", "100"])))
            .unwrap();
    let b: serde_json::Value =
        serde_json::from_str(&ok(&run_cli(h, &["snapshots", "show", "again", "--json", "--limit", "100"])))
            .unwrap();
    assert_eq!(a["exchanges"], b["exchanges"], "export -> import reproduces the exchanges");

    // The same through WARC (.warc.gz) and WACZ: every request key, status and body comes back (heads
    // differ: the export rewrites the framing headers for the decoded bodies).
    let essence = |v: &serde_json::Value| {
        let mut e: Vec<(String, u64, String)> = v["exchanges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                let body = x["response"]["body"]["hash"].as_str().unwrap_or("-").to_string();
                (x["key"].as_str().unwrap().to_string(), x["response"]["status"].as_u64().unwrap(), body)
            })
            .collect();
        e.sort();
        e
    };
    for (format, file) in [("warc", "out.warc.gz"), ("wacz", "out.wacz")] {
        let f = h.join(file);
        let said = ok(&run_cli(
            h,
            &["snapshots", "export", "site", "--format", format, "--out", f.to_str().unwrap()],
        ));
        // 40 exchanges, 5 distinct bodies: the repeats go out as revisit records.
        assert!(said.contains("5 responses, 35 revisits, 40 requests"), "{said}");
        let name = format!("from-{format}");
        let r: serde_json::Value = serde_json::from_str(&ok(&run_cli(
            h,
            &["snapshots", "import", f.to_str().unwrap(), "--snapshot", &name, "--json"],
        )))
        .unwrap();
        assert_eq!(
            (r["format"].as_str(), r["imported"].as_u64(), r["paired"].as_u64()),
            (Some(format), Some(40), Some(40)),
            "{r}"
        );
        let c: serde_json::Value =
            serde_json::from_str(&ok(&run_cli(h, &["snapshots", "show", &name, "--json", "--limit", "100"])))
                .unwrap();
        assert_eq!(essence(&a), essence(&c), "{format}");
        ok(&run_cli(h, &["snapshots", "rm", &name]));
    }

    // rm then gc: bodies are shared, so none is freed until both are gone; each removed snapshot's own
    // search index (site, and the two re-imports removed above) goes at once.
    ok(&run_cli(h, &["snapshots", "rm", "site"]));
    let gc = ok(&run_cli(h, &["snapshots", "gc", "--json"]));
    assert_eq!(serde_json::from_str::<serde_json::Value>(&gc).unwrap()["blobs_deleted"], 3, "{gc}");
    ok(&run_cli(h, &["snapshots", "rm", "again"]));
    let gc: serde_json::Value =
        serde_json::from_str(&ok(&run_cli(h, &["snapshots", "gc", "--json"]))).unwrap();
    assert_eq!(gc["blobs_deleted"], 5 + 1, "the bodies and again's index: {gc}");
    assert!(gc["bytes_freed"].as_u64().unwrap() > 0);
}

#[test]
fn errors_name_the_thing_and_say_what_to_do() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let file = h.join("x.har");
    std::fs::write(&file, har(2)).unwrap();
    ok(&run_cli(h, &["snapshots", "import", file.to_str().unwrap(), "--snapshot", "x"]));
    for (args, code, needle) in [
        (vec!["snapshots", "show", "nope"], 1, "no snapshot named \"nope\""),
        (vec!["snapshots", "import", file.to_str().unwrap(), "--snapshot", "x"], 1, "exists already"),
        (vec!["snapshots", "import", "/does/not/exist.har", "--snapshot", "y"], 1, "/does/not/exist.har"),
        (vec!["snapshots", "rm", "nope"], 1, "snapshots list"),
        (vec!["snapshots", "frobnicate"], 2, "unrecognized subcommand"),
        (vec!["snapshots", "import", file.to_str().unwrap()], 2, "--snapshot"),
    ] {
        let out = run_cli(h, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // A WARC is recognised by content, not name; one whose only record is damaged imports nothing, says
    // where the damage is, and leaves no snapshot.
    let warc = h.join("capture.har");
    std::fs::write(&warc, b"WARC/1.0\r\nWARC-Type: warcinfo\r\n\r\n").unwrap();
    let out = run_cli(h, &["snapshots", "import", warc.to_str().unwrap(), "--snapshot", "w"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("no exchanges") && err.contains("offset 0") && err.contains("Content-Length"),
        "{err}"
    );
    assert!(!run_cli(h, &["snapshots", "show", "w"]).status.success(), "no snapshot w left behind");
    // A truncated HAR fails and leaves no snapshot behind.
    let cut = h.join("cut.har");
    let full = har(10);
    std::fs::write(&cut, &full[..full.len() / 2]).unwrap();
    let out = run_cli(h, &["snapshots", "import", cut.to_str().unwrap(), "--snapshot", "cut"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cut.har"));
    let list = ok(&run_cli(h, &["snapshots", "list"]));
    assert!(!list.contains("cut"), "{list}");
}

#[test]
fn verify_exits_nonzero_on_damage() {
    let home = tempfile::tempdir().unwrap();
    let store_dir = home.path().join("store");
    {
        let s = snapshots::Store::open(&store_dir).unwrap();
        archive::har::import(
            &s,
            har(3).as_bytes(),
            &archive::ImportOptions { snapshot: "d".into(), source_file: "mem".into(), now_ms: 1 },
            |_| {},
        )
        .unwrap();
        let m = s.manifest("d").unwrap();
        let x = s.exchanges(&m).next().unwrap().unwrap();
        let hash = x.response.body.unwrap().hash;
        let mut raw = s.raw_blob_for_tests(&hash).unwrap().unwrap();
        *raw.last_mut().unwrap() ^= 1;
        s.damage_blob_for_tests(&hash, &raw).unwrap();
    }
    let out = run_cli(home.path(), &["snapshots", "verify", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["issues"][0]["kind"], "corrupt_blob");
}

/// Issue 11: a store whose index no longer resolves (exchange records gone, manifest intact) still lists
/// the snapshot, but replay refuses to serve it (instead of answering 404 to every page) and says to
/// run `snapshots verify`.
#[test]
fn replay_refuses_a_snapshot_whose_index_no_longer_resolves() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let file = h.join("site.har");
    std::fs::write(&file, har(12)).unwrap();
    ok(&run_cli(h, &["snapshots", "import", file.to_str().unwrap(), "--snapshot", "site"]));
    {
        let store = snapshots::Store::open(&h.join("store")).unwrap();
        let m = store.manifest("site").unwrap();
        store.check_snapshot(&m).unwrap();
        store.drop_exchange_records_for_tests(&m).unwrap();
        assert!(matches!(store.check_snapshot(&m), Err(snapshots::StoreError::Damaged { listed: 12, .. })));
    }
    let list = ok(&run_cli(h, &["snapshots", "list"]));
    assert!(list.contains("site"), "{list}");
    let out = run_cli(h, &["replay", "--snapshot", "site", "--listen", "127.0.0.1:0"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("damaged") && err.contains("snapshots verify site"), "{err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("listening on"), "it must not start serving");
}

#[test]
fn a_replay_refused_for_its_layers_records_no_misses_snapshot() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let file = h.join("site.har");
    std::fs::write(&file, har(3)).unwrap();
    ok(&run_cli(h, &["snapshots", "import", file.to_str().unwrap(), "--snapshot", "site"]));
    // `site` is no RUN/<task> snapshot, so it has no site to share: refused before its misses are set up.
    let out = run_cli(
        h,
        &[
            "replay",
            "--snapshot",
            "site",
            "--frozen-web",
            "site",
            "--on-miss",
            "record",
            "--listen",
            "127.0.0.1:0",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is not a RUN/<task> snapshot"), "{err}");
    let list = ok(&run_cli(h, &["snapshots", "list"]));
    assert!(!list.contains("site/misses"), "a refused replay left a misses snapshot: {list}");
}

#[test]
fn sharding_and_limit_options_are_checked_before_anything_runs() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let tasks = h.join("t.jsonl");
    std::fs::write(
        &tasks,
        "{\"web_name\":\"S\",\"id\":\"S--1\",\"ques\":\"q\",\"web\":\"https://s.test/\"}\n",
    )
    .unwrap();
    let t = tasks.to_str().unwrap();
    let never = h.join("never");
    let x = h.join("x");
    let (never_s, x_s) = (never.to_str().unwrap(), x.to_str().unwrap());
    let run = |extra: &[&'static str]| {
        let mut a = vec!["run", "--tasks", t, "--mode", "live", "--out", never_s];
        a.extend_from_slice(extra);
        a
    };
    let not_a_run = h.join("not-a-run");
    std::fs::create_dir_all(&not_a_run).unwrap();
    for (args, code, needle) in [
        (run(&["--shard", "3/3"]), 2, "below N"),
        (run(&["--shard", "1"]), 2, "expected I/N"),
        (run(&["--jobs", "0"]), 2, "--jobs"),
        (run(&["--jobs", "many"]), 2, "auto"),
        (run(&["--task-timeout", "0"]), 2, "--task-timeout"),
        (vec!["merge", "--out", x_s], 2, "SHARD_RUN"),
        (vec!["merge", not_a_run.to_str().unwrap(), "--out", x_s], 1, "no run.json"),
    ] {
        let out = run_cli(h, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    assert!(!never.exists() && !x.exists(), "nothing was written");
}

/// Issue 22: `snapshots diff` between two recordings of a site, as text and JSON: a page whose price
/// changed (with the changed line), a page added, a script changed, the rest unchanged.
/// A HAR of GETs: (URL, content type, body).
fn har_of(entries: &[(&str, &str, &str)]) -> String {
    let entries: Vec<serde_json::Value> = entries
        .iter()
        .map(|(url, ct, text)| {
            serde_json::json!({
                "startedDateTime": "2025-01-02T03:04:05.000Z", "time": 1,
                "request": {"method": "GET", "url": url, "httpVersion": "HTTP/1.1", "headers": []},
                "response": {"status": 200, "httpVersion": "HTTP/1.1", "headers": [{"name": "content-type", "value": ct}],
                    "content": {"size": text.len(), "mimeType": ct, "text": text}},
            })
        })
        .collect();
    serde_json::json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": entries}})
        .to_string()
}

#[test]
fn diff_names_what_changed_between_two_recordings() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let har = har_of;
    let monday = har(&[
        ("https://shop.test/", "text/html", "<h1>Kettles</h1><p>Steel kettle</p><p>Price: $24.00</p>"),
        ("https://shop.test/app.js", "text/javascript", "console.log(1)"),
        ("https://shop.test/about", "text/html", "<p>About us</p>"),
    ]);
    let tuesday = har(&[
        ("https://shop.test/", "text/html", "<h1>Kettles</h1><p>Steel kettle</p><p>Price: $26.50</p>"),
        ("https://shop.test/app.js", "text/javascript", "console.log(2)"),
        ("https://shop.test/about", "text/html", "<p>About us</p>"),
        ("https://shop.test/sale", "text/html", "<p>Sale!</p>"),
    ]);
    for (name, text) in [("mon", monday), ("tue", tuesday)] {
        let f = h.join(format!("{name}.har"));
        std::fs::write(&f, text).unwrap();
        ok(&run_cli(h, &["snapshots", "import", f.to_str().unwrap(), "--snapshot", name]));
    }
    let text = ok(&run_cli(h, &["snapshots", "diff", "mon", "tue"]));
    for want in [
        "documents 1 changed, 1 added, 0 removed; resources 1 changed, 0 added, 0 removed; 1 unchanged",
        "changed document GET https://shop.test/",
        "    - Price: $24.00",
        "    + Price: $26.50",
        "added document GET https://shop.test/sale",
        "changed resource GET https://shop.test/app.js",
    ] {
        assert!(text.contains(want), "{want:?} in:\n{text}");
    }
    assert!(!text.contains("Steel kettle"), "unchanged lines are not shown:\n{text}");
    let j: serde_json::Value =
        serde_json::from_str(&ok(&run_cli(h, &["snapshots", "diff", "mon", "tue", "--json"]))).unwrap();
    let home_page = &j["documents"][0];
    assert_eq!(home_page["kind"], "changed");
    assert_eq!(home_page["text_changes"], serde_json::json!(["- Price: $24.00", "+ Price: $26.50"]));
    assert_eq!(j["unchanged"], 1);
    let page = h.join("diff.html");
    ok(&run_cli(h, &["snapshots", "diff", "mon", "tue", "--html", page.to_str().unwrap()]));
    let page = std::fs::read_to_string(&page).unwrap();
    for want in [
        "documents 1 changed, 1 added, 0 removed; resources 1 changed, 0 added, 0 removed; 1 unchanged",
        "<span class=\"del\">- Price: $24.00</span>",
        "<span class=\"add\">+ Price: $26.50</span>",
        "added document <code>GET https://shop.test/sale</code>",
        "changed resource <code>GET https://shop.test/app.js</code>",
    ] {
        assert!(page.contains(want), "{want:?} in the HTML page:\n{page}");
    }
    let same = ok(&run_cli(h, &["snapshots", "diff", "mon", "mon"]));
    assert!(
        same.contains(
            "documents 0 changed, 0 added, 0 removed; resources 0 changed, 0 added, 0 removed; 3 unchanged"
        ),
        "{same}"
    );
    let missing = run_cli(h, &["snapshots", "diff", "mon", "wed"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("wed"));
}

/// `snapshots merge --runs A B --into U`: every task either recording has becomes `U/TASK`, merged task by
/// task in the order given (a task one of them lacks is copied); nested snapshots (a replay's
/// `RUN/TASK/misses`) are left alone; a rerun skips what is merged; an existing destination that another
/// merge made, an unknown recording or a snapshot name where a recording is meant is an error before
/// anything is written.
#[test]
fn merge_runs_unions_whole_recordings_task_by_task() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let page = |url: &'static str, text: &'static str| (url, "text/html", text);
    for (name, entries) in [
        ("a/t1", vec![page("https://s.test/1", "<p>a one</p>"), page("https://s.test/2", "<p>a two</p>")]),
        ("a/t2", vec![page("https://s.test/9", "<p>a nine</p>")]),
        ("a/t1/misses", vec![page("https://s.test/7", "<p>miss</p>")]),
        ("b/t1", vec![page("https://s.test/1", "<p>b one</p>"), page("https://s.test/3", "<p>b three</p>")]),
        ("b/t3", vec![page("https://s.test/5", "<p>b five</p>")]),
    ] {
        let f = h.join(format!("{}.har", name.replace('/', "_")));
        std::fs::write(&f, har_of(&entries)).unwrap();
        ok(&run_cli(h, &["snapshots", "import", f.to_str().unwrap(), "--snapshot", name]));
    }
    let stderr = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    let first = run_cli(h, &["snapshots", "merge", "--runs", "a", "b", "--into", "u"]);
    ok(&first);
    let log = stderr(&first);
    for want in [
        "[1/3] u/t1: 2 of 2 recording(s), 4 exchanges",
        "[2/3] u/t2: 1 of 2 recording(s), 1 exchanges",
        "[3/3] u/t3: 1 of 2 recording(s), 1 exchanges",
        "3 task(s) (3 merged now, 0 before)",
    ] {
        assert!(log.contains(want), "{want:?} in:\n{log}");
    }
    let urls = |name: &str| -> Vec<String> {
        let v: serde_json::Value =
            serde_json::from_str(&ok(&run_cli(h, &["snapshots", "show", name, "--json", "--limit", "100"])))
                .unwrap();
        v["exchanges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["request"]["url"].as_str().unwrap().into())
            .collect()
    };
    assert_eq!(
        urls("u/t1"),
        ["https://s.test/1", "https://s.test/2", "https://s.test/1", "https://s.test/3"]
    );
    assert_eq!(urls("u/t3"), ["https://s.test/5"]);
    let list = ok(&run_cli(h, &["snapshots", "list"]));
    assert!(!list.contains("u/t1/misses"), "nested snapshots are not merged:\n{list}");

    // A rerun (as after an interruption) skips what is merged.
    let again = run_cli(h, &["snapshots", "merge", "--runs", "a", "b", "--into", "u"]);
    ok(&again);
    assert!(stderr(&again).contains("3 task(s) (0 merged now, 3 before)"), "{}", stderr(&again));

    // Errors, each before anything is written.
    for (args, says) in [
        (vec!["--runs", "b", "a", "--into", "u"], "exists already"),
        (vec!["--runs", "a", "nope", "--into", "v"], "no recording \"nope\""),
        (vec!["--runs", "a/t1", "--into", "v"], "recording names"),
        (vec!["--runs", "a", "--into", "v/x"], "names the new recording"),
    ] {
        let mut all = vec!["snapshots", "merge"];
        all.extend(args.iter().copied());
        let out = run_cli(h, &all);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {says:?} in {}", stderr(&out));
    }
    assert_eq!(urls("u/t1")[0], "https://s.test/1");
    // Names only: the SOURCE column holds temporary paths, which may contain "v/" themselves.
    let list = ok(&run_cli(h, &["snapshots", "list"]));
    assert!(!list.lines().any(|l| l.starts_with("v/")), "nothing written by the refused merges:\n{list}");
}
