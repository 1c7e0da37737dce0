//! One task scored by its benchmark's rules: WebVoyager's reference answers (and the judge), WebArena's
//! eval types on the trajectory's evidence, WebArena-Verified's evaluators. `evaluate.rs` drives the run
//! and keeps the report.

use super::*;

pub(super) async fn reference_result(
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
        });
    }
    let pass = checks.iter().all(|c| c.pass);
    Some(ReferenceResult { checks, pass, possible_answer })
}

/// Why a task's reference could not be scored (the report gives it as the task's reference error).
#[derive(Debug, thiserror::Error)]
pub(super) enum NotScored {
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

/// Scores a WebArena-Verified eval list: one check per evaluator, its failures as evidence.
pub(super) fn verified_result(
    opts: &EvalOptions,
    spec: &[serde_json::Value],
    t: &Trajectory,
    answer: &str,
    wire: &mut Option<String>,
) -> Result<ReferenceResult, NotScored> {
    let needs_network = spec
        .iter()
        .any(|e| e.get("evaluator").and_then(serde_json::Value::as_str) == Some("NetworkEventEvaluator"));
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
        .zip(spec)
        .map(|(r, s)| {
            let what = s.get("expected").map(|e| e.to_string()).unwrap_or_default();
            let what: String = what.chars().take(300).collect();
            let neg = if s.get("should_not_exist").and_then(serde_json::Value::as_bool) == Some(true) {
                "must not exist: "
            } else {
                ""
            };
            let expected = if r.failures.is_empty() {
                format!("{neg}{what}")
            } else {
                format!("{neg}{what} (failed: {})", r.failures.join("; "))
            };
            Check { matcher: r.evaluator.clone(), expected, pass: r.failures.is_empty() }
        })
        .collect();
    let pass = checks.iter().all(|c| c.pass);
    Ok(ReferenceResult { checks, pass, possible_answer: None })
}

/// Scores a WebArena-format spec: the checks decided here, then those the model decides.
pub(super) async fn webarena_result(
    opts: &EvalOptions,
    spec: &trajectory::WebArenaEval,
    t: &Trajectory,
    task_dir: &Path,
    answer: &str,
    rescored: &mut bool,
) -> Result<ReferenceResult, NotScored> {
    let (html, images) = match opts.rescored.get(&t.task_id) {
        Some(Ok((html, images))) => {
            *rescored = true;
            (html, images)
        }
        Some(Err(e)) => return Err(NotScored::Rescore(e.clone())),
        None => (&t.html_checks, &t.image_checks),
    };
    let evidence = crate::webarena::Evidence {
        answer,
        final_url: &t.final_url,
        html,
        images,
        task_dir,
        ssim_threshold: opts.ssim_threshold,
    };
    let found = crate::webarena::check(spec, &evidence)?;
    let mut checks = found.checks;
    for m in found.model {
        let c = match &opts.llm {
            Some(llm) => {
                let r = match &m.ask {
                    crate::webarena::Ask::Fuzzy { pred } => {
                        let pred = pred.as_deref().unwrap_or(answer);
                        fuzzy_match(llm, &t.question, pred, &m.reference).await.map(|(pass, _)| pass)
                    }
                    crate::webarena::Ask::Vqa { question, images } => {
                        let bytes: Vec<Vec<u8>> =
                            images.iter().filter_map(|p| std::fs::read(p).ok()).collect();
                        vqa(llm, question, &m.reference, &bytes).await.map(|(pass, _)| pass)
                    }
                };
                let expected = match &m.ask {
                    crate::webarena::Ask::Vqa { question, .. } => format!("{question} -> {}", m.reference),
                    crate::webarena::Ask::Fuzzy { .. } => m.reference.clone(),
                };
                match r {
                    Ok(pass) => Check { matcher: m.matcher, expected, pass },
                    Err(e) => Check {
                        matcher: m.matcher,
                        expected: format!("{expected} (model failed: {e})"),
                        pass: false,
                    },
                }
            }
            None => Check {
                matcher: m.matcher,
                expected: format!("{} (not run: needs a model API)", m.reference),
                pass: false,
            },
        };
        checks.push(c);
    }
    let pass = !checks.is_empty() && checks.iter().all(|c| c.pass);
    Ok(ReferenceResult { checks, pass, possible_answer: None })
}
