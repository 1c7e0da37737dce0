//! WebArena-Verified (ServiceNow's re-audit of WebArena's 812 tasks; `webarena-verified` on PyPI) scored
//! here. A task's `eval` is a list of evaluators, each with its `expected` value; the task passes when
//! every one passes (their `evaluate_task`).
//!
//! - `AgentResponseEvaluator` ([`response`]): the agent's final answer, a typed JSON object.
//! - `NetworkEventEvaluator` ([`network`]): the requests of the run as the proxy saw them.
//!
//! What their evaluators do is the reference: where a rule is unclear, this does what theirs does
//! (webarena-verified 1.2.3), and the test command compares verdicts with theirs.

use serde_json::Value;

pub mod formats;
pub mod jsonpath;
pub mod network;
mod read;
pub mod response;
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

/// What a task is: its expected `task_type`, lower case (`retrieve`, `mutate`, `navigate`).
pub fn task_type(eval: &[Value]) -> Option<String> {
    eval.iter()
        .filter(|e| e.get("evaluator").and_then(Value::as_str) == Some("AgentResponseEvaluator"))
        .find_map(|e| e.pointer("/expected/task_type").and_then(Value::as_str))
        .map(str::to_ascii_lowercase)
}

/// Scores a task: each evaluator's failures; `Err` when the task cannot be scored here (a schema type
/// or an evaluator not implemented, named).
pub fn score(
    list: &[Value],
    answer: &str,
    events: Option<&[network::Event]>,
) -> Result<Vec<EvaluatorResult>, VerifiedError> {
    let navigate = task_type(list).as_deref() == Some("navigate");
    let mut out = Vec::with_capacity(list.len());
    for (i, spec) in list.iter().enumerate() {
        let name = spec.get("evaluator").and_then(Value::as_str).unwrap_or("").to_string();
        let r = match name.as_str() {
            "AgentResponseEvaluator" => response::evaluate(spec, answer),
            "NetworkEventEvaluator" => match events {
                Some(ev) => network::evaluate(spec, ev, navigate),
                None => Err(VerifiedError::Evidence("the run has no network events to check (no snapshot)")),
            },
            other => Err(VerifiedError::Unsupported(format!("evaluator {other:?}"))),
        };
        let failures =
            r.map_err(|e| VerifiedError::In { index: i, name: name.clone(), source: Box::new(e) })?;
        out.push(EvaluatorResult { evaluator: name, failures });
    }
    Ok(out)
}
