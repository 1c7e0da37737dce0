//! `webfreeze run`: the browser agent against the demo sites through per-task proxies, driven by a local
//! fake OpenAI-compatible model (live and record) or by a recorded run (replay), with the failures a real
//! run meets: garbled replies, missing labels, a page that never loads, a browser that dies.
//!
//! Size: whole runs, one scenario per test, sharing the hostile origins at the top; the agent's other
//! areas have files of their own (settle, guards, frozen web, WebArena).

use std::path::{Path, PathBuf};

use trajectory::{Outcome, RunDir};

use crate::support::*;

/// A listener that accepts connections and never answers.
async fn black_hole() -> std::net::SocketAddr {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = l.accept().await {
            held.push(s);
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_policy_live_run_survives_bad_replies_hung_pages_and_a_dead_browser() {
    let home = tempfile::tempdir().unwrap();
    let sites = DemoSites::start(home.path()).await;
    let hang = black_hole().await;
    let tag = format!("{}", hang.port());
    let crash_id = format!("crash{tag}");
    let tasks = home.path().join("tasks.jsonl");
    std::fs::write(
        &tasks,
        format!(
            "{}\n{}\n{}\n{}\n",
            serde_json::json!({"web_name": "Demo Shop", "id": "Shop--1", "ques": "PRICE what does the Blue Kettle cost?", "web": "https://shop.test/"}),
            serde_json::json!({"web_name": "Hang", "id": "Hang--1", "ques": "HANG anything", "web": "http://hang.test/"}),
            serde_json::json!({"web_name": "Demo Shop", "id": crash_id, "ques": "CRASH anything", "web": "https://shop.test/"}),
            serde_json::json!({"web_name": "Demo Times", "id": "Times--1", "ques": "LOOP never answers", "web": "https://news.test/"}),
        ),
    )
    .unwrap();
    let price_replies = [
        "Let me look around first.",
        "Thought: the missing one\nAction: Click [99]",
        "```\nthought: search for it\naction: type [0]; kettle\n```",
        "Thought: open the result\n**Action:** Click [3]",
        "Thought: scroll to check\nAction: Scroll [WINDOW]; down",
        "Thought: the page shows the price.\nAction: ANSWER; $24.00",
    ];
    let pattern = format!("webfreeze-profile-{crash_id}-");
    let llm = FakeLlm::start(move |body| {
        let task = first_user_text(body);
        let turn = body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").count();
        if task.contains("PRICE") {
            Reply::Text(price_replies[turn.min(5)].to_string())
        } else if task.contains("CRASH") {
            assert!(kill_matching(&pattern) > 0, "the crash task's browser is running");
            Reply::Text("Thought: go\nAction: Click [1]".into())
        } else if turn == 0 {
            // A target=_blank link: the agent keeps it in its one tab.
            Reply::Text("Thought: the weather desk\nAction: Click [5]".into())
        } else if turn == 1 {
            // Typing into a link is refused with a reason the model can act on.
            Reply::Text("Thought: type there\nAction: Type [0]; storm".into())
        } else if turn == 2 {
            // The search engine is unreachable: the live proxy notes the request that got no response.
            Reply::Text("Thought: search instead\nAction: Google".into())
        } else {
            Reply::Text("Thought: keep looking\nAction: Scroll [WINDOW]; up".into())
        }
    })
    .await;
    let out_dir = home.path().join("live-run");
    let args = RunArgs::new(&tasks, "live", &out_dir)
        .opt("--jobs", "2")
        // A browser process per task, found by its profile's name (warm browsers: tests/warm_browsers.rs).
        .opt("--browser-recycle", "0")
        .opt("--max-steps", "7")
        .opt("--page-timeout", "8")
        .settle_ms(200)
        // Longer than the page timeout: the browser gives up on the page before the proxy answers 504.
        .opt("--upstream-timeout", "20")
        .opt("--model", "fake-model")
        .opt("--api-base", llm.api_base())
        .opt("--resolve", format!("hang.test:80:{hang}"))
        .opt("--search-url", "http://search.invalid/")
        .args(&sites.reach)
        .build();
    let out = cli(home.path(), args, vec![("OPENAI_API_KEY".into(), "test-key".into())]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "run failed: {stderr}");

    // The answered task: two failed steps went back to the model, then it found the price.
    let t = traj(&out_dir, "Shop--1");
    assert_eq!(t.outcome, Outcome::Answered, "{t:?}");
    assert_eq!(t.answer.as_deref(), Some("$24.00"));
    assert_eq!(t.steps.len(), 6);
    assert!(t.steps[0].error.as_deref().unwrap().contains("no action"), "{:?}", t.steps[0].error);
    assert!(t.steps[1].error.as_deref().unwrap().contains("[99]"), "{:?}", t.steps[1].error);
    assert_eq!(t.steps[2].action.as_deref(), Some("Type [0]; kettle"));
    assert!(t.steps[2].error.is_none() && t.steps[3].error.is_none());
    assert_eq!(t.steps[3].url_after, "https://shop.test/product/blue-kettle");
    assert_eq!(t.final_url, "https://shop.test/product/blue-kettle");
    assert_eq!(t.usage.total_tokens, 6 * 110);
    // The live proxy counts the page's requests per step: the click loads the product page and its assets.
    assert!(t.steps[3].proxy.requests >= 2, "{:?}", t.steps[3].proxy);
    assert_eq!(t.steps[3].proxy.failed, 0);
    assert!(t.browser_start_ms > 0);
    let dir = RunDir::new(&out_dir).task("Shop--1").path().to_path_buf();
    for n in 1..=6 {
        let png = std::fs::read(dir.join(format!("step-{n:02}.png"))).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        assert_eq!(std::fs::read(dir.join(format!("screenshot{n}.png"))).unwrap(), png);
    }
    assert!(
        t.steps[0].elements.contains("[0]: <input type=search> \"Search products\""),
        "{}",
        t.steps[0].elements
    );
    // WebVoyager's layout: its evaluation scripts find the task and the answer where they look.
    let im: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("interact_messages.json")).unwrap()).unwrap();
    let im = im.as_array().unwrap();
    assert_eq!(im[0]["role"], "system");
    assert!(im[1]["content"][0]["text"].as_str().unwrap().contains("Now given a task: PRICE"));
    assert_eq!(im.last().unwrap()["content"], "Thought: the page shows the price.\nAction: ANSWER; $24.00");
    // The markdown-wrapped reply is canonical there too.
    assert_eq!(im[6]["content"], "Thought: search for it\nAction: Type [0]; kettle");
    let msgs: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("messages.json")).unwrap()).unwrap();
    assert_eq!(msgs["steps"].as_array().unwrap().len(), 6);

    // What the model received: the key, a screenshot each time, at most the last 3, the whole history.
    let reqs: Vec<Seen> =
        llm.requests().into_iter().filter(|s| first_user_text(&s.body).contains("PRICE")).collect();
    assert_eq!(reqs.len(), 6);
    for (i, r) in reqs.iter().enumerate() {
        assert_eq!(r.auth.as_deref(), Some("Bearer test-key"));
        assert_eq!(r.body["model"], "fake-model");
        let msgs = r.body["messages"].as_array().unwrap();
        assert_eq!(msgs[0]["role"], "system");
        assert_eq!(image_count(&r.body), (i + 1).min(3), "request {i}");
        let last = msgs.last().unwrap();
        assert_eq!(last["role"], "user");
        assert_eq!(last["content"][1]["type"], "image_url");
        assert!(last["content"][1]["image_url"]["url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,"));
        let replies: Vec<&str> = msgs
            .iter()
            .filter(|m| m["role"] == "assistant")
            .map(|m| m["content"].as_str().unwrap())
            .collect();
        assert_eq!(replies, price_replies[..i].to_vec(), "every earlier reply is in the history");
    }
    let text = |i: usize| {
        reqs[i].body["messages"].as_array().unwrap().last().unwrap()["content"][0]["text"].to_string()
    };
    assert!(text(1).contains("Your previous action failed: no action found"), "{}", text(1));
    assert!(text(2).contains("no element labelled [99]"), "{}", text(2));

    // The page that never loads, the dead browser, the task that never answers: recorded, and the run went on.
    let hang_t = traj(&out_dir, "Hang--1");
    assert_eq!(hang_t.outcome, Outcome::Error);
    assert!(hang_t.error.as_deref().unwrap().contains("did not load"), "{:?}", hang_t.error);
    let crash_t = traj(&out_dir, &crash_id);
    assert_eq!(crash_t.outcome, Outcome::Error, "{crash_t:?}");
    assert_eq!(crash_t.steps.len(), 1);
    let loop_t = traj(&out_dir, "Times--1");
    assert_eq!(loop_t.outcome, Outcome::MaxSteps);
    assert_eq!(loop_t.steps.len(), 7);
    assert_eq!(loop_t.steps[0].url_after, "https://news.test/article/heat-record", "opened in the same tab");
    assert_eq!(loop_t.steps[1].url_before, "https://news.test/article/heat-record");
    let google = &loop_t.steps[2];
    assert_eq!(google.action.as_deref(), Some("Google"));
    assert!(google.proxy.failed >= 1, "{:?}", google.proxy);
    assert!(google.proxy.failed_urls[0].starts_with("http://search.invalid/"), "{:?}", google.proxy);
    let typed = loop_t.steps[1].error.as_deref().unwrap_or("");
    assert!(typed.contains("element [0] is a <a>, not a text field"), "{typed}");

    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["mode"], "live");
    assert_eq!(run["tasks"]["Shop--1"]["status"], "answered");
    assert_eq!(run["tasks"]["Hang--1"]["status"], "error");
    assert_eq!(run["tasks"]["Times--1"]["status"], "max_steps");
    assert!(run["finished_ms"].as_i64().unwrap() >= run["started_ms"].as_i64().unwrap());
}

