//! AssistantBench, the benchmark added along ARCHITECTURE's "Adding a benchmark" route: its scorer checked
//! case by case against their own (browsergym-assistantbench from PyPI), and a task file of theirs run
//! recorded, replayed and scored end to end on the demo sites (the search page it starts from is
//! `--site SEARCH=URL`).

use std::path::{Path, PathBuf};

use crate::support::*;

const INSTALL: &str = "python -m pip download --no-deps browsergym-assistantbench==0.14.2, unpack the wheel \
     into DIR, python -m pip install --target DIR numpy==2.* scipy==1.*, and set \
     WEBFREEZE_TEST_ASSISTANTBENCH=DIR (scripts/test.sh does all of it)";

fn lib() -> PathBuf {
    let dir = std::env::var_os("WEBFREEZE_TEST_ASSISTANTBENCH").map(PathBuf::from).unwrap_or_else(|| {
        panic!("WEBFREEZE_TEST_ASSISTANTBENCH is not set: the cross-check needs their scorer: {INSTALL}")
    });
    assert!(
        dir.join("browsergym/assistantbench/evaluation/evaluator.py").is_file(),
        "{} has no browsergym/assistantbench: {INSTALL}",
        dir.display()
    );
    dir
}

/// Their scorer's verdicts on `cases` (answer, gold).
fn theirs(lib: &Path, cases: &[(String, String)]) -> Vec<serde_json::Value> {
    let out =
        python_script("assistantbench.py", &[lib.to_str().unwrap()], &serde_json::to_vec(cases).unwrap());
    serde_json::from_slice(&out).unwrap()
}

/// Gold answers of every type their scorer reads: numbers (with `$`, `%`, `,`), texts, lists (one item
/// per line), objects (one per line, JSON or Python-quoted).
const GOLDS: &[&str] = &[
    "42",
    "1,500",
    "$45.99",
    "0",
    "3.5%",
    "-5",
    "1e3",
    "Paris",
    "The Eiffel Tower",
    "McDonald's",
    "2019-05-01",
    "10 miles",
    "Glass Jar\nBlue Kettle",
    "red\ngreen\nblue",
    "{\"name\": \"Tom\", \"age\": 30}",
    "{\"name\": \"Tom\", \"age\": 30}\n{\"name\": \"Ann\", \"age\": 25}",
    "{'city': 'Paris', 'pop': '2.1'}",
    "\"quoted\"",
    "[1, 2]",
];

/// Answers an agent gives: right, near, wrong, in other forms, empty, and the JSON values their scorer
/// cannot take.
const ANSWERS: &[&str] = &[
    "42",
    "42.0",
    "41",
    "1500",
    "$46",
    "0",
    "",
    "Paris",
    "paris, france",
    "the eiffel tower",
    "Eiffel",
    "McDonalds",
    "Glass Jar",
    "Glass Jar\nBlue Kettle",
    "[\"Glass Jar\", \"Blue Kettle\"]",
    "[\"red\"]",
    "[5]",
    "[\"5\"]",
    "{\"name\": \"Tom\", \"age\": 30}",
    "{\"name\": \"tom\", \"age\": \"30\"}",
    "{\"name\": \"Tom\", \"age\": 30}\n{\"name\": \"Ann\", \"age\": 26}",
    "{\"city\": \"Paris\", \"pop\": 2.1}",
    "true",
    "null",
    "[]",
    "{}",
    "10",
    "ten miles",
    "-5",
    "1e3",
    "2019-05-01",
    "[1, 2]",
    "N/A",
    "\"quoted\"",
];

