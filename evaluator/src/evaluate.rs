//! Evaluate a run directory: every task's trajectory, by the reference matchers, the model judge, or both,
//! into `eval.json` with a table per site. Tasks that errored count as failures and are listed.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use trajectory::llm::Llm;
use trajectory::{Benchmark, Outcome, RunDir, TaskEvalSpec, Trajectory, WebVoyagerEval};

use crate::judge::{fuzzy_match, judge, vqa, Judgement};
use crate::matchers::{check, exact_match, includes, Check};
use crate::reference::{load_specs, load_webvoyager, ReferenceError, WvAnswer};

mod score;
mod table;

pub use table::site_table;

/// Which judges run (`--judge`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum JudgeKind {
    /// A vision model after the WebVoyager protocol (needs the model API).
    Llm,
    /// Reference matchers: the task file's `eval` specs and --reference (WebVoyager's answers).
    Reference,
    /// Both; a task succeeds only if both agree it did (where a reference exists).
    Both,
}

/// Evaluation settings.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// Judges.
    pub judge: JudgeKind,
    /// The model (judge and fuzzy_match).
    pub llm: Option<Llm>,
    /// Screenshots per judgement (None = all).
    pub k: Option<usize>,
    /// Judge repeats.
    pub repeats: u32,
    /// Task file with `eval` specs (default: the run's own task file).
    pub tasks_file: Option<PathBuf>,
    /// WebVoyager's reference_answer.json.
    pub reference_file: Option<PathBuf>,
    /// Score `possible` WebVoyager answers too.
    pub score_possible: bool,
    /// `eval --rescore`: `program_html` and `page_image_query` evidence re-run offline from the
    /// snapshots, by task id (used instead of the trajectory's own; an `Err` says why a task's checks
    /// could not be re-run).
    pub rescored: BTreeMap<String, Result<trajectory::CheckEvidence, trajectory::RescoreError>>,
    /// SSIM threshold of VWA image queries that set none (VWA: 0.8).
    pub ssim_threshold: f64,
    /// WebArena-Verified tasks' network events (a replayed task's own wire log, a recorded one's snapshot),
    /// by task id; an `Err` says
    /// why a task has none. Tasks missing here have none either.
    pub network:
        BTreeMap<String, Result<crate::verified::network::RunEvents, crate::verified::network::EventsError>>,
    /// Replayed state tasks the frozen web cannot score, by task id, with why
    /// (`session::frozen_verdict`: a write the recording did not make, named; a page whose state at the
    /// run's write epoch is unknown). Counted apart: in each rate's bounds, never in `n`.
    pub state_unknown: BTreeMap<String, String>,
}

impl EvalOptions {
    /// The reference matchers alone (no model judge): what the demos and the agreement bench score with.
    /// The evidence only the store holds (`network`, `state_unknown`) is left empty for `session::eval_run`
    /// to read.
    pub fn reference() -> Self {
        EvalOptions {
            judge: JudgeKind::Reference,
            llm: None,
            k: Some(3),
            repeats: 1,
            tasks_file: None,
            reference_file: None,
            score_possible: false,
            rescored: Default::default(),
            ssim_threshold: crate::webarena::DEFAULT_SSIM_THRESHOLD,
            network: Default::default(),
            state_unknown: Default::default(),
        }
    }
}

/// Reference-matcher result of one task.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReferenceResult {
    /// Every check.
    pub checks: Vec<Check>,
    /// All checks passed.
    pub pass: bool,
    /// A WebVoyager `possible` answer, shown beside the agent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub possible_answer: Option<String>,
    /// The benchmark's partial credit in 0..1, where it gives one (AssistantBench's accuracy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

