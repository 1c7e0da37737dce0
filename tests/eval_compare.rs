//! `webfreeze eval` (reference matchers, WebVoyager reference answers, the model judge against a fake
//! OpenAI-compatible server), `webfreeze compare`, and `webfreeze demo` end to end.

use std::path::Path;

use trajectory::{Outcome, RunDir, RunMode, Step, TaskDir, Trajectory};

use crate::support::*;

fn step(n: u32, url: &str) -> Step {
    Step {
        n,
        url_before: url.into(),
        url_after: url.into(),
        screenshot: TaskDir::step_png(n),
        screenshot_blake3: format!("h{n}"),
        ..Default::default()
    }
}

/// (id, site, outcome, answer, final URL, steps).
type TaskRow<'a> = (&'a str, &'a str, Outcome, Option<&'a str>, &'a str, u32);

fn make_run(dir: &Path, tasks: &[TaskRow]) {
    std::fs::create_dir_all(dir).unwrap();
    for &(id, site, outcome, answer, url, steps) in tasks {
        let td = RunDir::new(dir).task(id);
        td.create().unwrap();
        for n in 1..=steps {
            td.write_file(&TaskDir::step_png(n), format!("png {id} {n}").as_bytes()).unwrap();
        }
        let t = Trajectory {
            v: 1,
            task_id: id.into(),
            web_name: site.into(),
            question: format!("question of {id}"),
            start_url: "https://x.test/".into(),
            mode: RunMode::Live,
            policy: "test".into(),
            outcome,
            answer: answer.map(str::to_string),
            error: (outcome == Outcome::Error).then(|| "boom".to_string()),
            final_url: url.into(),
            steps: (1..=steps).map(|n| step(n, url)).collect(),
            ..Default::default()
        };
        td.write_trajectory(&t).unwrap();
    }
}

