//! Two evaluated runs side by side: success per site and overall, agreement, Cohen's kappa, an exact
//! McNemar p-value, and for every task whose verdict flipped the evidence (replay misses and fuzzy
//! matches during it, the first step where the URLs diverge, both final answers). Markdown, JSON, and one
//! self-contained HTML page with both trajectories' screenshots side by side.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine as _;
use serde::Serialize;
use trajectory::Trajectory;

use crate::evaluate::{read_report, trajectories, EvalError, GroupStats};
use crate::stats::Pairs;

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
    /// Tasks evaluated in one run only.
    pub unpaired: Vec<String>,
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
    })
}

fn cause_name(k: CauseKind) -> &'static str {
    match k {
        CauseKind::Coverage => "coverage (the snapshot lacked what the agent asked for)",
        CauseKind::Drift => "drift (the same page changed)",
        CauseKind::Agent => "agent (same pages, other actions)",
        CauseKind::Unknown => "unknown",
    }
}

fn pct(g: &GroupStats) -> String {
    format!("{:.1}% ({}/{})", g.rate * 100.0, g.success, g.n)
}

/// Markdown report.
pub fn markdown(c: &Comparison) -> String {
    let mut s = format!("A = `{}`\nB = `{}`\n\n| site | A | B |\n|---|---:|---:|\n", c.a, c.b);
    for (site, (a, b)) in &c.sites {
        s.push_str(&format!("| {site} | {} | {} |\n", pct(a), pct(b)));
    }
    s.push_str(&format!("| **overall** | {} | {} |\n\n", pct(&c.overall.0), pct(&c.overall.1)));
    s.push_str(&format!(
        "Agreement {:.1}% over {} paired tasks; Cohen's kappa {:.3}; exact McNemar p = {:.4} (A only {}, B only {}).\n",
        c.agreement * 100.0,
        c.pairs.n(),
        c.kappa,
        c.mcnemar_p,
        c.pairs.a_only,
        c.pairs.b_only
    ));
    if c.flips.is_empty() {
        s.push_str("\nNo task changed its verdict.\n");
    }
    for f in &c.flips {
        s.push_str(&format!(
            "\n### {} ({}): A {} -> B {}\n",
            f.id,
            f.web_name,
            if f.a.success { "success" } else { "failure" },
            if f.b.success { "success" } else { "failure" }
        ));
        s.push_str(&format!(
            "- answers: A {:?} / B {:?}\n",
            f.a.answer.as_deref().unwrap_or("-"),
            f.b.answer.as_deref().unwrap_or("-")
        ));
        s.push_str(&format!("- final URLs: A {} / B {}\n", f.a.final_url, f.b.final_url));
        s.push_str(&format!("- cause: **{}**\n", cause_name(f.cause.kind)));
        for e in &f.cause.evidence {
            s.push_str(&format!("  - `{e}`\n"));
        }
        match &f.divergence {
            Some(d) => {
                s.push_str(&format!("- URLs diverge at step {}: A {} / B {}\n", d.step, d.a_url, d.b_url))
            }
            None => s.push_str("- the URLs never diverge\n"),
        }
        for (name, side) in [("A", &f.a), ("B", &f.b)] {
            if !side.misses.is_empty() {
                s.push_str(&format!("- {name} replay misses: {}\n", side.misses.join(", ")));
            }
            if !side.fuzzy.is_empty() {
                s.push_str(&format!("- {name} fuzzy matches: {}\n", side.fuzzy.join(", ")));
            }
            if !side.failed.is_empty() {
                s.push_str(&format!("- {name} requests without a response: {}\n", side.failed.join(", ")));
            }
        }
    }
    s.push_str(&blocked_markdown(c));
    if !c.guarded.is_empty() {
        s.push_str("\nGuards (writes refused, benchmark answers asked for or shown):\n\n");
        for (id, run, evidence) in &c.guarded {
            s.push_str(&format!("- {id} in {run}: {evidence}\n"));
        }
    }
    if !c.beyond_snapshot.is_empty() {
        s.push_str("\nServed beyond the task's own snapshot (a run that did not record it: other layers answered):\n\n");
        for (id, run, layers) in &c.beyond_snapshot {
            s.push_str(&format!("- {id} in {run}: {layers}\n"));
        }
    }
    if !c.unpaired.is_empty() {
        s.push_str(&format!("\nEvaluated in one run only (not compared): {}\n", c.unpaired.join(", ")));
    }
    s
}

