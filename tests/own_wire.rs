//! Issue 47, part 1: a replayed run is scored on its own wire. WebArena-Verified tasks on the demo shop
//! whose network checks need a submitted form are recorded by a scripted agent that submits, then
//! replayed by other scripted agents: one that only answers (submits nothing) fails where the recording's
//! requests would have passed it; one that submits the same form passes; one that submits other values
//! fails on the values. Live runs are scored on their own wire log the same way. `eval` says each task was scored on its own wire log; a truncated log scores what
//! it holds and says so; a log from another task is refused by name.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::support::*;

fn stop(v: Value) -> String {
    format!("In summary, the next action I will perform is ```stop [{v}]```")
}

fn act(a: &str) -> String {
    format!("In summary, the next action I will perform is ```{a}```")
}

/// `run` on the demo shop with a scripted policy: live and record reach the sites, replay reads `rec`.
fn shop_run(tasks: &Path, mode: &str, out: &Path, policy: &Path, reach: &[String]) -> Vec<String> {
    let a = RunArgs::new(tasks, mode, out)
        .opt("--site", "SHOPPING=https://shop.test")
        .opt("--action-space", "webarena")
        .opt("--policy", format!("trajectory:{}", policy.display()))
        .opt("--jobs", "1");
    let a = if mode == "replay" { a.opt("--snapshots", "rec") } else { a.args(reach) };
    a.build()
}

