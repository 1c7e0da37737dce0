//! WebArena-Verified scored by webfreeze and by its own evaluator (`webarena-verified` from PyPI), case by
//! case: for every one of its 812 tasks, answers and request traces built from the task's expected
//! values and then changed (tests/support/webarena_verified.py), scored by both. Every case webfreeze
//! scores must get their verdict; the cases webfreeze does not score yet are counted by reason, and
//! must be a minority.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use evaluator::verified::network::Event;
use serde_json::Value;

use crate::support::*;

const INSTALL: &str = "python -m pip install --target DIR webarena-verified==1.2.3, and set \
     WEBFREEZE_TEST_WEBARENA_VERIFIED=DIR (scripts/test.sh does both)";

fn lib() -> PathBuf {
    let dir = std::env::var_os("WEBFREEZE_TEST_WEBARENA_VERIFIED").map(PathBuf::from).unwrap_or_else(|| {
        panic!(
            "WEBFREEZE_TEST_WEBARENA_VERIFIED is not set: the cross-check needs their evaluator: {INSTALL}"
        )
    });
    assert!(
        dir.join("webarena_verified/api").is_dir(),
        "{} has no webarena_verified: {INSTALL}",
        dir.display()
    );
    dir
}

const SITES: &[(&str, &str)] = &[
    ("SHOPPING", "http://shop.test:7770"),
    ("SHOPPING_ADMIN", "http://admin.test:7780/admin"),
    ("GITLAB", "http://gitlab.test:8023"),
    ("REDDIT", "http://reddit.test:9999"),
    ("MAP", "http://map.test:3000"),
    ("WIKIPEDIA", "http://wiki.test:8888"),
    ("HOMEPAGE", "http://home.test:4399"),
];

fn python(mode: &str, lib: &Path, dataset: &Path, sites: &Path, stdin: Option<&[u8]>) -> Vec<u8> {
    let args = [mode, lib.to_str().unwrap(), dataset.to_str().unwrap(), sites.to_str().unwrap()];
    python_script("webarena_verified.py", &args, stdin.unwrap_or_default())
}

/// A HAR entry as a network event (what webfreeze reads from a snapshot).
/// (scored, success) per task of an `eval --json` report.
fn our_verdicts(report: &Value) -> BTreeMap<String, (bool, bool)> {
    report["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["id"].as_str().unwrap().to_string(), (t["scored"] == true, t["success"] == true)))
        .collect()
}

/// (scored, success) per task id of their evaluator's verdicts, given in the order of `ids`.
fn their_verdicts<'a>(
    ids: impl Iterator<Item = &'a String>,
    verdicts: &[Value],
) -> BTreeMap<String, (bool, bool)> {
    ids.zip(verdicts)
        .map(|(id, v)| (id.clone(), (v["status"] != "error", v["score"].as_f64() == Some(1.0))))
        .collect()
}

fn event(e: &Value) -> Event {
    let headers = |v: &Value| -> Vec<(String, String)> {
        v.as_array()
            .into_iter()
            .flatten()
            .map(|h| (h["name"].as_str().unwrap().to_string(), h["value"].as_str().unwrap().to_string()))
            .collect()
    };
    let req = &e["request"];
    Event {
        method: req["method"].as_str().unwrap().to_string(),
        url: req["url"].as_str().unwrap().to_string(),
        request_headers: headers(&req["headers"]),
        post: req.get("postData").map(|p| {
            (p["mimeType"].as_str().unwrap_or("").to_string(), p["text"].as_str().unwrap_or("").to_string())
        }),
        status: e["response"]["status"].as_i64().unwrap(),
        response_headers: headers(&e["response"]["headers"]),
        response: None,
    }
}