/// The demo's scripted replies, served by the fake model, keyed by the task's question.
fn scripted_model() -> impl Fn(&serde_json::Value) -> Reply + Send + Sync + 'static {
    let scripts: std::collections::BTreeMap<String, Vec<String>> =
        serde_json::from_str(demo::SCRIPTS_JSON).unwrap();
    let tasks: Vec<serde_json::Value> =
        demo::TASKS_JSONL.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let by_question: Vec<(String, Vec<String>)> = tasks
        .iter()
        .map(|t| (t["ques"].as_str().unwrap().to_string(), scripts[t["id"].as_str().unwrap()].clone()))
        .collect();
    move |body| {
        let task = first_user_text(body);
        let turn = body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").count();
        let (_, replies) = by_question.iter().find(|(q, _)| task.contains(q.as_str())).expect("a demo task");
        Reply::Text(replies[turn.min(replies.len() - 1)].clone())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_then_replay_reproduces_every_step_and_a_rerun_skips_finished_tasks() {
    let home = tempfile::tempdir().unwrap();
    let mut sites = DemoSites::start(home.path()).await;
    let tasks = home.path().join("demo_tasks.jsonl");
    std::fs::write(&tasks, demo::TASKS_JSONL).unwrap();
    let llm = FakeLlm::start(scripted_model()).await;
    let rec: PathBuf = home.path().join("rec");
    let args = RunArgs::new(&tasks, "record", &rec)
        .opt("--jobs", "2")
        .settle_ms(200)
        .model(&llm.api_base())
        .args(&sites.reach);
    let out = cli(home.path(), args.build(), vec![]).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    let ids: Vec<String> = demo::TASKS_JSONL
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].as_str().unwrap().to_string())
        .collect();
    for id in &ids {
        let t = traj(&rec, id);
        assert_eq!(t.outcome, Outcome::Answered, "{id}: {t:?}");
        assert_eq!(t.snapshot.as_deref(), Some(format!("rec/{id}").as_str()));
        assert!(t.steps.iter().map(|s| s.proxy.recorded).sum::<u64>() > 0, "{id} recorded exchanges");
        // The end-of-task report reads back as a recording's, typed.
        match t.proxy_report.as_ref().map(|r| &r.mode) {
            Some(trajectory::proxy_report::ModeReport::Record(r)) => assert!(r.recorded > 0, "{id}: {r:?}"),
            other => panic!("{id}: {other:?}"),
        }
    }
    // The origins go away: the replay can only use the snapshots.
    sites.stop();
    let rep = home.path().join("rep");
    let policy = format!("trajectory:{}", rec.display());
    let args = RunArgs::new(&tasks, "replay", &rep).opt("--policy", &policy).settle_ms(200).build();
    let out = cli(home.path(), args.clone(), vec![]).await;
    assert!(out.status.success(), "replay: {}", String::from_utf8_lossy(&out.stderr));
    for id in &ids {
        let (a, b) = (traj(&rec, id), traj(&rep, id));
        assert_eq!(b.outcome, a.outcome, "{id}");
        assert_eq!(b.answer, a.answer, "{id}");
        assert_eq!(b.steps.len(), a.steps.len(), "{id}");
        let report = b.proxy_report.as_ref().and_then(|r| r.replay()).expect("a replay report");
        assert_eq!((report.snapshot.as_str(), report.missed), (format!("rec/{id}").as_str(), 0), "{id}");
        for (x, y) in a.steps.iter().zip(&b.steps) {
            let r = y.reproduced.as_ref().unwrap();
            assert!(r.url && r.screenshot, "{id} step {}: {r:?}", y.n);
            assert_eq!(x.screenshot_blake3, y.screenshot_blake3);
            assert_eq!(x.url_after, y.url_after);
            assert_eq!(y.proxy.missed, 0, "{id} step {} missed {:?}", y.n, y.proxy.miss_urls);
        }
        assert_eq!(b.reproduced_steps, Some(a.steps.len() as u32));
        assert_eq!(b.mode, trajectory::RunMode::Replay);
    }
    // The model itself on the frozen web: same answers, nothing missed.
    let model_on_snapshot = home.path().join("model-on-snapshot");
    let out = cli(
        home.path(),
        RunArgs::new(&tasks, "replay", &model_on_snapshot)
            .opt("--snapshots", "rec")
            .filter("DemoTimes")
            .settle_ms(200)
            .model(&llm.api_base())
            .build(),
        vec![],
    )
    .await;
    assert!(out.status.success(), "llm on replay: {}", String::from_utf8_lossy(&out.stderr));
    for id in ["DemoTimes--0", "DemoTimes--1"] {
        let (a, b) = (traj(&rec, id), traj(&model_on_snapshot, id));
        assert_eq!(b.answer, a.answer, "{id}");
        assert_eq!(b.final_url, a.final_url, "{id}");
        assert!(
            b.steps.iter().all(|s| s.proxy.missed == 0 && s.proxy.exact > 0 || s.proxy.requests == 0),
            "{id}"
        );
    }
    // A rerun skips what finished and leaves it untouched.
    let before = std::fs::read(RunDir::new(&rep).task(&ids[0]).path().join("trajectory.json")).unwrap();
    let out = cli(home.path(), args, vec![]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("{} task(s) already finished", ids.len())), "{stderr}");
    assert_eq!(
        std::fs::read(RunDir::new(&rep).task(&ids[0]).path().join("trajectory.json")).unwrap(),
        before
    );
    // Another run directory with the same name would reuse the snapshot names: refused, nothing replaced.
    let other = home.path().join("elsewhere").join("rec");
    let out =
        cli(home.path(), RunArgs::new(&tasks, "record", &other).model(&llm.api_base()).build(), vec![]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("already exists, recorded by the run in"), "{stderr}");
}

