//! One task scored by its benchmark's rules: the dispatch on the task's spec ([`TaskEvalSpec`], an
//! exhaustive `match`: a new benchmark is a new arm and a room of its own here; a spec of another benchmark
//! than the task's is an error, not "no reference"), and why a task could not be scored.
//! Each benchmark's room turns its rules' findings into the report's checks:
//! - [`webvoyager`]: our matchers and WebVoyager's reference answers (and the judge, in `evaluate.rs`);
//! - [`webarena`]: WebArena's eval types on the trajectory's evidence (`crate::webarena`);
//! - [`verified`]: WebArena-Verified's evaluators (`crate::verified`);
//! - [`assistantbench`]: AssistantBench's accuracy (`crate::assistantbench`).
//!
//! `evaluate.rs` drives the run and keeps the report.

use std::collections::HashMap;
use std::path::Path;

use trajectory::{Benchmark, TaskEvalSpec, Trajectory, WebVoyagerEval};

use super::{EvalOptions, ReferenceResult, TaskEval};
use crate::reference::WvAnswer;

mod assistantbench;
mod verified;
mod webarena;
mod webvoyager;

/// Where a WebVoyager-format task's spec may come from besides its trajectory.
pub(super) struct FileSpecs<'a> {
    /// The task file's specs by task id.
    pub specs: &'a HashMap<String, WebVoyagerEval>,
    /// The file was given to `eval` (`--tasks`): its specs come before the trajectories'.
    pub given: bool,
    /// WebVoyager's `reference_answer.json`, by task id.
    pub answers: &'a HashMap<String, WvAnswer>,
}