/// One task's evaluation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskEval {
    /// Task id.
    pub id: String,
    /// Site.
    pub web_name: String,
    /// The benchmark the task comes from.
    #[serde(default)]
    pub benchmark: Benchmark,
    /// How the run ended.
    pub outcome: Outcome,
    /// Final answer.
    #[serde(default)]
    pub answer: Option<String>,
    /// Final URL.
    #[serde(default)]
    pub final_url: String,
    /// The run's error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Reference matchers (absent when the task has no reference or they did not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<ReferenceResult>,
    /// Model judge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<Judgement>,
    /// Why the judge could not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_error: Option<String>,
    /// The `program_html` checks were re-run offline (`eval --rescore`) for this verdict.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rescored: bool,
    /// Why the task's own eval spec could not be scored (an eval type not built yet, or unknown), by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_error: Option<String>,
    /// Parts of the task's eval spec this version does not know, so did not score (keys, eval types, URL
    /// rules), by path: `eval.program_html[0].foo`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_spec_parts: Vec<String>,
    /// The wall, denial or rate limit that stopped a `blocked` task (not scored: the agent could not
    /// attempt it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked: Option<wall::Blocked>,
    /// Replay: how much of the task the snapshot answered. A task `off_snapshot` (it asked for a page
    /// nobody recorded) is judged, shown, and counted apart: its verdict says nothing about the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<trajectory::Coverage>,
    /// Live and record: what the guards refused and the contamination seen. A contaminated task (it asked
    /// for a place a benchmark's answers are published, or a page showed its question with its answer) is
    /// judged, shown, and counted apart, with its evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<trajectory::GuardFlags>,
    /// Replay: the state the task's checks read is unknown on the frozen web (the run made a write the
    /// recording did not make, named here; or read a page no recording knows at its write epoch): shown,
    /// counted apart, never a failure or a success; in the rate's bounds.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "state_diverged")]
    pub state_unknown: Option<String>,
    /// The requests its network checks were scored on (its own wire log, or its recording), when it has
    /// network checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire: Option<String>,
    /// False when no judge could score the task (no reference, judge failed, blocked).
    pub scored: bool,
    /// The verdict.
    pub success: bool,
}

/// Success rate of a group.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GroupStats {
    /// Scored tasks.
    pub n: u64,
    /// Successes.
    pub success: u64,
    /// success / n.
    pub rate: f64,
    /// Mean judge standard deviation over tasks (0 without repeats).
    pub judge_std: f64,
    /// Tasks that errored.
    pub errored: u64,
    /// Tasks the site blocked (walls, denials, rate limits): not in `n`.
    #[serde(default)]
    pub blocked: u64,
    /// Replayed tasks that went off the frozen web (a page never recorded): not in `n`.
    #[serde(default)]
    pub off_snapshot: u64,
    /// Live and record: tasks with contamination evidence: not in `n`.
    #[serde(default)]
    pub contaminated: u64,
    /// Live and record: tasks some of whose writes the side-effect guard refused (counted in `n`).
    #[serde(default)]
    pub writes_blocked: u64,
    /// Replay: state tasks whose state is unknown on the frozen web (a write the recording did not make):
    /// not in `n`, in [`GroupStats::bounds`].
    #[serde(default, skip_serializing_if = "is_zero")]
    pub state_unknown: u64,
    /// The mean of the scored tasks' partial credit, where their benchmark gives one (AssistantBench's
    /// accuracy, the figure of its leaderboard); a task without an answer counts 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_score: Option<f64>,
    /// Tasks with a model judgement (for the running mean of `judge_std`).
    #[serde(skip)]
    judged: u64,
    /// Tasks with partial credit (for the running mean of `mean_score`).
    #[serde(skip)]
    with_score: u64,
}

impl GroupStats {
    /// Count one scored task.
    pub fn add(&mut self, success: bool, errored: bool, judge_std: Option<f64>) {
        self.n += 1;
        self.success += u64::from(success);
        self.errored += u64::from(errored);
        self.rate = self.success as f64 / self.n as f64;
        if let Some(s) = judge_std {
            self.judged += 1;
            self.judge_std += (s - self.judge_std) / self.judged as f64;
        }
    }

    /// The success rate's bounds once the tasks counted apart for an unknown state are counted too: all of
    /// them failures (low), all of them successes (high). Both equal `rate` when none is apart.
    pub fn bounds(&self) -> (f64, f64) {
        let all = self.n + self.state_unknown;
        if all == 0 {
            return (0.0, 0.0);
        }
        (self.success as f64 / all as f64, (self.success + self.state_unknown) as f64 / all as f64)
    }

    /// The share of the runs the frozen web could have scored that it counted apart (unknown state).
    pub fn unknown_share(&self) -> f64 {
        let all = self.n + self.state_unknown;
        if all == 0 {
            0.0
        } else {
            self.state_unknown as f64 / all as f64
        }
    }

