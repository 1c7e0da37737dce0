//! WebArena's room (VisualWebArena's too): the eval types decided here on the trajectory's evidence (or a
//! re-scored one, `eval --rescore`), then those the model decides (`fuzzy_match`, VWA's image questions).

use super::super::*;
use super::NotScored;

/// Scores a WebArena-format spec: the checks decided here, then those the model decides.
pub(super) async fn result(
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
    Ok(ReferenceResult { checks, pass, possible_answer: None, score: None })
}
