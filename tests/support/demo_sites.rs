//! The bundled demo sites on loopback (`demo::RunningSites`), with the command-line options that reach
//! them through a proxy.

use std::path::Path;
use std::sync::Arc;

/// The demo sites and `reach`: `--upstream-ca FILE --resolve HOST:443:ADDR ...` for `webfreeze` commands.
pub(crate) struct DemoSites {
    running: demo::RunningSites,
    pub reach: Vec<String>,
}

impl DemoSites {
    pub(crate) async fn start(home: &Path) -> DemoSites {
        #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
        let now = time::OffsetDateTime::now_utc();
        let running = demo::RunningSites::start(home, now).unwrap();
        let reach = running.reach_args();
        DemoSites { running, reach }
    }

    /// The sites (their day counter).
    pub(crate) fn sites(&self) -> &Arc<demo::Sites> {
        self.running.sites()
    }

    /// A proxy configuration that reaches them.
    pub(crate) fn proxy_config(&self) -> proxy::ProxyConfig {
        self.running.proxy_config()
    }

    /// Where they listen.
    pub(crate) fn addr(&self) -> std::net::SocketAddr {
        self.running.addr()
    }

    /// Stop serving: later connections are refused.
    pub(crate) fn stop(&mut self) {
        self.running.stop();
    }
}

/// The demo's scripted replies for the tasks in `tasks`, as a run directory the `trajectory:` policy
/// re-executes.
pub(crate) fn write_demo_script(dir: &Path, tasks: &Path) {
    let mut scripts: std::collections::BTreeMap<String, Vec<String>> =
        serde_json::from_str(demo::SCRIPTS_JSON).unwrap();
    let pairs: Vec<_> = agent::tasks::load(tasks)
        .unwrap()
        .into_iter()
        .map(|t| {
            let replies = scripts.remove(&t.id).unwrap();
            (t, replies)
        })
        .collect();
    agent::policy::write_script(dir, &pairs).unwrap();
}

/// Re-execute the run in `recorded` with the `trajectory:` policy in replay mode (its snapshots in
/// `home`'s store, the sites may be stopped) into `out`, and check that all `n` tasks answered with
/// every step reproduced (URL and screenshot hash). Returns the replayed trajectories by task id.
pub(crate) async fn replay_step_for_step(
    home: &Path,
    tasks: &Path,
    recorded: &Path,
    out: &Path,
    n: usize,
) -> std::collections::BTreeMap<String, trajectory::Trajectory> {
    let args = crate::support::strs(&[
        "run",
        "--tasks",
        tasks.to_str().unwrap(),
        "--mode",
        "replay",
        "--settle-ms",
        "300",
        "--policy",
        &format!("trajectory:{}", recorded.display()),
        "--out",
        out.to_str().unwrap(),
    ]);
    let o = crate::support::cli(home, args, vec![]).await;
    assert!(o.status.success(), "replay of {}: {}", recorded.display(), String::from_utf8_lossy(&o.stderr));
    let replayed: std::collections::BTreeMap<_, _> = trajectory::RunDir::new(out)
        .trajectories()
        .unwrap()
        .into_iter()
        .map(|(_, t)| (t.task_id.clone(), t))
        .collect();
    assert_eq!(replayed.len(), n, "replayed tasks in {}", out.display());
    for (id, t) in &replayed {
        assert_eq!(t.outcome, trajectory::Outcome::Answered, "{id}: {t:?}");
        assert_eq!(
            t.reproduced_steps,
            Some(t.steps.len() as u32),
            "{id}: not every step reproduced: {:?}",
            t.steps.iter().map(|s| &s.reproduced).collect::<Vec<_>>()
        );
    }
    replayed
}
