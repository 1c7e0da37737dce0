//! Warm browsers (`run --browser-recycle N`): one Chromium process serves a run's tasks one after another,
//! each in a fresh browser context. A task's trajectory must not depend on which tasks the process served
//! before it: the same probe task, run first and again after ten tasks that each leave cookies (by header
//! and by script), localStorage and cached resources behind, sees the same page and takes the same
//! screenshot, live and replayed; and the replay reproduces every recorded step.

use std::path::Path;

use trajectory::Outcome;

use crate::support::*;

const PROBE: &str = "https://app.test/app/probe";
const VISIT: &str = "https://app.test/app/visit";

/// The task ids in run order: the probe, ten visits, the probe again, and the control: a visit, then the
/// probe in the same task (its `Google` action goes to the probe: `--search-url`).
fn ids() -> Vec<String> {
    let mut v = vec!["probe-first".to_string()];
    v.extend((1..=10).map(|i| format!("visit-{i:02}")));
    v.push("probe-again".into());
    v.push("control".into());
    v
}

/// The task file and a script answering each task at its first step.
fn tasks_and_script(home: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let jsonl: String = ids()
        .iter()
        .map(|id| {
            let web = if id.starts_with("probe") { PROBE } else { VISIT };
            serde_json::json!({"web_name": "App", "id": id, "ques": "What does the page show?", "web": web})
                .to_string()
                + "\n"
        })
        .collect();
    let tasks = home.join("tasks.jsonl");
    std::fs::write(&tasks, jsonl).unwrap();
    let script = home.join("script");
    let pairs: Vec<_> = agent::tasks::load(&tasks)
        .unwrap()
        .into_iter()
        .map(|t| {
            let answer = "Thought: The page is shown.\nAction: ANSWER; seen".to_string();
            let replies = if t.id == "control" {
                vec!["Thought: Now the probe.\nAction: Google".to_string(), answer]
            } else {
                vec![answer]
            };
            (t, replies)
        })
        .collect();
    agent::policy::write_script(&script, &pairs).unwrap();
    (tasks, script)
}

/// The warm-browser summary line of a run's stderr.
fn warm_line(stderr: &str) -> &str {
    stderr.lines().find(|l| l.starts_with("warm browsers:")).unwrap_or_else(|| panic!("no summary: {stderr}"))
}

