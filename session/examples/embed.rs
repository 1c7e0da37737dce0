//! Embedding webfreeze in your own harness: record one task against the bundled demo sites through a
//! [`session::TaskProxy`], stop the sites, and replay it from the snapshot, all in this process.
//!
//! Your harness would drive its own browser where this example calls webfreeze's agent
//! (`agent::runner::run_task`): point the browser at `tp.addr()` as its HTTP(S) proxy, trust the CA with
//! Chromium's `--ignore-certificate-errors-spki-list=<tp.ca_spki()>`, install `tp.init_scripts()` before
//! page scripts (`Page.addScriptToEvaluateOnNewDocument`), emulate `tp.time_zone()`, and call
//! `tp.finish()` at the end.
//!
//! ```text
//! cargo run --example embed -p webfreeze-session
//! ```
//! Needs Chromium (`apt-get install -y chromium`); no network.

use std::sync::Arc;

use agent::policy::{Policy, TrajectoryPolicy};
use agent::runner::{run_task, AgentConfig};
use anyhow::Context as _;
use clock::{Clock, SystemClock};
use proxy::CertificateAuthority;
use session::{FrozenWeb, MissPolicy, ProxyMode, TaskProxy, TaskProxyOptions};
use snapshots::Store;
use trajectory::{RunDir, Trajectory};

async fn one_task(
    mode: &ProxyMode,
    ca: &Arc<CertificateAuthority>,
    opts: &TaskProxyOptions,
    task: &agent::tasks::Task,
    script: &std::path::Path,
    out: &RunDir,
) -> anyhow::Result<Trajectory> {
    let tp = TaskProxy::start(mode, ca.clone(), opts).await?;
    println!(
        "{} proxy on {} (snapshot {}, {} init script(s))",
        mode.run_mode(),
        tp.addr(),
        tp.snapshot().unwrap_or("-"),
        tp.init_scripts().len()
    );
    // Your browser goes here. This example uses webfreeze's own agent with scripted replies.
    let chrome = agent::browser::find_chrome(None)?;
    let policy = Policy::Trajectory(Box::new(TrajectoryPolicy::load(script, task)?));
    let t = run_task(
        &AgentConfig::new(chrome),
        tp.agent_env(opts.clock.now_ms()),
        task,
        policy,
        out.task(&task.id),
    )
    .await;
    tp.finish().await?;
    Ok(t)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let work = tempfile::tempdir()?;
    #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
    let now = time::OffsetDateTime::now_utc();
    let mut sites = demo::RunningSites::start(work.path(), now)?;
    let ca = Arc::new(CertificateAuthority::load_or_init(&work.path().join("ca"), now)?);
    let store = Store::open(&work.path().join("store"))?;

    let tasks = agent::tasks::parse(demo::TASKS_JSONL, "demo")?;
    let task = tasks.first().context("the demo has tasks")?.clone();
    let mut scripts: std::collections::BTreeMap<String, Vec<String>> =
        serde_json::from_str(demo::SCRIPTS_JSON)?;
    let replies = scripts.remove(&task.id).context("the demo task has a script")?;
    let script = work.path().join("script");
    agent::policy::write_script(&script, &[(task.clone(), replies)])?;

    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let opts = TaskProxyOptions {
        task_id: task.id.clone(),
        web_name: task.web_name.clone(),
        proxy: sites.proxy_config(),
        clock,
        time_zone: "UTC".into(),
        locale: "en_US".into(),
        explore: false,
        guard: None,
        wire: None,
    };
    let record =
        ProxyMode::Record { store: store.clone(), run: "embed".into(), run_dir: "embed-example".into() };
    let recorded =
        one_task(&record, &ca, &opts, &task, &script, &RunDir::new(work.path().join("rec"))).await?;
    println!("recorded: {:?} in {} steps", recorded.answer, recorded.steps.len());

    sites.stop();
    let replay = ProxyMode::Replay {
        store,
        run: "embed".into(),
        on_miss: MissPolicy::NotFound,
        frozen_web: FrozenWeb::recorded(),
    };
    let rec_dir = work.path().join("rec");
    let replayed =
        one_task(&replay, &ca, &opts, &task, &rec_dir, &RunDir::new(work.path().join("rep"))).await?;
    let same = replayed
        .steps
        .iter()
        .filter(|s| s.reproduced.as_ref().is_some_and(|r| r.url && r.screenshot))
        .count();
    println!(
        "replayed with the sites stopped: {:?}; {same}/{} steps identical (URL and screenshot hash)",
        replayed.answer,
        replayed.steps.len()
    );
    anyhow::ensure!(replayed.answer == recorded.answer, "the replay answered differently");
    anyhow::ensure!(same == replayed.steps.len(), "the replay diverged from the recording");
    Ok(())
}
