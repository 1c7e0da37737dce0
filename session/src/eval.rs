//! `webfreeze eval` as one library call ([`eval_run`]): a run judged (`evaluator::evaluate`) with the
//! evidence only the store holds besides the run directory: each task's own requests for its network
//! checks ([`crate::network_events`]), the replayed state tasks the frozen web cannot score
//! ([`crate::frozen_verdict`]), and, when asked, the browser checks re-run offline against each task's
//! snapshot ([`crate::rescore_run`], with the run's own settings). The binary, the WebArena demo and any
//! other harness make the same call; what they print is theirs.

use std::path::Path;
use std::sync::Arc;

use agent::runner::AgentConfig;
use clock::Clock;
use evaluator::evaluate::{evaluate_with_progress, EvalOptions, EvalReport};
use proxy::{CertificateAuthority, ProxyConfig};
use snapshots::Store;

use crate::error::SessionError;
use crate::rescore::Rescored;

/// `eval --rescore`: how the browser checks are re-run offline.
pub struct Rescore {
    /// The browser (its path, the shop's admin login); the run's own settings (action space,
    /// observation, window, budget) are applied to it from `run.json`.
    pub agent: AgentConfig,
    /// The proxy CA the replays present.
    pub ca: Arc<CertificateAuthority>,
    /// Time stamps of the re-executions.
    pub clock: Arc<dyn Clock>,
}

/// Where an evaluation stands, for progress on a terminal.
pub struct EvalProgress<'a> {
    /// After each task re-executed (`Rescore`): done, total, task id.
    pub rescored: &'a (dyn Fn(usize, usize, &str) + Sync),
    /// When the re-executions are over, with what they found (before any task is judged).
    pub rescore_done: &'a (dyn Fn(&Rescored) + Sync),
    /// After each task judged: done, total, task id.
    pub judged: &'a (dyn Fn(usize, usize, &str) + Sync),
}

impl EvalProgress<'_> {
    /// No progress reported.
    pub fn quiet() -> EvalProgress<'static> {
        EvalProgress { rescored: &|_, _, _| {}, rescore_done: &|_| {}, judged: &|_, _, _| {} }
    }
}

/// What [`eval_run`] found.
#[derive(Debug)]
pub struct Evaluated {
    /// The report (`RUN/eval.json` when the caller writes it: `evaluator::evaluate::write_report`).
    pub report: EvalReport,
    /// The browser checks re-run offline, by task id (empty without `Rescore`, or what the options held).
    pub rescored: Rescored,
}

/// Judge run directory `run`, whose snapshots are in the store at `store`, as `options` say. Its
/// `network` and `state_unknown` are read here from the store and the run; with `rescore` its `rescored`
/// are re-run here too (otherwise the options' own are used: none, or the caller's).
pub async fn eval_run(
    store: &Path,
    run: &Path,
    mut options: EvalOptions,
    rescore: Option<Rescore>,
    progress: &EvalProgress<'_>,
) -> Result<Evaluated, SessionError> {
    if let Some(r) = rescore {
        options.rescored = crate::rescore_run(
            run,
            Store::open_read_only(store)?,
            r.ca,
            r.agent,
            ProxyConfig::default(),
            r.clock,
            progress.rescored,
        )
        .await?;
        (progress.rescore_done)(&options.rescored);
    }
    options.network = crate::network_events::for_run(store, run);
    options.state_unknown = crate::frozen_verdict::counted_apart(store, run, &options.network);
    let report = evaluate_with_progress(run, &options, progress.judged).await?;
    Ok(Evaluated { report, rescored: options.rescored })
}