    /// What to print beside the success rate when runs were counted apart for an unknown state: how many,
    /// their share and the bounds they leave (` (1 state unknown, 20%: 40.0-60.0%)`); empty when none was.
    pub fn unknown_note(&self) -> String {
        if self.state_unknown == 0 {
            return String::new();
        }
        let (low, high) = self.bounds();
        format!(
            " ({} state unknown, {:.0}%: {:.1}-{:.1}%)",
            self.state_unknown,
            self.unknown_share() * 100.0,
            low * 100.0,
            high * 100.0
        )
    }

    /// Count one scored task's partial credit.
    pub fn add_score(&mut self, score: f64) {
        self.with_score += 1;
        let mean = self.mean_score.unwrap_or(0.0);
        self.mean_score = Some(mean + (score - mean) / self.with_score as f64);
    }
}

/// `eval.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EvalReport {
    /// Format version.
    pub v: u32,
    /// Run directory.
    pub run: String,
    /// Judges used.
    pub judge: JudgeKind,
    /// Per task, sorted by id.
    pub tasks: Vec<TaskEval>,
    /// Per site.
    pub sites: BTreeMap<String, GroupStats>,
    /// Overall.
    pub overall: GroupStats,
    /// Tasks that errored (counted as failures).
    pub errored: Vec<String>,
    /// Tasks no judge could score (not counted).
    pub unscored: Vec<String>,
    /// Tasks the site blocked (not counted).
    #[serde(default)]
    pub blocked: Vec<String>,
    /// Replayed tasks that asked for pages the snapshot never recorded (not counted).
    #[serde(default)]
    pub off_snapshot: Vec<String>,
    /// Tasks with contamination evidence (not counted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contaminated: Vec<String>,
    /// Replayed state tasks whose state is unknown on the frozen web, with why (not in `n`; in the
    /// bounds of each rate, [`GroupStats::bounds`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty", alias = "not_scorable_frozen")]
    pub state_unknown: Vec<String>,
    /// Tasks some of whose writes the side-effect guard refused (counted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes_blocked: Vec<String>,
}

/// Evaluation failures.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The run is unreadable.
    #[error("{0}")]
    Run(String),
    /// A reference file is unusable.
    #[error(transparent)]
    Reference(#[from] ReferenceError),
    /// The model judge was asked for without a model.
    #[error("--judge llm/both needs a model API (--api-base, --model and a key)")]
    NoModel,
}

/// The trajectories of a run, sorted by task id.
pub fn trajectories(run: &Path) -> Result<Vec<(PathBuf, Trajectory)>, EvalError> {
    let out = RunDir::new(run)
        .trajectories()
        .map_err(|e| EvalError::Run(format!("cannot read the run {}: {e}", run.display())))?;
    if out.is_empty() {
        return Err(EvalError::Run(format!(
            "{} holds no trajectories (is it a `webfreeze run --out` directory?)",
            run.display()
        )));
    }
    Ok(out.into_iter().map(|(d, t)| (d.path().to_path_buf(), t)).collect())
}

/// The task file the run was made from, as its `run.json` names it.
fn run_tasks_file(run: &Path) -> Option<PathBuf> {
    let rf = RunDir::new(run).read_run_file().ok()?;
    Some(PathBuf::from(rf.tasks_file)).filter(|p| !p.as_os_str().is_empty())
}

/// Evaluate `run`; the caller writes the report (see [`write_report`]).
pub async fn evaluate(run: &Path, opts: &EvalOptions) -> Result<EvalReport, EvalError> {
    evaluate_with_progress(run, opts, &|_, _, _| {}).await
}

