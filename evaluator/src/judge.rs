//! The model judge, after the WebVoyager protocol: the task, the agent's final answer and the last k
//! screenshots of the run go to a vision model at temperature 0; the reply ends in SUCCESS or NOT SUCCESS.
//! It reads only the run's files, never the web. Also the fuzzy_match matcher (does this answer mean the
//! reference?).

use std::path::Path;

use serde::{Deserialize, Serialize};
use trajectory::llm::{Llm, LlmError, Message, Usage};

/// Our judge prompt.
pub const JUDGE_PROMPT: &str =
    "You grade the work of a web-browsing agent. You get the task it was given, the final answer \
it gave, and screenshots of the last pages it saw (the latest last). Decide whether the agent accomplished \
the task.

- The screenshots are the evidence: where the answer contradicts them, trust the screenshots.
- A task with several parts succeeds only if every part is done.
- An answer that is missing, vague, or about something else is a failure.
- Do not use knowledge of your own about what the right answer is; judge from the evidence.

Explain your reasoning briefly, then end with exactly one verdict on the last line: SUCCESS or NOT SUCCESS.";

/// A parsed verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// SUCCESS.
    Success,
    /// NOT SUCCESS.
    NotSuccess,
    /// Neither phrase found.
    Unparseable,
}

/// NOT SUCCESS is looked for first (it contains SUCCESS).
pub fn parse_verdict(reply: &str) -> Verdict {
    let upper = reply.to_uppercase();
    // The last verdict in the reply wins (a reply may quote both options before deciding).
    match (upper.rfind("NOT SUCCESS"), upper.rfind("SUCCESS")) {
        (_, None) => Verdict::Unparseable,
        (Some(not), Some(last)) if last == not + "NOT ".len() => Verdict::NotSuccess,
        _ => Verdict::Success,
    }
}

/// One task's judgements.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Judgement {
    /// Verdict per repeat.
    pub verdicts: Vec<Verdict>,
    /// The full replies, per repeat.
    pub replies: Vec<String>,
    /// Mean success over parseable repeats (unparseable count as failures).
    pub mean: f64,
    /// Population standard deviation of the 0/1 scores.
    pub std: f64,
    /// Screenshots sent.
    pub screenshots: Vec<String>,
    /// Tokens.
    pub usage: Usage,
}

/// Mean and population standard deviation.
pub fn mean_std(xs: &[f64]) -> (f64, f64) {
    if xs.is_empty() {
        return (0.0, 0.0);
    }
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n;
    (m, v.sqrt())
}

/// The screenshot files of a task directory in step order (`step-NN.png`), the last `k` (all when None).
pub fn last_screenshots(task_dir: &Path, k: Option<usize>) -> Vec<String> {
    let mut shots: Vec<(u32, String)> = std::fs::read_dir(task_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let n = name.strip_prefix("step-")?.strip_suffix(".png")?.parse().ok()?;
            Some((n, name))
        })
        .collect();
    shots.sort();
    let skip = k.map(|k| shots.len().saturating_sub(k)).unwrap_or(0);
    shots.into_iter().skip(skip).map(|(_, n)| n).collect()
}

/// Judge one task `repeats` times.
pub async fn judge(
    llm: &Llm,
    task_dir: &Path,
    question: &str,
    answer: Option<&str>,
    k: Option<usize>,
    repeats: u32,
) -> Result<Judgement, LlmError> {
    let shots = last_screenshots(task_dir, k);
    let pngs: Vec<Vec<u8>> = shots.iter().filter_map(|s| std::fs::read(task_dir.join(s)).ok()).collect();
    let refs: Vec<&[u8]> = pngs.iter().map(Vec::as_slice).collect();
    let text = format!(
        "Task: {question}\n\nThe agent's final answer: {}\n\n{} screenshot(s) of the last pages follow.",
        answer.unwrap_or("(the agent gave no answer)"),
        refs.len()
    );
    let msgs = [Message::text("system", JUDGE_PROMPT), Message::with_images("user", &text, &refs)];
    let mut verdicts = Vec::new();
    let mut replies = Vec::new();
    let mut usage = Usage::default();
    for _ in 0..repeats.max(1) {
        let c = llm.chat(&msgs, 0.0).await?;
        verdicts.push(parse_verdict(&c.text));
        replies.push(c.text);
        usage += c.usage;
    }
    let scores: Vec<f64> = verdicts.iter().map(|v| if *v == Verdict::Success { 1.0 } else { 0.0 }).collect();
    let (mean, std) = mean_std(&scores);
    Ok(Judgement { verdicts, replies, mean, std, screenshots: shots, usage })
}

/// fuzzy_match: does `answer` mean `reference`? Returns the verdict and the reply.
pub async fn fuzzy_match(
    llm: &Llm,
    question: &str,
    answer: &str,
    reference: &str,
) -> Result<(bool, String), LlmError> {
    let msgs = [
        Message::text(
            "system",
            "You compare an answer with a reference answer to the same question. Reply with one word: \
             YES if the answer states the same facts as the reference (wording, order and format may differ), \
             NO otherwise.",
        ),
        Message::text("user", &format!("Question: {question}\nReference: {reference}\nAnswer: {answer}")),
    ];
    let c = llm.chat(&msgs, 0.0).await?;
    let t = c.text.trim().to_uppercase();
    Ok((t.starts_with("YES") || (t.contains("YES") && !t.contains("NO")), c.text))
}

/// VisualWebArena's `eval_vqa` through the model: each image with `Q: {question} A:` (VWA asked
/// BLIP-2 the same prompt); passes when some reply contains `answer` (case-insensitive). Returns the
/// verdict and the replies.
pub async fn vqa(
    llm: &Llm,
    question: &str,
    answer: &str,
    images: &[Vec<u8>],
) -> Result<(bool, Vec<String>), LlmError> {
    let mut replies = Vec::with_capacity(images.len());
    for img in images {
        let msgs = [
            Message::text("system", "Answer the question about the image in a few words."),
            Message::with_images("user", &format!("Q: {question} A:"), &[img.as_slice()]),
        ];
        replies.push(llm.chat(&msgs, 0.0).await?.text);
    }
    let want = answer.to_lowercase();
    Ok((replies.iter().any(|r| r.to_lowercase().contains(&want)), replies))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        let cases = [
            ("The agent found it.\nSUCCESS", Verdict::Success),
            ("It did not finish.\nNOT SUCCESS", Verdict::NotSuccess),
            ("not success", Verdict::NotSuccess),
            ("Verdict: **SUCCESS**", Verdict::Success),
            ("Options are SUCCESS or NOT SUCCESS. I pick NOT SUCCESS", Verdict::NotSuccess),
            ("Options are SUCCESS or NOT SUCCESS. Final: SUCCESS", Verdict::Success),
            ("I cannot tell.", Verdict::Unparseable),
        ];
        for (reply, want) in cases {
            assert_eq!(parse_verdict(reply), want, "{reply:?}");
        }
    }

    #[test]
    fn spread() {
        assert_eq!(mean_std(&[1.0, 1.0, 1.0]), (1.0, 0.0));
        let (m, s) = mean_std(&[1.0, 0.0]);
        assert_eq!((m, s), (0.5, 0.5));
        assert_eq!(mean_std(&[]), (0.0, 0.0));
    }
}