/// The blocked tasks, per site and with their evidence (Markdown).
fn blocked_markdown(c: &Comparison) -> String {
    if c.blocked.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\nBlocked by the site (bot walls, denials, rate limits; not in the rates above):\n\n| site | A | B |\n|---|---:|---:|\n",
    );
    for (site, (a, b)) in &c.blocked {
        s.push_str(&format!("| {site} | {a} | {b} |\n"));
    }
    for (id, run, why) in &c.blocked_tasks {
        s.push_str(&format!("- {id} in {run}: {why}\n"));
    }
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn img(run: &Path, rel: &str) -> String {
    match std::fs::read(run.join(rel)) {
        Ok(b) => format!(
            "<figure><img alt=\"{0}\" src=\"data:image/png;base64,{1}\"><figcaption>{0}</figcaption></figure>",
            esc(rel),
            base64::engine::general_purpose::STANDARD.encode(b)
        ),
        Err(_) => format!("<figure><figcaption>{} (missing)</figcaption></figure>", esc(rel)),
    }
}

/// One self-contained HTML page (screenshots inlined).
pub fn html(c: &Comparison) -> String {
    html_with(c, &BTreeMap::new())
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

/// [`html`], with an HTML fragment per flipped task (by id) shown under its evidence: what changed on
/// the site between the two runs' recordings (`webfreeze snapshots diff`).
pub fn html_with(c: &Comparison, site_diffs: &BTreeMap<String, String>) -> String {
    let (ra, rb) = (Path::new(&c.a), Path::new(&c.b));
    let mut rows = String::new();
    for (site, (a, b)) in &c.sites {
        rows.push_str(&format!("<tr><td>{}</td><td>{}</td><td>{}</td></tr>", esc(site), pct(a), pct(b)));
    }
    rows.push_str(&format!(
        "<tr class=total><td>overall</td><td>{}</td><td>{}</td></tr>",
        pct(&c.overall.0),
        pct(&c.overall.1)
    ));
    let mut flips = String::new();
    for f in &c.flips {
        let div = match &f.divergence {
            Some(d) => format!(
                "URLs diverge at step {}: <code>{}</code> vs <code>{}</code>",
                d.step,
                esc(&d.a_url),
                esc(&d.b_url)
            ),
            None => "the URLs never diverge".into(),
        };
        let mut evidence = format!("<li>cause: <b>{}</b><pre>", cause_name(f.cause.kind));
        for e in &f.cause.evidence {
            evidence.push_str(&esc(e));
            evidence.push('\n');
        }
        evidence.push_str("</pre></li>");
        if let (Some(d), Some(a), Some(b)) = (site_diffs.get(&f.id), &f.a.snapshot, &f.b.snapshot) {
            evidence.push_str(&format!(
                "<li><details{open}><summary>what changed on the site between the recordings \
                 (<code>snapshots diff {} {}</code>)</summary>{d}</details></li>",
                esc(a),
                esc(b),
                open = if f.cause.kind == CauseKind::Drift { " open" } else { "" },
            ));
        }
        for (name, side) in [("A", &f.a), ("B", &f.b)] {
            for m in &side.misses {
                evidence.push_str(&format!("<li>{name} replay miss: <code>{}</code></li>", esc(m)));
            }
            for m in &side.fuzzy {
                evidence.push_str(&format!("<li>{name} fuzzy match: <code>{}</code></li>", esc(m)));
            }
            for m in &side.failed {
                evidence.push_str(&format!("<li>{name} no response: <code>{}</code></li>", esc(m)));
            }
        }
        let n = f.a.screenshots.len().max(f.b.screenshots.len());
        let mut grid = String::new();
        for i in 0..n {
            let a = f.a.screenshots.get(i).map(|r| img(ra, r)).unwrap_or_default();
            let b = f.b.screenshots.get(i).map(|r| img(rb, r)).unwrap_or_default();
            grid.push_str(&format!("<div class=step>step {}</div><div>{a}</div><div>{b}</div>", i + 1));
        }
        let verdict = |s: bool| if s { "<b class=ok>success</b>" } else { "<b class=bad>failure</b>" };
        flips.push_str(&format!(
            "<section><h3>{id} <small>{site}</small></h3><p>A {va} &rarr; B {vb}</p>\
             <table><tr><th></th><th>A</th><th>B</th></tr>\
             <tr><td>answer</td><td>{aa}</td><td>{ba}</td></tr>\
             <tr><td>final URL</td><td><code>{au}</code></td><td><code>{bu}</code></td></tr>\
             <tr><td>steps</td><td>{asn} ({ao})</td><td>{bsn} ({bo})</td></tr></table>\
             <p>{div}</p><ul>{evidence}</ul><div class=grid><div></div><div class=head>A</div><div class=head>B</div>{grid}</div></section>",
            id = esc(&f.id),
            site = esc(&f.web_name),
            va = verdict(f.a.success),
            vb = verdict(f.b.success),
            aa = esc(f.a.answer.as_deref().unwrap_or("-")),
            ba = esc(f.b.answer.as_deref().unwrap_or("-")),
            au = esc(&f.a.final_url),
            bu = esc(&f.b.final_url),
            asn = f.a.steps,
            ao = esc(&f.a.outcome),
            bsn = f.b.steps,
            bo = esc(&f.b.outcome),
        ));
    }
    if c.flips.is_empty() {
        flips.push_str("<p>No task changed its verdict.</p>");
    }
    let mut blocked = String::new();
    if !c.blocked.is_empty() {
        blocked.push_str(
            "<h2>Blocked by the site</h2><p>Bot walls, denials and rate limits: the agent could not attempt \
             these tasks; they are not in the rates above.</p><table><tr><th>site</th><th>A</th><th>B</th></tr>",
        );
        for (site, (a, b)) in &c.blocked {
            blocked.push_str(&format!("<tr><td>{}</td><td>{a}</td><td>{b}</td></tr>", esc(site)));
        }
        blocked.push_str("</table><ul>");
        for (id, run, why) in &c.blocked_tasks {
            blocked.push_str(&format!("<li>{} in {run}: <code>{}</code></li>", esc(id), esc(why)));
        }
        blocked.push_str("</ul>");
    }
    if !c.guarded.is_empty() {
        blocked.push_str(
            "<h2>Guards</h2><p>Live and recording runs: writes the side-effect guard refused, and contamination \
             evidence (a place a benchmark's answers are published asked for, a page showing the question with \
             its answer). Contaminated tasks are not in the rates above.</p><ul>",
        );
        for (id, run, evidence) in &c.guarded {
            blocked.push_str(&format!("<li>{} in {run}: {}</li>", esc(id), esc(evidence)));
        }
        blocked.push_str("</ul>");
    }
    if !c.beyond_snapshot.is_empty() {
        blocked.push_str(
            "<h2>Served beyond the task's own snapshot</h2><p>Layers that answered what a replayed task's own \
             recording lacked (exploration, the site union, the frozen search engine).</p><ul>",
        );
        for (id, run, layers) in &c.beyond_snapshot {
            blocked.push_str(&format!("<li>{} in {run}: {}</li>", esc(id), esc(layers)));
        }
        blocked.push_str("</ul>");
    }
    format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>webfreeze compare</title><style>\
         body{{font:15px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}}\
         table{{border-collapse:collapse;margin:8px 0}}td,th{{border:1px solid #ccc;padding:4px 10px;text-align:left}}\
         tr.total td{{font-weight:bold}}.ok{{color:#075}}.bad{{color:#b00}}code{{font-size:13px}}\
         section{{border-top:2px solid #ddd;margin-top:24px}}.grid{{display:grid;grid-template-columns:70px 1fr 1fr;gap:8px;align-items:start}}\
         .grid img{{width:100%;border:1px solid #ccc}}.head{{font-weight:bold}}.step{{color:#666}}figure{{margin:0}}figcaption{{font-size:12px;color:#666}}\
         {SITE_DIFF_CSS}</style></head><body><h1>webfreeze: run comparison</h1>\
         <p>A = <code>{a}</code><br>B = <code>{b}</code></p>\
         <table><tr><th>site</th><th>A</th><th>B</th></tr>{rows}</table>\
         <p>Agreement <b>{agr:.1}%</b> over {n} paired tasks; Cohen's kappa <b>{kappa:.3}</b>; exact McNemar p = <b>{p:.4}</b> \
         (A only {ao}, B only {bo}).</p>{blocked}<h2>Flipped tasks ({nf})</h2>{flips}</body></html>",
        a = esc(&c.a),
        b = esc(&c.b),
        agr = c.agreement * 100.0,
        n = c.pairs.n(),
        kappa = c.kappa,
        p = c.mcnemar_p,
        ao = c.pairs.a_only,
        bo = c.pairs.b_only,
        nf = c.flips.len(),
    )
}

/// What changed between two recordings of a site, as an HTML fragment: the JSON `webfreeze snapshots diff
/// --json` prints (documents and resources added, removed or changed, with each changed page's changed
/// text lines), rendered for the comparison report and `snapshots diff --html`.
pub fn site_diff_html(d: &serde_json::Value) -> String {
    let list = |k: &str| d[k].as_array().cloned().unwrap_or_default();
    let (docs, res) = (list("documents"), list("resources"));
    let count = |v: &[serde_json::Value], kind: &str| v.iter().filter(|c| c["kind"] == kind).count();
    let summary = |v: &[serde_json::Value]| {
        format!(
            "{} changed, {} added, {} removed",
            count(v, "changed"),
            count(v, "added"),
            count(v, "removed")
        )
    };
    let side = |x: &serde_json::Value| {
        if x.is_null() {
            "-".to_string()
        } else {
            format!("{} {} B", x["status"], x["size"])
        }
    };
    let mut out = format!(
        "<p>documents {}; resources {}; {} unchanged</p>",
        summary(&docs),
        summary(&res),
        d["unchanged"].as_u64().unwrap_or(0)
    );
    for (what, v) in [("document", &docs), ("resource", &res)] {
        if v.is_empty() {
            continue;
        }
        out.push_str("<ul class=sitediff>");
        for c in v {
            let kind = c["kind"].as_str().unwrap_or("?");
            out.push_str(&format!(
                "<li class={kind}>{kind} {what} <code>{} {}</code> <small>({} &rarr; {})</small>",
                esc(c["method"].as_str().unwrap_or("")),
                esc(c["url"].as_str().unwrap_or("")),
                side(&c["a"]),
                side(&c["b"]),
            ));
            let lines: Vec<&str> = c["text_changes"]
                .as_array()
                .map(|l| l.iter().filter_map(|x| x.as_str()).collect())
                .unwrap_or_default();
            if !lines.is_empty() {
                out.push_str("<pre class=textdiff>");
                for l in &lines {
                    let class = if l.starts_with('+') { "add" } else { "del" };
                    out.push_str(&format!("<span class={class}>{}</span>\n", esc(l)));
                }
                let total = c["text_lines_changed"].as_u64().unwrap_or(lines.len() as u64);
                if total > lines.len() as u64 {
                    out.push_str(&format!("... {} more changed line(s)\n", total - lines.len() as u64));
                }
                out.push_str("</pre>");
            } else if kind == "changed" && what == "document" {
                out.push_str(" <small>(same visible text: markup, scripts or styles changed)</small>");
            }
            out.push_str("</li>");
        }
        out.push_str("</ul>");
    }
    out
}

/// The styles [`site_diff_html`]'s fragment uses.
pub const SITE_DIFF_CSS: &str = "pre.textdiff{background:#f6f6f6;padding:6px 10px;margin:4px 0}\
     pre.textdiff .add{color:#075}pre.textdiff .del{color:#b00}ul.sitediff li.added{color:#075}\
     ul.sitediff li.removed{color:#b00}";

/// `webfreeze snapshots diff A B --html`: the fragment as a page.
pub fn site_diff_page(d: &serde_json::Value) -> String {
    format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>webfreeze snapshots diff</title><style>\
         body{{font:15px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}}code{{font-size:13px}}\
         {SITE_DIFF_CSS}</style></head><body><h1>What changed: <code>{}</code> &rarr; <code>{}</code></h1>{}</body></html>",
        esc(d["a"].as_str().unwrap_or("")),
        esc(d["b"].as_str().unwrap_or("")),
        site_diff_html(d)
    )
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