/// [`evaluate`], calling `progress(done, total, task_id)` after each task (model judging is slow).
pub async fn evaluate_with_progress(
    run: &Path,
    opts: &EvalOptions,
    progress: &(dyn Fn(usize, usize, &str) + Sync),
) -> Result<EvalReport, EvalError> {
    let wants_llm = matches!(opts.judge, JudgeKind::Llm | JudgeKind::Both);
    if wants_llm && opts.llm.is_none() {
        return Err(EvalError::NoModel);
    }
    let trajs = trajectories(run)?;
    let specs: HashMap<String, WebVoyagerEval> = match opts.tasks_file.clone().or_else(|| run_tasks_file(run))
    {
        Some(p) if p.exists() => load_specs(&p)?,
        _ => HashMap::new(),
    };
    let wv: HashMap<String, WvAnswer> = match &opts.reference_file {
        Some(p) => load_webvoyager(p)?,
        None => HashMap::new(),
    };
    let mut tasks = Vec::new();
    for (dir, t) in &trajs {
        let answer = t.answer.clone().unwrap_or_default();
        let mut te = TaskEval {
            id: t.task_id.clone(),
            web_name: t.web_name.clone(),
            benchmark: t.benchmark(),
            outcome: t.outcome,
            answer: t.answer.clone(),
            final_url: t.final_url.clone(),
            error: t.error.clone(),
            reference: None,
            judge: None,
            judge_error: None,
            reference_error: None,
            state_unknown: None,
            wire: None,
            unknown_spec_parts: t.task_eval.as_ref().map(TaskEvalSpec::unknown_parts).unwrap_or_default(),
            rescored: false,
            blocked: t.blocked.clone(),
            coverage: t.coverage.clone(),
            guard: t.guard.clone(),
            scored: false,
            success: false,
        };
        if t.outcome == Outcome::Blocked {
            // Not the model's failure: counted apart, not judged.
            progress(tasks.len() + 1, trajs.len(), &te.id);
            tasks.push(te);
            continue;
        }
        if matches!(opts.judge, JudgeKind::Reference | JudgeKind::Both) {
            let files = score::FileSpecs { specs: &specs, given: opts.tasks_file.is_some(), answers: &wv };
            match score::reference(opts, t, dir, &answer, &files, &mut te).await {
                Ok(r) => te.reference = r,
                Err(e) => te.reference_error = Some(e.to_string()),
            }
        }
        if wants_llm {
            if let Some(llm) = &opts.llm {
                match judge(llm, dir, &t.question, t.answer.as_deref(), opts.k, opts.repeats).await {
                    Ok(j) => te.judge = Some(j),
                    Err(e) => te.judge_error = Some(e.to_string()),
                }
            }
        }
        let ref_verdict = te.reference.as_ref().filter(|r| !r.checks.is_empty()).map(|r| r.pass);
        let judge_verdict = te.judge.as_ref().map(|j| j.mean >= 0.5);
        let verdict = match opts.judge {
            JudgeKind::Reference => ref_verdict,
            JudgeKind::Llm => judge_verdict,
            JudgeKind::Both => match (ref_verdict, judge_verdict) {
                (Some(r), Some(j)) => Some(r && j),
                (r, j) => r.or(j),
            },
        };
        // A task that errored is a failure whatever its answer; it is still scored.
        te.scored = verdict.is_some() || matches!(t.outcome, Outcome::Error | Outcome::Timeout);
        te.success = verdict.unwrap_or(false) && t.outcome == Outcome::Answered;
        if let Some(why) = opts.state_unknown.get(&t.task_id) {
            // Not the model's failure nor its success: nobody knows the state its checks would read.
            te.state_unknown = Some(why.clone());
            te.scored = false;
            te.success = false;
        }
        if off_snapshot(&te) || contaminated(&te) {
            // Judged and shown, not counted: the frozen web could not answer this run, or the agent may
            // have read the benchmark's answer.
            te.scored = false;
        }
        progress(tasks.len() + 1, trajs.len(), &te.id);
        tasks.push(te);
    }
    let mut sites: BTreeMap<String, GroupStats> = BTreeMap::new();
    let mut overall = GroupStats::default();
    for te in tasks.iter().filter(|t| t.outcome == Outcome::Blocked) {
        sites.entry(te.web_name.clone()).or_default().blocked += 1;
        overall.blocked += 1;
    }
    for te in tasks.iter().filter(|t| off_snapshot(t)) {
        sites.entry(te.web_name.clone()).or_default().off_snapshot += 1;
        overall.off_snapshot += 1;
    }
    for te in tasks.iter().filter(|t| contaminated(t)) {
        sites.entry(te.web_name.clone()).or_default().contaminated += 1;
        overall.contaminated += 1;
    }
    for te in tasks.iter().filter(|t| t.state_unknown.is_some()) {
        sites.entry(te.web_name.clone()).or_default().state_unknown += 1;
        overall.state_unknown += 1;
    }
    for te in tasks.iter().filter(|t| writes_blocked(t)) {
        sites.entry(te.web_name.clone()).or_default().writes_blocked += 1;
        overall.writes_blocked += 1;
    }
    for te in tasks.iter().filter(|t| t.scored) {
        let (errored, std) =
            (matches!(te.outcome, Outcome::Error | Outcome::Timeout), te.judge.as_ref().map(|j| j.std));
        sites.entry(te.web_name.clone()).or_default().add(te.success, errored, std);
        overall.add(te.success, errored, std);
        // Partial credit where the benchmark gives it (its scorer ran on every attempted task); a task that
        // errored or ran out of steps has credit 0 whatever its last answer.
        if let Some(score) = te.reference.as_ref().and_then(|r| r.score) {
            let s = if te.outcome == Outcome::Answered { score } else { 0.0 };
            sites.entry(te.web_name.clone()).or_default().add_score(s);
            overall.add_score(s);
        }
    }
    Ok(EvalReport {
        v: 1,
        run: run.display().to_string(),
        judge: opts.judge,
        errored: tasks
            .iter()
            .filter(|t| matches!(t.outcome, Outcome::Error | Outcome::Timeout))
            .map(|t| t.id.clone())
            .collect(),
        unscored: tasks
            .iter()
            .filter(|t| {
                !t.scored
                    && t.outcome != Outcome::Blocked
                    && !off_snapshot(t)
                    && !contaminated(t)
                    && t.state_unknown.is_none()
            })
            .map(|t| t.id.clone())
            .collect(),
        blocked: tasks.iter().filter(|t| t.outcome == Outcome::Blocked).map(|t| t.id.clone()).collect(),
        off_snapshot: tasks.iter().filter(|t| off_snapshot(t)).map(|t| t.id.clone()).collect(),
        contaminated: tasks.iter().filter(|t| contaminated(t)).map(|t| t.id.clone()).collect(),
        state_unknown: tasks
            .iter()
            .filter_map(|t| Some(format!("{} ({})", t.id, t.state_unknown.as_deref()?)))
            .collect(),
        writes_blocked: tasks.iter().filter(|t| writes_blocked(t)).map(|t| t.id.clone()).collect(),
        tasks,
        sites,
        overall,
    })
}
/// Write `eval.json` into the run.
pub fn write_report(run: &Path, r: &EvalReport) -> Result<PathBuf, EvalError> {
    let p = run.join("eval.json");
    let bytes = serde_json::to_vec_pretty(r).map_err(|e| EvalError::Run(e.to_string()))?;
    trajectory::write_atomic(&p, &bytes).map_err(|e| EvalError::Run(e.to_string()))?;
    Ok(p)
}

