//! WebArena-Verified (ServiceNow's re-audit of WebArena's 812 tasks; `webarena-verified` on PyPI) scored
//! here. A task's `eval` is a list of evaluators, each with its `expected` value; the task passes when
//! every one passes (their `evaluate_task`).
//!
//! The spec is typed where the task file is read ([`trajectory::VerifiedEval`]); this module scores it.
//!
//! - `AgentResponseEvaluator` ([`response`]): the agent's final answer, a typed JSON object.
//! - `NetworkEventEvaluator` ([`network`]): the requests of the run as the proxy saw them.
//!
//! What their evaluators do is the reference: where a rule is unclear, this does what theirs does
//! (webarena-verified 1.2.3), and the test command compares verdicts with theirs.

use trajectory::{VerifiedEval, VerifiedEvaluator};

pub mod formats;
pub mod jsonpath;
pub mod network;
pub mod py_re;
mod read;
pub mod response;
pub mod schema;
pub mod url;
pub mod value;

/// Why a WebArena-Verified evaluator could not run on a task (the task is then reported as not scored,
/// with this).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifiedError {
    /// A schema type or a JSONPath form this implementation does not read, named.
    #[error("{0} is not implemented here")]
    Unsupported(String),
    /// The evaluator's spec is malformed (the dataset's side).
    #[error("{0}")]
    Spec(String),
    /// A value is not what its schema says, read strictly (the run's side).
    #[error("{0}")]
    Value(String),
    /// The run lacks what the evaluator reads (its network events).
    #[error("{0}")]
    Evidence(&'static str),
    /// One evaluator of the task's list could not run.
    #[error("evaluator {index} ({name}): {source}")]
    In {
        /// Its index in the list.
        index: usize,
        /// Its `evaluator` name.
        name: String,
        /// Why.
        source: Box<VerifiedError>,
    },
}

impl From<value::Unsupported> for VerifiedError {
    fn from(u: value::Unsupported) -> Self {
        VerifiedError::Unsupported(format!("schema type {:?}", u.0))
    }
}

/// One evaluator's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct EvaluatorResult {
    /// `AgentResponseEvaluator`, `NetworkEventEvaluator`.
    pub evaluator: String,
    /// What failed (empty: passed).
    pub failures: Vec<String>,
}

/// Scores a task: each evaluator's failures; `Err` when the task cannot be scored here (a schema type
/// or an evaluator not implemented, named).
pub fn score(
    eval: &VerifiedEval,
    answer: &str,
    events: Option<&[network::Event]>,
) -> Result<Vec<EvaluatorResult>, VerifiedError> {
    let navigate = eval.task_type().as_deref() == Some("navigate");
    let mut out = Vec::with_capacity(eval.0.len());
    for (i, spec) in eval.0.iter().enumerate() {
        let name = spec.name().to_string();
        let r = match spec {
            VerifiedEvaluator::AgentResponse(a) => response::evaluate(a, answer),
            VerifiedEvaluator::NetworkEvent(n) => match events {
                Some(ev) => network::evaluate(n, ev, navigate),
                None => Err(VerifiedError::Evidence("the run has no network events to check (no snapshot)")),
            },
            VerifiedEvaluator::Other { name, .. } => {
                Err(VerifiedError::Unsupported(format!("evaluator {name:?}")))
            }
        };
        let failures =
            r.map_err(|e| VerifiedError::In { index: i, name: name.clone(), source: Box::new(e) })?;
        out.push(EvaluatorResult { evaluator: name, failures });
    }
    Ok(out)
}
