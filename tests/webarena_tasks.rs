//! WebArena-format tasks end to end on the demo sites: a config array with site placeholders, a
//! storage_state (cookie + localStorage), a viewport, and string_match / url_match / program_html eval
//! specs; recorded live with a scripted agent, scored by `webfreeze eval`, then replayed from the
//! snapshots with the sites stopped (the program_html checks re-run offline, including one on a page
//! only a check opened) and scored the same.

use std::path::Path;

use trajectory::{Outcome, RunDir};

use crate::support::*;

fn wa_tasks(dir: &Path) -> std::path::PathBuf {
    std::fs::create_dir_all(dir.join(".auth")).unwrap();
    std::fs::write(
        dir.join(".auth/shop_state.json"),
        serde_json::json!({
            "cookies": [{"name": "wf_session", "value": "abc123", "domain": "shop.test", "path": "/",
                         "expires": -1, "httpOnly": true, "secure": true, "sameSite": "Lax"}],
            "origins": [{"origin": "https://shop.test", "localStorage": [{"name": "cart", "value": "2 items"}]}],
        })
        .to_string(),
    )
    .unwrap();
    let common = |id: &str, intent: &str, eval: serde_json::Value| {
        serde_json::json!({
            "sites": ["shopping"], "task_id": id, "require_login": true,
            "storage_state": "./.auth/shop_state.json", "start_url": "__SHOP__/",
            "geolocation": null, "viewport_size": {"width": 1280, "height": 1000},
            "intent_template": "", "instantiation_dict": {}, "intent": intent, "require_reset": false,
            "eval": eval,
        })
    };
    let tasks = serde_json::json!([
        common(
            "DemoShop--0",
            "What is the price of the Blue Kettle in the Demo Shop?",
            serde_json::json!({
                "eval_types": ["string_match", "url_match"],
                "reference_answers": {"must_include": ["24.00"]},
                "reference_url": "__SHOP__/product/blue-kettle", "url_note": "GOLD in PRED", "program_html": [],
            })
        ),
        common(
            "DemoShop--1",
            "Which product is the cheapest in the Demo Shop?",
            serde_json::json!({
                "eval_types": ["string_match"], "reference_answers": {"exact_match": "glass jar"},
                "reference_url": "", "program_html": [],
                // Not WebArena's: kept, reported at load and in eval.json, not scored.
                "reviewer_note": "checked twice",
            })
        ),
        // program_html: one check on the page the agent ended on, one on a page it never opened (loaded,
        // and recorded, by the check itself), one on the whole HTML of a page.
        common(
            "DemoShop--2",
            "Which product is on promotion today in the Demo Shop?",
            serde_json::json!({
                "eval_types": ["program_html"], "reference_answers": null, "reference_url": "",
                "program_html": [
                    {"url": "last", "locator": "document.querySelector('h1').outerText",
                     "required_contents": {"must_include": ["Green Teapot"]}},
                    {"url": "__SHOP__/product/red-mug", "locator": "document.querySelector('#price').outerText",
                     "required_contents": {"exact_match": "$8.50"}},
                    {"url": "__SHOP__/", "locator": "",
                     "required_contents": {"must_include": ["Demo Shop |OR| nothing"]}},
                ],
            })
        ),
        // The shop REST helpers (WebArena's Magento API calls, made through the task's proxy): the agent
        // places an order, the checks find it by the API and read the reviews.
        common(
            "DemoShop--3",
            "Buy the cheapest product in the Demo Shop.",
            serde_json::json!({
                "eval_types": ["program_html"], "reference_answers": null, "reference_url": "",
                "program_html": [
                    {"url": "func:shopping_get_latest_order_url()",
                     "locator": "document.querySelector(\".order-details-items.ordered\").outerText",
                     "required_contents": {"must_include": ["B0DEMO0006"]}},
                    {"url": "last", "locator": "func:shopping_get_order_product_name_list(__page__)",
                     "required_contents": {"exact_match": "Glass Jar"}},
                    {"url": "last", "locator": "func:shopping_get_sku_latest_review_author('B0DEMO0001')",
                     "required_contents": {"must_include": ["Emma Lopez"]}},
                    {"url": "last", "locator": "func:shopping_get_sku_latest_review_rating(\"B0DEMO0001\")",
                     "required_contents": {"exact_match": "100"}},
                ],
            })
        ),
        // REST helpers that run and fail a check: scored, not "not supported".
        common(
            "DemoShop--4",
            "Which product is on promotion today in the Demo Shop?",
            serde_json::json!({
                "eval_types": ["program_html"], "reference_answers": null, "reference_url": "",
                "program_html": [
                    {"url": "func:shopping_get_sku_product_page_url('B0DEMO0006')",
                     "locator": "document.querySelector('h1').outerText",
                     "required_contents": {"exact_match": "Glass Jar"}},
                    {"url": "last", "locator": "func:shopping_get_sku_latest_review_text('B0DEMO0006')",
                     "required_contents": {"must_include": ["the lid seals well"]}},
                ],
            })
        ),
    ]);
    let f = dir.join("test.raw.json");
    std::fs::write(&f, serde_json::to_string_pretty(&tasks).unwrap()).unwrap();
    f
}

