//! Issue 51: `webfreeze snapshots crawl` on a small site with real chrome (it follows content links, never
//! a link that acts, honours robots.txt unless told the site is the user's, and a stopped crawl resumes
//! without loading a page twice), and `webfreeze coverage` on a 3-task recording where one task's path is
//! covered by the others and two are not (exact figures).

use std::path::Path;

use serde_json::Value;

use crate::support::*;

fn reach(h: &Path, origin: &CrawlOrigin) -> Vec<String> {
    let ca = h.join("crawl-origin-ca.pem");
    std::fs::write(&ca, &origin.ca_pem).unwrap();
    vec![
        "--upstream-ca".into(),
        ca.display().to_string(),
        "--resolve".into(),
        format!("crawl.test:443:{}", origin.addr),
        "--resolve".into(),
        format!("api.test:443:{}", origin.addr),
    ]
}

/// Record one WebVoyager task per `(id, pages, answer)` on crawl.test, each starting at its home page and
/// going to `pages` in turn (a `goto` each), into `h/rec`; the run directory.
async fn record_paths(h: &Path, reach: &[String], paths: &[(&str, Vec<String>, &str)]) -> std::path::PathBuf {
    let tasks: String = paths
        .iter()
        .map(|(id, _, answer)| {
            format!(
                "{}\n",
                serde_json::json!({"web_name": "Crawl", "id": id, "ques": "Read.", "web": "https://crawl.test/",
                                   "eval": {"must_include": [answer]}})
            )
        })
        .collect();
    let tasks_file = h.join("tasks.jsonl");
    std::fs::write(&tasks_file, tasks).unwrap();
    let loaded = agent::tasks::load(&tasks_file).unwrap();
    let step = |a: &str| format!("In summary, the next action I will perform is ```{a}```");
    let pairs: Vec<_> = loaded
        .iter()
        .zip(paths)
        .map(|(t, (_, pages, _))| {
            let mut r: Vec<String> =
                pages.iter().map(|p| step(&format!("goto [https://crawl.test{p}]"))).collect();
            r.push(step("stop [done]"));
            (t.clone(), r)
        })
        .collect();
    let script = h.join("script");
    agent::policy::write_script(&script, &pairs).unwrap();
    let rec = h.join("rec");
    let args = RunArgs::new(&tasks_file, "record", &rec)
        .opt("--action-space", "webarena")
        .opt("--policy", format!("trajectory:{}", script.display()))
        .opt("--jobs", "1")
        .args(reach);
    let out = cli(h, args.build(), vec![]).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    rec
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_follows_content_not_acts_honours_robots_and_resumes() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let origin = CrawlOrigin::start("crawl.test").await;
    let reach = reach(h, &origin);
    let crawl = |run: &str, pages: &str, extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> =
            ["snapshots", "crawl", run, "--site", "Crawl", "--start", "https://crawl.test/"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        a.extend(["--pages", pages, "--pace-ms", "0", "--settle-ms", "100"].iter().map(|s| s.to_string()));
        a.extend(extra.iter().map(|s| s.to_string()));
        a.extend(reach.iter().cloned());
        a
    };
    // A budget of 4 pages, then the rest: the second call resumes the first.
    let out = cli(h, crawl("c", "4", &[]), vec![]).await;
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "crawl: {err}");
    assert!(err.contains("crawled 4 page(s)") && err.contains("raise --pages"), "{err}");
    let out = cli(h, crawl("c", "100", &[]), vec![]).await;
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "crawl resumed: {err}");
    // Every article once over both calls (content first, no page twice), the chrome too, and never a
    // link that acts or a path robots.txt disallows.
    for n in 0..CRAWL_ARTICLES {
        assert_eq!(origin.hits(&format!("/a/{n}")), 1, "/a/{n}: {:?}", origin.hits.lock().unwrap());
    }
    assert_eq!(origin.hits("/"), 1);
    assert_eq!(origin.hits("/about"), 1);
    for never in ["/shop?add-to-cart=7", "/logout", "/private/secret"] {
        assert_eq!(origin.hits(never), 0, "{never}");
    }
    assert!(err.contains("1 disallowed by robots.txt"), "{err}");
    // The site's OpenSearch description, which no browser loads by itself, fetched once for the frozen
    // site search.
    let osd = origin.hits("/opensearch.xml");
    assert!((1..=2).contains(&osd), "{osd} loads: {:?}", origin.hits.lock().unwrap());
    let list = run_cli(h, &["snapshots", "list"]);
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(list.contains("c/crawl/Crawl/001") && list.contains("c/crawl/Crawl/002"), "{list}");
    // A site the user owns: robots.txt is not read.
    let out = cli(h, crawl("mine", "100", &["--ignore-robots"]), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(origin.hits("/private/secret"), 1);
    assert_eq!(origin.hits("/shop?add-to-cart=7"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coverage_reports_each_task_against_the_rest_of_its_site() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let origin = CrawlOrigin::start("crawl.test").await;
    let reach = reach(h, &origin);
    // Three paths: A's pages are all on B's and C's paths; B and C each end on a page no one else saw.
    // A's answer is on a recorded page; B's is on none (the frozen web cannot support it).
    let articles = |ns: &[usize]| ns.iter().map(|n| format!("/a/{n}")).collect::<Vec<_>>();
    let paths = [
        ("A", articles(&[1, 4]), "Text 4."),
        ("B", articles(&[1, 6]), "Zebra crossing"),
        ("C", articles(&[4, 9]), "Article 9"),
    ];
    let rec = record_paths(h, &reach, &paths).await;
    drop(origin);

    let html = h.join("coverage.html");
    let out = cli(
        h,
        vec![
            "coverage".into(),
            rec.display().to_string(),
            "--json".into(),
            "--html".into(),
            html.display().to_string(),
        ],
        vec![],
    )
    .await;
    assert!(out.status.success(), "coverage: {}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let served: Vec<(String, u64, u64)> = r["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_string(),
                t["served"].as_u64().unwrap(),
                t["steps"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(served, [("A".into(), 3, 3), ("B".into(), 2, 3), ("C".into(), 2, 3)], "{r}");
    assert_eq!((r["total"]["served"].as_u64(), r["total"]["steps"].as_u64()), (Some(7), Some(9)));
    assert_eq!(r["sites"]["Crawl"]["served"], 7);
    let miss_b = r["tasks"][1]["first_miss"].to_string();
    assert!(miss_b.contains("https://crawl.test/a/6"), "{miss_b}");
    assert!(r["tasks"][0]["first_miss"].is_null(), "{r}");
    // A's pages came from the other tasks' recordings: the site union answered them.
    assert!(r["tasks"][0]["layers"]["site-union"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(r["tasks"][0]["layers"]["exact"], 0, "its own snapshot is left out: {r}");
    // The answer check: A's and C's answers are on the site's frozen pages, B's on none.
    assert_eq!(r["tasks"][0]["answer"]["missing"], serde_json::json!([]), "{r}");
    assert_eq!(r["tasks"][1]["answer"]["missing"], serde_json::json!(["Zebra crossing"]), "{r}");
    assert_eq!(r["unsupported_answers"], serde_json::json!(["B (Zebra crossing)"]), "{r}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<td>Crawl</td>") && page.contains("7/9"), "{page}");
}

/// Issue 61 part 2: the crawl starts from the benchmark's start pages, not from every page the tasks
/// recorded, so `webfreeze coverage` never serves a held-out task the pages only its own path found: B went
/// to a page no link leads to; the crawl never loads it, and B's leave-one-out replay misses it (its answer is
/// on no page B meets), while A's path, reachable from the start page, is served from the crawl.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_from_the_start_pages_serves_no_held_out_task_its_own_path() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let origin = CrawlOrigin::start("crawl.test").await;
    let reach = reach(h, &origin);
    let paths =
        [("A", vec!["/a/1".to_string()], "Text 1."), ("B", vec!["/orphan".to_string()], "Orphan answer")];
    let rec = record_paths(h, &reach, &paths).await;
    assert_eq!(origin.hits("/orphan"), 1, "recorded once");
    let run: Value = serde_json::from_slice(&std::fs::read(rec.join("run.json")).unwrap()).unwrap();
    let recording = run["snapshots"].as_str().unwrap().to_string();
    let mut crawl: Vec<String> = ["snapshots", "crawl", &recording, "--site", "Crawl", "--pages", "40"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    crawl.extend(["--pace-ms", "0", "--settle-ms", "100", "--ignore-robots"].iter().map(|s| s.to_string()));
    crawl.extend(reach.iter().cloned());
    let out = cli(h, crawl, vec![]).await;
    assert!(out.status.success(), "crawl: {}", String::from_utf8_lossy(&out.stderr));
    // The crawl began at the start page and never at B's recorded page.
    assert_eq!(origin.hits("/orphan"), 1, "the crawl loaded B's own page: {:?}", origin.hits.lock().unwrap());
    assert!(origin.hits("/a/1") >= 2, "A's page is reachable from the start page and crawled");
    drop(origin);
    let out = cli(h, vec!["coverage".into(), rec.display().to_string(), "--json".into()], vec![]).await;
    assert!(out.status.success(), "coverage: {}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let task = |id: &str| r["tasks"].as_array().unwrap().iter().find(|t| t["id"] == id).unwrap().clone();
    let (a, b) = (task("A"), task("B"));
    assert!(a["first_miss"].is_null() && a["layers"]["crawl"].as_u64().unwrap() > 0, "{a}");
    assert!(b["first_miss"].to_string().contains("https://crawl.test/orphan"), "{b}");
    assert_eq!(b["answer"]["missing"], serde_json::json!(["Orphan answer"]), "{b}");
    assert_eq!(a["answer"]["missing"], serde_json::json!([]), "{a}");
}

/// Issue 48.3: exploration opens the page's content links, never a link that acts, and marks its tabs'
/// requests where the page cannot see it: an explored page's cross-origin API call is made without a
/// preflight, and its answer is recorded in the exploration layer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exploration_harms_nothing_and_adds_no_header_the_page_did_not_send() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let origin = CrawlOrigin::start("crawl.test").await;
    let reach = reach(h, &origin);
    let tasks_file = h.join("tasks.jsonl");
    std::fs::write(
        &tasks_file,
        format!(
            "{}\n",
            serde_json::json!({"web_name": "Crawl", "id": "t", "ques": "Read.", "web": "https://crawl.test/"})
        ),
    )
    .unwrap();
    let loaded = agent::tasks::load(&tasks_file).unwrap();
    let script = h.join("script");
    agent::policy::write_script(
        &script,
        &[(loaded[0].clone(), vec!["Thought: read.\nAction: ANSWER; done".to_string()])],
    )
    .unwrap();
    let rec = h.join("rec");
    let args = RunArgs::new(&tasks_file, "record", &rec)
        .opt("--policy", format!("trajectory:{}", script.display()))
        .args(["--explore"])
        .args(&reach);
    let out = cli(h, args.build(), vec![]).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    let hits = origin.hits.lock().unwrap().clone();
    assert_eq!(origin.hits("/api-page"), 1, "{hits:?}");
    assert!(origin.hits("/data.json") >= 1, "the explored page's API call was made: {hits:?}");
    assert_eq!(origin.hits("OPTIONS /data.json"), 0, "no preflight: {hits:?}");
    for never in ["/shop?add-to-cart=7", "/logout"] {
        assert_eq!(origin.hits(never), 0, "{never}: {hits:?}");
    }
    let store = snapshots::Store::open_read_only(&h.join("store")).unwrap();
    let layer = store.manifest("rec/t/explore").unwrap();
    let api = store
        .exchanges(&layer)
        .map(|x| x.unwrap())
        .find(|x| x.request.url == "https://api.test/data.json")
        .expect("the API's answer is in the exploration layer");
    assert_eq!(api.response.status, 200);
    assert!(api.request.headers.iter().all(|h| !h.name.eq_ignore_ascii_case("x-webfreeze-explore")));

    // Issue 49.3: what the browser rendered is kept with the recording and indexed. The plants page's
    // name is set by its script: its HTML holds "...", its rendered text "Fern".
    let rendered = store.rendered_text(&layer).unwrap();
    let plants = rendered.get("https://crawl.test/api-page").expect("exploration kept the page's text");
    assert!(plants.contains("Fern"), "{plants:?}");
    let task = store.manifest("rec/t").unwrap();
    assert!(store.rendered_text(&task).unwrap().contains_key("https://crawl.test/"), "the agent's page");
    let found = |m: &snapshots::Manifest, q: &str| {
        let ix = replay::search::load_index(&store, m).unwrap().expect("the sealed layer has an index");
        ix.search(q, 0, 10, None).unwrap().1.into_iter().map(|h| h.url).collect::<Vec<_>>()
    };
    assert_eq!(found(&layer, "fern"), ["https://crawl.test/api-page"]);
    // The recorded HTML alone does not have it: an index of the static text misses the page.
    let stat = replay::search::SearchIndex::build(
        replay::search::documents(&store, &snapshots::Manifest { rendered_text: None, ..layer.clone() })
            .unwrap(),
    )
    .unwrap();
    assert_eq!(stat.search("fern", 0, 10, None).unwrap().0, 0);
}

/// Issue 48.3: a click whose page then calls a cross-origin API sends no header the page did not (the
/// control's label reaches the guard through the proxy), so the call makes no preflight.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_adds_no_header_so_a_cross_origin_call_is_not_preflighted() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let origin = CrawlOrigin::start("crawl.test").await;
    let reach = reach(h, &origin);
    let tasks_file = h.join("tasks.jsonl");
    let line = serde_json::json!({"web_name": "Crawl", "id": "t", "ques": "Load.", "web": "https://crawl.test/click-page"});
    std::fs::write(&tasks_file, format!("{line}\n")).unwrap();
    let loaded = agent::tasks::load(&tasks_file).unwrap();
    let script = h.join("script");
    let replies = vec![
        "Thought: load.\nAction: Click [0]".to_string(),
        "Thought: done.\nAction: ANSWER; Fern".to_string(),
    ];
    agent::policy::write_script(&script, &[(loaded[0].clone(), replies)]).unwrap();
    let rec = h.join("rec");
    let args = RunArgs::new(&tasks_file, "record", &rec)
        .opt("--policy", format!("trajectory:{}", script.display()))
        .args(&reach);
    let out = cli(h, args.build(), vec![]).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    let hits = origin.hits.lock().unwrap().clone();
    assert_eq!(origin.hits("/data.json"), 1, "the click's call was made: {hits:?}");
    assert_eq!(origin.hits("OPTIONS /data.json"), 0, "no preflight: {hits:?}");
    assert_eq!(traj(&rec, "t").steps.len(), 2, "the click was a step");
}

/// Issue 51: per-host concurrency. Two browsers crawl the site; with `--per-host 1` never two of its pages
/// are loaded at once, with `--per-host 2` two are (the origin holds an article until a second is asked
/// for). Either way each page is loaded once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_browsers_keep_to_the_per_host_limit() {
    for (per_host, at_once) in [("1", 1), ("2", 2)] {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        let origin = CrawlOrigin::start("crawl.test").await;
        origin.hold_articles();
        let mut a: Vec<String> =
            ["snapshots", "crawl", "c", "--site", "Crawl", "--start", "https://crawl.test/"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        a.extend(
            [
                "--pages",
                "6",
                "--pace-ms",
                "0",
                "--settle-ms",
                "100",
                "--browsers",
                "2",
                "--per-host",
                per_host,
            ]
            .iter()
            .map(|s| s.to_string()),
        );
        a.extend(reach(h, &origin));
        let out = cli(h, a, vec![]).await;
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "crawl: {err}");
        assert!(err.contains("crawled 6 page(s)"), "{err}");
        assert_eq!(origin.most_at_once(), at_once, "--per-host {per_host}: {err}");
        let hits = origin.hits.lock().unwrap().clone();
        assert!(hits.iter().filter(|(p, _)| p.starts_with("/a/")).all(|(_, n)| *n == 1), "{hits:?}");
    }
}
