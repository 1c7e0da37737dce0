//! WebArena's action space and observations end to end on the demo sites (real Chromium): a task that
//! starts on two pages (` |AND| `, a tab each) with an input image, run with `--action-space webarena
//! --observation axtree` against a fake model that reads the accessibility tree and answers in WebArena's
//! grammar: a link that opens a new tab, tab_focus, type without Enter, press, goto, hover, stop.
//! Recorded live, scored, then replayed twice with the sites stopped: every step reproduces and the
//! accessibility-tree text is the same in the recording and both replays. A `som+axtree` run shows the
//! tree with the screenshot's labels as ids. The task's VisualWebArena image checks (SSIM against a gold
//! photo given as a path and as a URL; a VQA question on a page only the check opened) are scored from
//! the images the run fetched through the proxy, and re-scored offline with the same verdicts.

use std::path::Path;

use trajectory::{Outcome, RunDir};

use crate::support::*;

fn task_file(dir: &Path) -> std::path::PathBuf {
    std::fs::create_dir_all(dir.join("gold")).unwrap();
    std::fs::write(dir.join("gold/red-mug.png"), demo::product_photo_of("red-mug").unwrap()).unwrap();
    let tasks = serde_json::json!([{
        "sites": ["news", "shopping"], "task_id": 7, "require_login": false, "storage_state": null,
        "start_url": "__NEWS__/ |AND| __SHOPPING__/", "geolocation": null,
        "intent": "How many Red Mugs are left in stock? (this picture shows a kettle)",
        "image": "__SHOPPING__/static/img/blue-kettle.png", "require_reset": false,
        "eval": {
            "eval_types": ["string_match", "url_match", "program_html", "page_image_query"],
            "reference_answers": {"must_include": ["7 left"]},
            "reference_url": "__SHOPPING__/product/red-mug", "url_note": "GOLD in PRED",
            "program_html": [{"url": "last", "locator": "document.querySelector('#hint').outerText",
                              "required_contents": {"exact_match": "Only 7 left"}}],
            "page_image_query": [
                {"eval_image_url": "last", "eval_image_class": ".photo",
                 "eval_fuzzy_image_match": "gold/red-mug.png |OR| __SHOPPING__/static/img/red-mug.png"},
                {"eval_image_url": "__SHOPPING__/product/blue-kettle", "eval_image_class": "",
                 "eval_vqa": [{"question": "What is this?", "answer": "kettle"}]},
            ],
        },
    }]);
    let f = dir.join("tasks.json");
    std::fs::write(&f, tasks.to_string()).unwrap();
    f
}

