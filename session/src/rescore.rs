//! `eval --rescore`: re-run the `program_html` and `page_image_query` checks of a run's WebArena-format
//! tasks offline, against each task's snapshot. The frozen final state is the state the agent left, not
//! just its final URL (a hover, a typed field, a tab): so each task is re-executed from its own
//! recorded replies (the `trajectory:` policy) in a fresh browser behind a replay proxy of its snapshot
//! (no network), with the set-up its file gave it (start tabs, viewport, storage state), and the checks
//! run at its end as they did in the run. The re-execution's files (trajectory, screenshots, images the
//! checks fetched) go to the task's `rescore/` directory.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use agent::policy::{Policy, TrajectoryPolicy};
use agent::runner::{run_task, AgentConfig};
use agent::tasks::{Task, TaskSetup};
use clock::Clock;
use proxy::{CertificateAuthority, ProxyConfig};
use snapshots::Store;
use trajectory::{CheckEvidence, Outcome, RescoreError, RunDir, TaskEvalSpec, Trajectory, WebArenaEval};

use crate::{MissPolicy, ProxyMode, SessionError, TaskProxy, TaskProxyOptions};

/// Per task id: the re-run checks' evidence (image files relative to the task's directory), or why they
/// could not be re-run.
pub type Rescored = BTreeMap<String, Result<CheckEvidence, RescoreError>>;

/// Where a task's re-execution is written, inside its directory.
pub const RESCORE_DIR: &str = "rescore";

/// The task a trajectory ran, rebuilt from what the trajectory keeps.
pub(crate) fn task_of(t: &Trajectory) -> Task {
    let mut setup: TaskSetup =
        t.task_setup.as_ref().and_then(|v| serde_json::from_value(v.clone()).ok()).unwrap_or_default();
    setup.eval = t.task_eval.clone();
    // A storage-state file of another machine is not there: cookies do not change what replay serves.
    if setup.storage_state.as_ref().is_some_and(|p| !p.exists()) {
        setup.storage_state = None;
    }
    Task {
        web_name: t.web_name.clone(),
        id: t.task_id.clone(),
        ques: t.question.clone(),
        web: t.start_url.clone(),
        setup,
    }
}

/// Re-executes every task in `run` whose spec has `program_html` or `page_image_query` against its
/// snapshot and collects its checks' evidence. `agent` must be the run's settings (action space,
/// observation, window). `progress(done, total, task_id)` after each.
pub async fn rescore_run(
    run: &Path,
    store: Store,
    ca: Arc<CertificateAuthority>,
    agent: &AgentConfig,
    proxy: ProxyConfig,
    clock: Arc<dyn Clock>,
    progress: &(dyn Fn(usize, usize, &str) + Sync),
) -> Result<Rescored, SessionError> {
    let rd = RunDir::new(run);
    let todo: Vec<Trajectory> = rd
        .trajectories()?
        .into_iter()
        .map(|(_, t)| t)
        .filter(|t| {
            t.task_eval
                .as_ref()
                .and_then(TaskEvalSpec::webarena)
                .is_some_and(WebArenaEval::has_browser_checks)
        })
        .collect();
    let mut out = Rescored::new();
    for (i, t) in todo.iter().enumerate() {
        let r = match t.snapshot.as_deref().and_then(|s| s.strip_suffix(&format!("/{}", t.task_id))) {
            None => Err(RescoreError::NoSnapshot),
            Some(recording) => {
                let mode = ProxyMode::Replay {
                    store: store.clone(),
                    run: recording.to_string(),
                    on_miss: MissPolicy::NotFound,
                    // The checks see the state the agent left on the pages it was served: its own.
                    frozen_web: crate::FrozenWeb::recorded(),
                };
                let opts = TaskProxyOptions {
                    task_id: t.task_id.clone(),
                    web_name: t.web_name.clone(),
                    proxy: proxy.clone(),
                    clock: clock.clone(),
                    time_zone: "UTC".into(),
                    locale: "en-US".into(),
                    explore: false,
                    guard: None,
                    wire: None,
                };
                match TaskProxy::start(&mode, ca.clone(), &opts).await {
                    Ok(tp) => {
                        let r = reexecute(run, agent, tp.agent_env(clock.now_ms()), t).await;
                        tp.finish().await?;
                        r
                    }
                    Err(e) => Err(RescoreError::Proxy(std::sync::Arc::new(e))),
                }
            }
        };
        out.insert(t.task_id.clone(), r);
        progress(i + 1, todo.len(), &t.task_id);
    }
    Ok(out)
}

/// One task re-executed from its recorded replies into `<task>/rescore/`; its checks' evidence with
/// image paths made relative to the task's directory.
async fn reexecute(
    run: &Path,
    agent: &AgentConfig,
    env: agent::runner::TaskEnv,
    t: &Trajectory,
) -> Result<CheckEvidence, RescoreError> {
    let task = task_of(t);
    let policy =
        TrajectoryPolicy::load(run, &task).map_err(|e| RescoreError::Replies(std::sync::Arc::new(e)))?;
    let mut cfg = agent.clone();
    cfg.max_steps = cfg.max_steps.max(t.steps.len() as u32);
    let task_dir = RunDir::new(run).task(&t.task_id);
    let dir = RunDir::new(task_dir.path()).task(RESCORE_DIR);
    let again = run_task(&cfg, env, &task, Policy::Trajectory(Box::new(policy)), dir).await;
    if again.outcome == Outcome::Error {
        return Err(RescoreError::Reexecution(again.error.unwrap_or_default()));
    }
    let mut images = again.image_checks;
    for f in images.iter_mut().flat_map(|c| c.images.iter_mut().chain(c.gold.iter_mut())) {
        if !f.file.is_empty() {
            f.file = format!("{RESCORE_DIR}/{}", f.file);
        }
    }
    Ok((again.html_checks, images))
}
