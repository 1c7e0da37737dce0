//! `webfreeze coverage RUN`: how much of a frozen benchmark survives an agent that did not record it.
//!
//! Every task of a recorded run is re-executed from its own recorded replies (the `trajectory:` policy)
//! with its own snapshot and its exploration left out: the task meets only the rest of its site's frozen
//! web (the other tasks' recordings, their explorations, the site's crawl, the frozen search engine). A
//! step is *served as recorded* when the re-execution's page before it has the URL and the element list the
//! recording had; the first step that is not names the request that missed. Per task and per site, with the
//! layers that answered.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use trajectory::{RunDir, Trajectory};

use crate::error::SessionError;
use crate::{FrozenWeb, MissPolicy, PolicySpec, Progress, ProxyMode, RunOptions};

/// One task's coverage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskCoverage {
    /// Task id.
    pub id: String,
    /// Site.
    pub site: String,
    /// Steps the recording took.
    pub steps: usize,
    /// Steps whose page the rest of the frozen web served as recorded.
    pub served: usize,
    /// The first step not served, and the first request it missed (or "the page differs").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_miss: Option<(u32, String)>,
    /// Requests answered per layer (exact, normalised, fuzzy, site-union, explore, crawl, frozen-search,
    /// missed).
    pub layers: BTreeMap<String, u64>,
    /// Whether the re-execution could not run (the error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A site's steps served, over its tasks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SiteCoverage {
    /// Tasks.
    pub tasks: usize,
    /// Steps.
    pub steps: usize,
    /// Steps served as recorded.
    pub served: usize,
    /// Requests per layer.
    pub layers: BTreeMap<String, u64>,
}

impl SiteCoverage {
    /// Served / steps (1.0 without steps).
    pub fn share(&self) -> f64 {
        if self.steps == 0 {
            1.0
        } else {
            self.served as f64 / self.steps as f64
        }
    }
}

/// The whole report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CoverageReport {
    /// The recorded run.
    pub run: String,
    /// Per task.
    pub tasks: Vec<TaskCoverage>,
    /// Per site.
    pub sites: BTreeMap<String, SiteCoverage>,
    /// All sites.
    pub total: SiteCoverage,
}

/// Compare a re-execution with its recording (see the module docs).
pub fn compare(recorded: &Trajectory, replayed: &Trajectory) -> TaskCoverage {
    let mut c = TaskCoverage {
        id: recorded.task_id.clone(),
        site: recorded.web_name.clone(),
        steps: recorded.steps.len(),
        ..Default::default()
    };
    for (i, o) in recorded.steps.iter().enumerate() {
        let Some(s) = replayed.steps.get(i) else {
            if c.first_miss.is_none() {
                let why = replayed.error.clone().unwrap_or_else(|| "the re-execution ended earlier".into());
                c.first_miss = Some((o.n, why));
            }
            continue;
        };
        let p = &s.proxy;
        for (layer, n) in [
            ("exact", p.exact),
            ("normalised", p.normalised),
            ("fuzzy", p.fuzzy),
            ("site-union", p.site_union),
            ("explore", p.explore),
            ("crawl", p.crawl),
            ("frozen-search", p.frozen_search),
            ("missed", p.missed),
        ] {
            *c.layers.entry(layer.to_string()).or_insert(0) += n;
        }
        if s.url_before == o.url_before && s.elements == o.elements {
            c.served += 1;
        } else if c.first_miss.is_none() {
            let why = p.miss_urls.first().cloned().unwrap_or_else(|| {
                if s.url_before != o.url_before {
                    format!("at {} instead of {}", s.url_before, o.url_before)
                } else {
                    format!("the page at {} differs from the recording's", s.url_before)
                }
            });
            c.first_miss = Some((o.n, why));
        }
    }
    c
}

