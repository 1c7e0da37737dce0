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
