//! `webfreeze demo`: the whole loop on the bundled demo sites, with no network and no API key.
//!
//! 1. serve the demo sites (day 0) and run the demo tasks live while recording, with the scripted
//!    trajectories; 2. evaluate with the reference matchers; 3. move the sites' clock forward; 4. run the
//!    tasks live again on the drifted sites (recorded too, so the drift comparison's page shows what changed
//!    on each flipped task's site), then stop the sites and replay the first recording
//!    (re-executing the recorded run step by step); 5. evaluate both and compare each with the recording.
//!
//! Everything runs in process through `session::run_tasks` and the evaluator; this module only chooses
//! the settings and prints.

use std::path::Path;
use std::time::Duration;

use agent::runner::AgentConfig;
use anyhow::Context as _;
use evaluator::compare::{compare, html_with, markdown, reproduction};
use evaluator::evaluate::{evaluate, write_report, EvalOptions};
use session::{ProxyMode, RunOptions};
use snapshots::Store;

use crate::cli::DemoArgs;
use crate::config::Config;

/// Write the scripted trajectories as a run directory the `trajectory:` policy can re-execute.
fn write_scripts(dir: &Path, tasks: &[agent::tasks::Task]) -> anyhow::Result<()> {
    let mut scripts: std::collections::BTreeMap<String, Vec<String>> =
        serde_json::from_str(demo::SCRIPTS_JSON)?;
    let mut pairs = Vec::new();
    for t in tasks {
        let replies = scripts.remove(&t.id).with_context(|| format!("no demo script for {}", t.id))?;
        pairs.push((t.clone(), replies));
    }
    agent::policy::write_script(dir, &pairs)?;
    Ok(())
}

/// Reference-matcher evaluation with the defaults, written into the run.
fn evaluate_quietly(run: &Path, tasks: &Path) -> anyhow::Result<()> {
    let opts = EvalOptions { tasks_file: Some(tasks.to_path_buf()), ..EvalOptions::reference() };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let report =
        rt.block_on(evaluate(run, &opts)).with_context(|| format!("evaluating {}", run.display()))?;
    write_report(run, &report)?;
    eprintln!(
        "   {}: {}/{} tasks succeed by the reference matchers",
        run.display(),
        report.overall.success,
        report.overall.n
    );
    Ok(())
}

/// Markdown on stdout and the HTML page.
/// The page shows, for each flipped task both runs recorded into `store`, what changed on its site.
fn print_comparison(a: &Path, b: &Path, store: &Path, html_out: &Path) -> anyhow::Result<()> {
    let c = compare(a, b)?;
    print!("{}", markdown(&c));
    let diffs = crate::site_diff::flip_diffs(store, &c);
    std::fs::write(html_out, html_with(&c, &diffs))
        .with_context(|| format!("cannot write {}", html_out.display()))?;
    Ok(())
}

/// Run the tasks live, recording each into `store_dir` as `<out's name>/<task>`.
fn record_run(
    base: &RunOptions,
    store_dir: &Path,
    out: &Path,
    tasks: &[agent::tasks::Task],
) -> anyhow::Result<()> {
    let mode = ProxyMode::record(Store::open(store_dir)?, out)?;
    crate::output::run_with_progress(
        RunOptions { out: out.to_path_buf(), mode, ..base.clone() },
        tasks.to_vec(),
    )?;
    Ok(())
}

pub(crate) fn run(cfg: &Config, a: DemoArgs) -> anyhow::Result<()> {
    std::fs::create_dir_all(&a.dir).with_context(|| format!("cannot create {}", a.dir.display()))?;
    let dir = std::fs::canonicalize(&a.dir)?;
    let runs = dir.join("runs");
    if runs.exists() {
        std::fs::remove_dir_all(&runs).with_context(|| format!("cannot clear {}", runs.display()))?;
    }
    std::fs::create_dir_all(&runs).with_context(|| format!("cannot create {}", runs.display()))?;
    let tasks_path = dir.join("demo_tasks.jsonl");
    trajectory::write_atomic(&tasks_path, demo::TASKS_JSONL.as_bytes())?;
    let tasks = agent::tasks::load(&tasks_path)?;
    let script_dir = runs.join("script");
    write_scripts(&script_dir, &tasks)?;

    #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
    let now = time::OffsetDateTime::now_utc();
    let mut sites = demo::RunningSites::start(&dir, now)?;
    let chrome = agent::browser::find_chrome(a.chrome.as_deref())?;
    let mut agent = AgentConfig::new(chrome.clone());
    // Warm browsers, as `run` has by default: the replayed steps are checked against the recording's.
    agent.browsers = Some(agent::browser::BrowserPool::new(Default::default()));
    agent.wait = Duration::from_millis(1000);
    agent.search_url = "https://shop.test/".into();
    let base =
        crate::demo_runs::scripted_run_options(cfg, agent, &script_dir, &sites, &tasks_path, a.jobs.max(1))?;
    let recorded = runs.join("recorded");
    let drifted = runs.join("live-drifted");
    let replayed = runs.join("replayed");
    let store_dir = dir.join("store");

    eprintln!("== 1/5 day {}: running {} demo tasks live while recording", sites.sites().day(), tasks.len());
    record_run(&base, &store_dir, &recorded, &tasks)?;
    eprintln!("== 2/5 evaluating the recorded run with the reference matchers");
    evaluate_quietly(&recorded, &tasks_path)?;
    sites.sites().set_day(a.drift_days);
    eprintln!("== 3/5 the sites' clock moves to day {}: prices, promotion and headlines drift", a.drift_days);
    eprintln!("== 4/5 running (and recording) the tasks live again on the drifted sites, then replaying the first recording with the sites stopped");
    record_run(&base, &store_dir, &drifted, &tasks)?;
    sites.stop();
    crate::demo_runs::replay_recorded(base, &store_dir, &recorded, &replayed, tasks)?;
    eprintln!("== 5/5 evaluating and comparing");
    evaluate_quietly(&drifted, &tasks_path)?;
    evaluate_quietly(&replayed, &tasks_path)?;
    let html_replay = dir.join("compare-recorded-vs-replayed.html");
    let html_drift = dir.join("compare-recorded-vs-live-drifted.html");
    println!("# Recorded run vs its replay (sites stopped)\n");
    print_comparison(&recorded, &replayed, &store_dir, &html_replay)?;
    println!("\n# Recorded run vs the live, drifted web\n");
    print_comparison(&recorded, &drifted, &store_dir, &html_drift)?;
    println!("\n{}", reproduction(&replayed)?);
    println!(
        "\nruns: {}\nHTML comparisons: {} and {}",
        runs.display(),
        html_replay.display(),
        html_drift.display()
    );
    Ok(())
}