/// The probe's step, first and again: same URL, same screenshot, and the page as a fresh browser sees it.
fn assert_probes_alike(run: &Path) {
    let (a, b) = (traj(run, "probe-first"), traj(run, "probe-again"));
    for t in [&a, &b] {
        assert_eq!(t.outcome, Outcome::Answered, "{}: {t:?}", t.task_id);
        assert_eq!(t.steps.len(), 1, "{}", t.task_id);
    }
    let (x, y) = (&a.steps[0], &b.steps[0]);
    assert_eq!(x.url_after, y.url_after);
    assert_eq!(
        x.screenshot_blake3, y.screenshot_blake3,
        "the probe after ten visits took another screenshot than the probe run first"
    );
    assert_eq!(a.final_url, b.final_url);
    // The control: the probe after a visit in the same context sees the visit's state, and its
    // screenshot shows it (so the comparison above can tell).
    let c = traj(run, "control");
    assert_eq!(c.steps.len(), 2, "{c:?}");
    assert_eq!(c.steps[1].url_after, x.url_after);
    assert_ne!(
        c.steps[1].screenshot_blake3, x.screenshot_blake3,
        "the probe looks the same with and without a visit's state: the test could not tell"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_sees_the_same_browser_first_and_after_ten_others_in_a_warm_process() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let (origin, reach) = https_origin(h, "app.test").await;
    let (tasks, script) = tasks_and_script(h);
    let policy = format!("trajectory:{}", script.display());
    // Profiles go under the test's own directory, so the process check below sees only this run's.
    let env = vec![("TMPDIR".to_string(), h.display().to_string())];
    // A run of the scripted tasks against the origin, its browsers kept for `recycle` tasks.
    let on_origin = |mode: &str, out: &Path, recycle: &str, jobs: &str| {
        RunArgs::new(&tasks, mode, out)
            .opt("--policy", &policy)
            .opt("--search-url", PROBE)
            .opt("--browser-recycle", recycle)
            .opt("--jobs", jobs)
            .settle_ms(100)
            .args(&reach)
            .build()
    };

    // Live, warm: one process for all thirteen tasks.
    let live = h.join("live");
    let out = cli(h, on_origin("live", &live, "50", "1"), env.clone()).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "live: {stderr}");
    assert!(
        warm_line(&stderr).starts_with("warm browsers: 1 browser process(es) started for 13 task(s)"),
        "{stderr}"
    );
    // Each task loaded its page from the origin.
    let paths = origin.stats.paths.lock().unwrap().clone();
    assert_eq!(paths.get("/app/visit"), Some(&11), "{paths:?}");
    assert_eq!(paths.get("/app/probe"), Some(&3), "{paths:?}");
    assert_probes_alike(&live);
    // The run started the tasks in the file's order, so the second probe came after the ten visits.
    let started = |id: &str| traj(&live, id).started_ms;
    assert!(ids()[1..11]
        .iter()
        .all(|v| started(v) >= started("probe-first") && started(v) <= started("probe-again")));
    // No browser outlived the run.
    assert_eq!(kill_matching(&format!("{}/webfreeze-", h.display())), 0, "a browser outlived its run");

    // Recorded with a browser per task, replayed warm: every step reproduced, the probes alike.
    let rec = h.join("rec");
    let out = cli(h, on_origin("record", &rec, "0", "2"), env.clone()).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "record: {stderr}");
    assert!(!stderr.contains("warm browsers:"), "--browser-recycle 0 runs a browser per task: {stderr}");
    drop(origin);
    let rep = h.join("rep");
    let args = RunArgs::new(&tasks, "replay", &rep)
        .opt("--policy", format!("trajectory:{}", rec.display()))
        .opt("--jobs", "1")
        .settle_ms(100)
        .build();
    let out = cli(h, args, env).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "replay: {stderr}");
    // The default keeps browsers warm.
    assert!(
        warm_line(&stderr).starts_with("warm browsers: 1 browser process(es) started for 13 task(s)"),
        "{stderr}"
    );
    for id in ids() {
        let t = traj(&rep, &id);
        assert_eq!(t.reproduced_steps, Some(t.steps.len() as u32), "{id}: {:?}", t.steps);
        assert_eq!(t.steps.len(), traj(&rec, &id).steps.len(), "{id}");
    }
    assert_probes_alike(&rep);
    assert_eq!(
        traj(&rep, "probe-first").steps[0].screenshot_blake3,
        traj(&live, "probe-first").steps[0].screenshot_blake3,
        "the replayed probe looks as the live one did"
    );
    assert_eq!(kill_matching(&format!("{}/webfreeze-", h.display())), 0, "a browser outlived its run");
}

/// A warm process that dies, and one whose task is dropped (`--task-timeout`), leave the pool: the task
/// ends in an error or a timeout, the next task gets a new process, and no browser outlives the run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_or_timed_out_warm_browser_is_replaced_and_the_run_goes_on() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let sites = DemoSites::start(h).await;
    let tasks = h.join("tasks.jsonl");
    let task = |id: &str, ques: &str, web: &str| {
        serde_json::json!({"web_name": "W", "id": id, "ques": ques, "web": web}).to_string() + "\n"
    };
    std::fs::write(
        &tasks,
        [
            task("crash", "CRASH anything", "https://shop.test/"),
            task("hang", "HANG anything", "https://shop.test/"),
            task("after", "AFTER what is the shop called?", "https://shop.test/"),
        ]
        .concat(),
    )
    .unwrap();
    let warm = format!("{}/webfreeze-warm-browser-", h.display());
    let pattern = warm.clone();
    let llm = FakeLlm::start(move |body| {
        let task = first_user_text(body);
        if task.contains("CRASH") {
            assert!(kill_matching(&pattern) > 0, "the crash task's warm browser is running");
            Reply::Text("Thought: go\nAction: Click [1]".into())
        } else if task.contains("HANG") {
            // The model call hangs past the task's limit: the task's future is dropped mid-run.
            Reply::Hang
        } else {
            Reply::Text("Thought: seen\nAction: ANSWER; Demo Shop".into())
        }
    })
    .await;
    let out_dir = h.join("run");
    let args = RunArgs::new(&tasks, "live", &out_dir)
        .opt("--jobs", "1")
        .opt("--task-timeout", "20")
        .opt("--page-timeout", "8")
        .opt("--api-timeout", "600")
        .opt("--api-attempts", "1")
        .opt("--model", "fake-model")
        .opt("--api-base", llm.api_base())
        .settle_ms(100)
        .args(&sites.reach)
        .build();
    let env = vec![("OPENAI_API_KEY".into(), "k".into()), ("TMPDIR".to_string(), h.display().to_string())];
    let out = cli(h, args, env).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "run: {stderr}");
    let crash = traj(&out_dir, "crash");
    assert_eq!(crash.outcome, Outcome::Error, "{:?} {:?}", crash.error, crash.steps);
    assert_eq!(traj(&out_dir, "hang").outcome, Outcome::Timeout);
    let after = traj(&out_dir, "after");
    assert_eq!((after.outcome, after.answer.as_deref()), (Outcome::Answered, Some("Demo Shop")), "{after:?}");
    assert!(
        warm_line(&stderr).starts_with(
            "warm browsers: 3 browser process(es) started for 3 task(s); replaced 0 after their task budget, 0 for memory, 2 after a crash or timeout"
        ),
        "{stderr}"
    );
    assert_eq!(kill_matching(&warm), 0, "a warm browser outlived its run");
}