#[test]
fn webarena_verified_verdicts_match_their_evaluator() {
    let lib = lib();
    let dataset = lib.join("webarena_verified/assets/dataset/webarena-verified.json");
    let dir = tempfile::tempdir().unwrap();
    let sites_json: BTreeMap<String, &str> = SITES.iter().map(|(k, v)| (format!("__{k}__"), *v)).collect();
    let sites_file = dir.path().join("sites.json");
    std::fs::write(&sites_file, serde_json::to_string(&sites_json).unwrap()).unwrap();
    let cases_raw = python("gen", &lib, &dataset, &sites_file, None);
    let verdicts: Vec<Value> =
        serde_json::from_slice(&python("eval", &lib, &dataset, &sites_file, Some(&cases_raw))).unwrap();
    let cases: Vec<Value> = serde_json::from_slice(&cases_raw).unwrap();
    assert_eq!(cases.len(), verdicts.len());
    assert!(cases.len() > 4000, "{} cases", cases.len());

    // Their task file, read as it is.
    let pairs: Vec<String> = SITES.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let tasks =
        agent::tasks::load_with_sites(&dataset, &agent::tasks::Sites::from_pairs(&pairs).unwrap()).unwrap();
    assert_eq!(tasks.len(), 812);
    let by_id: BTreeMap<&str, &agent::tasks::Task> = tasks.iter().map(|t| (t.id.as_str(), t)).collect();

    let (mut agree, mut disagree, mut unscored) = (0, Vec::new(), BTreeMap::<String, usize>::new());
    let (mut their_errors, mut passes) = (0, 0);
    for (c, v) in cases.iter().zip(&verdicts) {
        let id = c["task_id"].to_string();
        let task = by_id[id.as_str()];
        let Some(trajectory::TaskEvalSpec::Verified(eval)) = &task.setup.eval else {
            panic!("task {id}: not a WebArena-Verified spec: {:?}", task.setup.eval)
        };
        let events: Vec<Event> = c["har"].as_array().unwrap().iter().map(event).collect();
        // Their evaluator erred on the case (a spec it cannot run): nothing to compare.
        if v["status"] == "error" {
            their_errors += 1;
            continue;
        }
        let theirs = v["score"].as_f64().unwrap() >= 1.0;
        match evaluator::verified::score(eval, c["response"].as_str().unwrap(), Some(&events)) {
            Err(e) => {
                let reason = match e {
                    evaluator::verified::VerifiedError::In { source, .. } => source.to_string(),
                    other => other.to_string(),
                };
                *unscored.entry(reason.chars().take(80).collect()).or_default() += 1;
            }
            Ok(results) => {
                let ours = results.iter().all(|r| r.failures.is_empty());
                passes += usize::from(ours);
                if ours == theirs {
                    agree += 1;
                } else {
                    disagree.push(format!(
                        "task {id} {}: theirs {theirs}, ours {ours}: {:?}",
                        c["label"],
                        results.iter().flat_map(|r| r.failures.clone()).collect::<Vec<_>>()
                    ));
                }
            }
        }
    }
    let n_unscored: usize = unscored.values().sum();
    eprintln!(
        "WebArena-Verified cross-check: {} cases; {agree} agree, {} disagree, {n_unscored} not scored here, \
         {their_errors} their evaluator erred on; passes {passes}",
        cases.len(),
        disagree.len()
    );
    for (r, n) in &unscored {
        eprintln!("  not scored here ({n}): {r}");
    }
    assert!(disagree.is_empty(), "{} verdicts differ:\n{}", disagree.len(), disagree.join("\n"));
    assert!(passes > 500, "the cases include passing ones ({passes})");
    // Every schema format and spec field the dataset uses is scored here (webarena-verified 1.2.3).
    assert_eq!(n_unscored, 0, "cases not scored here: {unscored:?}");
}

