//! `eval --rescore`: re-run the `program_html` and `page_image_query` checks of a run's WebArena-format
//! tasks offline, against each task's snapshot. The frozen final state is the state the agent left, not
//! just its final URL (a hover, a typed field, a tab): so each task is re-executed from its own
//! recorded replies (the `trajectory:` policy) in a fresh browser behind a replay proxy of its snapshot
//! (no network), with the set-up its file gave it (start tabs, viewport, storage state), and the checks
//! run at its end as they did in the run. The re-execution's files (trajectory, screenshots, images the
//! checks fetched) go to the task's `rescore/` directory.
//!
//! `run.json` is read once, both halves of its settings: the agent's (action space, observation, window,
//! budget, early stops) for the re-execution, the proxy's for the replay, which serves what the run's
//! replay served (`frozen_web`, `search` and `ws_pacing`: the site union and the frozen search engine when
//! the run had them; a run from before they were recorded, or not a replay, the task's own snapshot only;
//! `session::settings`), with the run's time zone and locale where the snapshot does not say them. Misses
//! are answered 404 whatever the run did: a rescore never reaches the live web.

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
        question: t.question.clone(),
        start_url: t.start_url.clone(),
        benchmark: t.benchmark(),
        setup,
    }
}

/// Re-executes every task in `run` whose spec has `program_html` or `page_image_query` against its
/// snapshot and collects its checks' evidence. `agent` is the browser; the run's own settings (action
/// space, observation, window, budget) are applied to it here, from the `run.json` that also says what
/// the run served. `progress(done, total, task_id)` after each.
pub async fn rescore_run(
    run: &Path,
    store: Store,
    ca: Arc<CertificateAuthority>,
    mut agent: AgentConfig,
    proxy: ProxyConfig,
    clock: Arc<dyn Clock>,
    progress: &(dyn Fn(usize, usize, &str) + Sync),
) -> Result<Rescored, SessionError> {
    let rd = RunDir::new(run);
    let recorded = rd.read_run_file()?.settings;
    agent::settings::Settings::resolve(&Default::default(), Some(&recorded.agent), None)?.apply(&mut agent);
    let agent = &agent;
    let served = served_as_run(&recorded);
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
        let r = match t.snapshot.as_deref().and_then(|s| crate::names::recording_of(s, &t.task_id)) {
            None => Err(RescoreError::NoSnapshot),
            Some(recording) => {
                let mode = ProxyMode::Replay {
                    store: store.clone(),
                    run: recording.to_string(),
                    on_miss: MissPolicy::NotFound,
                    // The checks see the state the agent left on the pages it was served.
                    frozen_web: served.frozen_web.clone(),
                };
                let opts = TaskProxyOptions {
                    task_id: t.task_id.clone(),
                    web_name: t.web_name.clone(),
                    proxy: proxy.clone(),
                    clock: clock.clone(),
                    time_zone: served.time_zone.clone(),
                    locale: served.locale.clone(),
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

/// What a rescore's replay serves and emulates: what the run did (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Served {
    frozen_web: crate::FrozenWeb,
    time_zone: String,
    locale: String,
}

/// What the run with settings `c` served: its frozen web, search and pacing when it recorded them (the
/// task's own snapshot and no frozen search otherwise: [`crate::FrozenWeb::served_by`]), its time zone and
/// locale (UTC and en-US otherwise).
pub(crate) fn served_as_run(c: &trajectory::RunSettings) -> Served {
    Served {
        frozen_web: crate::FrozenWeb::served_by(&c.proxy, &c.agent.search_url),
        time_zone: c.proxy.time_zone.clone().unwrap_or_else(|| "UTC".into()),
        locale: c.proxy.locale.clone().unwrap_or_else(|| "en-US".into()),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use trajectory::{FrozenWebUnit, ProxySettings, RunSettings, SearchMode};

    /// A rescore serves what the run served: read from run.json, typed, with a run from before these
    /// were recorded served its own snapshot only, in UTC and en-US, as rescores always were.
    #[test]
    fn a_rescore_serves_what_the_run_served() {
        let old: RunSettings = serde_json::from_str(r#"{"max_steps": 3, "on_miss": "NotFound"}"#).unwrap();
        let s = served_as_run(&old);
        assert_eq!(
            (s.frozen_web, s.time_zone.as_str(), s.locale.as_str()),
            (crate::FrozenWeb::recorded(), "UTC", "en-US")
        );
        // As issue 50's runs wrote them.
        let was: RunSettings = serde_json::from_str(
            r#"{"on_miss": "NotFound", "search_url": "https://search.test/", "frozen_web": "site", "search": "fallback"}"#,
        )
        .unwrap();
        assert_eq!(
            (was.proxy.frozen_web, was.proxy.search),
            (Some(FrozenWebUnit::Site), Some(SearchMode::Fallback))
        );
        let s = served_as_run(&was);
        assert_eq!(s.frozen_web.unit, FrozenWebUnit::Site);
        assert_eq!(s.frozen_web.search, replay::search::SearchMode::Fallback);
        assert_eq!(s.frozen_web.search_urls, ["https://search.test/"]);
        assert_eq!(s.frozen_web.ws_pacing, replay::websocket::WsPacing::Recorded);
        let now = RunSettings {
            proxy: ProxySettings {
                frozen_web: Some(FrozenWebUnit::Task),
                search: Some(SearchMode::Off),
                ws_pacing: Some(trajectory::WsPacing::Fast),
                time_zone: Some("Asia/Tokyo".into()),
                locale: Some("ja-JP".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let back: RunSettings = serde_json::from_str(&serde_json::to_string(&now).unwrap()).unwrap();
        assert_eq!(back, now);
        let s = served_as_run(&back);
        assert_eq!(
            (s.frozen_web.unit, s.frozen_web.ws_pacing, s.time_zone.as_str(), s.locale.as_str()),
            (FrozenWebUnit::Task, replay::websocket::WsPacing::Fast, "Asia/Tokyo", "ja-JP")
        );
    }
}
