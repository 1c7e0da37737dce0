//! `cargo xtask bench agent [--tasks N] [--settle-ms MS]`: per-step agent overhead in replay mode
//! (observation = labels + screenshot + element list; action incl. the page settling), median over 10-step
//! runs, against the same trajectory live on the demo sites in the same run (the peer), and browser start
//! time per task. The overhead beyond the page's own work is a step's observation and action less the
//! page's work (from the action to the last network event it caused; `page_ms` in the trajectory).
//!
//! It records N copies of a 10-step scripted task through `session::run_tasks` (in process), replays them
//! with the `trajectory:` policy, and runs the script live again, then reads the figures from the
//! trajectories.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agent::runner::AgentConfig;
use anyhow::bail;
use clock::{Clock, SystemClock};
use proxy::CertificateAuthority;
use session::{PolicySpec, ProxyMode, RunOptions};
use snapshots::Store;
use trajectory::TaskState;

const SCRIPT: &[&str] = &[
    "Thought: look down\nAction: Scroll [WINDOW]; down",
    "Thought: back up\nAction: Scroll [WINDOW]; up",
    "Thought: search\nAction: Type [0]; kettle",
    "Thought: open it\nAction: Click [3]",
    "Thought: back\nAction: GoBack",
    "Thought: the promotion\nAction: Click [2]",
    "Thought: home\nAction: Click [0]",
    "Thought: search again\nAction: Type [0]; mug",
    "Thought: open it\nAction: Click [3]",
    "Thought: done\nAction: ANSWER; 48",
];

fn median(mut v: Vec<u64>) -> u64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    v[v.len() / 2]
}

fn write_script(dir: &Path, tasks: &[agent::tasks::Task]) -> anyhow::Result<()> {
    let script: Vec<String> = SCRIPT.iter().map(|s| s.to_string()).collect();
    let pairs: Vec<_> = tasks.iter().map(|t| (t.clone(), script.clone())).collect();
    agent::policy::write_script(dir, &pairs)?;
    Ok(())
}

struct Figures {
    /// Task wall time / steps (browser start and the first page load excluded).
    step: u64,
    observe: u64,
    act: u64,
    /// The page's own work in an action.
    page: u64,
    /// Observation + action - the page's work, per step.
    overhead: u64,
    start: u64,
    steps: usize,
    reproduced: usize,
    /// Per kind of action (its first word): steps, then the medians of observe, action, page work and
    /// overhead.
    by_action: Vec<(String, usize, [u64; 4])>,
}

fn figures(run: &Path, ids: &[String]) -> anyhow::Result<Figures> {
    let (mut observe, mut act, mut start, mut per_step) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut page, mut overhead) = (Vec::new(), Vec::new());
    let mut by_action: std::collections::BTreeMap<String, Vec<[u64; 4]>> = Default::default();
    let (mut steps, mut reproduced) = (0, 0);
    for id in ids {
        let t: serde_json::Value =
            serde_json::from_slice(&std::fs::read(run.join(id).join("trajectory.json"))?)?;
        if t["outcome"] != "answered" {
            bail!("{id} in {} did not answer: {}", run.display(), t["error"]);
        }
        let b = t["browser_start_ms"].as_u64().unwrap_or(0);
        start.push(b);
        let n = t["steps"].as_array().map(Vec::len).unwrap_or(1).max(1) as u64;
        per_step.push(t["duration_ms"].as_u64().unwrap_or(0).saturating_sub(b) / n);
        for s in t["steps"].as_array().into_iter().flatten() {
            steps += 1;
            observe.push(s["timings"]["observe_ms"].as_u64().unwrap_or(0));
            // The last step answers: no action to time.
            if s["action"].as_str().is_some_and(|a| !a.starts_with("ANSWER")) {
                let (o, a, p) = (
                    s["timings"]["observe_ms"].as_u64().unwrap_or(0),
                    s["timings"]["act_ms"].as_u64().unwrap_or(0),
                    s["timings"]["page_ms"].as_u64().unwrap_or(0),
                );
                act.push(a);
                page.push(p);
                overhead.push((o + a).saturating_sub(p));
                let kind = s["action"].as_str().and_then(|a| a.split([' ', ';']).next()).unwrap_or("?");
                by_action.entry(kind.to_string()).or_default().push([o, a, p, (o + a).saturating_sub(p)]);
            }
            if s["reproduced"]["url"] == true && s["reproduced"]["screenshot"] == true {
                reproduced += 1;
            }
        }
    }
    Ok(Figures {
        step: median(per_step),
        observe: median(observe),
        act: median(act),
        page: median(page),
        overhead: median(overhead),
        start: median(start),
        steps,
        reproduced,
        by_action: by_action
            .into_iter()
            .map(|(k, v)| {
                let col = |i: usize| median(v.iter().map(|x| x[i]).collect());
                (k, v.len(), [col(0), col(1), col(2), col(3)])
            })
            .collect(),
    })
}

