//! A task list run end to end: the loop of `webfreeze run` (and of the demo, the agent benchmark and any
//! harness that embeds webfreeze). Per task: a [`TaskProxy`], the agent with its policy, the trajectory in
//! the run directory; `jobs` tasks at once; `run.json` rewritten as tasks start and end; finished tasks of
//! an earlier attempt skipped; a shutdown signal stops the run cleanly (browsers killed, unfinished tasks
//! marked interrupted, their snapshots sealed `interrupted`).

use std::sync::{Arc, Mutex};

use agent::runner::run_task;
use agent::tasks::Task;
use trajectory::{Outcome, RunDir, RunFile, RunMode, ShardInfo, TaskDir, TaskState, TaskStatus, Trajectory};

use crate::error::SessionError;
use crate::run_options::RunOptions;
use crate::shard::Shard;
use crate::task_proxy::{check_no_clash, ProxyMode, TaskProxy, TaskProxyOptions};

/// Memory one task needs: a headless Chromium with a few tabs' worth of renderers, plus its proxy.
pub const TASK_MEMORY_BYTES: u64 = 1 << 30;

/// `--jobs auto`: one task per core, as far as `mem_available` bytes hold [`TASK_MEMORY_BYTES`] per
/// task after half a GiB for everything else; at least 1.
pub fn auto_jobs(cores: usize, mem_available: Option<u64>) -> usize {
    let by_memory = mem_available
        .map(|m| {
            usize::try_from(m.saturating_sub(TASK_MEMORY_BYTES / 2) / TASK_MEMORY_BYTES).unwrap_or(usize::MAX)
        })
        .unwrap_or(usize::MAX);
    cores.min(by_memory).max(1)
}

/// [`auto_jobs`] for this machine: available cores (cgroup and affinity aware) and `MemAvailable` from
/// `/proc/meminfo` (cores alone where that cannot be read).
pub fn auto_jobs_here() -> usize {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mem = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kb| kb * 1024)
    });
    auto_jobs(cores, mem)
}

/// What a run is about to do, for its progress display.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// Tasks to run.
    pub todo: usize,
    /// Tasks already finished in the run directory.
    pub skipped: usize,
    /// `llm:MODEL` / `trajectory:RUN`.
    pub policy: String,
    /// The mode.
    pub mode: RunMode,
    /// Tasks at once.
    pub jobs: usize,
    /// The shard this run is, if any.
    pub shard: Option<Shard>,
    /// Tasks in the whole list (all shards).
    pub tasks_total: usize,
}

/// Progress callbacks (a progress bar, log lines, a harness's own bookkeeping). All have no-op defaults.
pub trait Progress: Send + Sync {
    /// Before the first task starts.
    fn start(&self, _plan: &RunPlan) {}
    /// A task ended (its trajectory is written).
    fn task_done(&self, _t: &Trajectory) {}
}

impl Progress for () {}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// run.json as written last.
    pub run_file: RunFile,
    /// The shutdown signal stopped it; unfinished tasks are marked interrupted.
    pub interrupted: bool,
    /// What the warm browsers did, when the run had them ([`AgentConfig::browsers`]).
    pub browsers: Option<agent::browser::PoolStats>,
}

struct Shared {
    opts: RunOptions,
    run: RunDir,
}

fn error_trajectory(sh: &Shared, task: &Task, started_ms: i64, e: &SessionError) -> Trajectory {
    Trajectory {
        outcome: Outcome::Error,
        error: Some(e.to_string()),
        ..agent::runner::blank_trajectory(
            task,
            sh.opts.mode.run_mode(),
            sh.opts.policy.describe(),
            started_ms,
        )
    }
}

/// The trajectory of a task stopped by `--task-timeout`: what it had written so far (every step is
/// written as it ends), marked timed out.
fn timed_out_trajectory(
    sh: &Shared,
    task: &Task,
    dir: &TaskDir,
    started_ms: i64,
    limit: std::time::Duration,
) -> Trajectory {
    let mode = sh.opts.mode.run_mode();
    let mut t = match dir.read_trajectory() {
        Ok(Some(t)) => t,
        _ => agent::runner::blank_trajectory(task, mode, sh.opts.policy.describe(), started_ms),
    };
    t.outcome = Outcome::Timeout;
    t.error = Some(format!("task timed out after {} s (--task-timeout)", limit.as_secs_f64()));
    t.duration_ms = u64::try_from(sh.opts.clock.now_ms() - started_ms).unwrap_or(0);
    if let Err(w) = dir.create().and_then(|()| dir.write_trajectory(&t)) {
        tracing::error!("task {}: {w}", task.id);
    }
    t
}

