//! Two evaluated runs side by side: success per site and overall, agreement, Cohen's kappa, an exact
//! McNemar p-value, and for every task whose verdict flipped the evidence (replay misses and fuzzy
//! matches during it, the first step where the URLs diverge, both final answers). Markdown, JSON, and one
//! self-contained HTML page with both trajectories' screenshots side by side.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use trajectory::Trajectory;

use crate::evaluate::{read_report, trajectories, EvalError, GroupStats};
use crate::stats::Pairs;

mod render;

pub use render::{html, html_with, markdown, site_diff_html, site_diff_page, SITE_DIFF_CSS};
pub(crate) use render::{page, PAGE_CSS};

/// Where two trajectories part.
#[derive(Debug, Clone, Serialize)]
pub struct Divergence {
    /// 1-based step.
    pub step: u32,
    /// Run A's URL there (empty when A had no such step).
    pub a_url: String,
    /// Run B's URL there.
    pub b_url: String,
}

/// One run's side of a task.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    /// Verdict.
    pub success: bool,
    /// How the run ended.
    pub outcome: String,
    /// Final answer.
    pub answer: Option<String>,
    /// Final URL.
    pub final_url: String,
    /// Steps taken.
    pub steps: usize,
    /// Replay misses during the task.
    pub misses: Vec<String>,
    /// Replay fuzzy matches during the task.
    pub fuzzy: Vec<String>,
    /// Live requests that got no response during the task.
    pub failed: Vec<String>,
    /// Screenshot paths, relative to the run.
    pub screenshots: Vec<String>,
    /// The snapshot the task recorded into or replayed (record and replay runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
}

/// A task whose verdict differs between the runs.
#[derive(Debug, Clone, Serialize)]
pub struct Flip {
    /// Task id.
    pub id: String,
    /// Site.
    pub web_name: String,
    /// Run A.
    pub a: Side,
    /// Run B.
    pub b: Side,
    /// First step where the URLs differ.
    pub divergence: Option<Divergence>,
    /// Why it flipped, with the evidence.
    pub cause: Cause,
}

/// The cause a flip is attributed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CauseKind {
    /// A replay miss at or before the divergence: the snapshot could not answer what the agent asked.
    Coverage,
    /// The same URL showed different content (the site changed between the runs).
    Drift,
    /// Same pages, different actions: the agent (model, seed) chose otherwise.
    Agent,
    /// None of the above could be shown (e.g. same pages and actions, different judgement).
    Unknown,
}

/// A flip's attributed cause and what shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Cause {
    /// The cause.
    pub kind: CauseKind,
    /// Evidence lines: the misses, the changed text of the page (`- old` / `+ new`), the differing actions.
    pub evidence: Vec<String>,
}

/// Changed lines between two texts, `- old` / `+ new`, at most `max`.
pub fn changed_lines(a: &str, b: &str, max: usize) -> Vec<String> {
    similar::TextDiff::from_lines(a, b)
        .iter_all_changes()
        .filter_map(|c| match c.tag() {
            similar::ChangeTag::Delete => Some(format!("- {}", c.value().trim_end())),
            similar::ChangeTag::Insert => Some(format!("+ {}", c.value().trim_end())),
            similar::ChangeTag::Equal => None,
        })
        .take(max)
        .collect()
}