/// Sum tasks into the report's per-site and total figures.
pub fn summarise(run: &str, tasks: Vec<TaskCoverage>) -> CoverageReport {
    let mut sites: BTreeMap<String, SiteCoverage> = BTreeMap::new();
    let mut total = SiteCoverage::default();
    for t in &tasks {
        for acc in [sites.entry(t.site.clone()).or_default(), &mut total] {
            acc.tasks += 1;
            acc.steps += t.steps;
            acc.served += t.served;
            for (k, v) in &t.layers {
                *acc.layers.entry(k.clone()).or_insert(0) += v;
            }
        }
    }
    CoverageReport { run: run.to_string(), tasks, sites, total }
}

/// Re-execute every task of the recorded run `recorded` leave-one-out (see the module docs) into `out`
/// (a run directory), and report. `base` gives the browser, CA, proxy and clock; its `out`, `mode` and
/// `policy` are replaced.
pub async fn coverage_run(
    recorded: &Path,
    store: snapshots::Store,
    frozen_web: FrozenWeb,
    base: RunOptions,
    out: PathBuf,
    progress: std::sync::Arc<dyn Progress>,
) -> Result<CoverageReport, SessionError> {
    let rd = RunDir::new(recorded);
    let rf = rd.read_run_file()?;
    let recording = rf.snapshots.clone().ok_or_else(|| {
        SessionError::Coverage(format!(
            "{} recorded no snapshots (not a `run --mode record` run)",
            recorded.display()
        ))
    })?;
    let trajs: Vec<Trajectory> = rd.trajectories()?.into_iter().map(|(_, t)| t).collect();
    if trajs.is_empty() {
        return Err(SessionError::Coverage(format!("{} has no trajectories", recorded.display())));
    }
    let tasks: Vec<_> = trajs.iter().map(crate::rescore::task_of).collect();
    let mode = ProxyMode::Replay {
        store,
        run: recording,
        on_miss: MissPolicy::NotFound,
        frozen_web: FrozenWeb { leave_out_own: true, ..frozen_web },
    };
    let opts = RunOptions {
        out: out.clone(),
        mode,
        policy: PolicySpec::Trajectory(recorded.to_path_buf()),
        guard: None,
        ..base
    };
    crate::run_tasks(opts, tasks, std::future::pending(), progress).await?;
    let replayed = RunDir::new(&out);
    let mut rows = Vec::new();
    for t in &trajs {
        let row = match replayed.task(&t.task_id).read_trajectory() {
            Ok(Some(r)) => compare(t, &r),
            Ok(None) => TaskCoverage {
                id: t.task_id.clone(),
                site: t.web_name.clone(),
                steps: t.steps.len(),
                error: Some("no re-execution".into()),
                ..Default::default()
            },
            Err(e) => TaskCoverage {
                id: t.task_id.clone(),
                site: t.web_name.clone(),
                steps: t.steps.len(),
                error: Some(e.to_string()),
                ..Default::default()
            },
        };
        rows.push(row);
    }
    Ok(summarise(&recorded.display().to_string(), rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use trajectory::Step;

    fn step(n: u32, url: &str, elements: &str) -> Step {
        Step { n, url_before: url.into(), elements: elements.into(), ..Default::default() }
    }

    #[test]
    fn steps_served_and_the_first_miss() {
        let rec = Trajectory {
            task_id: "t".into(),
            web_name: "W".into(),
            steps: vec![
                step(1, "https://w.test/", "[0] a"),
                step(2, "https://w.test/a", "[0] b"),
                step(3, "https://w.test/b", "[0] c"),
            ],
            ..Default::default()
        };
        let mut miss = step(2, "https://w.test/a", "");
        miss.proxy.missed = 1;
        miss.proxy.miss_urls = vec!["GET https://w.test/a".into()];
        let rep = Trajectory { steps: vec![step(1, "https://w.test/", "[0] a"), miss], ..Default::default() };
        let c = compare(&rec, &rep);
        assert_eq!((c.steps, c.served), (3, 1));
        assert_eq!(c.first_miss, Some((2, "GET https://w.test/a".into())));
        assert_eq!(c.layers["missed"], 1);
        let r = summarise("r", vec![c.clone(), TaskCoverage { site: "V".into(), steps: 2, served: 2, ..c }]);
        assert_eq!((r.total.steps, r.total.served, r.sites["W"].served, r.sites["V"].served), (5, 3, 1, 2));
    }
}