#[test]
fn run_reports_bad_input_clearly() {
    let home = tempfile::tempdir().unwrap();
    let good = home.path().join("good.jsonl");
    let bad = home.path().join("bad.jsonl");
    let line = "{\"web_name\": \"x\", \"id\": \"a\", \"ques\": \"q\", \"web\": \"https://x.test/\"}\n";
    std::fs::write(&good, line).unwrap();
    std::fs::write(&bad, format!("{line}not json\n")).unwrap();
    let out_dir = home.path().join("o");
    let local = "http://127.0.0.1:9/v1";
    let (good, bad) = (good.to_str().unwrap(), bad.to_str().unwrap());
    let onto_itself = format!("trajectory:{}", out_dir.display());
    // (tasks file, extra args, env, exit code, message)
    type Case<'a> = (&'a str, Vec<&'a str>, Vec<(&'a str, &'a str)>, i32, &'a str);
    let cases: Vec<Case> = vec![
        (bad, vec!["--api-base", local], vec![], 2, "bad.jsonl:2"),
        (good, vec!["--api-base", local, "--task-filter", "("], vec![], 2, "regex"),
        (good, vec!["--api-base", local, "--task-filter", "zzz"], vec![], 2, "no tasks to run"),
        (good, vec!["--policy", "mystery"], vec![], 2, "expected `llm` or `trajectory:RUN_DIR`"),
        (good, vec!["--policy", "trajectory:/nonexistent"], vec![], 2, "not a webfreeze run"),
        (good, vec!["--window", "big"], vec![], 2, "WIDTHxHEIGHT"),
        (good, vec!["--policy", &onto_itself], vec![], 2, "write the re-run to another directory"),
        (
            good,
            vec!["--api-base", "https://api.openai.com/v1"],
            vec![("OPENAI_API_KEY", "")],
            2,
            "needs a key",
        ),
        (
            good,
            vec!["--api-base", local, "--chrome", "/nonexistent/chromium"],
            vec![],
            1,
            "apt-get install -y chromium",
        ),
    ];
    for (tasks, extra, env, code, msg) in cases {
        let args = RunArgs::new(Path::new(tasks), "live", &out_dir).args(&extra).build();
        let out = run_cli_env(home.path(), &args.iter().map(String::as_str).collect::<Vec<_>>(), &env);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{extra:?}: {stderr}");
        assert!(stderr.to_lowercase().contains(&msg.to_lowercase()), "{extra:?}: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_past_its_wall_clock_limit_is_timed_out_and_its_browser_killed() {
    let home = tempfile::tempdir().unwrap();
    let sites = DemoSites::start(home.path()).await;
    // A model endpoint that accepts and never answers: the model call would hang for --api-timeout.
    let model = black_hole().await;
    let tag = format!("slow{}", model.port());
    let tasks = home.path().join("tasks.jsonl");
    std::fs::write(
        &tasks,
        format!(
            "{}\n",
            serde_json::json!({"web_name": "Demo Shop", "id": tag, "ques": "PRICE of the Blue Kettle", "web": "https://shop.test/"})
        ),
    )
    .unwrap();
    let out_dir = home.path().join("timeout-run");
    let args = RunArgs::new(&tasks, "live", &out_dir)
        .opt("--task-timeout", "6")
        .opt("--api-timeout", "600")
        .opt("--api-attempts", "1")
        .opt("--browser-js-heap-mb", "256")
        .opt("--api-base", format!("http://{model}/v1"))
        .args(&sites.reach);
    let t0 = std::time::Instant::now();
    let out = cli(home.path(), args.build(), vec![("OPENAI_API_KEY".into(), "k".into())]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "run failed: {stderr}");
    assert!(t0.elapsed() < std::time::Duration::from_secs(300), "the limit did not cut the hung model call");
    let t = traj(&out_dir, &tag);
    assert_eq!(t.outcome, Outcome::Timeout, "{t:?}");
    assert!(t.error.as_deref().unwrap().contains("--task-timeout"), "{:?}", t.error);
    assert!(t.duration_ms >= 6_000, "{}", t.duration_ms);
    let run = RunDir::new(&out_dir).read_run_file().unwrap();
    assert_eq!(run.tasks[&tag].status, trajectory::TaskState::Timeout);
    // Its browser went with it.
    assert_eq!(
        kill_matching(&format!("webfreeze-profile-{tag}-")),
        0,
        "a browser outlived its timed-out task"
    );
    // A timed-out task has ended: a rerun skips it.
    let again = cli(
        home.path(),
        RunArgs::new(&tasks, "live", &out_dir).opt("--api-base", format!("http://{model}/v1")).build(),
        vec![("OPENAI_API_KEY".into(), "k".into())],
    )
    .await;
    assert!(again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("1 task(s) already finished"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

/// WebArena's early stop: unparseable replies in a row, and the same action in a row, end a task without
/// an answer and say why; without the options the same replies run to the step budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn early_stop_on_repeated_parse_failures_and_actions() {
    let home = tempfile::tempdir().unwrap();
    let sites = DemoSites::start(home.path()).await;
    let tasks = home.path().join("demo_tasks.jsonl");
    std::fs::write(&tasks, demo::TASKS_JSONL).unwrap();
    let first_question = demo::TASKS_JSONL
        .lines()
        .next()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["ques"].as_str().unwrap().to_string());
    let first_question = first_question.unwrap();
    let llm = FakeLlm::start(move |body: &serde_json::Value| {
        if first_user_text(body).contains(&first_question) {
            Reply::Text("I am not sure what to do here.".into())
        } else {
            Reply::Text("Thought: Look further down.\nAction: Scroll [WINDOW]; down".into())
        }
    })
    .await;
    let run = |out: &str, extra: &[&str]| {
        RunArgs::new(&tasks, "live", &home.path().join(out))
            .filter("^DemoShop--[01]$")
            .opt("--max-steps", "6")
            .settle_ms(100)
            .model(&llm.api_base())
            .args(extra)
            .args(&sites.reach)
            .build()
    };
    let out = cli(
        home.path(),
        run("early", &["--early-stop-parse-failures", "2", "--early-stop-repeats", "3"]),
        vec![],
    )
    .await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let garbled = traj(&home.path().join("early"), "DemoShop--0");
    assert_eq!((garbled.outcome, garbled.steps.len()), (Outcome::MaxSteps, 2), "{garbled:?}");
    assert!(
        garbled.error.as_deref().unwrap_or("").contains("2 unparseable replies in a row"),
        "{:?}",
        garbled.error
    );
    let stuck = traj(&home.path().join("early"), "DemoShop--1");
    assert_eq!((stuck.outcome, stuck.steps.len()), (Outcome::MaxSteps, 3), "{stuck:?}");
    assert!(
        stuck.error.as_deref().unwrap_or("").contains("the same action 3 times in a row"),
        "{:?}",
        stuck.error
    );
    let rf: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.path().join("early/run.json")).unwrap()).unwrap();
    assert_eq!(rf["config"]["early_stop_repeats"], 3, "{rf}");

    let out = cli(home.path(), run("budget", &[]), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for id in ["DemoShop--0", "DemoShop--1"] {
        let t = traj(&home.path().join("budget"), id);
        assert_eq!((t.outcome, t.steps.len(), t.error), (Outcome::MaxSteps, 6, None), "{id}");
    }
}

/// A run whose tasks ended early (parse failures, repeats), timed out and errored re-executes task for
/// task with nothing on the command line but the run directory: early stops, step budget, window and
/// waits come from its run.json, and a task re-executed past where the run stopped ends as the run did.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reexecution_reads_the_runs_settings_and_ends_where_it_ended() {
    let home = tempfile::tempdir().unwrap();
    let sites = DemoSites::start(home.path()).await;
    let tasks = home.path().join("demo_tasks.jsonl");
    std::fs::write(&tasks, demo::TASKS_JSONL).unwrap();
    let questions: Vec<String> = demo::TASKS_JSONL
        .lines()
        .take(4)
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["ques"].as_str().unwrap().to_string())
        .collect();
    let q = questions.clone();
    let llm = FakeLlm::start(move |body: &serde_json::Value| {
        let first = first_user_text(body);
        let turns = body["messages"].as_array().map(|m| m.len()).unwrap_or(0);
        if first.contains(&q[0]) {
            Reply::Text("I am not sure what to do here.".into())
        } else if first.contains(&q[1]) {
            Reply::Text("Thought: Look further down.\nAction: Scroll [WINDOW]; down".into())
        } else if first.contains(&q[2]) {
            // One step, then a model call that never returns: the task times out.
            if turns <= 2 {
                Reply::Text("Thought: Look.\nAction: Scroll [WINDOW]; down".into())
            } else {
                Reply::Hang
            }
        } else {
            Reply::Status(400)
        }
    })
    .await;
    let base = |out: &str| {
        RunArgs::new(&tasks, "live", &home.path().join(out))
            .filter("^DemoShop--[0-3]$")
            .model(&llm.api_base())
            .opt("--api-attempts", "1")
            .args(&sites.reach)
            .build()
    };
    let mut first = base("original");
    first.extend(strs(&[
        "--early-stop-parse-failures",
        "2",
        "--early-stop-repeats",
        "3",
        "--max-steps",
        "7",
        "--settle-ms",
        "100",
        "--window",
        "900x700",
        "--task-timeout",
        "8",
        "--max-tokens",
        "321",
        "--max-tokens-field",
        "max_completion_tokens",
    ]));
    let out = cli(home.path(), first, vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let original = home.path().join("original");
    let expect = [
        ("DemoShop--0", Outcome::MaxSteps, 2),
        ("DemoShop--1", Outcome::MaxSteps, 3),
        ("DemoShop--2", Outcome::Timeout, 1),
        ("DemoShop--3", Outcome::Error, 0),
    ];
    for (id, outcome, steps) in expect {
        let t = traj(&original, id);
        assert_eq!((t.outcome, t.steps.len()), (outcome, steps), "{id}: {:?}", t.error);
    }
    // Re-execute: only the run directory (and how to reach the sites).
    let again = RunArgs::new(&tasks, "live", &home.path().join("again"))
        .opt("--policy", format!("trajectory:{}", original.display()))
        .filter("^DemoShop--[0-3]$")
        .args(&sites.reach);
    let out = cli(home.path(), again.build(), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for (id, outcome, steps) in expect {
        let t = traj(&home.path().join("again"), id);
        assert_eq!((t.outcome, t.steps.len()), (outcome, steps), "{id} re-executed: {:?}", t.error);
    }
    let again_rf: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.path().join("again/run.json")).unwrap()).unwrap();
    for (key, want) in [
        ("early_stop_parse_failures", serde_json::json!(2)),
        ("early_stop_repeats", serde_json::json!(3)),
        ("max_steps", serde_json::json!(7)),
        ("window", serde_json::json!([900, 700])),
        ("settle_ms", serde_json::json!(100)),
    ] {
        assert_eq!(again_rf["config"][key], want, "{key}: {again_rf}");
    }
    // The budget went in the field asked for; every request's roles alternate (an unparseable reply keeps
    // its assistant turn).
    // (The run also asked GET /models whether the model takes images: not a chat request.)
    let seen: Vec<_> = llm.requests().into_iter().filter(|r| r.body.get("messages").is_some()).collect();
    assert!(!seen.is_empty());
    for r in &seen {
        assert_eq!(r.body["max_completion_tokens"], 321, "{}", r.body);
        assert!(r.body.get("max_tokens").is_none(), "{}", r.body);
        let roles: Vec<&str> = r.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .skip(1)
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert!(roles.windows(2).all(|w| w[0] != w[1]), "roles must alternate: {roles:?}");
        assert_eq!(r.body["messages"][0]["content"].as_str().map(|_| "string"), Some("string"));
    }
    llm.check();
}