/// docs/ARCHITECTURE.md: a task's browser context never outlives its task. A warm process stays for the
/// next task, but the context a task ran in (its tabs, cookies, storage, cache) is disposed when the task
/// ends, and a task dropped mid-run (`--task-timeout`, Ctrl-C) takes its process out of the pool, killed:
/// between tasks the pool's processes list no context (`Target.getBrowserContexts`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_context_never_outlives_its_task() {
    use agent::browser::{BrowserPool, PoolOptions, Session};
    let home = tempfile::tempdir().unwrap();
    let pool = BrowserPool::new(PoolOptions::default());
    let opts = local_opts(home.path());
    let open = || {
        let pool = pool.clone();
        async move { pool.open_contexts().await.unwrap() }
    };
    // Two tasks in turn: each one's context is listed while it runs (so the check sees contexts), and
    // gone once it ended.
    for task in 1..=2 {
        let s = Session::start(opts.clone(), Some(&pool)).await.unwrap();
        assert_eq!(open().await, 1, "task {task}: its context is not listed while it runs");
        s.close().await;
        assert_eq!(open().await, 0, "task {task}: its browser context outlived it");
    }
    let stats = pool.stats();
    assert_eq!((stats.launched, stats.leases), (1, 2), "one warm process served both tasks: {stats:?}");
    // A task dropped mid-run: its process leaves the pool, and its context with it.
    let s = Session::start(opts.clone(), Some(&pool)).await.unwrap();
    assert_eq!(open().await, 1);
    drop(s);
    assert_eq!(open().await, 0, "a dropped task's browser context outlived it");
    assert_eq!(pool.stats().recycled_broken, 1, "{:?}", pool.stats());
    pool.shutdown().await;
}

/// A state probe's or an exploration's background tab leaves the agent's tab the visible one: opened in
/// the foreground (`Target.createTarget` without `background`), it hid the agent's tab, whose next
/// screenshot then waited on a frame a hidden page does not paint ("cannot observe the page: Request
/// timed out", the flake of `webarena_actions`' demo-wa-2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_visit_leaves_the_agents_tab_visible() {
    use agent::browser::Session;
    let home = tempfile::tempdir().unwrap();
    let opts = local_opts(home.path());
    let s = Session::launch(opts).await.unwrap();
    s.goto("data:text/html,<p>the agent's page</p>").await.unwrap();
    let state = "document.visibilityState";
    assert_eq!(s.evaluate_text(state).await.unwrap(), "visible", "before any background visit");
    let visit = s.visit_in_background("data:text/html,<p>a probe</p>", "x-webfreeze-probe", "state").await;
    assert!(visit.is_ok(), "{:?}", visit.err());
    assert_eq!(s.evaluate_text(state).await.unwrap(), "visible", "after a background visit");
    s.close().await;
}

/// A session's options for a browser that loads nothing through its proxy (about:blank and data: URLs):
/// the proxy (port 9 on loopback) is never dialed.
fn local_opts(profile: &Path) -> agent::browser::BrowserOptions {
    use agent::browser::{BrowserOptions, ObservationKind};
    use std::time::Duration;
    BrowserOptions {
        chrome: chromium_path(),
        proxy: "127.0.0.1:9".parse().unwrap(),
        ca_spki: String::new(),
        width: 800,
        height: 600,
        init_scripts: Vec::new(),
        time_zone: None,
        locale: None,
        page_timeout: Duration::from_secs(20),
        settle_quiet: Duration::from_millis(100),
        wait: Duration::from_secs(1),
        search_url: String::new(),
        profile: profile.to_path_buf(),
        js_heap_mb: None,
        disclose_automation: false,
        storage_state: None,
        geolocation: None,
        real_tabs: false,
        observation: ObservationKind::Som,
    }
}