/// Attribute a flip: coverage (a replay miss of a document or of something the page's rendering needed,
/// at or before the divergence), else drift (a step both runs took at the same URL whose page, as the agent
/// was shown it, differs: the changed lines), else agent (same pages, the first differing action), else
/// unknown. Blocked tasks are counted apart before pairing, so they never flip.
pub fn attribute(a: &Trajectory, b: &Trajectory, div: Option<&Divergence>) -> Cause {
    let upto = div.map_or(usize::MAX, |d| d.step as usize);
    let mut evidence = Vec::new();
    for (name, t) in [("A", a), ("B", b)] {
        for s in t.steps.iter().take(upto) {
            if s.proxy.document_missed > 0 || s.proxy.render_missed > 0 {
                for m in s.proxy.miss_urls.iter().take(3) {
                    evidence.push(format!("{name} step {} missed {m}", s.n));
                }
            }
        }
        if let Some(c) = t.coverage.as_ref().filter(|c| c.off_snapshot && c.steps_document_missed.is_empty())
        {
            evidence.push(format!("{name}: {} document(s) missed before the first step", c.documents_missed));
        }
    }
    if !evidence.is_empty() {
        return Cause { kind: CauseKind::Coverage, evidence };
    }
    for (x, y) in a.steps.iter().zip(&b.steps).take(upto) {
        if x.url_before == y.url_before && x.elements != y.elements {
            let mut evidence = vec![format!("step {} at {}: the page changed", x.n, x.url_before)];
            evidence.extend(changed_lines(&x.elements, &y.elements, 12));
            return Cause { kind: CauseKind::Drift, evidence };
        }
    }
    for (x, y) in a.steps.iter().zip(&b.steps) {
        if x.action != y.action {
            let act = |s: &trajectory::Step| s.action.clone().unwrap_or_else(|| "(none)".into());
            return Cause {
                kind: CauseKind::Agent,
                evidence: vec![format!("step {} on the same page: A {} / B {}", x.n, act(x), act(y))],
            };
        }
    }
    if a.steps.len() != b.steps.len() || a.answer != b.answer {
        return Cause {
            kind: CauseKind::Agent,
            evidence: vec![format!(
                "same pages; A answered {:?} after {} step(s), B {:?} after {}",
                a.answer.as_deref().unwrap_or("-"),
                a.steps.len(),
                b.answer.as_deref().unwrap_or("-"),
                b.steps.len()
            )],
        };
    }
    Cause { kind: CauseKind::Unknown, evidence: vec!["same pages, actions and answer".into()] }
}

/// The comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Run A.
    pub a: String,
    /// Run B.
    pub b: String,
    /// Per site: (A, B).
    pub sites: BTreeMap<String, (GroupStats, GroupStats)>,
    /// Overall over the paired tasks: (A, B).
    pub overall: (GroupStats, GroupStats),
    /// The 2x2 table.
    pub pairs: Pairs,
    /// Share of tasks with the same verdict.
    pub agreement: f64,
    /// Cohen's kappa.
    pub kappa: f64,
    /// Exact McNemar p-value.
    pub mcnemar_p: f64,
    /// Flipped tasks.
    pub flips: Vec<Flip>,
    /// Tasks evaluated in one run only (left out of the paired statistics).
    pub unpaired: Vec<String>,
    /// Replayed state tasks counted apart for an unknown state: (task, run "A"/"B", why). They are in
    /// their run's rate bounds ([`GroupStats::bounds`]) and out of the paired statistics.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub state_unknown: Vec<(String, String, String)>,
    /// Per site: tasks the site blocked in (A, B), counted apart (not in the rates).
    pub blocked: BTreeMap<String, (u64, u64)>,
    /// The blocked tasks with their evidence: (task, run "A"/"B", `host: marker`).
    pub blocked_tasks: Vec<(String, String, String)>,
    /// Replayed tasks served beyond their own snapshot: (task, run "A"/"B", which layers and at which steps).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub beyond_snapshot: Vec<(String, String, String)>,
    /// Live and record: tasks the guards flagged: (task, run "A"/"B", the evidence); contaminated ones
    /// are not in the rates.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub guarded: Vec<(String, String, String)>,
}