/// `eval --rescore` re-executes a WebArena-format task that its run stopped early with the run's own
/// early-stop settings (from run.json, nothing on the command line): the task is re-scored, not left
/// unscored for want of a reply the run never had.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rescore_reads_early_stops_from_the_run() {
    let home = tempfile::tempdir().unwrap();
    let mut sites = DemoSites::start(home.path()).await;
    let tasks = home.path().join("wa.json");
    std::fs::write(
        &tasks,
        serde_json::json!([{
            "sites": ["shopping"], "task_id": 3, "require_login": false, "storage_state": null,
            "start_url": "__SHOPPING__/", "geolocation": null, "require_reset": false,
            "intent": "What does the shop sell?",
            "eval": {"eval_types": ["program_html"], "reference_answers": null, "reference_url": "",
                     "url_note": "",
                     "program_html": [{"url": "last", "locator": "document.title",
                                       "required_contents": {"must_include": ["Demo Shop"]}}]},
        }])
        .to_string(),
    )
    .unwrap();
    let llm = FakeLlm::start(|_: &serde_json::Value| Reply::Text("I am not sure.".into())).await;
    let run = home.path().join("wa-early");
    let args = RunArgs::new(&tasks, "record", &run)
        .opt("--site", "SHOPPING=https://shop.test")
        .opt("--action-space", "webarena")
        .opt("--observation", "axtree")
        .opt("--early-stop-parse-failures", "2")
        .settle_ms(100)
        .model(&llm.api_base())
        .args(&sites.reach);
    let out = cli(home.path(), args.build(), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = traj(&run, "3");
    assert_eq!((t.outcome, t.steps.len()), (Outcome::MaxSteps, 2), "{:?}", t.error);
    sites.stop();
    let out = cli(home.path(), strs(&["eval", run.to_str().unwrap(), "--rescore"]), vec![]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("could not"), "{stderr}");
    let eval: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("eval.json")).unwrap()).unwrap();
    assert_eq!(eval["unscored"], serde_json::json!([]), "{eval}");
    assert_eq!(eval["tasks"][0]["rescored"], true, "{eval}");
    assert_eq!(eval["overall"]["n"], 1, "{eval}");
    llm.check();
}