/// `webfreeze run` over the task file with the demo shop as SHOP, re-executing `replies` (a run dir).
fn run_args(tasks: &Path, mode: &str, replies: &Path, out: &Path) -> Vec<String> {
    RunArgs::new(tasks, mode, out)
        .opt("--site", "SHOP=https://shop.test")
        .opt("--site", "SHOPPING=https://shop.test")
        .opt("--policy", format!("trajectory:{}", replies.display()))
        .settle_ms(200)
        .build()
}

fn eval_json(home: &Path, run: &Path) -> serde_json::Value {
    let out = run_cli(home, &["eval", run.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "eval: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// (id, scored, success, failed checks, reference_error) per task.
fn verdicts(e: &serde_json::Value) -> Vec<(String, bool, bool, usize, Option<String>)> {
    e["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let failed = t["reference"]["checks"]
                .as_array()
                .map_or(0, |c| c.iter().filter(|c| c["pass"] == false).count());
            (
                t["id"].as_str().unwrap().to_string(),
                t["scored"].as_bool().unwrap(),
                t["success"].as_bool().unwrap(),
                failed,
                t["reference_error"].as_str().map(str::to_string),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webarena_tasks_record_score_and_replay_scored_the_same() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let mut sites = DemoSites::start(h).await;
    let tasks = wa_tasks(&h.join("config"));

    // The demo's scripted replies, keyed by the same task ids.
    let loaded = agent::tasks::load_with_sites(
        &tasks,
        &agent::tasks::Sites::from_pairs(&["SHOP=https://shop.test", "SHOPPING=https://shop.test"]).unwrap(),
    )
    .unwrap();
    assert_eq!(loaded[0].setup.viewport, (Some(1280), Some(1000)));
    let scripts: std::collections::BTreeMap<String, Vec<String>> =
        serde_json::from_str(demo::SCRIPTS_JSON).unwrap();
    let pairs: Vec<_> = loaded
        .into_iter()
        .map(|t| {
            // DemoShop--4 asks DemoShop--2's question: the same replies. DemoShop--3 buys the cheapest
            // product: open it (first in the list), add it to the cart, place the order.
            let r = match t.id.as_str() {
                "DemoShop--3" => [
                    "Thought: The cheapest is first.\nAction: Click [3]",
                    "Thought: I add it to the cart.\nAction: Click [2]",
                    "Thought: I place the order.\nAction: Click [1]",
                    "Thought: The order is placed.\nAction: ANSWER; ordered",
                ]
                .map(str::to_string)
                .to_vec(),
                "DemoShop--4" => scripts["DemoShop--2"].clone(),
                id => scripts[id].clone(),
            };
            (t, r)
        })
        .collect();
    let script = h.join("script");
    agent::policy::write_script(&script, &pairs).unwrap();

    // Without its site the file is refused, naming the placeholder and the flag.
    let out = run_cli(
        h,
        &RunArgs::new(&tasks, "live", &h.join("x"))
            .opt("--policy", format!("trajectory:{}", script.display()))
            .build()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("task DemoShop--0: start_url")
            && err.contains("--site SHOP=URL"),
        "{err}"
    );

    let rec = h.join("rec");
    let mut args = run_args(&tasks, "record", &script, &rec);
    args.extend(sites.reach.iter().cloned());
    let out = cli(h, args, vec![]).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: 1 task(s) have eval spec parts")
            && err.contains("task DemoShop--1: eval.reviewer_note"),
        "{err}"
    );
    for id in ["DemoShop--0", "DemoShop--1", "DemoShop--2", "DemoShop--3", "DemoShop--4"] {
        let t = RunDir::new(&rec).task(id).read_trajectory().unwrap().unwrap();
        assert_eq!(t.outcome, Outcome::Answered, "{id}: {t:?}");
        assert!(t.task_eval.is_some(), "{id}: the spec travels with the trajectory");
    }
    let t0 = RunDir::new(&rec).task("DemoShop--0").read_trajectory().unwrap().unwrap();
    let spec = t0.task_eval.as_ref().and_then(trajectory::TaskEvalSpec::webarena).unwrap();
    assert_eq!(spec.reference_url.as_deref(), Some("https://shop.test/product/blue-kettle"));

    // The storage state reached the site: the recorded start page request carried its cookie.
    let show = run_cli(h, &["snapshots", "show", "rec/DemoShop--0", "--json", "--limit", "1"]);
    let v: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    let headers = v["exchanges"][0]["request"]["headers"].to_string();
    assert!(headers.contains("wf_session=abc123"), "{headers}");
    // The viewport: the first step's screenshot is 1280 wide (PNG IHDR).
    let shot = std::fs::read_dir(RunDir::new(&rec).task("DemoShop--0").path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "png"))
        .expect("a screenshot");
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 1280, "{}", shot.display());

    let live = verdicts(&eval_json(h, &rec));
    assert_eq!(
        live,
        vec![
            ("DemoShop--0".into(), true, true, 0, None),
            ("DemoShop--1".into(), true, true, 0, None),
            ("DemoShop--2".into(), true, true, 0, None),
            ("DemoShop--3".into(), true, true, 0, None),
            ("DemoShop--4".into(), true, false, 1, None),
        ]
    );
    let unknown = |e: &serde_json::Value| -> Vec<(String, serde_json::Value)> {
        let tasks = e["tasks"].as_array().unwrap().iter();
        tasks
            .filter(|t| t.get("unknown_spec_parts").is_some())
            .map(|t| (t["id"].to_string(), t["unknown_spec_parts"].clone()))
            .collect()
    };
    assert_eq!(
        unknown(&eval_json(h, &rec)),
        [("\"DemoShop--1\"".to_string(), serde_json::json!(["eval.reviewer_note"]))]
    );
    let table = run_cli(h, &["eval", rec.to_str().unwrap()]);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(!table.contains("Not scored"), "{table}");
    assert!(table.contains("Eval spec parts not known here, so not scored (see unknown_spec_parts in eval.json): DemoShop--1 (eval.reviewer_note)"), "{table}");
    // The REST helpers' evidence: the order URL the API gave, the values it gave, and the calls in the
    // task's snapshot (so the offline re-scoring below answers them).
    let t3 = RunDir::new(&rec).task("DemoShop--3").read_trajectory().unwrap().unwrap();
    assert_eq!(
        t3.html_checks[0].visited, "https://shop.test/sales/order/view/order_id/3/",
        "{:?}",
        t3.html_checks
    );
    assert_eq!(t3.html_checks[1].result, "Glass Jar");
    assert_eq!((t3.html_checks[2].result.as_str(), t3.html_checks[3].result.as_str()), ("Emma Lopez", "100"));
    let t4 = RunDir::new(&rec).task("DemoShop--4").read_trajectory().unwrap().unwrap();
    assert_eq!(t4.html_checks[0].visited, "https://shop.test/glass-jar.html");
    assert_eq!(t4.html_checks[1].result, "The jar is fine, the lid does not seal.");
    let show = run_cli(h, &["snapshots", "show", "rec/DemoShop--3", "--json", "--limit", "100"]);
    let shown = String::from_utf8_lossy(&show.stdout);
    for url in [
        "/rest/default/V1/integration/admin/token",
        "/rest/V1/orders?",
        "/rest/V1/products/B0DEMO0001/reviews",
    ] {
        assert!(shown.contains(url), "{url} not recorded");
    }
    // The admin password is in no file of the run (only in the snapshot, like a submitted sign-in form).
    for f in walk(&rec) {
        let text = std::fs::read(&f).unwrap();
        assert!(!String::from_utf8_lossy(&text).contains("admin1234"), "{}", f.display());
    }
    // The checks' evidence is in the trajectory; the page the agent never opened was recorded.
    let t2 = RunDir::new(&rec).task("DemoShop--2").read_trajectory().unwrap().unwrap();
    assert_eq!(t2.html_checks.len(), 3);
    assert_eq!(t2.html_checks[1].result, "$8.50");
    assert_eq!(t2.html_checks[1].visited, "https://shop.test/product/red-mug");
    assert!(t2.html_checks[2].result.starts_with("<!DOCTYPE html><html"), "{}", t2.html_checks[2].result);
    let show = run_cli(h, &["snapshots", "show", "rec/DemoShop--2", "--json", "--limit", "100"]);
    assert!(String::from_utf8_lossy(&show.stdout).contains("https://shop.test/product/red-mug"));

    // Frozen: the sites go away. First `eval --rescore`: the checks re-run offline against each task's
    // snapshot in a fresh browser, without the agent, and give the same verdicts.
    sites.stop();
    let out = run_cli(h, &["eval", rec.to_str().unwrap(), "--rescore", "--json"]);
    assert!(out.status.success(), "rescore: {}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("re-ran the program_html / page_image_query checks of 3 task(s) offline"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rescored: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(verdicts(&rescored), live);
    let t2 = rescored["tasks"].as_array().unwrap().iter().find(|t| t["id"] == "DemoShop--2").unwrap();
    assert_eq!(t2["rescored"], true, "{t2}");
    // Then the recorded run re-executes against its snapshots, scored the same.
    let rep = h.join("rep");
    let args = run_args(&tasks, "replay", &rec, &rep);
    let out = cli(h, args, vec![]).await;
    assert!(out.status.success(), "replay: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(verdicts(&eval_json(h, &rep)), live);
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