fn run_args(tasks: &Path, mode: &str, policy: &str, out: &Path, extra: &[&str]) -> Vec<String> {
    RunArgs::new(tasks, mode, out)
        .opt("--site", "NEWS=https://news.test")
        .opt("--site", "SHOPPING=https://shop.test")
        .opt("--policy", policy)
        .settle_ms(200)
        .opt("--max-steps", "10")
        .args(extra)
        .build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webarena_actions_tabs_and_axtree_record_score_and_replay() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let mut sites = DemoSites::start(h).await;
    let tasks = task_file(&h.join("config"));
    let llm = FakeLlm::start(|body| {
        let obs = last_user_text(body);
        if body["messages"][0]["content"].as_str().is_some_and(|s| s.starts_with("Answer the question")) {
            // eval_vqa: one image per question, VWA's prompt.
            assert_eq!((image_count(body), obs.as_str()), (1, "Q: What is this? A:"));
            return Reply::Text("A blue kettle".into());
        }
        let turn = body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").count();
        // The accessibility tree comes without a screenshot; the task's input image comes at step 1 and
        // stays in the context.
        assert_eq!(image_count(body), 1, "turn {turn}");
        match turn {
            0 => {
                assert!(obs.contains("Tab 0 (current): The Demo Times | Tab 1: Demo Shop"), "{obs}");
                assert!(
                    obs.contains("OBJECTIVE: How many Red Mugs") && obs.contains("PREVIOUS ACTION: None"),
                    "{obs}"
                );
                webarena_reply(&format!("click [{}]", id_of(&obs, "link 'Weather desk'")))
            }
            1 => {
                // The target=_blank link opened a third tab, which has the focus.
                assert!(obs.contains("Tab 2 (current): October heat record broken"), "{obs}");
                webarena_reply("tab_focus [1]")
            }
            2 => {
                assert!(obs.contains("Tab 1 (current): Demo Shop"), "{obs}");
                webarena_reply(&format!("type [{}] [mug] [0]", id_of(&obs, "searchbox 'Search'")))
            }
            3 => {
                assert!(!obs.contains("result(s) for"), "no Enter yet: {obs}");
                webarena_reply("press [Enter]")
            }
            4 => {
                assert!(obs.contains("1 result(s) for \"mug\""), "{obs}");
                webarena_reply("goto [https://shop.test/product/red-mug]")
            }
            5 => {
                assert!(!obs.contains("Only 7 left"), "{obs}");
                webarena_reply(&format!("hover [{}]", id_of(&obs, "link 'In stock'")))
            }
            _ => {
                assert!(obs.contains("StaticText 'Only 7 left'"), "{obs}");
                webarena_reply("stop [Only 7 left]")
            }
        }
    })
    .await;
    let key = vec![("OPENAI_API_KEY".to_string(), "k".to_string())];
    let rec = h.join("rec");
    let mut args = run_args(
        &tasks,
        "record",
        "llm",
        &rec,
        &["--action-space", "webarena", "--observation", "axtree", "--api-base", &llm.api_base()],
    );
    args.extend(sites.reach.iter().cloned());
    let out = cli(h, args, key.clone()).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    llm.check();
    let t = RunDir::new(&rec).task("7").read_trajectory().unwrap().unwrap();
    assert_eq!(t.outcome, Outcome::Answered, "{t:?}");
    let actions: Vec<String> = t.steps.iter().map(|s| s.action.clone().unwrap_or_default()).collect();
    assert_eq!(actions.len(), 7, "{actions:?}");
    assert!(
        actions[1] == "tab_focus [1]" && actions[3] == "press [Enter]" && actions[6] == "stop [Only 7 left]"
    );
    assert!(t.steps.iter().all(|s| s.error.is_none()), "{:?}", t.steps);
    assert_eq!(t.final_url, "https://shop.test/product/red-mug");
    assert_eq!(t.html_checks[0].result, "Only 7 left");
    // The image checks' evidence: the photo on the last page, both golds, the photo of a page only the
    // check opened; all saved next to the trajectory.
    let files = |c: &trajectory::ImageCheck| {
        c.images.iter().chain(&c.gold).map(|f| f.file.clone()).collect::<Vec<_>>()
    };
    assert_eq!(t.image_checks.len(), 2, "{:?}", t.image_checks);
    assert_eq!(
        files(&t.image_checks[0]),
        ["check-image-0-0.img", "check-gold-0-0.img", "check-gold-0-1.img"]
    );
    assert_eq!(t.image_checks[1].images[0].url, "https://shop.test/static/img/blue-kettle.png");
    let eval = |extra: &'static [&'static str]| {
        let mut a = strs(&["eval", rec.to_str().unwrap(), "--json", "--api-base", &llm.api_base()]);
        a.extend(strs(extra));
        cli(h, a, key.clone())
    };
    let out = eval(&[]).await;
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(e["tasks"][0]["success"], true, "{e}");
    let checks = e["tasks"][0]["reference"]["checks"].to_string();
    assert!(
        checks.contains("page_image_query[0].eval_fuzzy_image_match") && checks.contains("best 1.000"),
        "{checks}"
    );
    assert!(checks.contains("page_image_query[1].eval_vqa"), "{checks}");
    // A threshold above 1 fails the SSIM check.
    let out = eval(&["--ssim-threshold", "1.01"]).await;
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(e["tasks"][0]["success"], false, "{e}");
    // The input image was fetched through the proxy: it is in the task's snapshot.
    let show = run_cli(h, &["snapshots", "show", "rec/7", "--json", "--limit", "200"]);
    assert!(String::from_utf8_lossy(&show.stdout).contains("/static/img/blue-kettle.png"));

    // Frozen: the checks re-run offline from the snapshot (their images too), same verdict.
    sites.stop();
    let out = eval(&["--rescore"]).await;
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((&e["tasks"][0]["success"], &e["tasks"][0]["rescored"]), (&true.into(), &true.into()), "{e}");
    assert!(RunDir::new(&rec).task("7").path().join("rescore/check-image-1-0.img").exists());
    // Two replays re-execute the recorded replies (action space and observation from run.json).
    let mut trees = vec![t.steps.iter().map(|s| s.elements.clone()).collect::<Vec<_>>()];
    for name in ["rep1", "rep2"] {
        let out_dir = h.join(name);
        let args = run_args(&tasks, "replay", &format!("trajectory:{}", rec.display()), &out_dir, &[]);
        let out = cli(h, args, vec![]).await;
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let r = RunDir::new(&out_dir).task("7").read_trajectory().unwrap().unwrap();
        assert_eq!(r.outcome, Outcome::Answered, "{name}: {r:?}");
        assert_eq!(
            r.reproduced_steps,
            Some(7),
            "{name}: {:?}",
            r.steps.iter().map(|s| &s.reproduced).collect::<Vec<_>>()
        );
        trees.push(r.steps.iter().map(|s| s.elements.clone()).collect());
    }
    assert!(trees[0].iter().all(|t| t.starts_with("[1] RootWebArea")), "{:?}", trees[0]);
    assert_eq!(trees[0], trees[1], "the accessibility tree differs between recording and replay");
    assert_eq!(trees[1], trees[2], "the accessibility tree differs between two replays");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn som_plus_axtree_labels_the_tree_with_the_screenshot_marks() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let sites = DemoSites::start(h).await;
    let dir = h.join("config");
    std::fs::create_dir_all(&dir).unwrap();
    let tasks = dir.join("t.json");
    std::fs::write(
        &tasks,
        serde_json::json!({"task_id": 1, "intent": "Search the shop for a mug.", "start_url": "__SHOPPING__/",
                           "sites": ["shopping"], "eval": {"eval_types": ["string_match"],
                           "reference_answers": {"must_include": ["mug"]}}})
        .to_string(),
    )
    .unwrap();
    let llm = FakeLlm::start(|body| {
        let obs = last_user_text(body);
        let turn = body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").count();
        assert_eq!(image_count(body), turn + 1, "one labelled screenshot per turn");
        if turn == 0 {
            // The list of marks is replaced by the tree; its interactive lines carry the mark numbers
            // (the search box is the page's first mark), the others none.
            assert!(obs.contains("\t[0] searchbox 'Search'"), "{obs}");
            assert!(obs.contains("heading 'Demo Shop'") && !obs.contains("] heading 'Demo Shop'"), "{obs}");
            webarena_reply("type [0] [mug] [1]")
        } else {
            assert!(obs.contains("1 result(s) for \"mug\""), "{obs}");
            webarena_reply("stop [Red Mug]")
        }
    })
    .await;
    let out_dir = h.join("live");
    let args = RunArgs::new(&tasks, "live", &out_dir)
        .opt("--site", "SHOPPING=https://shop.test")
        .settle_ms(200)
        .opt("--action-space", "webarena")
        .opt("--observation", "som+axtree")
        .opt("--api-base", llm.api_base())
        .args(&sites.reach);
    let out = cli(h, args.build(), vec![("OPENAI_API_KEY".into(), "k".into())]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    llm.check();
    let t = RunDir::new(&out_dir).task("1").read_trajectory().unwrap().unwrap();
    assert_eq!((t.outcome, t.answer.as_deref()), (Outcome::Answered, Some("Red Mug")), "{t:?}");

    // WebVoyager's actions name marks: an accessibility-tree observation needs WebArena's (the default of
    // WebArena's tasks, so asked for here).
    let out = run_cli_env(
        h,
        &RunArgs::new(&tasks, "live", &h.join("x"))
            .opt("--site", "SHOPPING=https://shop.test")
            .opt("--action-space", "webvoyager")
            .opt("--observation", "axtree")
            .build()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        &[("OPENAI_API_KEY", "k")],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--observation axtree needs --action-space webarena"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_webarena_demo_scores_the_same_live_rescored_offline_and_replayed() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let dir = h.join("demo");
    let out = cli(h, strs(&["demo", "--webarena", "--dir", dir.to_str().unwrap()]), vec![]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("11/11 tasks succeed live, 11/11 re-scored offline, 11/11 replayed"), "{stdout}");
    // Replayed by another agent that only answers, each task is scored on what it did, at its own write
    // epoch (issue 59): the purchase's network checks fail on its own wire, the cart task's check reads the
    // state probe's empty cart and fails, scored, and an information task its answer alone settles still
    // passes. An agent that adds another product to the cart is counted apart, its write named.
    for row in [
        "| demo-wav-2 | success | success | success | FAIL | - |",
        "| demo-wa-2 | success | success | success | FAIL | state unknown (apart) |",
        "| demo-wa-4 | success | success | success | success | - |",
    ] {
        assert!(stdout.contains(row), "{row}\n{stdout}");
    }
    assert!(stdout.contains("demo-wa-2 (wrote POST https://shop.test/cart/add (slug=red-mug)"), "{stdout}");
    // The forum's state came from the agent: the vote and the post are in the recorded pages.
    let t =
        RunDir::new(dir.join("webarena/runs/recorded")).task("demo-wa-0").read_trajectory().unwrap().unwrap();
    assert_eq!(t.html_checks[0].result, "6");
    let t =
        RunDir::new(dir.join("webarena/runs/recorded")).task("demo-wa-1").read_trajectory().unwrap().unwrap();
    assert!(
        t.html_checks[1]
            .result
            .contains("Descaling a kettle</a> <span class=\"votes\">1</span> points by bob"),
        "{}",
        t.html_checks[1].result
    );
    // The shop REST helpers found the agent's order and review through the API.
    let t =
        RunDir::new(dir.join("webarena/runs/recorded")).task("demo-wa-6").read_trajectory().unwrap().unwrap();
    // The order page the agent landed on after placing its order (its id counts the shop's earlier orders).
    let placed = t
        .steps
        .iter()
        .map(|s| s.url_after.as_str())
        .find(|u| u.starts_with("https://shop.test/sales/order/view/order_id/"))
        .expect("the agent placed an order");
    assert_eq!(t.html_checks[0].visited, placed);
    let t =
        RunDir::new(dir.join("webarena/runs/recorded")).task("demo-wa-7").read_trajectory().unwrap().unwrap();
    let values: Vec<&str> = t.html_checks.iter().map(|c| c.result.as_str()).collect();
    assert_eq!(values, ["Kim", "80", "Red Mug"]);
}

/// README's by-hand path: `demo --serve` keeps the sites up, `run --mode record` and `eval` go through the
/// command line, Ctrl-C stops the sites, `eval --rescore` re-scores offline with the same verdicts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_hand_on_served_demo_sites_record_eval_then_rescore_offline() {
    use std::io::BufRead as _;
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let dir = h.join("demo");
    let mut child = std::process::Command::new(bin())
        .args(["demo", "--serve", "--dir", dir.to_str().unwrap()])
        .env("WEBFREEZE_HOME", h)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let addr = line.strip_prefix("listening on ").unwrap_or_else(|| panic!("{line:?}")).trim().to_string();
    let wa = dir.join("webarena");
    let out_dir = h.join("runs/wa");
    let mut args = RunArgs::new(&wa.join("tasks.json"), "record", &out_dir)
        .opt("--action-space", "webarena")
        .opt("--policy", format!("trajectory:{}", wa.join("runs/script").display()))
        .opt("--upstream-ca", wa.join("sites-ca.pem").to_str().unwrap());
    for s in demo::WEBARENA_SITES {
        args = args.opt("--site", *s);
    }
    for host in demo::HOSTS {
        args = args.opt("--resolve", format!("{host}:443:{addr}"));
    }
    let out = cli(h, args.build(), vec![]).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    let eval = |rescore: bool| {
        let mut a = strs(&["eval", out_dir.to_str().unwrap(), "--json"]);
        if rescore {
            a.push("--rescore".into());
        }
        cli(h, a, vec![])
    };
    let success = |o: &std::process::Output| -> Vec<(String, bool)> {
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| {
            panic!("{}", String::from_utf8_lossy(&o.stderr));
        });
        v["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["id"].as_str().unwrap().into(), t["success"] == true))
            .collect()
    };
    let live_out = eval(false).await;
    let live = success(&live_out);
    assert_eq!(live.len(), 8);
    if !live.iter().all(|(_, ok)| *ok) {
        // Seen once under heavy load (demo-wa-2 FAIL) and never reproduced: keep the run for a reading.
        let _ = child.kill();
        let kept = home.keep();
        panic!(
            "{live:?}\nthe run is kept in {}\neval: {}",
            kept.display(),
            String::from_utf8_lossy(&live_out.stdout)
        );
    }
    // Ctrl-C stops the sites.
    std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(child.wait().unwrap().success());
    let offline = eval(true).await;
    assert!(
        String::from_utf8_lossy(&offline.stderr).contains("checks of 7 task(s) offline"),
        "{}",
        String::from_utf8_lossy(&offline.stderr)
    );
    assert_eq!(success(&offline), live);
}

