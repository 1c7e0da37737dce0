//! AssistantBench (Yoran et al. 2024; `AssistantBench/AssistantBench` on Hugging Face,
//! `assistant_bench_v1.0_dev.jsonl`): JSON Lines, one task per line with `id`, `task`, and in the dev set
//! the gold `answer` with `gold_url` and `explanation` (`set`, `difficulty`, `metadata` are kept out).
//! Tasks name no start page: like their harness (browsergym-assistantbench), each starts on a search
//! engine, `--site SEARCH=URL` (default [`DEFAULT_START`]). Every task is of the site `AssistantBench`:
//! the open web, one site union.
//!
//! The benchmark's room in the agent: the reader ([`parse`], [`looks_like`]) and the objective
//! ([`objective`]: the question, and the answer form their scorer reads). `evaluator::assistantbench`
//! scores the answer.

use serde::Deserialize;
use serde_json::Value;

use super::{Sites, Task, TaskError, TaskSetup};

/// Where a task starts when `--site SEARCH=URL` is not given: their harness's start page.
pub const DEFAULT_START: &str = "https://www.google.com/";

/// The site name of every task.
pub const SITE: &str = "AssistantBench";

/// What the model is told about its answer's form (their scorer reads numbers, texts, lines and JSON).
pub const ANSWER_FORM: &str = "Your final answer is scored against a gold answer: give the answer alone, with no \
explanation. A number as plain digits (no units or currency signs), a name or short phrase as it is, several items \
one per line, several named values as a JSON object. If it cannot be found, give an empty answer.";

/// The task as the model is given it.
pub fn objective(task: &Task) -> String {
    format!("{}\n{ANSWER_FORM}", task.question)
}

#[derive(Deserialize)]
struct RawTask {
    id: Option<Value>,
    task: Option<String>,
    #[serde(default)]
    answer: Option<Value>,
    #[serde(default)]
    gold_url: Option<String>,
    #[serde(default)]
    explanation: Option<String>,
}

/// Whether the text is an AssistantBench file: JSON Lines whose first line has a `task` and no `ques`.
pub(crate) fn looks_like(text: &str) -> bool {
    let first = text.lines().map(|l| l.trim().trim_start_matches('\u{feff}')).find(|l| !l.is_empty());
    first.and_then(|l| serde_json::from_str::<Value>(l).ok()).is_some_and(|v| {
        v.get("task").is_some_and(Value::is_string) && v.get("ques").is_none() && v.get("id").is_some()
    })
}

/// Parse task lines; `path` only names the source in errors.
pub fn parse(text: &str, path: &str, sites: &Sites) -> Result<Vec<Task>, TaskError> {
    let start = sites.pairs().get("SEARCH").cloned().unwrap_or_else(|| DEFAULT_START.to_string());
    if !(start.starts_with("http://") || start.starts_with("https://")) {
        return Err(TaskError::Bad {
            path: path.to_string(),
            line: 1,
            detail: format!("--site SEARCH={start}: the start page must be an http(s) URL"),
        });
    }
    let mut out: Vec<Task> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (line_no, l) in super::json_lines(text) {
        let bad = |detail: String| TaskError::Bad { path: path.to_string(), line: line_no, detail };
        let raw: RawTask = serde_json::from_str(l).map_err(|e| bad(e.to_string()))?;
        let id = super::task_id(raw.id).ok_or_else(|| bad("missing or empty \"id\"".into()))?;
        let ques = raw.task.filter(|q| !q.trim().is_empty()).ok_or_else(|| bad("missing \"task\"".into()))?;
        // The test set's answers are withheld (null or absent): such a task runs, and is scored by the judge
        // alone.
        let answer = match raw.answer {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.trim().is_empty() => None,
            Some(Value::String(s)) => Some(s),
            Some(v @ (Value::Number(_) | Value::Bool(_))) => Some(v.to_string()),
            Some(other) => return Err(bad(format!("\"answer\" is not a text: {other}"))),
        };
        if !seen.insert(id.clone()) {
            return Err(TaskError::Duplicate { path: path.to_string(), line: line_no, id });
        }
        let eval = answer.map(|answer| trajectory::AssistantBenchEval {
            answer,
            gold_url: raw.gold_url.filter(|u| !u.trim().is_empty()),
            explanation: raw.explanation.filter(|e| !e.trim().is_empty()),
        });
        out.push(Task {
            web_name: SITE.into(),
            id,
            question: ques,
            start_url: start.clone(),
            benchmark: trajectory::Benchmark::AssistantBench,
            setup: TaskSetup {
                start_urls: vec![start.clone()],
                reference_answers: eval
                    .as_ref()
                    .map(trajectory::AssistantBenchEval::answer_texts)
                    .unwrap_or_default(),
                eval: eval.map(trajectory::TaskEvalSpec::AssistantBench),
                ..TaskSetup::default()
            },
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEV: &str = "{\"id\": \"55f4258484c5b398956133128a50462a767651d7\", \"set\": \"dev\", \"task\": \"What is the closest eatery to Harkness Memorial State Park that is still open at 11pm on Wednesdays?\", \"answer\": \"McDonald's\", \"gold_url\": \"https://www.google.com/maps/\", \"explanation\": \"Search the area.\", \"metadata\": {}, \"difficulty\": \"Medium\"}\n\n{\"id\": \"t2\", \"set\": \"test\", \"task\": \"How many?\", \"answer\": null}\n";

    #[test]
    fn their_lines_read_with_the_search_page_as_start() {
        assert!(looks_like(DEV));
        assert!(!looks_like("{\"id\": \"a\", \"ques\": \"q\", \"web\": \"https://a\", \"task\": \"x\"}"));
        let t = parse(DEV, "ab.jsonl", &Sites::default()).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!((t[0].start_url.as_str(), t[0].web_name.as_str()), (DEFAULT_START, SITE));
        assert_eq!(t[0].benchmark, trajectory::Benchmark::AssistantBench);
        let Some(trajectory::TaskEvalSpec::AssistantBench(e)) = &t[0].setup.eval else { panic!() };
        assert_eq!(
            (e.answer.as_str(), e.gold_url.as_deref()),
            ("McDonald's", Some("https://www.google.com/maps/"))
        );
        assert_eq!(t[0].setup.reference_answers, ["McDonald's"]);
        assert!(t[1].setup.eval.is_none(), "a withheld answer is no spec");
        assert!(objective(&t[1]).starts_with("How many?\n"));
        let local = Sites::from_pairs(&["SEARCH=http://127.0.0.1:9/search"]).unwrap();
        assert_eq!(parse(DEV, "ab.jsonl", &local).unwrap()[0].start_url, "http://127.0.0.1:9/search");
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        for (text, needle) in [
            ("{\"id\": \"a\", \"task\": \"q\"}\nnot json\n", "ab.jsonl:2:"),
            ("{\"task\": \"q\"}\n", "missing or empty \"id\""),
            ("{\"id\": \"a\", \"task\": \" \"}\n", "missing \"task\""),
            ("{\"id\": \"a\", \"task\": \"q\", \"answer\": [1]}\n", "not a text"),
            ("{\"id\": \"a\", \"task\": \"q\"}\n{\"id\": \"a\", \"task\": \"q\"}\n", "appears twice"),
        ] {
            let e = parse(text, "ab.jsonl", &Sites::default()).unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
        }
        let ftp = Sites::from_pairs(&["SEARCH=ftp://x"]);
        if let Ok(ftp) = ftp {
            assert!(parse(DEV, "ab.jsonl", &ftp).unwrap_err().to_string().contains("http(s)"));
        }
    }
}