/// (task id, success) per task of `eval RUN --json`, and the report.
fn eval(h: &Path, run: &Path) -> (BTreeMap<String, bool>, Value) {
    let out = run_cli(h, &["eval", run.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "eval: {}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = report["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["id"].as_str().unwrap().to_string(), t["success"] == true))
        .collect();
    (v, report)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_run_is_scored_on_what_it_sent() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let sites = DemoSites::start(h).await;
    let net = |url: &str, method: &str, extra: Value| {
        let mut e = serde_json::json!({"url": url, "http_method": method});
        e.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        serde_json::json!({"evaluator": "NetworkEventEvaluator", "expected": e})
    };
    let resp = serde_json::json!({"evaluator": "AgentResponseEvaluator", "results_schema": {"type": "null"},
                                  "expected": {"task_type": "mutate", "status": "SUCCESS", "retrieved_data": null}});
    let task = |id: u32, start: &str, intent: &str, eval: Vec<Value>| {
        serde_json::json!({"sites": ["shopping"], "task_id": id, "intent_template_id": 0, "start_urls": [start],
                           "intent": intent, "intent_template": intent, "instantiation_dict": {}, "eval": eval, "revision": 1})
    };
    let tasks = serde_json::json!([
        task(
            1,
            "__SHOPPING__/",
            "Buy the cheapest product in the shop.",
            vec![
                resp.clone(),
                net(
                    "__SHOPPING__/cart/add",
                    "POST",
                    serde_json::json!({"post_data": {"slug": "glass-jar"}, "response_status": 303})
                ),
                net("__SHOPPING__/checkout", "POST", serde_json::json!({"response_status": 303})),
            ]
        ),
        task(
            2,
            "__SHOPPING__/review/product/list/id/green-teapot/",
            "Review the Green Teapot as Kim.",
            vec![
                resp.clone(),
                net(
                    "__SHOPPING__/review/product/post/id/green-teapot/",
                    "POST",
                    serde_json::json!({"post_data": {"nickname": "Kim"}, "response_status": 303})
                ),
            ]
        ),
        // Issue 59: a navigate task whose page the recording agent never opens. The recording's state
        // probe loads it, so a replayed agent that goes there is answered and scored.
        task(
            3,
            "__SHOPPING__/",
            "Show me the Red Mug's reviews.",
            vec![
                serde_json::json!({"evaluator": "AgentResponseEvaluator", "results_schema": {"type": "null"},
                                   "expected": {"task_type": "navigate", "status": "SUCCESS", "retrieved_data": null}}),
                net("__SHOPPING__/review/product/list/id/red-mug/", "GET", serde_json::json!({})),
            ]
        ),
    ]);
    let dir = h.join("wav");
    std::fs::create_dir_all(&dir).unwrap();
    let tasks_file = dir.join("tasks.json");
    std::fs::write(&tasks_file, serde_json::to_string_pretty(&tasks).unwrap()).unwrap();
    let mutate = serde_json::json!({"task_type": "MUTATE", "status": "SUCCESS", "retrieved_data": null});
    let review = |nick: &str| {
        vec![
            act("click [6]"),
            act(&format!("type [8] [{nick}] [0]")),
            act("type [9] [Nice] [0]"),
            act("type [10] [Pours well.] [0]"),
            act("click [11]"),
            stop(mutate.clone()),
        ]
    };
    let buy = vec![act("click [3]"), act("click [2]"), act("click [1]"), stop(mutate.clone())];
    let only_answers = vec![stop(mutate.clone())];
    let navigated = serde_json::json!({"task_type": "NAVIGATE", "status": "SUCCESS", "retrieved_data": null});
    let go = |slug: &str| {
        vec![
            act(&format!("goto [https://shop.test/review/product/list/id/{slug}/]")),
            stop(navigated.clone()),
        ]
    };
    let loaded = agent::tasks::load_with_sites(
        &tasks_file,
        &agent::tasks::Sites::from_pairs(&["SHOPPING=https://shop.test"]).unwrap(),
    )
    .unwrap();
    let script = |name: &str, replies: &BTreeMap<&str, Vec<String>>| {
        let pairs: Vec<_> = loaded.iter().map(|t| (t.clone(), replies[t.id.as_str()].clone())).collect();
        let dir = h.join(name);
        agent::policy::write_script(&dir, &pairs).unwrap();
        dir
    };
    // Task 3: the recording agent stops where it starts; "answers" goes to the page the check names
    // (recorded only by the state probe), "other" to a page nobody recorded.
    let submits = script(
        "submits",
        &[("1", buy.clone()), ("2", review("Kim")), ("3", vec![stop(navigated.clone())])].into(),
    );
    let answers =
        script("answers", &[("1", only_answers.clone()), ("2", only_answers), ("3", go("red-mug"))].into());
    let other_values = script("other", &[("1", buy), ("2", review("Bob")), ("3", go("blue-bowl"))].into());
    let reach = sites.reach.clone();
    let run = |mode: &str, out: &Path, policy: &Path| shop_run(&tasks_file, mode, out, policy, &reach);
    let rec = h.join("rec");
    let out = cli(h, run("record", &rec, &submits), vec![]).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    let (v, report) = eval(h, &rec);
    assert_eq!(v, [("1".into(), true), ("2".into(), true), ("3".into(), false)].into(), "{report}");
    // Task 3's probe loaded the page its network check names, before the agent's first action.
    let t3 = trajectory::RunDir::new(&rec).task("3").read_trajectory().unwrap().unwrap();
    assert!(t3.state_probes.as_ref().is_some_and(|p| p.pages >= 1), "{:?}", t3.state_probes);
    assert!(report["tasks"][0]["wire"].as_str().unwrap().contains("its recording rec/1"), "{report}");

    // Live runs keep their own wire too: the agent that only answers fails, the one that submits passes.
    for (name, policy, want) in [("answers", &answers, false), ("submits", &submits, true)] {
        let out_dir = h.join(format!("live-{name}"));
        let out = cli(h, run("live", &out_dir, policy), vec![]).await;
        assert!(out.status.success(), "live {name}: {}", String::from_utf8_lossy(&out.stderr));
        let (v, report) = eval(h, &out_dir);
        assert_eq!(
            v,
            [("1".into(), want), ("2".into(), want), ("3".into(), !want)].into(),
            "live {name}: {report}"
        );
        for t in report["tasks"].as_array().unwrap() {
            assert!(t["wire"].as_str().unwrap_or_default().starts_with("its own wire log ("), "{name}: {t}");
        }
    }
    let live = trajectory::RunDir::new(h.join("live-submits")).task("1");
    let t = live.read_trajectory().unwrap().unwrap();
    let wire = live.read_wire(&t).unwrap().unwrap();
    let add = wire.entries.iter().find(|e| e.method == "POST" && e.url.ends_with("/cart/add")).unwrap();
    assert_eq!(
        (add.request_body.as_deref(), add.status, add.answer),
        (Some("slug=glass-jar"), 303, trajectory::proxy_report::wire::Answer::Live)
    );
    drop(sites);

    // Replays, sealed: each agent scored on what it sent.
    // Task 3: "answers" reaches the probed page and passes, scored; "other" reaches a page the frozen web
    // never saw and fails (its check fails on the URL whatever the site answered).
    for (name, policy, want) in [
        ("same", &submits, [true, true, false]),
        ("answers", &answers, [false, false, true]),
        ("other", &other_values, [true, false, false]),
    ] {
        let out_dir = h.join(format!("replay-{name}"));
        let out = cli(h, run("replay", &out_dir, policy), vec![]).await;
        assert!(out.status.success(), "replay {name}: {}", String::from_utf8_lossy(&out.stderr));
        let (v, report) = eval(h, &out_dir);
        assert_eq!(
            v,
            [("1".into(), want[0]), ("2".into(), want[1]), ("3".into(), want[2])].into(),
            "{name}: {report}"
        );
        // Task 3's state is never unknown: "answers" is scored; "other" left the frozen web (a page it
        // never saw: off the snapshot, coverage's count), and its missed read does not decide its check.
        assert!(report["tasks"][2]["state_unknown"].is_null(), "{name}: {report}");
        if name == "answers" {
            assert_eq!(report["tasks"][2]["scored"], true, "{name}: {report}");
        }
        for t in report["tasks"].as_array().unwrap() {
            let wire = t["wire"].as_str().unwrap_or_default();
            assert!(wire.starts_with("its own wire log ("), "{name}: {t}");
        }
        if name == "other" {
            let checks = report["tasks"][1]["reference"]["checks"].to_string();
            assert!(checks.contains("nickname") || checks.contains("Kim"), "fails on the values: {checks}");
            // Issue 59: its review was a write the recording never made, answered by a replay miss: the
            // agent's attempt, not an event with status 404. The run is counted apart, the write named.
            let apart = report["tasks"][1]["state_unknown"].as_str().unwrap_or_default();
            assert!(apart.contains("could not answer") && apart.contains("nickname=Bob"), "{report}");
            assert_eq!(report["tasks"][1]["scored"], false, "{report}");
        } else {
            assert!(report["state_unknown"].is_null(), "{name}: {report}");
        }
    }

    // The wire log holds what answered each request.
    let log = trajectory::RunDir::new(h.join("replay-same")).task("1");
    let t = log.read_trajectory().unwrap().unwrap();
    let wire = log.read_wire(&t).unwrap().unwrap();
    let add = wire.entries.iter().find(|e| e.method == "POST" && e.url.ends_with("/cart/add")).unwrap();
    assert_eq!(add.request_body.as_deref(), Some("slug=glass-jar"));
    assert_eq!(add.answer, trajectory::proxy_report::wire::Answer::Exact);
    assert_eq!(add.recorded.as_ref().unwrap().snapshot, "rec/1");
    assert!(wire.truncated.is_none());

    // The run's own requests as HAR, for a benchmark's own evaluator.
    let har_dir = h.join("har");
    let out =
        run_cli(h, &["eval", h.join("replay-answers").to_str().unwrap(), "--har", har_dir.to_str().unwrap()]);
    assert!(out.status.success(), "eval --har: {}", String::from_utf8_lossy(&out.stderr));
    let har: Value = serde_json::from_slice(&std::fs::read(har_dir.join("1.har")).unwrap()).unwrap();
    let entries = har["log"]["entries"].as_array().unwrap();
    assert!(
        !entries.is_empty() && entries.iter().all(|e| e["request"]["method"] == "GET"),
        "the agent that only answered posted nothing"
    );
    let out =
        run_cli(h, &["eval", h.join("replay-same").to_str().unwrap(), "--har", har_dir.to_str().unwrap()]);
    assert!(out.status.success(), "eval --har: {}", String::from_utf8_lossy(&out.stderr));
    let har: Value = serde_json::from_slice(&std::fs::read(har_dir.join("1.har")).unwrap()).unwrap();
    let add = har["log"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["request"]["method"] == "POST" && e["request"]["url"] == "https://shop.test/cart/add")
        .expect("the POST this run sent");
    assert_eq!(
        (add["request"]["postData"]["text"].as_str(), add["response"]["status"].as_u64()),
        (Some("slug=glass-jar"), Some(303))
    );

    // A log cut by a crash scores what it holds, and says so.
    let path = h.join("replay-same/1").join(trajectory::wire::WIRE_FILE);
    let bytes = std::fs::read(&path).unwrap();
    let other = h.join("replay-same/2").join(trajectory::wire::WIRE_FILE);
    std::fs::write(&path, &bytes[..bytes.len() - 4]).unwrap();
    let (_, report) = eval(h, &h.join("replay-same"));
    let wire = report["tasks"][0]["wire"].as_str().unwrap();
    assert!(wire.contains("cut by a crash"), "{wire}");
    // A log from another task is refused by name: the task's network checks are not scored.
    std::fs::copy(&other, &path).unwrap();
    let (_, report) = eval(h, &h.join("replay-same"));
    let err = report["tasks"][0]["reference_error"].as_str().unwrap();
    assert!(err.contains("the wire log of task 2") && err.contains("refused"), "{err}");
    assert_eq!(report["tasks"][0]["success"], false);
}

