//! WebArena-Verified's room: one check per evaluator of the task's list, its failures as evidence; the
//! network checks read the run's own requests (`EvalOptions::network`).

use super::super::*;
use super::NotScored;
use trajectory::VerifiedEvaluator;

/// Scores a WebArena-Verified eval list: one check per evaluator, its failures as evidence.
pub(super) fn result(
    opts: &EvalOptions,
    spec: &trajectory::VerifiedEval,
    t: &Trajectory,
    answer: &str,
    wire: &mut Option<String>,
) -> Result<ReferenceResult, NotScored> {
    let needs_network = spec.needs_network();
    let events = match opts.network.get(&t.task_id) {
        Some(Ok(e)) => {
            if needs_network {
                *wire = Some(e.wire.to_string());
            }
            Some(e.events.as_slice())
        }
        Some(Err(e)) => {
            if needs_network {
                return Err(NotScored::Network(e.clone()));
            }
            None
        }
        None => None,
    };
    let results = crate::verified::score(spec, answer, events)?;
    let checks: Vec<Check> = results
        .iter()
        .zip(&spec.0)
        .map(|(r, s)| {
            let (what, negated) = match s {
                VerifiedEvaluator::AgentResponse(a) => (serde_json::to_string(&a.expected), false),
                VerifiedEvaluator::NetworkEvent(n) => {
                    (serde_json::to_string(&n.expected), n.should_not_exist)
                }
                VerifiedEvaluator::Other { spec, .. } => (Ok(spec.to_string()), false),
            };
            let what: String = what.unwrap_or_default().chars().take(300).collect();
            let neg = if negated { "must not exist: " } else { "" };
            let expected = if r.failures.is_empty() {
                format!("{neg}{what}")
            } else {
                format!("{neg}{what} (failed: {})", r.failures.join("; "))
            };
            Check { matcher: r.evaluator.clone(), expected, pass: r.failures.is_empty() }
        })
        .collect();
    let pass = checks.iter().all(|c| c.pass);
    Ok(ReferenceResult { checks, pass, possible_answer: None, score: None })
}
