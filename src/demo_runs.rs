//! What `demo` and `demo --webarena` share: the options of a scripted run on the demo sites (the
//! `trajectory:` policy over the scripts, the sites reached through their own CA; run.json's settings are
//! `session::RunOptions::settings`'s, as every run's).

use std::path::Path;
use std::sync::Arc;

use agent::runner::AgentConfig;
use clock::SystemClock;
use session::{PolicySpec, ProxyMode, RunOptions};

use crate::config::{load_ca, Config};

/// Live-mode options for scripted runs of `tasks_path` on `sites` (callers set `out` and `mode`).
pub(crate) fn scripted_run_options(
    cfg: &Config,
    agent: AgentConfig,
    script_dir: &Path,
    sites: &demo::RunningSites,
    tasks_path: &Path,
    jobs: usize,
) -> anyhow::Result<RunOptions> {
    // Both guards on, no site owned (`demo --webarena` owns its sites).
    let guard = Arc::new(proxy::guard::GuardConfig::standard(Vec::new()));
    Ok(RunOptions {
        jobs,
        tasks_file: tasks_path.display().to_string(),
        guard: Some(guard),
        ..RunOptions::scripted(script_dir, agent, load_ca(cfg)?, sites.proxy_config(), Arc::new(SystemClock))
    })
}

/// Re-executes the run in `recorded` (its directory name is its recording's name) against its snapshots
/// in `store_dir`, sealed, into `out`.
pub(crate) fn replay_recorded(
    base: RunOptions,
    store_dir: &Path,
    recorded: &Path,
    out: &Path,
    tasks: Vec<agent::tasks::Task>,
) -> anyhow::Result<()> {
    let policy = PolicySpec::Trajectory(recorded.to_path_buf());
    replay_with(base, store_dir, recorded, out, tasks, policy)
}

/// Runs `tasks` with `policy` against the snapshots of the recording in `recorded`, sealed, into `out`.
pub(crate) fn replay_with(
    base: RunOptions,
    store_dir: &Path,
    recorded: &Path,
    out: &Path,
    tasks: Vec<agent::tasks::Task>,
    policy: PolicySpec,
) -> anyhow::Result<()> {
    let run = recorded.file_name().and_then(|n| n.to_str()).unwrap_or("recorded").to_string();
    let mode = ProxyMode::Replay {
        store: snapshots::Store::open_read_only(store_dir)?,
        run,
        on_miss: session::MissPolicy::NotFound,
        frozen_web: session::FrozenWeb::default(),
    };
    crate::output::run_with_progress(RunOptions { out: out.to_path_buf(), mode, policy, ..base }, tasks)?;
    Ok(())
}
