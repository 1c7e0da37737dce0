//! `webfreeze coverage RUN`: how much of a frozen benchmark survives an agent that did not record it.
//!
//! Every task of a recorded run is re-executed from its own recorded replies (the `trajectory:` policy)
//! with its own snapshot and its exploration left out: the task meets only the rest of its site's frozen
//! web (the other tasks' recordings, their explorations, the site's crawl, the frozen search engine). A
//! step is *served as recorded* when the re-execution's page before it has the URL and the element list the
//! recording had; the first step that is not names the request that missed. Per task and per site, with the
//! layers that answered.
//!
//! Steps after a write the frozen web never saw are not coverage (issue 61 part 6): once a step's write (a
//! request `proxy_report::writes` counts as one, its body read from the run's wire log: a preview is none)
//! missed every layer, the site's state after it is unknown,
//! and what the following pages show is the frozen-verdict rule's business, not the layers'. Those steps
//! are counted apart, with the write named, and leave the denominator: `steps` counts the steps that are
//! scored, `apart` the others.
//!
//! For tasks with reference answers (WebArena's `string_match`, a WebVoyager line's `eval` or
//! `reference_answer`, `run --reference-file`: what the task file gave its set-up), it also says whether each
//! answer text is found in the text of the frozen pages the held-out task meets: every document of its
//! site's recordings, explorations and crawl **but its own** (its snapshot, its exploration, and the crawl's
//! pages only its own recorded documents led to), read as the browser rendered them where the recording
//! kept that text, else as the recorded HTML's visible text. A task whose answer is on none of them cannot be answered on
//! that frozen web, whatever the agent. A `fuzzy_match` reference is a meaning a model judges, not a string a
//! page must hold: it is listed apart, never checked as a substring.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

use proxy_report::wire::{Answer, WireEntry};

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
    /// Steps scored for coverage: the recording's steps, less those counted apart.
    pub steps: usize,
    /// Steps whose page the rest of the frozen web served as recorded.
    pub served: usize,
    /// Steps after a write the frozen web never saw (their state is unknown): counted apart, not scored.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub apart: usize,
    /// That write (`step N: METHOD URL`), when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unseen_write: Option<(u32, String)>,
    /// The first step not served, and the first request it missed (or "the page differs").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_miss: Option<(u32, String)>,
    /// Requests answered per layer (exact, normalised, fuzzy, site-union, explore, crawl, frozen-search,
    /// missed).
    pub layers: BTreeMap<String, u64>,
    /// Whether the re-execution could not run (the error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The task's reference answer texts, and which of them no frozen page of its site holds (absent when
    /// the task has no reference answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<AnswerCheck>,
}

/// Whether a task's reference answers are on the frozen pages its leave-one-out replay meets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AnswerCheck {
    /// The answer texts checked (exact and must-include references).
    pub texts: Vec<String>,
    /// Those found on no frozen page the held-out task meets.
    pub missing: Vec<String>,
    /// `fuzzy_match` references: judged by a model, not checked as text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fuzzy: Vec<String>,
}

/// A site's steps served, over its tasks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SiteCoverage {
    /// Tasks.
    pub tasks: usize,
    /// Steps scored.
    pub steps: usize,
    /// Steps served as recorded.
    pub served: usize,
    /// Steps counted apart (after a write the frozen web never saw).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub apart: usize,
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
    /// Tasks whose reference answer is on no frozen page of their site (with the missing texts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsupported_answers: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Which of a replayed run's misses were writes, by the one rule of what a write is
/// (`proxy_report::writes::is_write`, which reads the body: a preview or a GraphQL query is no write), read
/// from the run's wire log: per `METHOD URL`, its misses in the order the replay made them. A miss the log
/// does not hold (a run without one) is judged by its method and URL alone.
#[derive(Debug, Clone, Default)]
pub(crate) struct MissedWrites(BTreeMap<String, VecDeque<bool>>);

impl MissedWrites {
    /// From a replayed task's wire log.
    pub(crate) fn from_wire(entries: &[WireEntry]) -> Self {
        let mut out: BTreeMap<String, VecDeque<bool>> = BTreeMap::new();
        for e in entries.iter().filter(|e| matches!(e.answer, Answer::Miss | Answer::StateUnknown)) {
            let ct = crate::network_events::wire_header(&e.request_headers, "content-type").unwrap_or("");
            let write = proxy_report::writes::is_write(
                &e.method,
                &e.url,
                ct,
                e.request_body.as_deref().unwrap_or(""),
            );
            out.entry(format!("{} {}", e.method, e.url)).or_default().push_back(write);
        }
        MissedWrites(out)
    }