#[test]
fn reference_eval_scores_specs_and_webvoyager_golden_answers() {
    let home = tempfile::tempdir().unwrap();
    let run = home.path().join("run");
    make_run(
        &run,
        &[
            ("Shop--0", "Shop", Outcome::Answered, Some("It costs $1,234.50"), "https://s.test/p/1", 2),
            ("Shop--1", "Shop", Outcome::Answered, Some("Red Mug"), "https://s.test/p/2", 2),
            ("Shop--2", "Shop", Outcome::Error, None, "", 1),
            ("Wiki--0", "Wiki", Outcome::Answered, Some("Yes, 42 of them"), "https://w.test/", 1),
            ("Wiki--1", "Wiki", Outcome::Answered, Some("maybe"), "https://w.test/", 1),
            ("Wiki--2", "Wiki", Outcome::Answered, Some("anything"), "https://w.test/", 1),
        ],
    );
    let tasks = home.path().join("tasks.jsonl");
    std::fs::write(
        &tasks,
        [
            r#"{"web_name": "Shop", "id": "Shop--0", "ques": "q", "web": "https://s.test/", "eval": {"must_include": ["1234.5"], "url_match": "https://s.test/p/1"}}"#,
            r#"{"web_name": "Shop", "id": "Shop--1", "ques": "q", "web": "https://s.test/", "eval": {"exact_match": "Glass Jar"}}"#,
            r#"{"web_name": "Shop", "id": "Shop--2", "ques": "q", "web": "https://s.test/", "eval": {"must_include": ["x"]}}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let reference = home.path().join("reference_answer.json");
    std::fs::write(
        &reference,
        r#"{"Wiki": {"notice": "", "answers": [{"id": 0, "type": "golden", "ans": "42"}, {"id": 1, "type": "golden", "ans": "no"}, {"id": 2, "type": "possible", "ans": "something"}]}}"#,
    )
    .unwrap();
    let out = run_cli(
        home.path(),
        &[
            "eval",
            run.to_str().unwrap(),
            "--tasks",
            tasks.to_str().unwrap(),
            "--reference",
            reference.to_str().unwrap(),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("| Shop | 33.3% | 3 | 1 |"), "{stdout}");
    assert!(stdout.contains("| Wiki | 50.0% | 2 | 0 |"), "{stdout}");
    assert!(stdout.contains("Errored (counted as failures): Shop--2"), "{stdout}");
    assert!(stdout.contains("Not scored (no reference for them; not counted): Wiki--2"), "{stdout}");
    let e: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("eval.json")).unwrap()).unwrap();
    let task = |id: &str| e["tasks"].as_array().unwrap().iter().find(|t| t["id"] == id).unwrap().clone();
    assert_eq!(task("Shop--0")["success"], true);
    assert_eq!(task("Shop--1")["success"], false);
    assert_eq!(task("Wiki--0")["success"], true);
    assert_eq!(task("Wiki--1")["success"], false);
    assert_eq!(task("Wiki--2")["reference"]["possible_answer"], "something");
    assert_eq!(e["overall"]["n"], 5);

    // --score-possible scores the possible answer too.
    let out = run_cli(
        home.path(),
        &[
            "eval",
            run.to_str().unwrap(),
            "--reference",
            reference.to_str().unwrap(),
            "--score-possible",
            "--json",
        ],
    );
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(e["unscored"].as_array().unwrap().iter().all(|id| id != "Wiki--2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_judge_parses_verdicts_repeats_and_sends_the_last_k_screenshots() {
    let home = tempfile::tempdir().unwrap();
    let run = home.path().join("run");
    make_run(&run, &[("T--0", "T", Outcome::Answered, Some("42"), "https://t.test/", 5)]);
    let replies = ["Looks right.\nSUCCESS", "Not enough evidence.\nNOT SUCCESS", "I cannot decide."];
    let llm = FakeLlm::start(move |body| {
        // fuzzy_match asks whether the answer means the reference.
        if body["messages"][0]["content"].as_str().unwrap_or("").contains("reference answer") {
            let q = body["messages"][1]["content"].as_str().unwrap_or("");
            return Reply::Text(if q.contains("Reference: forty-two") { "YES" } else { "NO" }.into());
        }
        // A transient overload first: the judge must retry.
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let i = CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if i == 0 {
            return Reply::Status(503);
        }
        Reply::Text(replies[(i - 1) % 3].to_string())
    })
    .await;
    let out = cli(
        home.path(),
        strs(&[
            "eval",
            run.to_str().unwrap(),
            "--judge",
            "llm",
            "--k",
            "2",
            "--repeats",
            "3",
            "--api-base",
            &llm.api_base(),
            "--api-backoff",
            "0.01",
        ]),
        vec![("OPENAI_API_KEY".into(), "k".into())],
    )
    .await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("no SUCCESS / NOT SUCCESS verdict (counted as failures): T--0 (1)"), "{table}");
    let e: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("eval.json")).unwrap()).unwrap();
    let j = &e["tasks"][0]["judge"];
    assert_eq!(j["verdicts"], serde_json::json!(["success", "not_success", "unparseable"]));
    assert!((j["mean"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-9);
    assert!((j["std"].as_f64().unwrap() - (2.0f64 / 9.0).sqrt()).abs() < 1e-9);
    assert_eq!(j["screenshots"], serde_json::json!(["step-04.png", "step-05.png"]));
    assert_eq!(j["replies"][1], replies[1]);
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 4, "one 503 retried, then three repeats");
    for r in &reqs {
        assert_eq!(image_count(&r.body), 2);
        assert_eq!(r.body["temperature"], 0.0);
        let text = first_user_text(&r.body);
        assert!(text.contains("question of T--0") && text.contains("42"), "{text}");
    }
    assert_eq!(e["tasks"][0]["success"], false, "1 of 3 is below the majority");
    // --k all sends every screenshot.
    let out = cli(
        home.path(),
        strs(&["eval", run.to_str().unwrap(), "--judge", "llm", "--k", "all", "--api-base", &llm.api_base()]),
        vec![("OPENAI_API_KEY".into(), "k".into())],
    )
    .await;
    assert!(out.status.success());
    assert_eq!(image_count(&llm.requests().last().unwrap().body), 5);

    // --judge both with a fuzzy_match spec: the model decides that "42" means "forty-two".
    let tasks = home.path().join("t.jsonl");
    std::fs::write(
        &tasks,
        r#"{"web_name": "T", "id": "T--0", "ques": "q", "web": "https://t.test/", "eval": {"fuzzy_match": "forty-two"}}"#,
    )
    .unwrap();
    let out = cli(
        home.path(),
        strs(&[
            "eval",
            run.to_str().unwrap(),
            "--judge",
            "both",
            "--tasks",
            tasks.to_str().unwrap(),
            "--api-base",
            &llm.api_base(),
            "--json",
        ]),
        vec![("OPENAI_API_KEY".into(), "k".into())],
    )
    .await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = &e["tasks"][0]["reference"]["checks"][0];
    assert_eq!(check["matcher"], "fuzzy_match");
    assert_eq!(check["pass"], true);
    assert_eq!(e["judge"], "both");
}

#[test]
fn compare_reports_kappa_mcnemar_and_flip_evidence() {
    let home = tempfile::tempdir().unwrap();
    let (a, b) = (home.path().join("a"), home.path().join("b"));
    let mut ta = Vec::new();
    let mut tb = Vec::new();
    let ids: Vec<String> = (0..6).map(|i| format!("S--{i}")).collect();
    for (i, id) in ids.iter().enumerate() {
        ta.push((id.as_str(), "S", Outcome::Answered, Some("yes"), "https://s.test/ok", 2));
        // B fails the first four.
        let url = if i < 4 { "https://s.test/other" } else { "https://s.test/ok" };
        tb.push((id.as_str(), "S", Outcome::Answered, Some("yes"), url, 2));
    }
    make_run(&a, &ta);
    make_run(&b, &tb);
    let tasks = home.path().join("t.jsonl");
    let lines: Vec<String> = ids
        .iter()
        .map(|id| {
            serde_json::json!({"web_name": "S", "id": id, "ques": "q", "web": "https://s.test/", "eval": {"url_match": "https://s.test/ok"}})
                .to_string()
        })
        .collect();
    std::fs::write(&tasks, lines.join("\n")).unwrap();
    for r in [&a, &b] {
        let out = run_cli(home.path(), &["eval", r.to_str().unwrap(), "--tasks", tasks.to_str().unwrap()]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let html = home.path().join("c.html");
    let out = run_cli(
        home.path(),
        &["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--html", html.to_str().unwrap()],
    );
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(md.contains("| S | 100.0% (6/6) | 33.3% (2/6) |"), "{md}");
    // 4 discordant pairs all one way: p = 2 * (1/2)^4 = 0.125; kappa 0 (A is constant).
    assert!(md.contains("Cohen's kappa 0.000; exact McNemar p = 0.1250 (A only 4, B only 0)"), "{md}");
    assert!(md.contains("URLs diverge at step 1: A https://s.test/ok / B https://s.test/other"), "{md}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Flipped tasks (4)") && page.contains("data:image/png;base64,"));
    let out = run_cli(home.path(), &["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--json"]);
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["flips"].as_array().unwrap().len(), 4);
    assert_eq!(c["pairs"]["a_only"], 4);
    // A run without eval.json gets a clear error.
    let out = run_cli(home.path(), &["compare", a.to_str().unwrap(), home.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("webfreeze eval"));
}

#[test]
fn demo_end_to_end_replay_equals_the_recording_and_the_drifted_web_does_not() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("demo");
    let out = run_cli(home.path(), &["demo", "--dir", dir.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let eval = |run: &str| -> Vec<(String, bool, serde_json::Value)> {
        let e: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("runs").join(run).join("eval.json")).unwrap())
                .unwrap();
        e["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (t["id"].as_str().unwrap().to_string(), t["success"].as_bool().unwrap(), t["answer"].clone())
            })
            .collect()
    };
    let (rec, rep, drift) = (eval("recorded"), eval("replayed"), eval("live-drifted"));
    assert_eq!(rec.len(), 6);
    assert!(rec.iter().all(|t| t.1), "every scripted task succeeds on the recording day: {rec:?}");
    assert_eq!(rep, rec, "the replay reproduces the recorded run task by task");
    assert!(drift.iter().zip(&rec).any(|(d, r)| d.1 != r.1), "the drifted live run differs: {drift:?}");
    assert!(stdout.contains("Replay reproduced"), "{stdout}");
    let (same, all) = {
        let line = stdout.lines().find(|l| l.starts_with("Replay reproduced")).unwrap();
        let frac = line.split_whitespace().nth(2).unwrap();
        let (a, b) = frac.split_once('/').unwrap();
        (a.parse::<u32>().unwrap(), b.parse::<u32>().unwrap())
    };
    assert_eq!(same, all, "{stdout}");
    assert!(stdout.contains("Agreement 100.0% over 6 paired tasks"), "{stdout}");
    for f in ["compare-recorded-vs-replayed.html", "compare-recorded-vs-live-drifted.html"] {
        let page = std::fs::read_to_string(dir.join(f)).unwrap();
        assert!(page.contains("webfreeze: run comparison"), "{f}");
    }
    let drift_page = std::fs::read_to_string(dir.join("compare-recorded-vs-live-drifted.html")).unwrap();
    assert!(drift_page.contains("<section>"));
    // Issue 22: every flip of the drifted run is attributed to drift, with the changed text as evidence.
    let flips = drift.iter().zip(&rec).filter(|(d, r)| d.1 != r.1).count();
    assert_eq!(stdout.matches("- cause: **drift (the same page changed)**").count(), flips, "{stdout}");
    assert!(stdout.contains("at https://news.test/: the page changed"), "{stdout}");
    assert!(stdout.contains("+ [2]: <a> \"Chip plant to hire 2,000 workers\""), "{stdout}");
    assert!(drift_page.contains("cause: <b>drift"), "the HTML report names the cause");
    // ... and, both runs having recorded, what changed on each flipped task's site (`snapshots diff`).
    assert_eq!(
        drift_page.matches("what changed on the site between the recordings").count(),
        flips,
        "a site diff per flipped task"
    );
    assert!(drift_page.contains("changed document <code>GET https://news.test/</code>"), "news front page");
    assert!(
        drift_page.contains("<span class=\"add\">+ Chip plant to hire 2,000 workers</span>"),
        "the changed headline in the site diff"
    );
    // Issue 22: the success rate over the three runs, in time order (a drift curve), as a table and a plot.
    let runs = dir.join("runs");
    let curve_html = home.path().join("curve.html");
    let out = run_cli(
        home.path(),
        &[
            "compare",
            runs.join("replayed").to_str().unwrap(),
            runs.join("recorded").to_str().unwrap(),
            runs.join("live-drifted").to_str().unwrap(),
            "--html",
            curve_html.to_str().unwrap(),
        ],
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("| ") && l.contains("/runs/")).collect();
    let order: Vec<&str> =
        rows.iter().map(|r| r.split('|').nth(1).unwrap().trim().rsplit('/').next().unwrap()).collect();
    assert_eq!(order, ["recorded", "live-drifted", "replayed"], "time order:\n{table}");
    assert!(rows[0].ends_with("| 100.0% (6/6) |"), "{table}");
    let lost = drift.iter().filter(|d| !d.1).count();
    assert!(
        rows[1].ends_with(&format!("| {:.1}% ({}/6) |", (6 - lost) as f64 / 6.0 * 100.0, 6 - lost)),
        "{table}"
    );
    let page = std::fs::read_to_string(&curve_html).unwrap();
    assert_eq!(page.matches("<polyline").count(), 3, "a line per site and one overall");
}