/// Issue 47, part 2, in Chromium: the frozen cart follows the run's writes. Recorded by an agent that
/// looks at the empty cart, visits two products and adds the Glass Jar (the shop then shows the cart with
/// it). Replayed by the same agent: empty, then the item. By one that never adds and opens the cart again:
/// empty both times (by position it would get the recording's second cart, with the item), and it fails,
/// scored at write epoch 0. By one that adds another product: its write was never recorded, so the task's
/// state is unknown and its `program_html` check is counted apart, neither a success nor a failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_frozen_cart_follows_the_runs_writes() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let sites = DemoSites::start(h).await;
    let tasks_file = h.join("cart.json");
    std::fs::write(
        &tasks_file,
        serde_json::json!([{
            "sites": ["shopping"], "task_id": 1, "require_login": false, "storage_state": null,
            "start_url": "__SHOPPING__/cart", "geolocation": null, "require_reset": false,
            "intent": "Put the Glass Jar in the cart.",
            "eval": {"eval_types": ["program_html"], "reference_answers": null, "reference_url": "",
                     "url_note": "",
                     "program_html": [{"url": "__SHOPPING__/cart",
                                       "locator": "document.querySelector('#cart').outerText",
                                       "required_contents": {"must_include": ["Glass Jar"]}}]},
        }])
        .to_string(),
    )
    .unwrap();
    let loaded = agent::tasks::load_with_sites(
        &tasks_file,
        &agent::tasks::Sites::from_pairs(&["SHOPPING=https://shop.test"]).unwrap(),
    )
    .unwrap();
    let script = |name: &str, replies: Vec<String>| {
        let dir = h.join(name);
        agent::policy::write_script(&dir, &[(loaded[0].clone(), replies)]).unwrap();
        dir
    };
    let goto = |p: &str| act(&format!("goto [https://shop.test{p}]"));
    let done = act("stop [done]");
    // On a product page, element 2 is its "Add to cart" button.
    let adds = script(
        "adds",
        vec![goto("/product/red-mug"), goto("/product/glass-jar"), act("click [2]"), done.clone()],
    );
    let never = script(
        "never",
        vec![goto("/product/red-mug"), goto("/product/glass-jar"), goto("/cart"), done.clone()],
    );
    let other = script("other", vec![goto("/product/red-mug"), act("click [2]"), done]);
    let reach = sites.reach.clone();
    let run = |mode: &str, out: &Path, policy: &Path| shop_run(&tasks_file, mode, out, policy, &reach);
    // Whether the cart the agent saw at each step held an item (its "Place order" button), by URL.
    let carts = |out: &Path| -> Vec<bool> {
        let t = trajectory::RunDir::new(out).task("1").read_trajectory().unwrap().unwrap();
        t.steps
            .iter()
            .filter(|s| s.url_before.ends_with("/cart"))
            .map(|s| s.elements.contains("Place order"))
            .collect()
    };
    let rec = h.join("rec");
    let out = cli(h, run("record", &rec, &adds), vec![]).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(carts(&rec), [false, true], "recorded: the empty cart, then the cart with the jar");
    let (v, report) = eval(h, &rec);
    assert_eq!(v, [("1".into(), true)].into(), "{report}");
    drop(sites);

    for (name, policy, seen, scored) in [
        ("same", &adds, vec![false, true], Some(true)),
        ("never", &never, vec![false, false], Some(false)),
        ("other", &other, vec![false], None),
    ] {
        let out_dir = h.join(format!("replay-{name}"));
        let out = cli(h, run("replay", &out_dir, policy), vec![]).await;
        assert!(out.status.success(), "replay {name}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(carts(&out_dir), seen, "{name}: what the cart held at each visit");
        let (v, report) = eval(h, &out_dir);
        let t = &report["tasks"][0];
        match scored {
            Some(ok) => {
                assert_eq!(v["1"], ok, "{name}: {report}");
                assert!(t["state_unknown"].is_null(), "{name}: {t}");
                assert_eq!(t["scored"], true, "{name}: {t}");
            }
            None => {
                assert!(t["state_unknown"].is_string(), "{name}: unknown: {t}");
                assert_eq!(t["success"], false, "{name}: {t}");
                let apart = report["state_unknown"].to_string();
                assert!(
                    apart.contains("\"1 (") && apart.contains("slug=red-mug"),
                    "{name}: counted apart: {report}"
                );
            }
        }
    }
}