async fn one_task(sh: &Shared, task: &Task) -> Trajectory {
    let started = sh.opts.clock.now_ms();
    let dir = sh.run.task(&task.id);
    let result = match sh.opts.task_timeout {
        // Dropping the task's future on expiry kills its browser (kill-on-drop) and drops its proxy,
        // which seals the snapshot `interrupted`.
        Some(limit) => match tokio::time::timeout(limit, task_inner(sh, task, &dir, started)).await {
            Ok(r) => r,
            Err(_) => return timed_out_trajectory(sh, task, &dir, started, limit),
        },
        None => task_inner(sh, task, &dir, started).await,
    };
    match result {
        Ok(t) => t,
        Err(e) => {
            let t = error_trajectory(sh, task, started, &e);
            if let Err(w) = dir.create().and_then(|()| dir.write_trajectory(&t)) {
                tracing::error!("task {}: {w}", task.id);
            }
            t
        }
    }
}

async fn task_inner(
    sh: &Shared,
    task: &Task,
    dir: &TaskDir,
    started: i64,
) -> Result<Trajectory, SessionError> {
    let o = &sh.opts;
    let policy = o.policy.for_task(task)?;
    // A rerun of an unfinished task starts it afresh.
    dir.create_empty()?;
    // A replayed or live task keeps its own wire: its network checks are scored on what this run sent.
    // A recorded task's wire is its recording.
    let wire = match o.mode {
        crate::ProxyMode::Replay { .. } | crate::ProxyMode::Live => {
            let run = o.out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            Some(Arc::new(dir.create_wire(&run, &task.id, started)?))
        }
        _ => None,
    };
    let tp = TaskProxy::start(
        &o.mode,
        o.ca.clone(),
        &TaskProxyOptions {
            task_id: task.id.clone(),
            web_name: task.web_name.clone(),
            proxy: o.proxy.clone(),
            clock: o.clock.clone(),
            time_zone: o.time_zone.clone(),
            locale: o.locale.clone(),
            explore: o.agent.explore.is_some(),
            guard: o.guard.clone(),
            wire: wire.clone().map(|w| w as Arc<dyn proxy_report::wire::WireTap>),
        },
    )
    .await?;
    let t = run_task(&o.agent, tp.agent_env(started), task, policy, dir.clone()).await;
    tp.finish().await?;
    if let Some(w) = wire {
        w.finish()?;
    }
    Ok(t)
}

fn save(run: &RunDir, rf: &Mutex<RunFile>) {
    if let Ok(r) = rf.lock() {
        if let Err(e) = run.write_run_file(&r) {
            tracing::error!("{e}");
        }
    }
}

