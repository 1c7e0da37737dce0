//! `webfreeze demo`: the whole loop on the bundled demo sites, with no network and no API key.
//!
//! 1. serve the demo sites (day 0) and run the demo tasks live while recording, with the scripted
//!    trajectories; 2. evaluate with the reference matchers; 3. move the sites' clock forward; 4. run the
//!    tasks live again on the drifted sites, then stop the sites and replay the recorded snapshots
//!    (re-executing the recorded run step by step); 5. evaluate both and compare each with the recording.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;

use crate::cli::{DemoArgs, LlmArgs, MissPolicy, RunArgs, RunMode, UpstreamArgs};
use crate::config::Config;

/// The bundled sites on a loopback port, served from their own thread and runtime.
struct RunningSites {
    sites: Arc<demo::Sites>,
    addr: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RunningSites {
    fn start(ca_dir: &Path) -> anyhow::Result<Self> {
        #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
        let now = time::OffsetDateTime::now_utc();
        let sites = Arc::new(demo::Sites::new(ca_dir, now)?);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").context("cannot bind the demo sites")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let s = sites.clone();
        let thread = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()
            else {
                return;
            };
            rt.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else { return };
                s.serve(listener, async move {
                    let _ = rx.await;
                })
                .await;
            });
        });
        Ok(Self { sites, addr, stop: Some(tx), thread: Some(thread) })
    }

    fn stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for RunningSites {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Write the scripted trajectories as a run directory the `trajectory:` policy can re-execute.
fn write_scripts(dir: &Path, tasks: &[agent::tasks::Task]) -> anyhow::Result<()> {
    let mut scripts: std::collections::BTreeMap<String, Vec<String>> =
        serde_json::from_str(demo::SCRIPTS_JSON)?;
    let mut pairs = Vec::new();
    for t in tasks {
        let replies = scripts.remove(&t.id).with_context(|| format!("no demo script for {}", t.id))?;
        pairs.push((t.clone(), replies));
    }
    std::fs::create_dir_all(dir)?;
    agent::policy::write_script(dir, &pairs)?;
    let rf = serde_json::json!({
        "v": 1, "webfreeze": env!("CARGO_PKG_VERSION"), "mode": "script", "policy": "script",
        "tasks_file": "demo", "chrome": "", "config": {}, "started_ms": 0, "tasks": {}
    });
    std::fs::write(dir.join("run.json"), serde_json::to_vec_pretty(&rf)?)?;
    Ok(())
}

fn run_args(
    a: &DemoArgs,
    tasks: &Path,
    mode: RunMode,
    policy: String,
    out: PathBuf,
    snapshots: Option<String>,
    reach: &UpstreamArgs,
) -> RunArgs {
    RunArgs {
        tasks: tasks.to_path_buf(),
        mode,
        policy,
        out,
        snapshots,
        on_miss: MissPolicy::NotFound,
        jobs: a.jobs,
        task_filter: None,
        max_steps: 15,
        chrome: a.chrome.clone(),
        window: "1024x768".into(),
        page_timeout: 30.0,
        settle_ms: 300,
        wait_ms: 1000,
        search_url: "https://shop.test/".into(),
        time_zone: Some("UTC".into()),
        locale: "en_US".into(),
        llm: LlmArgs {
            api_base: "http://127.0.0.1:9/v1".into(),
            model: "none".into(),
            api_key_env: "WEBFREEZE_DEMO_NO_KEY".into(),
            temperature: 0.0,
            keep_screenshots: 3,
            api_attempts: 1,
            api_backoff: 0.0,
            api_timeout: 1.0,
        },
        upstream: reach.clone(),
    }
}

pub fn run(cfg: &Config, a: DemoArgs) -> anyhow::Result<()> {
    std::fs::create_dir_all(&a.dir).with_context(|| format!("cannot create {}", a.dir.display()))?;
    let dir = std::fs::canonicalize(&a.dir)?;
    let runs = dir.join("runs");
    if runs.exists() {
        std::fs::remove_dir_all(&runs).with_context(|| format!("cannot clear {}", runs.display()))?;
    }
    std::fs::create_dir_all(&runs).with_context(|| format!("cannot create {}", runs.display()))?;
    let cfg = Config { store: dir.join("store"), home: cfg.home.clone() };
    let tasks_path = dir.join("demo_tasks.jsonl");
    std::fs::write(&tasks_path, demo::TASKS_JSONL)?;
    let tasks = agent::tasks::load(&tasks_path)?;
    let script_dir = runs.join("script");
    write_scripts(&script_dir, &tasks)?;

    let mut sites = RunningSites::start(&dir.join("sites-ca"))?;
    let ca_file = dir.join("sites-ca.pem");
    std::fs::write(&ca_file, sites.sites.ca_pem())?;
    let reach = UpstreamArgs {
        upstream_ca: vec![ca_file],
        resolve: demo::resolve_args(sites.addr),
        insecure_upstream: false,
        upstream_timeout: 10.0,
    };
    let script = format!("trajectory:{}", script_dir.display());
    let recorded = runs.join("recorded");
    let drifted = runs.join("live-drifted");
    let replayed = runs.join("replayed");

    eprintln!("== 1/5 day {}: running {} demo tasks live while recording", sites.sites.day(), tasks.len());
    crate::cmd_run::run(
        &cfg,
        run_args(&a, &tasks_path, RunMode::Record, script.clone(), recorded.clone(), None, &reach),
    )?;
    eprintln!("== 2/5 evaluating the recorded run with the reference matchers");
    crate::cmd_eval::evaluate_quietly(&recorded, Some(&tasks_path))?;
    sites.sites.set_day(a.drift_days);
    eprintln!("== 3/5 the sites' clock moves to day {}: prices, promotion and headlines drift", a.drift_days);
    eprintln!("== 4/5 running the tasks live again on the drifted sites, then replaying the recording with the sites stopped");
    crate::cmd_run::run(
        &cfg,
        run_args(&a, &tasks_path, RunMode::Live, script, drifted.clone(), None, &reach),
    )?;
    sites.stop();
    let replay_policy = format!("trajectory:{}", recorded.display());
    crate::cmd_run::run(
        &cfg,
        run_args(
            &a,
            &tasks_path,
            RunMode::Replay,
            replay_policy,
            replayed.clone(),
            Some("recorded".into()),
            &reach,
        ),
    )?;
    eprintln!("== 5/5 evaluating and comparing");
    crate::cmd_eval::evaluate_quietly(&drifted, Some(&tasks_path))?;
    crate::cmd_eval::evaluate_quietly(&replayed, Some(&tasks_path))?;
    let html_replay = dir.join("compare-recorded-vs-replayed.html");
    let html_drift = dir.join("compare-recorded-vs-live-drifted.html");
    println!("# Recorded run vs its replay (sites stopped)\n");
    crate::cmd_compare::print_comparison(&recorded, &replayed, Some(&html_replay))?;
    println!("\n# Recorded run vs the live, drifted web\n");
    crate::cmd_compare::print_comparison(&recorded, &drifted, Some(&html_drift))?;
    let reproduced = crate::cmd_compare::reproduction_summary(&replayed)?;
    println!("\n{reproduced}");
    println!(
        "\nruns: {}\nHTML comparisons: {} and {}",
        runs.display(),
        html_replay.display(),
        html_drift.display()
    );
    Ok(())
}
