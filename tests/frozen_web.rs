//! Issue 34: the frozen web serves runs that did not record it. Real Chromium, the demo sites on loopback,
//! a local fake model.
//!
//! Size: one scenario per part of the frozen web (site union, exploration, frozen search, fork, the
//! coverage figures), each a whole record-then-replay run sharing the reply helpers at the top.

use std::path::Path;

use http::Request;

use crate::support::*;

/// Replies by turn: the `n`-th assistant turn gets `replies[n]` (the last repeats).
fn by_turn(body: &serde_json::Value, replies: &[&str]) -> String {
    let turn = body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").count();
    replies[turn.min(replies.len() - 1)].to_string()
}

/// The model of a recording of DemoShop--1 and DemoShop--2 that take different paths: the first opens
/// the first product, the second the second.
async fn two_paths_agent() -> FakeLlm {
    FakeLlm::start(|body: &serde_json::Value| {
        let cheapest = body["messages"].to_string().contains("cheapest");
        Reply::Text(by_turn(
            body,
            if cheapest {
                &["Thought: first.\nAction: Click [3]", "Thought: done.\nAction: ANSWER; Glass Jar"]
            } else {
                &["Thought: second.\nAction: Click [4]", "Thought: done.\nAction: ANSWER; Green Teapot"]
            },
        ))
    })
    .await
}

