//! WebVoyager's room: our task lines' matchers (`exact_match`, `must_include`, ..., `fuzzy_match` by the
//! model) and WebVoyager's own `reference_answer.json` (golden answers scored, possible ones shown).

use super::super::*;

pub(super) async fn result(
    opts: &EvalOptions,
    spec: Option<&WebVoyagerEval>,
    wv: Option<&WvAnswer>,
    t: &Trajectory,
    answer: &str,
) -> Option<ReferenceResult> {
    let mut checks = Vec::new();
    let mut possible_answer = None;
    if let Some(spec) = spec {
        checks.extend(check(spec, answer, &t.final_url));
        if let Some(reference) = &spec.fuzzy_match {
            let c = match &opts.llm {
                Some(llm) => match fuzzy_match(llm, &t.question, answer, reference).await {
                    Ok((pass, _)) => {
                        Check { matcher: "fuzzy_match".into(), expected: reference.clone(), pass }
                    }
                    Err(e) => Check {
                        matcher: "fuzzy_match".into(),
                        expected: format!("{reference} (model failed: {e})"),
                        pass: false,
                    },
                },
                None => Check {
                    matcher: "fuzzy_match".into(),
                    expected: format!("{reference} (not run: needs a model API)"),
                    pass: false,
                },
            };
            checks.push(c);
        }
    }
    if let Some(a) = wv {
        let scored = a.kind == "golden" || opts.score_possible;
        if scored {
            let pass = exact_match(answer, &a.ans) || includes(answer, &a.ans);
            checks.push(Check { matcher: format!("webvoyager_{}", a.kind), expected: a.ans.clone(), pass });
        } else {
            possible_answer = Some(a.ans.clone());
        }
    }
    if checks.is_empty() {
        // Nothing scored; a possible answer is still shown (and the task is not scored by it).
        return possible_answer.map(|p| ReferenceResult {
            checks: Vec::new(),
            pass: false,
            possible_answer: Some(p),
            score: None,
        });
    }
    let pass = checks.iter().all(|c| c.pass);
    Some(ReferenceResult { checks, pass, possible_answer, score: None })
}