/// VWA's `clear` and `upload` on the demo forum's submit form (signed in by a storage-state cookie),
/// checked by program_html on the form's state; and `compare` reads WebArena-format runs as any other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clear_and_upload_then_compare() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let sites = DemoSites::start(h).await;
    let dir = h.join("config");
    std::fs::create_dir_all(dir.join(".auth")).unwrap();
    std::fs::write(dir.join(".auth/state.json"), demo::WEBARENA_AUTH_JSON).unwrap();
    let photo = dir.join("photo.png");
    std::fs::write(&photo, demo::product_photo_of("oak-board").unwrap()).unwrap();
    let tasks = dir.join("t.json");
    std::fs::write(
        &tasks,
        serde_json::json!({"task_id": "up", "intent": "Attach the photo to a new post, but leave the title empty.",
            "start_url": "__REDDIT__/submit", "sites": ["reddit"], "storage_state": "./.auth/state.json",
            "eval": {"eval_types": ["program_html"], "program_html": [
                {"url": "last", "locator": "document.querySelector('#title').value", "required_contents": {"exact_match": ""}},
                {"url": "last", "locator": "document.querySelector('#image').files[0].name", "required_contents": {"exact_match": "photo.png"}}]}})
        .to_string(),
    )
    .unwrap();
    let upload = format!("upload [4] [{}]", photo.display());
    let llm = FakeLlm::start(move |body| {
        let obs = last_user_text(body);
        let turn = body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").count();
        match turn {
            0 => {
                assert!(obs.contains("[4]: <input type=file>"), "{obs}");
                webarena_reply("type [1] [draft title] [0]")
            }
            1 => {
                assert!(obs.contains("[1]: <input> \"draft title\""), "{obs}");
                webarena_reply("clear [1]")
            }
            2 => webarena_reply(&upload),
            3 => webarena_reply("clear [3]"), // a button: refused with a reason, the run goes on
            _ => {
                assert!(obs.contains("is a <button>, not a text field"), "{obs}");
                webarena_reply("stop []")
            }
        }
    })
    .await;
    let run = |out: &Path| {
        let a = RunArgs::new(&tasks, "live", out)
            .opt("--site", "REDDIT=https://forum.test")
            .settle_ms(200)
            .opt("--action-space", "webarena")
            .opt("--api-base", llm.api_base())
            .args(&sites.reach);
        cli(h, a.build(), vec![("OPENAI_API_KEY".into(), "k".into())])
    };
    let (a, b) = (h.join("a"), h.join("b"));
    for d in [&a, &b] {
        let out = run(d).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let t = RunDir::new(d).task("up").read_trajectory().unwrap().unwrap();
        let results: Vec<&str> = t.html_checks.iter().map(|c| c.result.as_str()).collect();
        assert_eq!(results, ["", "photo.png"], "{:?}", t.html_checks);
        let e = run_cli(h, &["eval", d.to_str().unwrap(), "--json"]);
        let e: serde_json::Value = serde_json::from_slice(&e.stdout).unwrap();
        assert_eq!(e["tasks"][0]["success"], true, "{e}");
    }
    llm.check();
    let c = run_cli(h, &["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--json"]);
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    let c: serde_json::Value = serde_json::from_slice(&c.stdout).unwrap();
    assert_eq!((c["pairs"]["both"].as_u64(), c["agreement"].as_f64()), (Some(1), Some(1.0)), "{c}");
}
