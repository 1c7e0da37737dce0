//! `eval --rescore`: re-run the `program_html` checks of a run's WebArena-format tasks offline, against
//! each task's snapshot, without re-running the agent. Each task gets a replay proxy of its snapshot (no
//! network), a fresh Chromium loads the task's final URL from it, and the checks run as they did at the
//! end of the task: a check's own page comes from the snapshot too, because recording it was part of the
//! task.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use agent::runner::{rescore_html, AgentConfig};
use proxy::{CertificateAuthority, ProxyConfig};
use snapshots::{Clock, Store};
use trajectory::{HtmlCheck, RunDir};

use crate::{MissPolicy, ProxyMode, SessionError, TaskProxy, TaskProxyOptions};

/// Per task id: the re-run checks, or why they could not be re-run.
pub type Rescored = BTreeMap<String, Result<Vec<HtmlCheck>, String>>;

/// Re-runs the checks of every task in `run` whose spec has `program_html` and that has a snapshot.
/// `progress(done, total, task_id)` after each.
pub async fn rescore_program_html(
    run: &Path,
    store: Store,
    ca: Arc<CertificateAuthority>,
    agent: &AgentConfig,
    proxy: ProxyConfig,
    clock: Arc<dyn Clock>,
    progress: &(dyn Fn(usize, usize, &str) + Sync),
) -> Result<Rescored, SessionError> {
    let trajs = RunDir::new(run).trajectories()?;
    let todo: Vec<_> = trajs
        .into_iter()
        .filter_map(|(_, t)| {
            let checks = t.task_eval.as_ref()?.get("program_html")?.as_array()?.clone();
            (!checks.is_empty()).then_some((t, checks))
        })
        .collect();
    let mut out = Rescored::new();
    for (i, (t, checks)) in todo.iter().enumerate() {
        let r = match t.snapshot.as_deref().and_then(|s| s.strip_suffix(&format!("/{}", t.task_id))) {
            None => Err("the task has no snapshot to re-score against (a live run)".to_string()),
            Some(recording) => {
                let mode = ProxyMode::Replay {
                    store: store.clone(),
                    run: recording.to_string(),
                    on_miss: MissPolicy::NotFound,
                };
                let opts = TaskProxyOptions {
                    task_id: t.task_id.clone(),
                    web_name: t.web_name.clone(),
                    proxy: proxy.clone(),
                    clock: clock.clone(),
                    time_zone: "UTC".into(),
                    locale: "en-US".into(),
                };
                match TaskProxy::start(&mode, ca.clone(), &opts).await {
                    Ok(tp) => {
                        let env = tp.agent_env(clock.now_ms());
                        let r = rescore_html(agent, env, &t.task_id, &t.final_url, checks).await;
                        tp.finish().await?;
                        r
                    }
                    Err(e) => Err(e.to_string()),
                }
            }
        };
        out.insert(t.task_id.clone(), r);
        progress(i + 1, todo.len(), &t.task_id);
    }
    Ok(out)
}