/// The rules a task is scored by: its spec's, and only its spec's.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Rules<'a> {
    /// WebVoyager's matchers: the trajectory's spec, or (None) the task file's.
    WebVoyager(Option<&'a WebVoyagerEval>),
    /// WebArena's eval types.
    WebArena(&'a trajectory::WebArenaEval),
    /// WebArena-Verified's evaluators.
    Verified(&'a trajectory::VerifiedEval),
    /// AssistantBench's accuracy.
    AssistantBench(&'a trajectory::AssistantBenchEval),
    /// No spec, and the task's benchmark takes none from elsewhere: no reference.
    NoReference,
}

/// The rules of a task of `benchmark` with `spec`: the spec decides, and a spec of another benchmark than
/// the task's is an error (never scored as "no reference"). Only a WebVoyager task without a spec of its
/// own looks further (its task file, `FileSpecs`).
fn rules(benchmark: Benchmark, spec: Option<&TaskEvalSpec>) -> Result<Rules<'_>, NotScored> {
    let Some(spec) = spec else {
        return Ok(match benchmark {
            Benchmark::WebVoyager => Rules::WebVoyager(None),
            Benchmark::WebArena | Benchmark::WebArenaVerified | Benchmark::AssistantBench => {
                Rules::NoReference
            }
        });
    };
    if let TaskEvalSpec::Unreadable { error, .. } = spec {
        return Err(NotScored::Unreadable(error.clone()));
    }
    if let Some(of) = spec.benchmark().filter(|of| *of != benchmark) {
        return Err(NotScored::Mismatch { task: benchmark, spec: of });
    }
    Ok(match spec {
        TaskEvalSpec::WebVoyager(w) => Rules::WebVoyager(Some(w)),
        TaskEvalSpec::WebArena(w) => Rules::WebArena(w),
        TaskEvalSpec::Verified(v) => Rules::Verified(v),
        TaskEvalSpec::AssistantBench(a) => Rules::AssistantBench(a),
        TaskEvalSpec::Unreadable { error, .. } => return Err(NotScored::Unreadable(error.clone())),
    })
}

/// The task's reference result (None: it has none), its spec deciding the rules ([`rules`]); `te`
/// receives what the scoring found besides (re-scored checks, the wire its network checks read).
pub(super) async fn reference(
    opts: &EvalOptions,
    t: &Trajectory,
    dir: &Path,
    answer: &str,
    files: &FileSpecs<'_>,
    te: &mut TaskEval,
) -> Result<Option<ReferenceResult>, NotScored> {
    match rules(t.benchmark(), t.task_eval.as_ref())? {
        Rules::WebVoyager(own) => {
            let from_file = files.specs.get(&t.task_id);
            let spec = if files.given { from_file.or(own) } else { own.or(from_file) };
            Ok(webvoyager::result(opts, spec, files.answers.get(&t.task_id), t, answer).await)
        }
        Rules::WebArena(w) => webarena::result(opts, w, t, dir, answer, &mut te.rescored).await.map(Some),
        Rules::Verified(v) => verified::result(opts, v, t, answer, &mut te.wire).map(Some),
        Rules::AssistantBench(a) => assistantbench::result(a, answer).map(Some),
        Rules::NoReference => Ok(None),
    }
}

/// Why a task's reference could not be scored (the report gives it as the task's reference error).
#[derive(Debug, thiserror::Error)]
pub(super) enum NotScored {
    /// The trajectory's spec cannot be read by this version.
    #[error("its eval spec cannot be read: {0}")]
    Unreadable(String),
    /// The task's spec is another benchmark's than the task's own: scored by neither.
    #[error("its eval spec is {spec}'s, but the task is {task}'s: scored by neither")]
    Mismatch {
        /// The task's benchmark.
        task: Benchmark,
        /// Its spec's.
        spec: Benchmark,
    },
    /// AssistantBench's scorer fails on the answer.
    #[error(transparent)]
    AssistantBench(#[from] crate::assistantbench::Unscorable),
    /// Its WebArena-Verified network checks, without the run's requests.
    #[error("its network checks need the run's requests: {0}")]
    Network(crate::verified::network::EventsError),
    /// A WebArena-Verified evaluator could not run.
    #[error(transparent)]
    Verified(#[from] crate::verified::VerifiedError),
    /// `eval --rescore` could not re-run the task's checks.
    #[error("re-scoring offline failed: {0}")]
    Rescore(trajectory::RescoreError),
    /// A WebArena-format spec, or one of its eval types, cannot be scored here.
    #[error(transparent)]
    WebArena(#[from] crate::webarena::NotScorable),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_decides_and_a_mismatch_is_an_error() {
        let wv = TaskEvalSpec::WebVoyager(WebVoyagerEval::default());
        let wa = TaskEvalSpec::WebArena(Box::default());
        let ab = TaskEvalSpec::AssistantBench(trajectory::AssistantBenchEval::default());
        let ve = TaskEvalSpec::Verified(trajectory::VerifiedEval::default());
        let bad = TaskEvalSpec::Unreadable { spec: serde_json::Value::Null, error: "no".into() };
        use Benchmark::*;
        // (task's benchmark, its spec, the rules: Ok(name) or Err(what the error says))
        for (benchmark, spec, want) in [
            (WebVoyager, None, Ok("webvoyager from file")),
            (WebArena, None, Ok("no reference")),
            (WebArenaVerified, None, Ok("no reference")),
            (AssistantBench, None, Ok("no reference")),
            (WebVoyager, Some(&wv), Ok("webvoyager")),
            (WebArena, Some(&wa), Ok("webarena")),
            (WebArenaVerified, Some(&ve), Ok("webarena-verified")),
            (AssistantBench, Some(&ab), Ok("assistantbench")),
            (WebArenaVerified, Some(&wa), Err("spec is webarena's, but the task is webarena-verified's")),
            (WebArena, Some(&ve), Err("spec is webarena-verified's, but the task is webarena's")),
            (WebVoyager, Some(&wa), Err("spec is webarena's, but the task is webvoyager's")),
            (WebArena, Some(&ab), Err("spec is assistantbench's, but the task is webarena's")),
            (AssistantBench, Some(&wv), Err("spec is webvoyager's, but the task is assistantbench's")),
            (WebArena, Some(&bad), Err("cannot be read: no")),
        ] {
            let got = rules(benchmark, spec).map(|r| match r {
                Rules::WebVoyager(None) => "webvoyager from file",
                Rules::WebVoyager(Some(_)) => "webvoyager",
                Rules::WebArena(_) => "webarena",
                Rules::Verified(_) => "webarena-verified",
                Rules::AssistantBench(_) => "assistantbench",
                Rules::NoReference => "no reference",
            });
            match (got, want) {
                (Ok(g), Ok(w)) => assert_eq!(g, w, "{benchmark} {spec:?}"),
                (Err(e), Err(w)) => assert!(e.to_string().contains(w), "{benchmark} {spec:?}: {e}"),
                (g, w) => panic!("{benchmark} {spec:?}: {:?}, want {w:?}", g.map_err(|e| e.to_string())),
            }
        }
    }
}
