//! `webfreeze demo --webarena`: WebArena-format tasks live and frozen on the bundled demo sites, with
//! no network and no API key.
//!
//! 1. serve the demo sites (a fresh forum and shop: WebArena's reset) and run the demo's WebArena tasks
//!    (`demo::WEBARENA_TASKS_JSON`: login, upvote, post, cart, admin page by storage state, two start
//!    tabs, hover, press, goto, an input image, an order and a review checked through the shop's REST API)
//!    in WebArena's action space while recording, with their
//!    scripted replies; 2. score them with their own eval specs; 3. stop the sites and re-score offline
//!    (`eval --rescore`: each task re-executed against its snapshot, its checks run again); 4. replay
//!    the recorded run and score it. The three must agree task by task. 5. replay it with other agents,
//!    each scored at its own write epoch: one that only answers (on the cart task it never adds, so its
//!    cart check reads the state probe's empty cart and fails, scored) and one that adds another product
//!    (a write the recording never made: its state is unknown, counted apart with the write named).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent::action::ActionSpace;
use agent::runner::AgentConfig;
use anyhow::Context as _;
use clock::{Clock, SystemClock};
use evaluator::evaluate::{write_report, EvalOptions, EvalReport};
use session::{ProxyMode, RunOptions};
use snapshots::Store;

use crate::cli::DemoArgs;
use crate::config::Config;

fn score(run: &Path, store: &Path, rescored: session::Rescored) -> anyhow::Result<EvalReport> {
    let opts = EvalOptions { rescored, ..EvalOptions::reference() };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    // `webfreeze eval`'s one library call: the network events and the runs counted apart read here.
    let quiet = session::EvalProgress::quiet();
    let report = rt
        .block_on(session::eval_run(store, run, opts, None, &quiet))
        .with_context(|| format!("evaluating {}", run.display()))?
        .report;
    write_report(run, &report)?;
    Ok(report)
}

/// Another scripted agent for the recorded tasks: each task's final reply only (it answers as the
/// recording did without doing anything), written as a script run directory at `dir`.
fn another_agent(
    recorded: &Path,
    dir: &Path,
    tasks: &[agent::tasks::Task],
) -> anyhow::Result<session::PolicySpec> {
    let mut pairs = Vec::new();
    for t in tasks {
        let tr = trajectory::RunDir::new(recorded)
            .task(&t.id)
            .read_trajectory()?
            .with_context(|| format!("no recorded trajectory for {}", t.id))?;
        let last = tr.steps.last().map(|s| s.raw_reply.clone()).unwrap_or_default();
        pairs.push((t.clone(), vec![last]));
    }
    agent::policy::write_script(dir, &pairs)?;
    Ok(session::PolicySpec::Trajectory(dir.to_path_buf()))
}

/// The task another agent puts another product in the cart for, and its replies: it opens the Red Mug
/// (which the recording agent looked at before choosing the jar) and adds it, a write the recording never
/// made.
const ANOTHER_PRODUCT_TASK: &str = "demo-wa-2";
const ANOTHER_PRODUCT: &[&str] = &[
    "The shop is in the second tab. In summary, the next action I will perform is ```tab_focus [1]```",
    "I pick the mug. In summary, the next action I will perform is ```goto [https://shop.test/product/red-mug]```",
    "I add it to the cart. In summary, the next action I will perform is ```click [2]```",
    "The cart holds the mug. In summary, the next action I will perform is ```stop [Red Mug]```",
];

/// A third scripted agent: [`ANOTHER_PRODUCT`] for [`ANOTHER_PRODUCT_TASK`], written at `dir`; returns
/// its policy and the one task.
fn another_product_agent(
    dir: &Path,
    tasks: &[agent::tasks::Task],
) -> anyhow::Result<(session::PolicySpec, Vec<agent::tasks::Task>)> {
    let task = tasks
        .iter()
        .find(|t| t.id == ANOTHER_PRODUCT_TASK)
        .with_context(|| format!("the demo has no task {ANOTHER_PRODUCT_TASK}"))?
        .clone();
    let replies = ANOTHER_PRODUCT.iter().map(|r| r.to_string()).collect();
    agent::policy::write_script(dir, &[(task.clone(), replies)])?;
    Ok((session::PolicySpec::Trajectory(dir.to_path_buf()), vec![task]))
}

/// How another agent's run of a task came out: its verdict, "state unknown" when the frozen web cannot
/// score it, "not scored", or "-".
fn other_verdict(r: &EvalReport, id: &str) -> String {
    match r.tasks.iter().find(|t| t.id == id) {
        Some(t) if t.state_unknown.is_some() => "state unknown (apart)".to_string(),
        Some(t) if !t.scored => "not scored".to_string(),
        Some(t) => if t.success { "success" } else { "FAIL" }.to_string(),
        None => "-".to_string(),
    }
}