/// Read `eval.json` from a run.
pub fn read_report(run: &Path) -> Result<EvalReport, EvalError> {
    let p = run.join("eval.json");
    let bytes = std::fs::read(&p).map_err(|e| {
        EvalError::Run(format!("{}: {e} (run `webfreeze eval {}` first)", p.display(), run.display()))
    })?;
    serde_json::from_slice(&bytes).map_err(|e| EvalError::Run(format!("{}: {e}", p.display())))
}

/// A replayed task that asked for a page the snapshot never recorded.
pub fn off_snapshot(t: &TaskEval) -> bool {
    // A task whose state is unknown is counted there (its missed page is often its unknown write's answer).
    t.outcome != Outcome::Blocked
        && t.state_unknown.is_none()
        && t.coverage.as_ref().is_some_and(|c| c.off_snapshot)
}

/// A live or recording task with contamination evidence (not a `blocked` one: it was not attempted).
pub fn contaminated(t: &TaskEval) -> bool {
    t.outcome != Outcome::Blocked && t.guard.as_ref().is_some_and(|g| g.contaminated())
}

/// A task some of whose writes the side-effect guard refused.
pub fn writes_blocked(t: &TaskEval) -> bool {
    t.guard.as_ref().is_some_and(|g| !g.writes.is_empty())
}

/// The guards' evidence of a task, one line each (`step N: ...`).
pub fn guard_evidence(t: &TaskEval) -> Vec<String> {
    let Some(g) = &t.guard else { return Vec::new() };
    let step = |n: u32| if n == 0 { "start page".to_string() } else { format!("step {n}") };
    let mut out: Vec<String> =
        g.writes.iter().map(|f| format!("{}: write blocked: {}", step(f.step), f.what)).collect();
    out.extend(g.answer_places.iter().map(|f| format!("{}: answer place blocked: {}", step(f.step), f.what)));
    out.extend(
        g.answer_pages.iter().map(|f| {
            format!("{}: {} shows the question with its answer {:?}", step(f.step), f.url, f.answer)
        }),
    );
    out
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