#[test]
fn their_scorer_and_ours_agree_case_by_case() {
    let lib = lib();
    let cases: Vec<(String, String)> =
        GOLDS.iter().flat_map(|g| ANSWERS.iter().map(move |a| (a.to_string(), g.to_string()))).collect();
    let verdicts = theirs(&lib, &cases);
    assert_eq!(verdicts.len(), cases.len());
    let mut disagree = Vec::new();
    let (mut scored, mut raised) = (0, 0);
    for ((answer, gold), v) in cases.iter().zip(&verdicts) {
        let ours = evaluator::assistantbench::accuracy(answer, gold);
        match (v.get("accuracy").and_then(serde_json::Value::as_f64), &ours) {
            (Some(t), Ok(o)) if (t - o).abs() < 1e-6 => scored += 1,
            (None, Err(_)) => raised += 1,
            _ => disagree.push(format!("answer {answer:?} gold {gold:?}: theirs {v}, ours {ours:?}")),
        }
    }
    assert!(
        disagree.is_empty(),
        "{} of {} cases disagree:\n{}",
        disagree.len(),
        cases.len(),
        disagree.join("\n")
    );
    // The table reaches every path: most cases scored, some where their scorer raises.
    assert!(scored > cases.len() * 3 / 4 && raised > 0, "scored {scored}, raised {raised}");
    eprintln!("assistantbench cross-check: {scored} cases scored alike, {raised} refused by both");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn their_task_file_runs_recorded_replayed_and_scored() {
    let home = tempfile::tempdir().unwrap();
    let mut sites = DemoSites::start(home.path()).await;
    // Their line shape: id, set, task, answer, gold_url, explanation, metadata, difficulty.
    let tasks = home.path().join("assistant_bench_dev.jsonl");
    let line = |id: &str, task: &str, answer: &str| {
        serde_json::json!({"id": id, "set": "dev", "task": task, "answer": answer,
            "gold_url": "https://shop.test/", "explanation": "Read the shop.", "metadata": {}, "difficulty": "Easy"})
        .to_string()
    };
    std::fs::write(
        &tasks,
        [
            line("ab-price", "What does the Blue Kettle cost in the Demo Shop, in dollars?", "24"),
            line(
                "ab-list",
                "Which two products does the Demo Shop sell in glass or steel?",
                "Glass Jar\nBlue Kettle",
            ),
        ]
        .join("\n"),
    )
    .unwrap();
    let llm = FakeLlm::start(|body: &serde_json::Value| {
        let task = first_user_text(body);
        // The objective says what form the answer takes.
        assert!(task.contains(agent::tasks::assistantbench::ANSWER_FORM), "{task}");
        Reply::Text(if task.contains("Blue Kettle cost") {
            "Thought: the shop lists it.\nAction: ANSWER; 24.00".into()
        } else {
            "Thought: one of them.\nAction: ANSWER; Glass Jar".into()
        })
    })
    .await;
    let rec = home.path().join("ab-rec");
    let args = RunArgs::new(&tasks, "record", &rec)
        .opt("--site", "SEARCH=https://shop.test/")
        .settle_ms(200)
        .model(&llm.api_base())
        .args(&sites.reach)
        .build();
    let out = cli(home.path(), args, vec![]).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    let t = traj(&rec, "ab-price");
    assert_eq!(t.benchmark, Some(trajectory::Benchmark::AssistantBench));
    // `--site` values lose a trailing slash, as WebArena's do.
    assert_eq!((t.start_url.as_str(), t.web_name.as_str()), ("https://shop.test", "AssistantBench"));
    assert!(matches!(&t.task_eval, Some(trajectory::TaskEvalSpec::AssistantBench(e)) if e.answer == "24"));
    sites.stop();
    // Frozen: the recorded replies re-executed on the snapshots alone.
    let rep = home.path().join("ab-rep");
    let policy = format!("trajectory:{}", rec.display());
    let out = cli(
        home.path(),
        RunArgs::new(&tasks, "replay", &rep).opt("--policy", &policy).settle_ms(200).build(),
        vec![],
    )
    .await;
    assert!(out.status.success(), "replay: {}", String::from_utf8_lossy(&out.stderr));
    for run in [&rec, &rep] {
        let out = run_cli(home.path(), &["eval", run.to_str().unwrap(), "--judge", "reference"]);
        assert!(out.status.success(), "eval {}: {}", run.display(), String::from_utf8_lossy(&out.stderr));
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(run.join("eval.json")).unwrap()).unwrap();
        let task =
            |id: &str| report["tasks"].as_array().unwrap().iter().find(|t| t["id"] == id).unwrap().clone();
        // 24.00 against 24: full accuracy; one of two list items: half.
        let (price, list) = (task("ab-price"), task("ab-list"));
        assert_eq!(
            (price["benchmark"].as_str(), price["success"].as_bool()),
            (Some("assistantbench"), Some(true))
        );
        assert_eq!(price["reference"]["score"].as_f64(), Some(1.0), "{price}");
        assert_eq!(
            (list["reference"]["score"].as_f64(), list["success"].as_bool()),
            (Some(0.5), Some(false))
        );
        assert_eq!(report["overall"]["mean_score"].as_f64(), Some(0.75), "{}", report["overall"]);
        assert_eq!(report["overall"]["n"].as_u64(), Some(2));
    }
}