/// Task id -> success.
fn verdicts(r: &EvalReport) -> BTreeMap<String, bool> {
    r.tasks.iter().map(|t| (t.id.clone(), t.success)).collect()
}

/// The demo's WebArena task file, its storage state and gold image, and the scripted replies as a run
/// directory, written under `a.dir/webarena` (replaced); returns (dir, task file, script run, tasks).
fn prepare(a: &DemoArgs) -> anyhow::Result<(PathBuf, PathBuf, PathBuf, Vec<agent::tasks::Task>)> {
    let dir = a.dir.join("webarena");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("cannot clear {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir.join(".auth")).with_context(|| format!("cannot create {}", dir.display()))?;
    std::fs::create_dir_all(dir.join("gold"))?;
    let dir = std::fs::canonicalize(&dir)?;
    let tasks_path = dir.join("tasks.json");
    trajectory::write_atomic(&tasks_path, demo::WEBARENA_TASKS_JSON.as_bytes())?;
    trajectory::write_atomic(&dir.join(".auth/state.json"), demo::WEBARENA_AUTH_JSON.as_bytes())?;
    let gold = demo::product_photo_of("red-mug").context("the demo's red mug photo")?;
    trajectory::write_atomic(&dir.join("gold/red-mug.png"), &gold)?;
    let sites = agent::tasks::Sites::from_pairs(demo::WEBARENA_SITES)?;
    let mut tasks = agent::tasks::load_with_sites(&tasks_path, &sites)?;
    // WebArena-Verified tasks too, in their own file format.
    let verified_path = dir.join("webarena-verified.json");
    trajectory::write_atomic(&verified_path, demo::WEBARENA_VERIFIED_TASKS_JSON.as_bytes())?;
    tasks.extend(agent::tasks::load_with_sites(&verified_path, &sites)?);
    let mut scripts: BTreeMap<String, Vec<String>> = serde_json::from_str(demo::WEBARENA_SCRIPTS_JSON)?;
    let pairs = tasks
        .iter()
        .map(|t| {
            Ok((t.clone(), scripts.remove(&t.id).with_context(|| format!("no demo script for {}", t.id))?))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let script_dir = dir.join("runs").join("script");
    agent::policy::write_script(&script_dir, &pairs)?;
    Ok((dir, tasks_path, script_dir, tasks))
}

/// `demo --serve`: the demo sites until Ctrl-C, and the command lines that run the WebArena demo tasks
/// against them by hand.
pub(crate) fn serve(a: DemoArgs) -> anyhow::Result<()> {
    let (dir, tasks_path, script_dir, _) = prepare(&a)?;
    #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
    let now = time::OffsetDateTime::now_utc();
    let running = demo::RunningSites::start(&dir, now)?;
    // The Ctrl-C handler before the line a script waits for (a stop right after it is then graceful).
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let mut interrupt = {
        let _in_runtime = rt.enter();
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?
    };
    println!("listening on {}", running.addr());
    let reach = running.reach_args().join(" ");
    let sites: String = demo::WEBARENA_SITES.iter().map(|s| format!(" --site {s}")).collect();
    eprintln!(
        "demo sites {} served on {} until Ctrl-C (the forum and the cart keep their state until then).
         Run the WebArena demo tasks against them, with their scripted replies (or --policy llm):

           webfreeze run --tasks {}{sites} --action-space webarena \
    --policy trajectory:{}          --mode record --out runs/wa {reach}
  webfreeze eval runs/wa

         then stop the sites (Ctrl-C) and re-score offline from the snapshots:

  webfreeze eval runs/wa --rescore

         The WebArena-Verified demo tasks the same way (their network checks are scored from the snapshots):

  webfreeze run --tasks {}{sites} --action-space webarena \
    --policy trajectory:{} --mode record --out runs/wav {reach}
  webfreeze eval runs/wav
",
        demo::HOSTS.join(", "),
        running.addr(),
        tasks_path.display(),
        script_dir.display(),
        dir.join("webarena-verified.json").display(),
        script_dir.display(),
    );
    rt.block_on(interrupt.recv());
    drop(running);
    eprintln!("demo sites stopped");
    Ok(())
}

pub(crate) fn run(cfg: &Config, a: DemoArgs) -> anyhow::Result<()> {
    let (dir, tasks_path, script_dir, tasks) = prepare(&a)?;
    let runs = dir.join("runs");

    #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
    let now = time::OffsetDateTime::now_utc();
    let mut running = demo::RunningSites::start(&dir, now)?;
    let chrome = agent::browser::find_chrome(a.chrome.as_deref())?;
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let mut agent = AgentConfig::new(chrome.clone());
    // Warm browsers, as `run` has by default.
    agent.browsers = Some(agent::browser::BrowserPool::new(Default::default()));
    agent.action_space = ActionSpace::WebArena;
    // The tasks share the sites' state (the forum's posts): one at a time, in file order.
    let mut base =
        crate::demo_runs::scripted_run_options(cfg, agent.clone(), &script_dir, &running, &tasks_path, 1)?;
    // WebArena's sites are the run's own: their orders, posts and reviews are the tasks.
    let own = agent::tasks::Sites::from_pairs(demo::WEBARENA_SITES)?.hosts();
    let guard = std::sync::Arc::new(proxy::guard::GuardConfig::standard(own));
    base.guard = Some(guard);
    let ca = base.ca.clone();
    let recorded = runs.join("recorded");
    let replayed = runs.join("replayed");
    let store_dir = dir.join("store");

    eprintln!(
        "== 1/5 running {} WebArena-format demo tasks live (action space: webarena) while recording",
        tasks.len()
    );
    {
        let mode = ProxyMode::record(Store::open(&store_dir)?, &recorded)?;
        crate::output::run_with_progress(
            RunOptions { out: recorded.clone(), mode, ..base.clone() },
            tasks.clone(),
        )?;
    }
    eprintln!("== 2/5 scoring with the tasks' eval specs");
    let live = score(&recorded, &store_dir, Default::default())?;
    running.stop();
    eprintln!("== 3/5 sites stopped: re-scoring offline (each task re-executed against its snapshot, checks re-run)");
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let rescored = rt.block_on(session::rescore_run(
        &recorded,
        Store::open_read_only(&store_dir)?,
        ca,
        agent.clone(),
        proxy::ProxyConfig::default(),
        clock,
        &|_, _, _| {},
    ))?;
    let offline = score(&recorded, &store_dir, rescored)?;
    eprintln!("== 4/5 replaying the recorded run from its snapshots and scoring it");
    crate::demo_runs::replay_recorded(base.clone(), &store_dir, &recorded, &replayed, tasks.clone())?;
    let replay = score(&replayed, &store_dir, Default::default())?;
    eprintln!(
        "== 5/5 replaying with other agents, each scored on its own wire at its own write epoch: one only \
         gives each task's final answer, acting on nothing; one adds another product to {ANOTHER_PRODUCT_TASK}'s cart"
    );
    let another = runs.join("another");
    let answers_only = another_agent(&recorded, &dir.join("runs").join("another-script"), &tasks)?;
    crate::demo_runs::replay_with(
        base.clone(),
        &store_dir,
        &recorded,
        &another,
        tasks.clone(),
        answers_only,
    )?;
    let other = score(&another, &store_dir, Default::default())?;
    let product = runs.join("another-product");
    let (policy, one) = another_product_agent(&dir.join("runs").join("another-product-script"), &tasks)?;
    crate::demo_runs::replay_with(base, &store_dir, &recorded, &product, one, policy)?;
    let other_product = score(&product, &store_dir, Default::default())?;

    println!("| task | recorded live | re-scored offline | replayed | replayed by an answer-only agent | by an agent adding another product |\n|---|---|---|---|---|---|");
    let (l, o, r) = (verdicts(&live), verdicts(&offline), verdicts(&replay));
    let mark = |v: Option<&bool>| match v {
        Some(true) => "success",
        Some(false) => "FAIL",
        None => "-",
    };
    for id in l.keys() {
        println!(
            "| {id} | {} | {} | {} | {} | {} |",
            mark(l.get(id)),
            mark(o.get(id)),
            mark(r.get(id)),
            other_verdict(&other, id),
            other_verdict(&other_product, id)
        );
    }
    let apart: Vec<&String> = other.state_unknown.iter().chain(&other_product.state_unknown).collect();
    if !apart.is_empty() {
        println!("\nstate unknown on the frozen web (counted apart, the write or page named):");
        for n in apart {
            println!("  {n}");
        }
    }
    println!(
        "\n{}/{} tasks succeed live, {}/{} re-scored offline, {}/{} replayed\nruns: {}",
        live.overall.success,
        live.overall.n,
        offline.overall.success,
        offline.overall.n,
        replay.overall.success,
        replay.overall.n,
        runs.display()
    );
    if l != o || l != r {
        anyhow::bail!("the frozen verdicts differ from the live ones (see the table)");
    }
    let (answer_only, product) =
        (other_verdict(&other, ANOTHER_PRODUCT_TASK), other_verdict(&other_product, ANOTHER_PRODUCT_TASK));
    if answer_only != "FAIL" || !product.starts_with("state unknown") {
        anyhow::bail!(
            "{ANOTHER_PRODUCT_TASK}: the answer-only agent should fail, scored (got {answer_only}), and the agent \
             adding another product should be counted apart (got {product})"
        );
    }
    Ok(())
}