/// The site as the unit of the frozen web: two tasks on the demo shop recorded separately in one run (one
/// opens the cheapest product, the other the one on promotion). A different agent on the first task opens
/// the product only the second task saw: with the default `--frozen-web site` its page is served from the
/// union layer, reported as such at its step, in its coverage and by `eval`, never as exact; with
/// `--frozen-web task` the same run misses it and is off the frozen web.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn site_union_serves_a_page_only_another_task_recorded() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let mut sites = DemoSites::start(h).await;
    let tasks = h.join("demo_tasks.jsonl");
    std::fs::write(&tasks, demo::TASKS_JSONL).unwrap();
    // The recording: DemoShop--1 opens the first product, DemoShop--2 the second.
    let recording_agent = two_paths_agent().await;
    // Another model on DemoShop--1: it opens the second product.
    let other_agent = FakeLlm::start(|body: &serde_json::Value| {
        Reply::Text(by_turn(
            body,
            &["Thought: second.\nAction: Click [4]", "Thought: done.\nAction: ANSWER; no"],
        ))
    })
    .await;
    let run = |mode: &str, out: &Path, llm: &FakeLlm, extra: &[&str]| {
        RunArgs::new(&tasks, mode, out).settle_ms(200).model(&llm.api_base()).args(extra)
    };
    let rec = h.join("rec");
    let args = run("record", &rec, &recording_agent, &["--task-filter", "DemoShop--[12]"])
        .args(&sites.reach)
        .build();
    let out = cli(h, args, vec![]).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    let (t1, t2) = (traj(&rec, "DemoShop--1"), traj(&rec, "DemoShop--2"));
    assert_ne!(t1.steps[0].url_after, t2.steps[0].url_after, "the two tasks took different paths");
    let other_page = t2.steps[0].url_after.clone();
    sites.stop();

    // Site union (the default): the page only DemoShop--2 recorded is served, from the union layer.
    let on_site = h.join("other-on-site");
    let replay = ["--snapshots", "rec", "--task-filter", "DemoShop--1$"];
    let out = cli(h, run("replay", &on_site, &other_agent, &replay).build(), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = traj(&on_site, "DemoShop--1");
    assert_eq!(t.steps[0].url_after, other_page, "the agent reached the other task's page");
    let cov = t.coverage.clone().expect("a replayed task has its coverage");
    assert!(!cov.off_snapshot && cov.documents_missed == 0, "{cov:?}: {:?}", t.steps[0].proxy.miss_urls);
    assert_eq!(cov.steps_site_union, vec![1], "{cov:?}");
    let step = &t.steps[0].proxy;
    assert!(step.site_union > 0, "{step:?}");
    assert!(
        step.site_union_urls.iter().any(|u| u.starts_with(&other_page) && u.ends_with("<- rec/DemoShop--2")),
        "{step:?}"
    );
    let out = run_cli(h, &["eval", on_site.to_str().unwrap(), "--tasks", tasks.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        stdout.contains("Served beyond their own snapshot") && stdout.contains("DemoShop--1 (site-union: "),
        "{stdout}"
    );
    assert!(stdout.contains(" at step 1"), "{stdout}");
    assert!(!stdout.contains("Off the frozen web"), "{stdout}");

    // The task's own snapshot only: the same page is a miss, and the task is off the frozen web.
    let on_task = h.join("other-on-task");
    let args = run("replay", &on_task, &other_agent, &replay).opt("--frozen-web", "task");
    let out = cli(h, args.build(), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = traj(&on_task, "DemoShop--1");
    let cov = t.coverage.clone().unwrap();
    assert!(cov.off_snapshot && cov.steps_document_missed == vec![1], "{cov:?}");
    assert!(cov.steps_site_union.is_empty() && cov.site_union == 0, "{cov:?}");
    assert!(
        t.steps[0].proxy.miss_urls.iter().any(|u| u == &format!("GET {other_page}")),
        "{:?}",
        t.steps[0].proxy
    );
    // Its run.json keeps the proxy half, --ws-pacing included (issue 62) ...
    let rf: serde_json::Value =
        serde_json::from_slice(&std::fs::read(on_task.join("run.json")).unwrap()).unwrap();
    assert_eq!(
        (&rf["config"]["frozen_web"], &rf["config"]["search"], &rf["config"]["ws_pacing"]),
        (&serde_json::json!("task"), &serde_json::json!("fallback"), &serde_json::json!("recorded")),
        "{rf}"
    );
    // ... and a re-execution of it, given no --frozen-web, serves what it served: the task's snapshot only.
    let again = h.join("other-on-task-again");
    let args = RunArgs::new(&tasks, "replay", &again)
        .settle_ms(200)
        .opt("--policy", format!("trajectory:{}", on_task.display()))
        .args(replay);
    let out = cli(h, args.build(), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cov = traj(&again, "DemoShop--1").coverage.unwrap();
    assert!(cov.off_snapshot && cov.steps_site_union.is_empty(), "{cov:?}");
    // compare says, per task, which layer served a run beyond its own snapshot.
    let out = run_cli(h, &["eval", on_task.to_str().unwrap(), "--tasks", tasks.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run_cli(h, &["compare", on_site.to_str().unwrap(), on_task.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("Served beyond the task's own snapshot"), "{stdout}");
    assert!(stdout.contains("- DemoShop--1 in A: site-union: ") && stdout.contains("(step 1)"), "{stdout}");
    assert!(!stdout.contains("DemoShop--1 in B:"), "{stdout}");
    recording_agent.check();
    other_agent.check();
}

/// Fork at step N: a 6-step recorded run forked at 3 re-executes steps 1-3 as recorded (same URL and
/// screenshot), then the model decides from step 4, having received steps 1-3 as its own history (their
/// observations and the recorded replies); the trajectory says where it forked. A fork past a task's
/// recorded steps, or without a recorded run, is refused before any browser starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_run_forked_at_step_3_hands_the_model_its_history() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let mut sites = DemoSites::start(h).await;
    let tasks = h.join("demo_tasks.jsonl");
    std::fs::write(&tasks, demo::TASKS_JSONL).unwrap();
    const RECORDED: [&str; 6] = [
        "Thought: one.\nAction: Click [3]",
        "Thought: two.\nAction: GoBack",
        "Thought: three.\nAction: Click [4]",
        "Thought: four.\nAction: GoBack",
        "Thought: five.\nAction: Scroll [WINDOW]; down",
        "Thought: six.\nAction: ANSWER; Glass Jar",
    ];
    let recorder = FakeLlm::start(|body: &serde_json::Value| Reply::Text(by_turn(body, &RECORDED))).await;
    let model = FakeLlm::start(|body: &serde_json::Value| {
        // Asked first with the three re-executed steps as its history: its fourth turn.
        let (mine, done) =
            ("Thought: mine.\nAction: Scroll [WINDOW]; down", "Thought: done.\nAction: ANSWER; forked");
        Reply::Text(by_turn(body, &["", "", "", mine, done]))
    })
    .await;
    let rec = h.join("rec");
    let args = RunArgs::new(&tasks, "record", &rec)
        .filter("DemoShop--1$")
        .settle_ms(200)
        .model(&recorder.api_base())
        .args(&sites.reach);
    let out = cli(h, args.build(), vec![]).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    let original = traj(&rec, "DemoShop--1");
    assert_eq!(original.steps.len(), 6, "{:?}", original.error);
    sites.stop();

    let fork = |out: &Path, at: &str, policy: &str| {
        RunArgs::new(&tasks, "replay", out)
            .filter("DemoShop--1$")
            .opt("--policy", policy)
            .opt("--fork-at", at)
            .model(&model.api_base())
            .build()
    };
    let policy = format!("trajectory:{}", rec.display());
    let forked = h.join("forked");
    let out = cli(h, fork(&forked, "3", &policy), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = traj(&forked, "DemoShop--1");
    assert_eq!(t.forked, Some(trajectory::Fork { run: rec.display().to_string(), at: 3 }));
    assert!(t.policy.starts_with("fork:") && t.policy.contains("@3+llm:"), "{}", t.policy);
    assert_eq!(t.steps.len(), 5, "{:?}", t.error);
    for (s, o) in t.steps.iter().zip(&original.steps).take(3) {
        assert_eq!(s.raw_reply, o.raw_reply, "step {}", s.n);
        assert_eq!(s.url_before, o.url_before, "step {}", s.n);
        let r = s.reproduced.as_ref().unwrap_or_else(|| panic!("step {} was not checked", s.n));
        assert!(r.url && r.screenshot, "step {}: {r:?}", s.n);
    }
    assert_eq!(t.steps[3].raw_reply, "Thought: mine.\nAction: Scroll [WINDOW]; down");
    assert!(t.steps[3].reproduced.is_none(), "the model's steps are its own");
    assert_eq!(t.answer.as_deref(), Some("forked"));
    // The model was asked twice (steps 4 and 5), first with steps 1-3 as its history.
    let chats =
        || model.requests().into_iter().filter(|r| r.body.get("messages").is_some()).collect::<Vec<_>>();
    let asked = chats();
    assert_eq!(asked.len(), 2);
    let msgs = asked[0].body["messages"].as_array().unwrap();
    let replies: Vec<&str> =
        msgs.iter().filter(|m| m["role"] == "assistant").map(|m| m["content"].as_str().unwrap()).collect();
    assert_eq!(replies, RECORDED[..3]);
    assert_eq!(msgs.iter().filter(|m| m["role"] == "user").count(), 4, "steps 1-3 and step 4's observation");

    // Bad input: past the recorded steps; without a recorded run.
    for (at, policy, says) in
        [("7", policy.as_str(), "(6 step(s))"), ("2", "llm", "use it with --policy trajectory:RUN_DIR")]
    {
        let out = cli(h, fork(&h.join(format!("bad-{at}")), at, policy), vec![]).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("--fork-at") && stderr.contains(says), "{stderr}");
    }
    assert_eq!(chats().len(), 2, "no model call for refused forks");
    recorder.check();
    model.check();
}

/// The frozen search engine in a real run: a task recorded without any search is replayed by an agent that
/// searches (WebVoyager's `Google` action, then typing a query): the search page and its results come from
/// the frozen search engine over the site's recorded pages, the result it clicks replays (from the site
/// union), and the steps say so; with `--search off` the search is a miss.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unrecorded_search_is_answered_from_the_recorded_pages() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let mut sites = DemoSites::start(h).await;
    let tasks = h.join("demo_tasks.jsonl");
    std::fs::write(&tasks, demo::TASKS_JSONL).unwrap();
    let recording_agent = two_paths_agent().await;
    let searcher = FakeLlm::start(|body: &serde_json::Value| {
        Reply::Text(by_turn(
            body,
            &[
                "Thought: search.\nAction: Google",
                "Thought: type.\nAction: Type [0]; red mug",
                "Thought: open the first result.\nAction: Click [2]",
                "Thought: done.\nAction: ANSWER; Red Mug",
            ],
        ))
    })
    .await;
    let rec = h.join("rec");
    let args = RunArgs::new(&tasks, "record", &rec)
        .filter("DemoShop--[12]")
        .settle_ms(200)
        .model(&recording_agent.api_base())
        .args(&sites.reach);
    let out = cli(h, args.build(), vec![]).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    let other_page = traj(&rec, "DemoShop--2").steps[0].url_after.clone();
    assert!(other_page.ends_with("/product/red-mug"), "{other_page}");
    sites.stop();

    let replay = |out: &Path, search: &str| {
        RunArgs::new(&tasks, "replay", out)
            .filter("DemoShop--1$")
            .opt("--snapshots", "rec")
            .opt("--search", search)
            .settle_ms(200)
            .model(&searcher.api_base())
            .build()
    };
    let found = h.join("found");
    let out = cli(h, replay(&found, "fallback"), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = traj(&found, "DemoShop--1");
    let urls: Vec<&str> = t.steps.iter().map(|s| s.url_after.as_str()).collect();
    assert_eq!(t.steps.len(), 4, "{urls:?} {:?}", t.error);
    assert_eq!(urls[0], "https://www.google.com/");
    assert!(urls[1].starts_with("https://www.google.com/search?q=red+mug"), "{urls:?}");
    assert_eq!(urls[2], other_page, "the first result is the page the other task recorded");
    assert!(
        t.steps[0].proxy.frozen_search > 0 && t.steps[1].proxy.frozen_search > 0,
        "{:?}",
        t.steps[1].proxy
    );
    assert!(t.steps[2].proxy.site_union > 0, "{:?}", t.steps[2].proxy);
    let cov = t.coverage.clone().unwrap();
    assert!(!cov.off_snapshot && cov.frozen_search >= 2, "{cov:?}");
    let results = t.steps[2].elements.clone();
    assert!(results.contains("Red Mug"), "the results page listed the mug: {results}");

    // Search off: the search engine's page is a miss.
    let missed = h.join("missed");
    let out = cli(h, replay(&missed, "off"), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = traj(&missed, "DemoShop--1");
    assert!(
        t.steps[0].proxy.miss_urls.iter().any(|u| u == "GET https://www.google.com/"),
        "{:?}",
        t.steps[0].proxy
    );
    assert!(t.coverage.unwrap().off_snapshot);
    recording_agent.check();
    searcher.check();
}

/// The documents (GET, HTML) and the methods a snapshot holds.
fn documents_and_methods(store_dir: &Path, name: &str) -> (Vec<String>, Vec<String>) {
    let store = snapshots::Store::open_read_only(store_dir).unwrap();
    let m = store.manifest(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    let (mut docs, mut methods) = (Vec::new(), Vec::new());
    for x in store.exchanges(&m) {
        let x = x.unwrap();
        methods.push(x.request.method.clone());
        if x.response
            .headers
            .iter()
            .any(|h| h.name.eq_ignore_ascii_case("content-type") && h.value.contains("text/html"))
        {
            docs.push(x.request.url.clone());
        }
    }
    (docs, methods)
}

/// Exploration while recording: `--explore` opens the links the agent could have followed into the task's
/// exploration layer (links only: the shop's add-to-cart form is never sent); a second agent that follows a
/// link the first never clicked replays with no document miss, answered by the `explore` layer; the
/// recorded path replays the same with and without that layer; the per-host budget holds; a budget of 0 and
/// exploration outside record mode are refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exploration_records_the_pages_an_agent_could_have_reached() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let mut sites = DemoSites::start(h).await;
    let tasks = h.join("demo_tasks.jsonl");
    std::fs::write(&tasks, demo::TASKS_JSONL).unwrap();
    let first = FakeLlm::start(|body: &serde_json::Value| {
        Reply::Text(by_turn(
            body,
            &["Thought: first.\nAction: Click [3]", "Thought: done.\nAction: ANSWER; Glass Jar"],
        ))
    })
    .await;
    let second = FakeLlm::start(|body: &serde_json::Value| {
        Reply::Text(by_turn(
            body,
            &["Thought: second.\nAction: Click [4]", "Thought: done.\nAction: ANSWER; no"],
        ))
    })
    .await;
    let record = |out: &Path, extra: &[&str]| {
        RunArgs::new(&tasks, "record", out)
            .filter("DemoShop--1$")
            .settle_ms(200)
            .args(["--explore"])
            .model(&first.api_base())
            .args(extra)
            .args(&sites.reach)
            .build()
    };
    // Bad input first: nothing runs.
    for (args, says) in [
        (record(&h.join("bad"), &["--explore-host-budget", "0"]), "--explore-host-budget 0"),
        (
            {
                let mut a = record(&h.join("bad2"), &[]);
                let i = a.iter().position(|x| x == "record").unwrap();
                a[i] = "live".into();
                a
            },
            "--mode record",
        ),
    ] {
        let out = cli(h, args, vec![]).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
    let rec = h.join("rec");
    let out = cli(h, record(&rec, &[]), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = traj(&rec, "DemoShop--1");
    let ex = t.exploration.clone().expect("the trajectory says what exploration did");
    assert!(ex.pages >= 5 && ex.failed == 0, "{ex:?}");
    let store_dir = h.join("store");
    let (own_docs, _) = documents_and_methods(&store_dir, "rec/DemoShop--1");
    let (explored, methods) = documents_and_methods(&store_dir, "rec/DemoShop--1/explore");
    let products =
        |docs: &[String]| docs.iter().filter(|u| u.contains("/product/")).cloned().collect::<Vec<_>>();
    assert!(products(&explored).len() >= 5, "{explored:?}");
    assert_eq!(
        products(&own_docs),
        [t.steps[0].url_after.clone()],
        "exploration stays out of the path's own snapshot"
    );
    assert!(methods.iter().all(|m| m == "GET"), "links only, never the add-to-cart form: {methods:?}");

    // Budget: 2 pages per host.
    let small = h.join("small");
    let out = cli(h, record(&small, &["--explore-host-budget", "2"]), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ex = traj(&small, "DemoShop--1").exploration.unwrap();
    assert_eq!(ex.pages, 2, "{ex:?}");
    assert!(ex.skipped_budget > 0, "{ex:?}");
    sites.stop();

    // A second agent off the recorded path: served by the exploration layer, nothing missed.
    let other = h.join("other");
    let a = RunArgs::new(&tasks, "replay", &other)
        .filter("DemoShop--1$")
        .opt("--snapshots", "rec")
        .opt("--frozen-web", "task")
        .settle_ms(200)
        .model(&second.api_base());
    let out = cli(h, a.build(), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = traj(&other, "DemoShop--1");
    let second_product = t.steps[0].url_after.clone();
    assert!(explored.contains(&second_product) && !own_docs.contains(&second_product), "{second_product}");
    let cov = t.coverage.clone().unwrap();
    assert!(!cov.off_snapshot && cov.documents_missed == 0, "{cov:?} {:?}", t.steps[0].proxy.miss_urls);
    assert!(t.steps[0].proxy.explore > 0 && cov.explore > 0, "{:?}", t.steps[0].proxy);

    // The recorded path replays the same with and without the exploration layer.
    let rerun = |out: &Path| {
        RunArgs::new(&tasks, "replay", out)
            .filter("DemoShop--1$")
            .opt("--policy", format!("trajectory:{}", rec.display()))
            .build()
    };
    let with = h.join("with-explore");
    let out = cli(h, rerun(&with), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run_cli(h, &["snapshots", "rm", "rec/DemoShop--1/explore"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let without = h.join("without-explore");
    let out = cli(h, rerun(&without), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (a, b) = (traj(&with, "DemoShop--1"), traj(&without, "DemoShop--1"));
    assert_eq!(a.steps.len(), b.steps.len(), "{:?} / {:?}", a.error, b.error);
    for (x, y) in a.steps.iter().zip(&b.steps) {
        assert_eq!(
            (&x.url_before, &x.screenshot_blake3),
            (&y.url_before, &y.screenshot_blake3),
            "step {}",
            x.n
        );
        assert!(
            x.reproduced.as_ref().is_some_and(|r| r.url && r.screenshot),
            "step {}: {:?}",
            x.n,
            x.reproduced
        );
        assert_eq!(x.proxy.explore, 0, "the recorded path is its own snapshot's: {:?}", x.proxy);
    }
    first.check();
    second.check();
}

/// A HAR of GET pages on http://u.test, each an HTML page naming itself.
fn pages_har(pages: &[&str]) -> String {
    let entries: Vec<serde_json::Value> = pages
        .iter()
        .map(|p| {
            serde_json::json!({
                "startedDateTime": "2026-01-02T03:04:05.000Z", "time": 1,
                "request": {"method": "GET", "url": format!("http://u.test/{p}"), "httpVersion": "HTTP/1.1", "headers": []},
                "response": {"status": 200, "httpVersion": "HTTP/1.1",
                    "headers": [{"name": "content-type", "value": "text/html"}],
                    "content": {"size": 10, "mimeType": "text/html",
                        "text": format!("<html><head><title>Page {p}</title></head><body><p>about {p}</p></body></html>")}},
            })
        })
        .collect();
    serde_json::json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": entries}}).to_string()
}

/// The standalone replay: `--union NAME` answers what the snapshot lacks (marked, its own layer), a
/// search from both with `--search fallback`; without them it is a miss; `--frozen-web site` on a snapshot
/// that belongs to no recording is a usage error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_standalone_replay_serves_a_named_union_and_frozen_search() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    for (name, pages) in [("r/a", &["home"][..]), ("r/b", &["other", "more"])] {
        let f = h.join(format!("{}.har", name.replace('/', "-")));
        std::fs::write(&f, pages_har(pages)).unwrap();
        let out = run_cli(h, &["snapshots", "import", f.to_str().unwrap(), "--snapshot", name]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let get = || Request::builder().uri("/").body(http_body_util::Full::new(bytes::Bytes::new())).unwrap();
    let nowhere: std::net::SocketAddr = "127.0.0.1:9".parse().unwrap();
    let union =
        Webfreeze::spawn(h, &["replay", "--snapshot", "r/a", "--union", "r/b", "--search", "fallback"]);
    let via = Via::Proxy(union.addr);
    let g = fetch(via, "http://u.test/other", nowhere, &[], false, get()).await;
    assert_eq!((g.status, g.header("x-webfreeze-layer")), (200, Some("site-union")), "{}", g.text());
    assert!(g.text().contains("about other"));
    let g = fetch(via, "http://u.test/home", nowhere, &[], false, get()).await;
    assert_eq!((g.status, g.header("x-webfreeze-layer")), (200, None));
    let g = fetch(via, "http://www.google.com/search?q=more", nowhere, &[], false, get()).await;
    assert_eq!((g.status, g.header("x-webfreeze-layer")), (200, Some("frozen-search")), "{}", g.text());
    assert!(
        g.text().contains("href=\"http://u.test/more\"") && g.text().contains("Results 1-1 of 1"),
        "{}",
        g.text()
    );
    drop(union);
    let alone = Webfreeze::spawn(h, &["replay", "--snapshot", "r/a"]);
    let g = fetch(Via::Proxy(alone.addr), "http://u.test/other", nowhere, &[], false, get()).await;
    assert_eq!(g.status, 404);
    let g = fetch(Via::Proxy(alone.addr), "http://www.google.com/search?q=more", nowhere, &[], false, get())
        .await;
    assert_eq!(g.status, 404, "search is off by default in the standalone replay");
    drop(alone);
    let out =
        run_cli(h, &["snapshots", "import", h.join("r-a.har").to_str().unwrap(), "--snapshot", "plain"]);
    assert!(out.status.success());
    let out =
        run_cli(h, &["replay", "--snapshot", "plain", "--frozen-web", "site", "--listen", "127.0.0.1:0"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--frozen-web site") && stderr.contains("--union"), "{stderr}");
}

/// The frozen search index is stored beside a snapshot when it is imported (and kept by `gc`); a damaged
/// one is refused by the frozen search engine with the command that rebuilds it, never a page from it, and
/// reported by `verify`; `snapshots search-index` rebuilds it (an unknown name writes nothing) and the same
/// page is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_search_index_is_refused_and_rebuilt_by_a_command() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let f = h.join("a.har");
    std::fs::write(&f, pages_har(&["home", "kettle"])).unwrap();
    let ok = |out: std::process::Output| {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        out
    };
    ok(run_cli(h, &["snapshots", "import", f.to_str().unwrap(), "--snapshot", "r/a"]));
    ok(run_cli(h, &["snapshots", "gc"]));
    let show: serde_json::Value =
        serde_json::from_slice(&ok(run_cli(h, &["snapshots", "show", "r/a", "--json"])).stdout).unwrap();
    let index = &show["manifest"]["search_index"];
    assert_eq!(index["items"], 2, "{show}");
    let search = || async {
        let wf = Webfreeze::spawn(h, &["replay", "--snapshot", "r/a", "--search", "fallback"]);
        let get = Request::builder().uri("/").body(http_body_util::Full::new(bytes::Bytes::new())).unwrap();
        let nowhere: std::net::SocketAddr = "127.0.0.1:9".parse().unwrap();
        let g = fetch(Via::Proxy(wf.addr), "http://www.google.com/search?q=kettle", nowhere, &[], false, get)
            .await;
        (g.status, g.text())
    };
    let (s, page) = search().await;
    assert_eq!(s, 200, "{page}");
    assert!(page.contains("href=\"http://u.test/kettle\""), "{page}");
    let hash = index["hash"].as_str().unwrap();
    {
        let store = snapshots::Store::open(&h.join("store")).unwrap();
        let mut raw = store.raw_blob_for_tests(hash).unwrap().unwrap();
        let last = raw.len() - 1;
        raw[last] ^= 0x55;
        store.damage_blob_for_tests(hash, &raw).unwrap();
    }
    let (s, body) = search().await;
    assert_eq!(s, 503, "{body}");
    assert!(body.contains("damaged") && body.contains("`webfreeze snapshots search-index r/a`"), "{body}");
    assert!(!body.contains("u.test/kettle"), "no page from a damaged index: {body}");
    let verify = run_cli(h, &["snapshots", "verify"]);
    assert!(!verify.status.success());
    assert!(String::from_utf8_lossy(&verify.stdout).contains(&format!("CORRUPT blob {hash}")));
    let unknown = run_cli(h, &["snapshots", "search-index", "r/a", "nope"]);
    assert!(!unknown.status.success() && String::from_utf8_lossy(&unknown.stderr).contains("nope"));
    let rebuilt = ok(run_cli(h, &["snapshots", "search-index", "r/a"]));
    assert!(String::from_utf8_lossy(&rebuilt.stderr).contains("r/a: 2 document(s) indexed"), "{rebuilt:?}");
    assert_eq!(search().await, (200, page), "rebuilt, the same page");
    ok(run_cli(h, &["snapshots", "verify"]));
}

/// `snapshots explore` on a recording another tool made (a HAR of one page) of a site that rate-limits:
/// the links are opened in page order, the log-out link never; the page that answers 429 stops exploration
/// on that host, so the link after it is never requested, and the command says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_walled_host_stops_exploration_there() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let (origin, reach) = https_origin(h, "wall.test").await;
    let har = serde_json::json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": [{
        "startedDateTime": "2026-01-02T03:04:05.000Z", "time": 1,
        "request": {"method": "GET", "url": "https://wall.test/wall/", "httpVersion": "HTTP/1.1", "headers": []},
        "response": {"status": 200, "httpVersion": "HTTP/1.1",
            "headers": [{"name": "content-type", "value": "text/html"}],
            "content": {"size": 20, "mimeType": "text/html", "text": "<title>Reading room</title>"}}}]}});
    let f = h.join("wall.har");
    std::fs::write(&f, har.to_string()).unwrap();
    let out = run_cli(h, &["snapshots", "import", f.to_str().unwrap(), "--snapshot", "w/lib"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut args = strs(&["snapshots", "explore", "w/lib", "--settle-ms", "200"]);
    args.extend(reach);
    let out = cli(h, args, Vec::new()).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("stopped on wall.test"), "{stderr}");
    let seen = |p: &str| origin.stats.paths.lock().unwrap().get(p).copied().unwrap_or(0);
    for p in ["/wall/", "/wall/a", "/wall/b", "/wall/limited"] {
        assert!(seen(p) >= 1, "{p} was not opened: {:?}", origin.stats.paths.lock().unwrap());
    }
    assert_eq!((seen("/wall/logout"), seen("/wall/c")), (0, 0), "{:?}", origin.stats.paths.lock().unwrap());
    let (docs, methods) = documents_and_methods(&h.join("store"), "w/lib/explore");
    for d in ["https://wall.test/wall/a", "https://wall.test/wall/b"] {
        assert!(docs.iter().any(|x| x == d), "{d} not in the exploration layer: {docs:?}");
    }
    assert!(methods.iter().all(|m| m == "GET"), "{methods:?}");
}

/// `snapshots explore`: a recording made without exploration (as any harness's is) gains its exploration
/// layer afterwards: the recorded documents revisited live, the links from them recorded into
/// `NAME/explore`, and a second agent off the recorded path then replays with no document miss.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_explore_adds_the_layer_to_an_existing_recording() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let mut sites = DemoSites::start(h).await;
    let tasks = h.join("demo_tasks.jsonl");
    std::fs::write(&tasks, demo::TASKS_JSONL).unwrap();
    let first = FakeLlm::start(|body: &serde_json::Value| {
        Reply::Text(by_turn(
            body,
            &["Thought: first.\nAction: Click [3]", "Thought: done.\nAction: ANSWER; Glass Jar"],
        ))
    })
    .await;
    let second = FakeLlm::start(|body: &serde_json::Value| {
        Reply::Text(by_turn(
            body,
            &["Thought: second.\nAction: Click [5]", "Thought: done.\nAction: ANSWER; no"],
        ))
    })
    .await;
    let rec = h.join("rec");
    let a = RunArgs::new(&tasks, "record", &rec)
        .filter("DemoShop--1$")
        .settle_ms(200)
        .model(&first.api_base())
        .args(&sites.reach);
    let out = cli(h, a.build(), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // A budget of 0 is refused; then the layer is made.
    let out = run_cli(h, &["snapshots", "explore", "rec/DemoShop--1", "--explore-links", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let mut a = strs(&["snapshots", "explore", "rec/DemoShop--1", "--settle-ms", "200"]);
    a.extend(sites.reach.iter().cloned());
    let out = cli(h, a, vec![]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("revisiting https://shop.test/") && stderr.contains("explored "), "{stderr}");
    let (explored, methods) = documents_and_methods(&h.join("store"), "rec/DemoShop--1/explore");
    assert!(explored.iter().filter(|u| u.contains("/product/")).count() >= 5, "{explored:?}");
    assert!(methods.iter().all(|m| m == "GET"), "{methods:?}");
    sites.stop();
    let other = h.join("other");
    let a = RunArgs::new(&tasks, "replay", &other)
        .filter("DemoShop--1$")
        .opt("--snapshots", "rec")
        .settle_ms(200)
        .model(&second.api_base());
    let out = cli(h, a.build(), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = traj(&other, "DemoShop--1");
    let cov = t.coverage.clone().unwrap();
    assert!(!cov.off_snapshot && cov.explore > 0, "{cov:?} {:?}", t.steps[0].proxy);
    first.check();
    second.check();
}