/// Run `tasks` into `opts.out` until done or until `shutdown` resolves. Must be called inside a
/// multi-threaded tokio runtime.
pub async fn run_tasks(
    opts: RunOptions,
    tasks: Vec<Task>,
    shutdown: impl std::future::Future<Output = ()> + Send,
    progress: Arc<dyn Progress>,
) -> Result<RunOutcome, SessionError> {
    let run = RunDir::new(&opts.out);
    run.create()?;
    let earlier = run.read_run_file().ok();
    let (tasks, shard) = match opts.shard {
        Some(s) => {
            let (mine, info) = s.select(tasks);
            (mine, Some(info))
        }
        None => (tasks, None),
    };
    // A rerun must be the same part of the same list, or finished tasks would be mixed across shards.
    if let Some(e) = &earlier {
        if !e.tasks.is_empty() && e.shard != shard {
            let say = |s: &Option<ShardInfo>| match s {
                Some(s) => format!("shard {}/{} of {} tasks", s.index, s.count, s.tasks_total),
                None => "an unsharded run".to_string(),
            };
            return Err(SessionError::ShardMismatch {
                dir: opts.out.display().to_string(),
                was: say(&e.shard),
                now: say(&shard),
            });
        }
    }
    let mut run_file = RunFile {
        v: trajectory::run_dir::RUN_FILE_VERSION,
        webfreeze: env!("CARGO_PKG_VERSION").into(),
        mode: opts.mode.run_mode(),
        policy: opts.policy.describe(),
        tasks_file: opts.tasks_file.clone(),
        snapshots: opts.mode.snapshots().map(str::to_string),
        chrome: opts.agent.chrome.display().to_string(),
        chrome_version: opts.chrome_version.clone(),
        settings: opts.settings(),
        started_ms: opts.clock.now_ms(),
        finished_ms: None,
        tasks: earlier.map(|r| r.tasks).unwrap_or_default(),
        shard,
    };
    // Finished tasks are kept; the rest run.
    let mut todo = Vec::new();
    let mut skipped = 0;
    for t in tasks {
        match run.task(&t.id).read_trajectory() {
            Ok(Some(tr)) if tr.finished() && !(opts.retry_blocked && tr.outcome == Outcome::Blocked) => {
                run_file.tasks.insert(t.id.clone(), TaskStatus::of(&tr));
                skipped += 1;
            }
            _ => {
                run_file.tasks.insert(t.id.clone(), TaskStatus::pending(&t.web_name));
                todo.push(t);
            }
        }
    }
    // Record: a snapshot of the same name from another run directory is never replaced silently.
    if let ProxyMode::Record { store, run: name, run_dir } = &opts.mode {
        let ids: Vec<String> = todo.iter().map(|t| t.id.clone()).collect();
        check_no_clash(store, name, run_dir, &ids)?;
    }
    run.write_run_file(&run_file)?;
    progress.start(&RunPlan {
        todo: todo.len(),
        skipped,
        policy: run_file.policy.clone(),
        mode: run_file.mode,
        jobs: opts.jobs,
        shard: opts.shard,
        tasks_total: run_file.shard.as_ref().map_or(todo.len() + skipped, |s| s.tasks_total),
    });
    let jobs = opts.jobs.max(1);
    let clock = opts.clock.clone();
    let shared = Arc::new(Shared { opts, run: run.clone() });
    let run_file = Arc::new(Mutex::new(run_file));
    // `jobs` workers take the tasks in the list's order (so a run's order, and which tasks a warm browser
    // served before another, is the task file's).
    let queue = Arc::new(Mutex::new(std::collections::VecDeque::from(todo)));
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..jobs {
        let (sh, queue, rf, progress) = (shared.clone(), queue.clone(), run_file.clone(), progress.clone());
        set.spawn(async move {
            // The guard goes with the closure's argument: no lock is held while a task runs.
            let next = || queue.lock().ok().and_then(|mut q| q.pop_front());
            while let Some(task) = next() {
                if let Ok(mut r) = rf.lock() {
                    if let Some(s) = r.tasks.get_mut(&task.id) {
                        s.status = TaskState::Running;
                    }
                }
                // A task that panics is logged and left marked running in run.json (as when each task was a
                // spawned task of its own); the worker goes on with the next.
                let run = std::panic::AssertUnwindSafe(one_task(&sh, &task));
                let t = match futures_util::FutureExt::catch_unwind(run).await {
                    Ok(t) => t,
                    Err(_) => {
                        tracing::error!("task {} panicked", task.id);
                        continue;
                    }
                };
                progress.task_done(&t);
                if let Ok(mut r) = rf.lock() {
                    r.tasks.insert(t.task_id.clone(), TaskStatus::of(&t));
                }
                save(&sh.run, &rf);
            }
        });
    }
    tokio::pin!(shutdown);
    let mut interrupted = false;
    loop {
        tokio::select! {
            r = set.join_next() => match r {
                None => break,
                Some(Err(e)) if !e.is_cancelled() => tracing::error!("a task panicked: {e}"),
                Some(_) => {}
            },
            _ = &mut shutdown, if !interrupted => {
                // Dropping a task's future kills its browser (kill-on-drop) and its proxy; its snapshot is
                // sealed `interrupted` by the TaskProxy's drop.
                interrupted = true;
                set.abort_all();
            }
        }
    }
    let browsers = match &shared.opts.agent.browsers {
        Some(pool) => {
            pool.shutdown().await;
            Some(pool.stats())
        }
        None => None,
    };
    let mut rf = run_file.lock().map(|r| r.clone()).unwrap_or_else(|p| p.into_inner().clone());
    if interrupted {
        for s in rf.tasks.values_mut() {
            if matches!(s.status, TaskState::Running | TaskState::Pending) {
                s.status = TaskState::Interrupted;
            }
        }
    }
    rf.finished_ms = Some(clock.now_ms());
    run.write_run_file(&rf)?;
    Ok(RunOutcome { run_file: rf, interrupted, browsers })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_jobs_is_bounded_by_cores_and_memory() {
        const GIB: u64 = 1 << 30;
        let table: &[(usize, Option<u64>, usize)] = &[
            (2, Some(24 * GIB), 2),
            (64, Some(24 * GIB), 23),
            (8, Some(3 * GIB), 2),
            (8, Some(GIB), 1),
            (8, Some(0), 1),
            (8, None, 8),
            (1, Some(64 * GIB), 1),
        ];
        for &(cores, mem, want) in table {
            assert_eq!(auto_jobs(cores, mem), want, "{cores} cores, {mem:?} bytes");
        }
        assert!(auto_jobs_here() >= 1);
    }
}