/// Which layers beyond the task's own snapshot served a replayed task, and where (None: none did).
pub fn layers_beyond(t: &Trajectory) -> Option<String> {
    let c = t.coverage.as_ref()?;
    let steps = |f: fn(&trajectory::ProxyStats) -> u64| -> String {
        let n: Vec<String> = t.steps.iter().filter(|s| f(&s.proxy) > 0).map(|s| s.n.to_string()).collect();
        if n.is_empty() {
            "start page".into()
        } else {
            format!("step {}", n.join(", "))
        }
    };
    let mut parts = Vec::new();
    for (name, n, at) in [
        ("explore", c.explore, steps(|p| p.explore)),
        ("site-union", c.site_union, steps(|p| p.site_union)),
        ("frozen-search", c.frozen_search, steps(|p| p.frozen_search)),
    ] {
        if n > 0 {
            parts.push(format!("{name}: {n} request{} ({at})", if n == 1 { "" } else { "s" }));
        }
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

fn side(t: &Trajectory, success: bool) -> Side {
    let mut misses = Vec::new();
    let mut fuzzy = Vec::new();
    let mut failed = Vec::new();
    for s in &t.steps {
        misses.extend(s.proxy.miss_urls.iter().cloned());
        fuzzy.extend(s.proxy.fuzzy_urls.iter().cloned());
        failed.extend(s.proxy.failed_urls.iter().cloned());
    }
    Side {
        success,
        outcome: serde_json::to_value(t.outcome)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        answer: t.answer.clone(),
        final_url: t.final_url.clone(),
        steps: t.steps.len(),
        misses,
        fuzzy,
        failed,
        screenshots: t
            .steps
            .iter()
            .map(|s| format!("{}/{}", trajectory::run_dir::task_dir_name(&t.task_id), s.screenshot))
            .collect(),
        snapshot: t.snapshot.clone(),
    }
}

fn divergence(a: &Trajectory, b: &Trajectory) -> Option<Divergence> {
    let n = a.steps.len().max(b.steps.len());
    for i in 0..n {
        let (au, bu) = (a.steps.get(i), b.steps.get(i));
        let a_url = au.map(|s| s.url_before.clone()).unwrap_or_default();
        let b_url = bu.map(|s| s.url_before.clone()).unwrap_or_default();
        if a_url != b_url {
            return Some(Divergence { step: i as u32 + 1, a_url, b_url });
        }
        let a_after = au.map(|s| s.url_after.clone()).unwrap_or_default();
        let b_after = bu.map(|s| s.url_after.clone()).unwrap_or_default();
        if a_after != b_after {
            return Some(Divergence { step: i as u32 + 1, a_url: a_after, b_url: b_after });
        }
    }
    (a.final_url != b.final_url).then(|| Divergence {
        step: n as u32,
        a_url: a.final_url.clone(),
        b_url: b.final_url.clone(),
    })
}

/// Compare two evaluated runs (each must hold `eval.json`).
pub fn compare(a_dir: &Path, b_dir: &Path) -> Result<Comparison, EvalError> {
    let (ea, eb) = (read_report(a_dir)?, read_report(b_dir)?);
    let ta: BTreeMap<String, Trajectory> =
        trajectories(a_dir)?.into_iter().map(|(_, t)| (t.task_id.clone(), t)).collect();
    let tb: BTreeMap<String, Trajectory> =
        trajectories(b_dir)?.into_iter().map(|(_, t)| (t.task_id.clone(), t)).collect();
    let vb: BTreeMap<&str, &crate::evaluate::TaskEval> =
        eb.tasks.iter().filter(|t| t.scored).map(|t| (t.id.as_str(), t)).collect();
    let mut sites = BTreeMap::new();
    let mut overall = (GroupStats::default(), GroupStats::default());
    let mut pairs = Vec::new();
    let mut flips = Vec::new();
    let mut unpaired = Vec::new();
    for x in ea.tasks.iter().filter(|t| t.scored) {
        let Some(y) = vb.get(x.id.as_str()) else {
            unpaired.push(x.id.clone());
            continue;
        };
        pairs.push((x.success, y.success));
        let site: &mut (GroupStats, GroupStats) = sites.entry(x.web_name.clone()).or_default();
        for (g, success) in [
            (&mut site.0, x.success),
            (&mut site.1, y.success),
            (&mut overall.0, x.success),
            (&mut overall.1, y.success),
        ] {
            g.add(success, false, None);
        }
        if x.success != y.success {
            if let (Some(a), Some(b)) = (ta.get(&x.id), tb.get(&x.id)) {
                flips.push(Flip {
                    id: x.id.clone(),
                    web_name: x.web_name.clone(),
                    a: side(a, x.success),
                    b: side(b, y.success),
                    divergence: divergence(a, b),
                    cause: attribute(a, b, divergence(a, b).as_ref()),
                });
            }
        }
    }
    for y in eb.tasks.iter().filter(|t| t.scored) {
        if !ea.tasks.iter().any(|x| x.scored && x.id == y.id) {
            unpaired.push(y.id.clone());
        }
    }
    // The runs counted apart for an unknown state: in their side's bounds, never paired.
    let mut state_unknown = Vec::new();
    for (run, report) in [("A", &ea), ("B", &eb)] {
        for t in &report.tasks {
            let Some(why) = &t.state_unknown else { continue };
            let site = sites.entry(t.web_name.clone()).or_default();
            let (g, all) =
                if run == "A" { (&mut site.0, &mut overall.0) } else { (&mut site.1, &mut overall.1) };
            g.state_unknown += 1;
            all.state_unknown += 1;
            state_unknown.push((t.id.clone(), run.to_string(), why.clone()));
        }
    }
    let mut blocked: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut blocked_tasks = Vec::new();
    for (run, report) in [("A", &ea), ("B", &eb)] {
        for t in report.tasks.iter().filter(|t| t.outcome == trajectory::Outcome::Blocked) {
            let e = blocked.entry(t.web_name.clone()).or_default();
            if run == "A" {
                e.0 += 1;
            } else {
                e.1 += 1;
            }
            let why = t.blocked.as_ref().map(|b| format!("{}: {}", b.host, b.marker)).unwrap_or_default();
            blocked_tasks.push((t.id.clone(), run.to_string(), why));
        }
    }
    let mut beyond_snapshot = Vec::new();
    for (run, ts) in [("A", &ta), ("B", &tb)] {
        for (id, t) in ts.iter() {
            if let Some(l) = layers_beyond(t) {
                beyond_snapshot.push((id.clone(), run.to_string(), l));
            }
        }
    }
    let mut guarded = Vec::new();
    for (run, report) in [("A", &ea), ("B", &eb)] {
        for t in report.tasks.iter().filter(|t| t.guard.is_some()) {
            let tag =
                if crate::evaluate::contaminated(t) { "contaminated, not in the rates" } else { "counted" };
            let evidence = crate::evaluate::guard_evidence(t).join("; ");
            guarded.push((t.id.clone(), run.to_string(), format!("{tag}: {evidence}")));
        }
    }
    let p = Pairs::count(pairs);
    Ok(Comparison {
        guarded,
        beyond_snapshot,
        blocked,
        blocked_tasks,
        a: a_dir.display().to_string(),
        b: b_dir.display().to_string(),
        sites,
        overall,
        agreement: p.agreement(),
        kappa: p.kappa(),
        mcnemar_p: p.mcnemar_p(),
        pairs: p,
        flips,
        unpaired,
        state_unknown,
    })
}

/// The flipped tasks whose two runs each recorded a snapshot, and two different ones: (task id, A's
/// snapshot, B's). What changed on the site between them is [`html_with`]'s extra evidence.
pub fn recorded_pairs(c: &Comparison) -> Vec<(String, String, String)> {
    c.flips
        .iter()
        .filter_map(|f| match (&f.a.snapshot, &f.b.snapshot) {
            (Some(a), Some(b)) if a != b => Some((f.id.clone(), a.clone(), b.clone())),
            _ => None,
        })
        .collect()
}

/// How many steps of a `trajectory:` re-run matched the original (URL and screenshot hash).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reproduced {
    /// Steps re-executed.
    pub steps: usize,
    /// Steps whose URL and screenshot hash matched the original's.
    pub same: usize,
    /// Tasks.
    pub tasks: usize,
    /// Tasks whose every step matched.
    pub tasks_same: usize,
}

impl std::fmt::Display for Reproduced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Replay reproduced {}/{} steps (URL and screenshot hash identical) and {}/{} tasks step for step.",
            self.same, self.steps, self.tasks_same, self.tasks
        )
    }
}