    /// Whether `miss` (`METHOD URL`, the next miss of that request) was a write.
    fn next_is_write(&mut self, miss: &str) -> bool {
        match self.0.get_mut(miss).and_then(VecDeque::pop_front) {
            Some(write) => write,
            None => miss
                .split_once(' ')
                .is_some_and(|(method, url)| proxy_report::writes::is_state_write(method, url)),
        }
    }
}

/// Compare a re-execution with its recording (see the module docs), its misses judged by method and URL
/// alone ([`compare_with`] reads the run's wire log).
pub fn compare(recorded: &Trajectory, replayed: &Trajectory) -> TaskCoverage {
    compare_with(recorded, replayed, &mut MissedWrites::default())
}

/// [`compare`], which misses were writes read from the replayed run's wire log.
pub(crate) fn compare_with(
    recorded: &Trajectory,
    replayed: &Trajectory,
    writes: &mut MissedWrites,
) -> TaskCoverage {
    let mut c = TaskCoverage {
        id: recorded.task_id.clone(),
        site: recorded.web_name.clone(),
        steps: recorded.steps.len(),
        ..Default::default()
    };
    for (i, o) in recorded.steps.iter().enumerate() {
        if c.unseen_write.is_some() {
            c.apart += 1;
            c.steps -= 1;
            continue;
        }
        let Some(s) = replayed.steps.get(i) else {
            if c.first_miss.is_none() {
                let why = replayed.error.clone().unwrap_or_else(|| "the re-execution ended earlier".into());
                c.first_miss = Some((o.n, why));
            }
            continue;
        };
        let p = &s.proxy;
        for (layer, n) in p.layers() {
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
        // Every miss is judged, in order, so each takes its own entry of the wire log.
        for m in &p.miss_urls {
            if writes.next_is_write(m) && c.unseen_write.is_none() {
                c.unseen_write = Some((o.n, m.clone()));
            }
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
            acc.apart += t.apart;
            for (k, v) in &t.layers {
                *acc.layers.entry(k.clone()).or_insert(0) += v;
            }
        }
    }
    let unsupported_answers = tasks
        .iter()
        .filter_map(|t| {
            let a = t.answer.as_ref().filter(|a| !a.missing.is_empty())?;
            Some(format!("{} ({})", t.id, a.missing.join(", ")))
        })
        .collect();
    CoverageReport { run: run.to_string(), tasks, sites, total, unsupported_answers }
}

/// Lower case, one space between words: how answer texts and page texts are compared.
fn normalise(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// One frozen document's text, normalised, and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct FrozenPage {
    /// The snapshot that holds it.
    pub layer: String,
    /// Its URL.
    pub url: String,
    /// Whether the layer is a crawl part.
    pub crawl: bool,
    /// The text the browser rendered there when the recording kept it, else the HTML's visible text.
    pub text: String,
}

/// Every document on the frozen web of site `site` in recording `run` (its task snapshots, their
/// explorations, its crawl), with its text ([`FrozenPage`]).
pub fn site_pages(store: &snapshots::Store, run: &str, site: &str) -> Result<Vec<FrozenPage>, SessionError> {
    let mut layers = crate::names::site_snapshots(store, run, site)?;
    let explored: Vec<_> =
        layers.iter().filter_map(|m| store.manifest(&crate::names::explore_name(&m.name)).ok()).collect();
    layers.extend(explored);
    let crawl = crate::names::crawl_layers(store, run, site)?;
    let n_recorded = layers.len();
    layers.extend(crawl);
    let mut out = Vec::new();
    for (i, m) in layers.iter().enumerate() {
        let rendered = store.rendered_text(m).unwrap_or_else(|e| {
            tracing::warn!("{}: its rendered text does not read ({e}); its HTML is read instead", m.name);
            Default::default()
        });
        for x in store.exchanges(m) {
            let x = x?;
            if !replay::search::is_document(&x) {
                continue;
            }
            let text = match rendered.get(&x.request.url) {
                Some(t) => t.clone(),
                None => match &x.response.body {
                    Some(b) => wall::visible_text(&String::from_utf8_lossy(&store.blob_bytes(&b.hash)?)),
                    None => continue,
                },
            };
            out.push(FrozenPage {
                layer: m.name.clone(),
                url: x.request.url.clone(),
                crawl: i >= n_recorded,
                text: normalise(&text),
            });
        }
    }
    Ok(out)
}

/// The text of the pages of `pages` a leave-one-out replay of task snapshot `own` meets: not its own
/// snapshot's, not its exploration's, not the crawl's pages `hidden` names (`crate::crawl::reach`).
pub fn held_out_text(pages: &[FrozenPage], own: &str, hidden: &std::collections::BTreeSet<String>) -> String {
    let own_explore = crate::names::explore_name(own);
    let mut out = String::new();
    for p in pages {
        if p.layer == own || p.layer == own_explore || (p.crawl && hidden.contains(&p.url)) {
            continue;
        }
        out.push_str(&p.text);
        out.push('\n');
    }
    out
}

/// Check `texts` against a held-out task's frozen text ([`held_out_text`]); `fuzzy` (a model's to judge) is
/// listed, not checked.
pub fn check_answer(texts: &[String], fuzzy: &[String], frozen_text: &str) -> Option<AnswerCheck> {
    let keep = |v: &[String]| v.iter().filter(|t| !t.trim().is_empty()).cloned().collect::<Vec<_>>();
    let fuzzy = keep(fuzzy);
    let texts: Vec<String> = keep(texts).into_iter().filter(|t| !fuzzy.contains(t)).collect();
    if texts.is_empty() && fuzzy.is_empty() {
        return None;
    }
    let missing = texts.iter().filter(|t| !frozen_text.contains(&normalise(t))).cloned().collect();
    Some(AnswerCheck { texts, missing, fuzzy })
}

/// A task's `fuzzy_match` references (WebArena formats).
fn fuzzy_references(t: &agent::tasks::Task) -> Vec<String> {
    let spec = t.setup.eval.as_ref().and_then(trajectory::TaskEvalSpec::webarena);
    match spec.and_then(|e| e.reference_answers.as_ref()).and_then(|r| r.fuzzy_match.as_ref()) {
        Some(trajectory::task_eval::Fuzzy::Match(f)) => f.clone(),
        _ => Vec::new(),
    }
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
    // Reference answers: what a trajectory kept of its set-up (WebArena formats), else the run's task file
    // when it still reads (WebVoyager lines keep theirs there).
    let from_file: BTreeMap<String, Vec<String>> = agent::tasks::load(Path::new(&rf.tasks_file))
        .map(|ts| ts.into_iter().map(|t| (t.id, t.setup.reference_answers)).collect())
        .unwrap_or_default();
    // The answer check reads the site's frozen pages once per site, and each task meets them without its own.
    let mut pages: BTreeMap<String, Vec<FrozenPage>> = BTreeMap::new();
    let mut answers: BTreeMap<String, AnswerCheck> = BTreeMap::new();
    for t in &tasks {
        let refs = match (&t.setup.reference_answers, from_file.get(&t.id)) {
            (own, _) if !own.is_empty() => own,
            (_, Some(file)) if !file.is_empty() => file,
            _ => continue,
        };
        if !pages.contains_key(&t.web_name) {
            pages.insert(t.web_name.clone(), site_pages(&store, &recording, &t.web_name)?);
        }
        let own = crate::names::snapshot_name(&recording, &t.id);
        let crawl = crate::names::crawl_layers(&store, &recording, &t.web_name)?;
        let hidden = crate::crawl::reach::hidden_for(&crawl, &own);
        let text = held_out_text(&pages[&t.web_name], &own, &hidden);
        if let Some(a) = check_answer(refs, &fuzzy_references(t), &text) {
            answers.insert(t.id.clone(), a);
        }
    }
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
        let dir = replayed.task(&t.task_id);
        let mut row = match dir.read_trajectory() {
            Ok(Some(r)) => {
                let mut writes = match dir.read_wire(&r) {
                    Ok(Some(log)) => MissedWrites::from_wire(&log.entries),
                    _ => MissedWrites::default(),
                };
                compare_with(t, &r, &mut writes)
            }
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
        row.answer = answers.remove(&t.task_id);
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

    /// Issue 61 part 6: the steps after a write no layer answered are counted apart, out of the
    /// denominator; a read that missed, or telemetry, leaves the steps scored.
    #[test]
    fn steps_after_a_write_the_frozen_web_never_saw_are_counted_apart() {
        let rec = Trajectory {
            task_id: "t".into(),
            web_name: "W".into(),
            steps: (1..=4).map(|n| step(n, &format!("https://w.test/{n}"), "[0] a")).collect(),
            ..Default::default()
        };
        let replayed = |missed_at_2: &[&str]| {
            let mut steps: Vec<Step> = rec.steps.clone();
            steps[1].proxy.miss_urls = missed_at_2.iter().map(|m| m.to_string()).collect();
            steps[1].proxy.missed = missed_at_2.len() as u64;
            Trajectory { steps, ..Default::default() }
        };
        // (what, the misses of step 2, (steps scored, served, apart), the write named)
        type Row<'a> = (&'a str, &'a [&'a str], (usize, usize, usize), Option<(u32, &'a str)>);
        let rows: &[Row] = &[
            ("no miss", &[], (4, 4, 0), None),
            ("a read missed", &["GET https://w.test/x"], (4, 4, 0), None),
            ("telemetry", &["POST https://w.test/analytics/collect"], (4, 4, 0), None),
            (
                "a form's save missed",
                &["GET https://w.test/x", "POST https://w.test/save"],
                (2, 2, 2),
                Some((2, "POST https://w.test/save")),
            ),
            (
                "a delete",
                &["DELETE https://w.test/item/3"],
                (2, 2, 2),
                Some((2, "DELETE https://w.test/item/3")),
            ),
        ];
        for (what, missed, (steps, served, apart), write) in rows {
            let c = compare(&rec, &replayed(missed));
            assert_eq!((c.steps, c.served, c.apart), (*steps, *served, *apart), "{what}");
            assert_eq!(c.unseen_write, write.map(|(n, w)| (n, w.to_string())), "{what}");
        }
        let r = summarise("r", vec![compare(&rec, &replayed(&["POST https://w.test/save"]))]);
        assert_eq!((r.total.steps, r.total.served, r.total.apart), (2, 2, 2));
    }

    /// The one rule reads the body: a missed preview (MediaWiki's `wpPreview`, posted to the same address
    /// as a save) is no write, so the steps after it are scored; the save that follows it is one.
    #[test]
    fn a_missed_preview_is_no_write_and_the_save_after_it_is() {
        use crate::frozen_verdict::tests::entry;
        let rec = Trajectory {
            task_id: "t".into(),
            web_name: "W".into(),
            steps: (1..=4).map(|n| step(n, &format!("https://w.test/{n}"), "[0] a")).collect(),
            ..Default::default()
        };
        let submit = "https://w.test/index.php?title=Tea&action=submit";
        let mut steps = rec.steps.clone();
        steps[1].proxy.miss_urls = vec![format!("POST {submit}")];
        steps[2].proxy.miss_urls = vec![format!("POST {submit}")];
        let rep = Trajectory { steps, ..Default::default() };
        let wire = [
            entry("POST", submit, "wpTextbox1=x&wpPreview=Show+preview", Answer::Miss, 404),
            entry("POST", submit, "wpTextbox1=x&wpSave=Save", Answer::Miss, 404),
        ];
        let c = compare_with(&rec, &rep, &mut MissedWrites::from_wire(&wire));
        assert_eq!((c.steps, c.served, c.apart), (3, 3, 1));
        assert_eq!(c.unseen_write, Some((3, format!("POST {submit}"))));
        // Without the wire log, by method and URL alone: the preview is taken for the write.
        assert_eq!(compare(&rec, &rep).unseen_write, Some((2, format!("POST {submit}"))));
    }

    #[test]
    fn answers_on_the_frozen_pages() {
        let text = normalise(&wall::visible_text("<p>The  Blue Kettle costs <b>$24.00</b>.</p>"));
        let t = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            check_answer(&t(&["blue kettle", "$24.00"]), &[], &text).unwrap().missing,
            Vec::<String>::new()
        );
        assert_eq!(check_answer(&t(&["$24.00", "Red Mug"]), &[], &text).unwrap().missing, t(&["Red Mug"]));
        assert_eq!(check_answer(&t(&[" "]), &[], &text), None);
        assert_eq!(check_answer(&[], &[], &text), None);
        // A fuzzy reference is a meaning, not a substring: listed apart, never missing.
        let fuzzy = t(&["a kettle in blue that costs about 24 dollars"]);
        let all = [t(&["$24.00"]), fuzzy.clone()].concat();
        let a = check_answer(&all, &fuzzy, &text).unwrap();
        assert_eq!((a.texts, a.missing, a.fuzzy), (t(&["$24.00"]), vec![], fuzzy));
    }

    /// Issue 61 part 2: the audit reads what the held-out task meets, never its own pages or the crawl's
    /// pages only its own recorded documents led to.
    #[test]
    fn a_held_out_task_meets_no_text_of_its_own() {
        let page = |layer: &str, url: &str, crawl: bool, text: &str| FrozenPage {
            layer: layer.into(),
            url: url.into(),
            crawl,
            text: text.into(),
        };
        let pages = vec![
            page("r/t1", "https://w.test/a", false, "own answer"),
            page("r/t1/explore", "https://w.test/b", false, "explored answer"),
            page("r/t2", "https://w.test/c", false, "neighbour answer"),
            page("r/crawl/w/001", "https://w.test/private", true, "private answer"),
            page("r/crawl/w/001", "https://w.test/public", true, "public answer"),
        ];
        let hidden: std::collections::BTreeSet<String> = ["https://w.test/private".to_string()].into();
        let text = held_out_text(&pages, "r/t1", &hidden);
        for (answer, met) in [
            ("own answer", false),
            ("explored answer", false),
            ("private answer", false),
            ("neighbour answer", true),
            ("public answer", true),
        ] {
            assert_eq!(text.contains(answer), met, "{answer}");
        }
        assert!(held_out_text(&pages, "r/t2", &Default::default()).contains("own answer"));
    }
}