pub(crate) fn run(tasks: usize, settle_ms: u64) -> anyhow::Result<()> {
    let work = tempfile_dir()?;
    #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
    let now = time::OffsetDateTime::now_utc();
    let mut sites = demo::RunningSites::start(&work, now)?;
    let ids: Vec<String> = (0..tasks).map(|i| format!("Bench--{i}")).collect();
    let tasks: Vec<agent::tasks::Task> = ids
        .iter()
        .map(|id| agent::tasks::Task {
            web_name: "Demo Shop".into(),
            id: id.clone(),
            question: "How many reviews does the Red Mug have?".into(),
            start_url: "https://shop.test/".into(),
            benchmark: Default::default(),
            setup: Default::default(),
        })
        .collect();
    let script = work.join("script");
    write_script(&script, &tasks)?;
    let chrome = agent::browser::find_chrome(None)?;
    let mut agent = AgentConfig::new(chrome.clone());
    agent.settle_quiet = Duration::from_millis(settle_ms);
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let ca = Arc::new(CertificateAuthority::load_or_init(&work.join("home/ca"), now)?);
    let base = RunOptions::scripted(&script, agent, ca, sites.proxy_config(), clock);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let run = |what: &str, opts: RunOptions| -> anyhow::Result<()> {
        eprintln!("bench agent: {what} run of {} x 10 steps", ids.len());
        let out =
            rt.block_on(session::run_tasks(opts, tasks.clone(), std::future::pending(), Arc::new(())))?;
        let failed: Vec<_> =
            out.run_file.tasks.iter().filter(|(_, s)| s.status != TaskState::Answered).collect();
        if !failed.is_empty() {
            bail!("{what} run: tasks did not answer: {failed:?}");
        }
        Ok(())
    };
    let (rec, rep, live) = (work.join("rec"), work.join("rep"), work.join("live"));
    let store_dir = work.join("home/store");
    {
        let mode = ProxyMode::record(Store::open(&store_dir)?, &rec)?;
        run("record", RunOptions { out: rec.clone(), mode, ..base.clone() })?;
    }
    let mode = ProxyMode::Replay {
        store: Store::open_read_only(&store_dir)?,
        run: "rec".into(),
        on_miss: session::MissPolicy::NotFound,
        frozen_web: session::FrozenWeb::recorded(),
    };
    let policy = PolicySpec::Trajectory(rec.clone());
    run("replay", RunOptions { out: rep.clone(), mode, policy, ..base.clone() })?;
    run("live", RunOptions { out: live.clone(), ..base })?;
    sites.stop();
    let (r, p, l) = (figures(&rec, &ids)?, figures(&rep, &ids)?, figures(&live, &ids)?);
    println!(
        "agent overhead per step (median over {} tasks x 10 steps; ms; --settle-ms {settle_ms})",
        ids.len()
    );
    println!(
        "{:<8} {:>8} {:>8} {:>10} {:>10} {:>11} {:>14}",
        "mode", "observe", "action", "page work", "overhead", "whole step", "browser start"
    );
    for (name, f) in [("live", &l), ("record", &r), ("replay", &p)] {
        println!(
            "{name:<8} {:>8} {:>8} {:>10} {:>10} {:>11} {:>14}",
            f.observe, f.act, f.page, f.overhead, f.step, f.start
        );
    }
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    println!(
        "replay / live: observe {:.2}x, action {:.2}x, whole step {:.2}x; replay reproduced {}/{} steps (URL + screenshot hash)",
        ratio(p.observe, l.observe),
        ratio(p.act, l.act),
        ratio(p.step, l.step),
        p.reproduced,
        p.steps
    );
    let kinds: Vec<String> =
        p.by_action.iter().map(|(k, n, [o, a, pg, ov])| format!("{k} x{n}: {o}/{a}/{pg}/{ov}")).collect();
    println!("replay by action (observe/action/page work/overhead): {}", kinds.join(", "));
    println!(
        "replay overhead beyond the page's own work: {} ms per step (target < 150 ms: {})",
        p.overhead,
        if p.overhead < 150 { "met" } else { "missed" }
    );
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

fn tempfile_dir() -> anyhow::Result<PathBuf> {
    let d = std::env::temp_dir().join(format!("webfreeze-bench-agent-{}", std::process::id()));
    std::fs::create_dir_all(&d)?;
    Ok(d)
}
