//! AssistantBench's room: the answer's accuracy against the gold answer (`crate::assistantbench`), one
//! check that passes at full accuracy; the accuracy itself is the result's `score` (their leaderboard's
//! figure is its mean, `GroupStats::mean_score`).

use super::super::*;
use super::NotScored;

/// Scores an AssistantBench answer.
pub(super) fn result(
    spec: &trajectory::AssistantBenchEval,
    answer: &str,
) -> Result<ReferenceResult, NotScored> {
    let accuracy = crate::assistantbench::accuracy(answer, &spec.answer)?;
    // Their accuracy is a float sum: 1.0 within rounding is a full match.
    let pass = accuracy >= 1.0 - 1e-9;
    let expected = match &spec.gold_url {
        Some(u) => format!("{} (accuracy {accuracy:.3}; found at {u})", spec.answer),
        None => format!("{} (accuracy {accuracy:.3})", spec.answer),
    };
    Ok(ReferenceResult {
        checks: vec![Check { matcher: "assistantbench_accuracy".into(), expected, pass }],
        pass,
        possible_answer: None,
        score: Some(accuracy),
    })
}
