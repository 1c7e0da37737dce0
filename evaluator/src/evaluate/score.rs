//! One task scored by its benchmark's rules: the dispatch on [`trajectory::Benchmark`] (an exhaustive
//! `match`: a new benchmark is a new arm and a room of its own here), and why a task could not be scored.
//! Each benchmark's room turns its rules' findings into the report's checks:
//! - [`webvoyager`]: our matchers and WebVoyager's reference answers (and the judge, in `evaluate.rs`);
//! - [`webarena`]: WebArena's eval types on the trajectory's evidence (`crate::webarena`);
//! - [`verified`]: WebArena-Verified's evaluators (`crate::verified`);
//! - [`assistantbench`]: AssistantBench's accuracy (`crate::assistantbench`).
//!
//! `evaluate.rs` drives the run and keeps the report.

use super::*;

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

/// The task's reference result (None: it has none), its spec's benchmark deciding the rules; `te`
/// receives what the scoring found besides (re-scored checks, the wire its network checks read).
pub(super) async fn reference(
    opts: &EvalOptions,
    t: &Trajectory,
    dir: &Path,
    answer: &str,
    files: &FileSpecs<'_>,
    te: &mut TaskEval,
) -> Result<Option<ReferenceResult>, NotScored> {
    if let Some(TaskEvalSpec::Unreadable { error, .. }) = &t.task_eval {
        return Err(NotScored::Unreadable(error.clone()));
    }
    let spec = t.task_eval.as_ref();
    match t.benchmark() {
        Benchmark::WebVoyager => {
            let own = match spec {
                Some(TaskEvalSpec::WebVoyager(w)) => Some(w),
                _ => None,
            };
            let from_file = files.specs.get(&t.task_id);
            let spec = if files.given { from_file.or(own) } else { own.or(from_file) };
            Ok(webvoyager::result(opts, spec, files.answers.get(&t.task_id), t, answer).await)
        }
        Benchmark::WebArena => match spec {
            Some(TaskEvalSpec::WebArena(w)) => {
                webarena::result(opts, w, t, dir, answer, &mut te.rescored).await.map(Some)
            }
            _ => Ok(None),
        },
        Benchmark::WebArenaVerified => match spec {
            Some(TaskEvalSpec::Verified(v)) => verified::result(opts, v, t, answer, &mut te.wire).map(Some),
            _ => Ok(None),
        },
        Benchmark::AssistantBench => match spec {
            Some(TaskEvalSpec::AssistantBench(a)) => assistantbench::result(a, answer).map(Some),
            _ => Ok(None),
        },
    }
}

/// Why a task's reference could not be scored (the report gives it as the task's reference error).
#[derive(Debug, thiserror::Error)]
pub(super) enum NotScored {
    /// The trajectory's spec cannot be read by this version.
    #[error("its eval spec cannot be read: {0}")]
    Unreadable(String),
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