/// Issue 59: a frozen run's verdict is its live verdict. The cart task starts on the shop's home page, so
/// the cart is never opened before the recording agent's add: only the state probes read it at epoch 0.
/// Replayed by an agent that only answers, one that looks at the product without adding it, one that adds
/// another product, and the recording's own: the first two are scored and fail (their checks read the
/// probe's empty cart, never the cart after a write they did not make), the third is counted apart with its
/// write named, the last succeeds. The probe is flagged in the snapshot and is not a step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue_59_state_tasks_are_scored_at_their_write_epoch() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let sites = DemoSites::start(h).await;
    let tasks_file = h.join("cart.json");
    std::fs::write(
        &tasks_file,
        serde_json::json!([{
            "sites": ["shopping"], "task_id": 1, "require_login": false, "storage_state": null,
            "start_url": "__SHOPPING__/", "geolocation": null, "require_reset": false,
            "intent": "Put the Glass Jar in the cart. Which product is in the cart?",
            "eval": {"eval_types": ["string_match", "program_html"],
                     "reference_answers": {"must_include": ["Glass Jar"]}, "reference_url": "", "url_note": "",
                     "program_html": [{"url": "__SHOPPING__/cart",
                                       "locator": "document.querySelector('#cart').outerText",
                                       "required_contents": {"must_include": ["Glass Jar"]}}]},
        }])
        .to_string(),
    )
    .unwrap();
    let loaded = agent::tasks::load_with_sites(
        &tasks_file,
        &agent::tasks::Sites::from_pairs(&["SHOPPING=https://shop.test"]).unwrap(),
    )
    .unwrap();
    let script = |name: &str, replies: Vec<String>| {
        let dir = h.join(name);
        agent::policy::write_script(&dir, &[(loaded[0].clone(), replies)]).unwrap();
        dir
    };
    let goto = |p: &str| act(&format!("goto [https://shop.test{p}]"));
    let answer = act("stop [Glass Jar]");
    // On a product page, element 2 is its "Add to cart" button.
    let adds = script(
        "adds",
        vec![goto("/product/red-mug"), goto("/product/glass-jar"), act("click [2]"), answer.clone()],
    );
    let answers = script("answers", vec![answer.clone()]);
    let looks = script("looks", vec![goto("/product/glass-jar"), answer.clone()]);
    let other = script("other", vec![goto("/product/red-mug"), act("click [2]"), answer]);
    let reach = sites.reach.clone();
    let run = |mode: &str, out: &Path, policy: &Path| shop_run(&tasks_file, mode, out, policy, &reach);
    let rec = h.join("rec");
    let out = cli(h, run("record", &rec, &adds), vec![]).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    let (v, report) = eval(h, &rec);
    assert_eq!(v, [("1".into(), true)].into(), "{report}");
    // Two rounds of probes (before the first action, after the add), one page each; not steps.
    let t = trajectory::RunDir::new(&rec).task("1").read_trajectory().unwrap().unwrap();
    let probes = t.state_probes.clone().expect("the recording probed the cart");
    assert_eq!((probes.rounds, probes.pages), (2, 2), "{probes:?}");
    assert_eq!(t.steps.len(), 4);
    drop(sites);
    {
        let store = snapshots::Store::open_read_only(&h.join("store")).unwrap();
        let m = store.manifest("rec/1").unwrap();
        let carts: Vec<(bool, u64)> = store
            .exchanges(&m)
            .map(|x| x.unwrap())
            .filter(|x| x.request.method == "GET" && x.request.url == "https://shop.test/cart")
            .map(|x| (x.flags.probe, x.seq))
            .collect();
        assert!(carts.iter().filter(|c| c.0).count() >= 2, "the probes' carts, flagged: {carts:?}");
        let x = store.exchanges(&m).map(|x| x.unwrap()).find(|x| x.flags.probe).unwrap();
        assert!(x.request.header(agent::runner::PROBE_HEADER).is_none(), "the mark is never stored");
    }
    for (name, policy, want) in [
        ("same", &adds, Ok(true)),
        ("answers", &answers, Ok(false)),
        ("looks", &looks, Ok(false)),
        ("other", &other, Err("slug=red-mug")),
    ] {
        let out_dir = h.join(format!("replay-{name}"));
        let out = cli(h, run("replay", &out_dir, policy), vec![]).await;
        assert!(out.status.success(), "replay {name}: {}", String::from_utf8_lossy(&out.stderr));
        let (v, report) = eval(h, &out_dir);
        let t = &report["tasks"][0];
        match want {
            Ok(ok) => {
                assert_eq!((v["1"], &t["scored"]), (ok, &Value::Bool(true)), "{name}: {report}");
                assert!(t["state_unknown"].is_null(), "{name}: {t}");
            }
            Err(named) => {
                let why = t["state_unknown"].as_str().unwrap_or_default();
                assert!(why.contains(named), "{name}: the write named: {report}");
                assert_eq!((v["1"], &t["scored"]), (false, &Value::Bool(false)), "{name}: {report}");
                assert_eq!(report["overall"]["state_unknown"], 1, "{name}: {report}");
            }
        }
    }
}