/// WebArena-Verified tasks of our own on the demo shop, in their file format: recorded live with scripted
/// replies, scored by `webfreeze eval` from the snapshots' requests, and by their evaluator on each
/// snapshot's HAR export (`snapshots export --format har`) with the agent's answer: the same verdict on
/// every task, passing and failing ones (a wrong form field, a redirect that is not the expected one, a
/// submit that must not happen, a wrong retrieved value).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webarena_verified_tasks_on_the_demo_shop_score_as_their_evaluator_scores_them() {
    let lib = lib();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let sites = DemoSites::start(h).await;
    let resp = |ty: &str, data: Value| {
        serde_json::json!({"evaluator": "AgentResponseEvaluator", "results_schema": {"type": "array", "items": {"type": "number"}},
                           "expected": {"task_type": ty, "status": "SUCCESS", "retrieved_data": data}})
    };
    let net = |url: &str, method: &str, extra: Value| {
        let mut e = serde_json::json!({"url": url, "http_method": method});
        e.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        serde_json::json!({"evaluator": "NetworkEventEvaluator", "expected": e})
    };
    let cart_add = |slug: &str| {
        net(
            "__SHOPPING__/cart/add",
            "POST",
            serde_json::json!({"post_data": {"slug": slug}, "response_status": 303}),
        )
    };
    let checkout = |status: u16| {
        net(
            "__SHOPPING__/checkout",
            "POST",
            serde_json::json!({"response_status": status, "headers": {"referer": "__SHOPPING__/cart"}}),
        )
    };
    let task = |id: u32, start: &str, intent: &str, eval: Vec<Value>| {
        serde_json::json!({"sites": ["shopping"], "task_id": id, "intent_template_id": 0, "start_urls": [start],
                           "intent": intent, "intent_template": intent, "instantiation_dict": {}, "eval": eval, "revision": 1})
    };
    let buy = "Buy the cheapest product in the shop.";
    let mut not_submitted =
        net("__SHOPPING__/review/product/post/id/green-teapot/", "POST", serde_json::json!({}));
    not_submitted["should_not_exist"] = serde_json::json!(true);
    let tasks = serde_json::json!([
        task(
            1,
            "__SHOPPING__/product/blue-kettle",
            "What is the price of the Blue Kettle?",
            vec![resp("retrieve", serde_json::json!([24]))]
        ),
        task(
            2,
            "__SHOPPING__/",
            buy,
            vec![resp("mutate", Value::Null), cart_add("glass-jar"), checkout(303)]
        ),
        task(
            3,
            "__SHOPPING__/product/red-mug",
            "Show me the reviews of the Red Mug.",
            vec![
                resp("navigate", Value::Null),
                net("__SHOPPING__/review/product/list/id/red-mug/", "GET", serde_json::json!({}))
            ]
        ),
        task(4, "__SHOPPING__/", buy, vec![resp("mutate", Value::Null), cart_add("red-mug")]),
        task(5, "__SHOPPING__/", buy, vec![resp("mutate", Value::Null), checkout(302)]),
        task(
            6,
            "__SHOPPING__/review/product/list/id/green-teapot/",
            "Fill in a 4-star review of the Green Teapot as Kim, but do not submit it.",
            vec![resp("mutate", Value::Null), not_submitted]
        ),
        task(
            7,
            "__SHOPPING__/product/red-mug",
            "How many reviews does the Red Mug have?",
            vec![resp("retrieve", serde_json::json!([48]))]
        ),
    ]);
    let dir = h.join("verified");
    std::fs::create_dir_all(&dir).unwrap();
    let tasks_file = dir.join("webarena-verified.json");
    std::fs::write(&tasks_file, serde_json::to_string_pretty(&tasks).unwrap()).unwrap();
    let stop = |v: Value| format!("In summary, the next action I will perform is ```stop [{v}]```");
    let mutate = serde_json::json!({"task_type": "MUTATE", "status": "SUCCESS", "retrieved_data": null});
    let buy_steps = vec![
        "In summary, the next action I will perform is ```click [3]```".to_string(),
        "In summary, the next action I will perform is ```click [2]```".to_string(),
        "In summary, the next action I will perform is ```click [1]```".to_string(),
        stop(mutate.clone()),
    ];
    let replies: BTreeMap<&str, Vec<String>> = [
        (
            "1",
            vec![stop(
                serde_json::json!({"task_type": "RETRIEVE", "status": "SUCCESS", "retrieved_data": [24.0]}),
            )],
        ),
        ("2", buy_steps.clone()),
        (
            "3",
            vec![
                "In summary, the next action I will perform is ```click [3]```".to_string(),
                stop(
                    serde_json::json!({"task_type": "NAVIGATE", "status": "SUCCESS", "retrieved_data": null}),
                ),
            ],
        ),
        ("4", buy_steps.clone()),
        ("5", buy_steps),
        (
            "6",
            vec![
                "In summary, the next action I will perform is ```click [6]```".to_string(),
                "In summary, the next action I will perform is ```type [8] [Kim] [0]```".to_string(),
                "In summary, the next action I will perform is ```type [9] [Nice] [0]```".to_string(),
                "In summary, the next action I will perform is ```type [10] [Pours well.] [0]```".to_string(),
                "In summary, the next action I will perform is ```click [11]```".to_string(),
                stop(mutate),
            ],
        ),
        // Lower case and a number as text are read as theirs reads them; the value is wrong.
        (
            "7",
            vec![stop(
                serde_json::json!({"task_type": "retrieve", "status": "success", "retrieved_data": ["47"]}),
            )],
        ),
    ]
    .into();
    let loaded = agent::tasks::load_with_sites(
        &tasks_file,
        &agent::tasks::Sites::from_pairs(&["SHOPPING=https://shop.test"]).unwrap(),
    )
    .unwrap();
    assert!(loaded.iter().all(|t| t.benchmark == trajectory::Benchmark::WebArenaVerified));
    let pairs: Vec<_> = loaded
        .into_iter()
        .map(|t| {
            let r = replies[t.id.as_str()].clone();
            (t, r)
        })
        .collect();
    let script = h.join("script");
    agent::policy::write_script(&script, &pairs).unwrap();
    let rec = h.join("rec");
    let args = RunArgs::new(&tasks_file, "record", &rec)
        .opt("--site", "SHOPPING=https://shop.test")
        .opt("--action-space", "webarena")
        .opt("--policy", format!("trajectory:{}", script.display()))
        .opt("--jobs", "1")
        .args(&sites.reach);
    let out = cli(h, args.build(), vec![]).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));

    // webfreeze's verdicts, from the snapshots' requests.
    let out = run_cli(h, &["eval", rec.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "eval: {}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ours = our_verdicts(&report);
    let want: BTreeMap<String, (bool, bool)> =
        [("1", true), ("2", true), ("3", true), ("4", false), ("5", false), ("6", false), ("7", false)]
            .into_iter()
            .map(|(id, ok)| (id.to_string(), (true, ok)))
            .collect();
    assert_eq!(ours, want, "{}", serde_json::to_string_pretty(&report["tasks"]).unwrap());

    // Theirs, from each snapshot's HAR export and the agent's answer.
    let mut cases = Vec::new();
    for id in want.keys() {
        let har = dir.join(format!("{id}.har"));
        let ex = run_cli(
            h,
            &["snapshots", "export", &format!("rec/{id}"), "--format", "har", "--out", har.to_str().unwrap()],
        );
        assert!(ex.status.success(), "export: {}", String::from_utf8_lossy(&ex.stderr));
        let har: Value = serde_json::from_slice(&std::fs::read(&har).unwrap()).unwrap();
        let t = traj(&rec, id);
        cases.push(serde_json::json!({"task_id": id.parse::<u32>().unwrap(), "label": "demo",
                                      "response": t.answer.unwrap_or_default(), "har": har["log"]["entries"]}));
    }
    let sites_file = dir.join("sites.json");
    std::fs::write(&sites_file, serde_json::json!({"__SHOPPING__": "https://shop.test"}).to_string())
        .unwrap();
    let verdicts: Vec<Value> = serde_json::from_slice(&python(
        "eval",
        &lib,
        &tasks_file,
        &sites_file,
        Some(&serde_json::to_vec(&cases).unwrap()),
    ))
    .unwrap();
    let theirs = their_verdicts(want.keys(), &verdicts);
    assert_eq!(theirs, ours, "their verdicts: {verdicts:?}");

    // Replayed by another agent that only gives each task's final answer: scored by `eval` on its own wire
    // log, and by their evaluator on the same run's `eval --har` export; the two agree, and the tasks the
    // recording passed by submitting forms now fail.
    drop(sites);
    let answers_only: Vec<_> =
        pairs.iter().map(|(t, r)| (t.clone(), vec![r.last().unwrap().clone()])).collect();
    let script = h.join("answers-only");
    agent::policy::write_script(&script, &answers_only).unwrap();
    let other = h.join("other");
    let args = RunArgs::new(&tasks_file, "replay", &other)
        .opt("--site", "SHOPPING=https://shop.test")
        .opt("--action-space", "webarena")
        .opt("--policy", format!("trajectory:{}", script.display()))
        .opt("--jobs", "1")
        .opt("--snapshots", "rec");
    let out = cli(h, args.build(), vec![]).await;
    assert!(out.status.success(), "replay: {}", String::from_utf8_lossy(&out.stderr));
    let out = run_cli(h, &["eval", other.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "eval: {}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ours_other = our_verdicts(&report);
    assert_eq!(ours_other["2"], (true, false), "it bought nothing: {report}");
    let har_dir = dir.join("other-har");
    let out = run_cli(h, &["eval", other.to_str().unwrap(), "--har", har_dir.to_str().unwrap()]);
    assert!(out.status.success(), "eval --har: {}", String::from_utf8_lossy(&out.stderr));
    let cases: Vec<Value> = want
        .keys()
        .map(|id| {
            let har: Value =
                serde_json::from_slice(&std::fs::read(har_dir.join(format!("{id}.har"))).unwrap()).unwrap();
            let t = traj(&other, id);
            serde_json::json!({"task_id": id.parse::<u32>().unwrap(), "label": "another agent",
                               "response": t.answer.unwrap_or_default(), "har": har["log"]["entries"]})
        })
        .collect();
    let verdicts: Vec<Value> = serde_json::from_slice(&python(
        "eval",
        &lib,
        &tasks_file,
        &sites_file,
        Some(&serde_json::to_vec(&cases).unwrap()),
    ))
    .unwrap();
    let theirs_other = their_verdicts(want.keys(), &verdicts);
    assert_eq!(theirs_other, ours_other, "their verdicts on the other agent's wire: {verdicts:?}");
}