/// Issue 22, other agents on the frozen web: agent B opens a product agent A never opened. Replayed on A's
/// snapshot, B's step 1 misses its page: the trajectory marks the step, the task is off the frozen web and
/// `eval` counts it apart, not as B's failure. After `snapshots merge` of both recordings B replays with
/// nothing missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_agent_off_the_recorded_path_is_counted_apart_until_the_recordings_are_merged() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let mut sites = DemoSites::start(h).await;
    let tasks = h.join("demo_tasks.jsonl");
    std::fs::write(&tasks, demo::TASKS_JSONL).unwrap();
    let scripted = |replies: &'static [&'static str]| {
        move |body: &serde_json::Value| {
            let turn =
                body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").count();
            Reply::Text(replies[turn.min(replies.len() - 1)].to_string())
        }
    };
    // A opens the first product (the cheapest); B opens the second.
    let agent_a = FakeLlm::start(scripted(&[
        "Thought: first.\nAction: Click [3]",
        "Thought: done.\nAction: ANSWER; Glass Jar",
    ]))
    .await;
    let agent_b = FakeLlm::start(scripted(&[
        "Thought: second.\nAction: Click [4]",
        "Thought: done.\nAction: ANSWER; not sure",
    ]))
    .await;
    let reach = sites.reach.clone();
    let run = |mode: &str, out: &Path, llm: &FakeLlm, snapshots: Option<&str>| {
        let mut a =
            RunArgs::new(&tasks, mode, out).filter("DemoShop--1").settle_ms(200).model(&llm.api_base());
        if let Some(s) = snapshots {
            a = a.opt("--snapshots", s);
        }
        if mode == "record" {
            a = a.args(&reach);
        }
        a.build()
    };
    for (name, llm) in [("a", &agent_a), ("b", &agent_b)] {
        let out = cli(h, run("record", &h.join(name), llm, None), vec![]).await;
        assert!(out.status.success(), "record {name}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let (ta, tb) = (traj(&h.join("a"), "DemoShop--1"), traj(&h.join("b"), "DemoShop--1"));
    assert_ne!(ta.steps[0].url_after, tb.steps[0].url_after, "the two agents took different paths");
    sites.stop();

    // B on A's snapshot: off the frozen web at step 1.
    let b_on_a = h.join("b-on-a");
    let out = cli(h, run("replay", &b_on_a, &agent_b, Some("a")), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = traj(&b_on_a, "DemoShop--1");
    let cov = t.coverage.clone().expect("a replayed task has its coverage");
    assert!(cov.off_snapshot, "{cov:?}");
    assert_eq!(cov.steps_document_missed, vec![1], "{cov:?}");
    assert!(
        t.steps[0].proxy.document_missed > 0 && t.steps[0].proxy.render_missed > 0,
        "{:?}",
        t.steps[0].proxy
    );
    let out = run_cli(h, &["eval", b_on_a.to_str().unwrap(), "--tasks", tasks.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("| Demo Shop | 0.0% | 0 | 0 | 0 | 1 |"), "{stdout}");
    assert!(
        stdout.contains("Off the frozen web") && stdout.contains("DemoShop--1 (step 1, judged failure)"),
        "{stdout}"
    );

    // Both recordings merged: B replays with nothing missing.
    let out =
        run_cli(h, &["snapshots", "merge", "a/DemoShop--1", "b/DemoShop--1", "--into", "union/DemoShop--1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let b_on_union = h.join("b-on-union");
    let out = cli(h, run("replay", &b_on_union, &agent_b, Some("union")), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = traj(&b_on_union, "DemoShop--1");
    let cov = t.coverage.clone().unwrap();
    assert!(
        !cov.off_snapshot && cov.documents_missed == 0,
        "{cov:?}: {:?}",
        t.steps.iter().map(|s| &s.proxy.miss_urls).collect::<Vec<_>>()
    );
    assert_eq!(t.final_url, tb.final_url);
    assert_eq!(t.steps.len(), tb.steps.len());
}