/// [`Reproduced`] for a run re-executed with the `trajectory:` policy.
pub fn reproduction(run: &Path) -> Result<Reproduced, EvalError> {
    let mut r = Reproduced::default();
    for (_, t) in trajectories(run)? {
        r.tasks += 1;
        let n = t.steps.len();
        let ok =
            t.steps.iter().filter(|s| s.reproduced.as_ref().is_some_and(|r| r.url && r.screenshot)).count();
        r.steps += n;
        r.same += ok;
        if ok == n && n > 0 {
            r.tasks_same += 1;
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use trajectory::{ProxyStats, Step};

    fn step(n: u32, url: &str, elements: &str, action: &str) -> Step {
        Step {
            n,
            url_before: url.into(),
            url_after: url.into(),
            elements: elements.into(),
            action: Some(action.into()),
            ..Default::default()
        }
    }

    fn traj(steps: Vec<Step>, answer: &str) -> Trajectory {
        Trajectory { steps, answer: Some(answer.into()), ..Default::default() }
    }

    #[test]
    fn attribution_table() {
        let shop = "https://shop.test/";
        let missed = {
            let mut s = step(1, shop, "[0] Blue Kettle $24.00", "Click [4]");
            s.proxy = ProxyStats {
                missed: 1,
                document_missed: 1,
                render_missed: 1,
                miss_urls: vec!["GET https://shop.test/product/x".into()],
                ..Default::default()
            };
            s
        };
        #[rustfmt::skip]
        let cases: Vec<(&str, Trajectory, Trajectory, CauseKind, &str)> = vec![
            ("a miss on B's path", traj(vec![step(1, shop, "[0] Blue Kettle $24.00", "Click [3]")], "x"),
                traj(vec![missed], "y"), CauseKind::Coverage, "B step 1 missed GET https://shop.test/product/x"),
            ("the price changed", traj(vec![step(1, shop, "[0] Blue Kettle $24.00", "ANSWER")], "$24.00"),
                traj(vec![step(1, shop, "[0] Blue Kettle $26.50", "ANSWER")], "$26.50"), CauseKind::Drift, "+ [0] Blue Kettle $26.50"),
            ("same page, other click", traj(vec![step(1, shop, "[0] a", "Click [3]")], "x"),
                traj(vec![step(1, shop, "[0] a", "Click [4]")], "x"), CauseKind::Agent, "A Click [3] / B Click [4]"),
            ("same page and action, other answer", traj(vec![step(1, shop, "[0] a", "ANSWER")], "x"),
                traj(vec![step(1, shop, "[0] a", "ANSWER")], "y"), CauseKind::Agent, "A answered"),
            ("nothing differs", traj(vec![step(1, shop, "[0] a", "ANSWER")], "x"),
                traj(vec![step(1, shop, "[0] a", "ANSWER")], "x"), CauseKind::Unknown, "same pages"),
        ];
        for (what, a, b, kind, evidence) in cases {
            let c = attribute(&a, &b, divergence(&a, &b).as_ref());
            assert_eq!(c.kind, kind, "{what}: {c:?}");
            assert!(
                c.evidence.iter().any(|e| e.contains(evidence)),
                "{what}: {evidence:?} in {:?}",
                c.evidence
            );
        }
    }
}
