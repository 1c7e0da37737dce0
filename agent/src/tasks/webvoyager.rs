//! WebVoyager's task files (and GAIA's web subset, and the demo's): JSON Lines, one task per line with
//! `web_name`, `id`, `ques`, `web`. Extra fields are ignored; a demo-style `eval` (`{"must_include":
//! [...]}`) is the task's spec ([`trajectory::TaskEvalSpec::WebVoyager`], carried in its trajectory), and
//! it or a `reference_answer` gives the task's reference answers. WebVoyager's own answers file
//! (`reference_answer.json`) is read by the evaluator (`eval --reference-file`). The objective is the
//! question as it is.

use serde::Deserialize;

use super::{Task, TaskError, TaskSetup};

#[derive(Deserialize)]
struct RawTask {
    #[serde(default)]
    web_name: Option<String>,
    id: Option<serde_json::Value>,
    ques: Option<String>,
    web: Option<String>,
    /// A demo-style check (`{"must_include": [...]}`): its strings are the task's reference answers.
    #[serde(default)]
    eval: Option<trajectory::WebVoyagerEval>,
    /// A reference answer given with the task.
    #[serde(default)]
    reference_answer: Option<String>,
}

/// Parse task lines; `path` only names the source in errors. Blank lines are skipped. Tasks without
/// `web_name` (GAIA) get the start URL's host.
pub fn parse(text: &str, path: &str) -> Result<Vec<Task>, TaskError> {
    let mut out: Vec<Task> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (line_no, l) in super::json_lines(text) {
        let bad = |detail: String| TaskError::Bad {
            path: path.to_string(),
            line: line_no,
            detail: format!("{detail} (each line must be a JSON object with web_name, id, ques, web)"),
        };
        let raw: RawTask = serde_json::from_str(l).map_err(|e| bad(e.to_string()))?;
        let id = super::task_id(raw.id).ok_or_else(|| bad("missing or empty \"id\"".into()))?;
        let ques = raw.ques.filter(|q| !q.trim().is_empty()).ok_or_else(|| bad("missing \"ques\"".into()))?;
        let web = raw
            .web
            .filter(|w| w.starts_with("http://") || w.starts_with("https://"))
            .ok_or_else(|| bad("missing \"web\" or not an http(s) URL".into()))?;
        let web_name =
            raw.web_name.filter(|w| !w.trim().is_empty()).unwrap_or_else(|| super::site_name_of(&web));
        if !seen.insert(id.clone()) {
            return Err(TaskError::Duplicate { path: path.to_string(), line: line_no, id });
        }
        let eval = raw.eval.filter(|e| !e.is_empty());
        let mut reference_answers =
            eval.as_ref().map(trajectory::WebVoyagerEval::answer_texts).unwrap_or_default();
        reference_answers.extend(raw.reference_answer);
        out.push(Task {
            web_name,
            id,
            question: ques,
            start_url: web,
            benchmark: trajectory::Benchmark::WebVoyager,
            setup: TaskSetup {
                reference_answers,
                eval: eval.map(trajectory::TaskEvalSpec::WebVoyager),
                ..TaskSetup::default()
            },
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::filter;

    #[test]
    fn webvoyager_and_gaia_lines() {
        let text = "\u{feff}{\"web_name\": \"Allrecipes\", \"id\": \"Allrecipes--0\", \"ques\": \"Find a lasagna.\", \"web\": \"https://www.allrecipes.com/\"}\n\n{\"task_id\": \"e1\", \"Level\": 1, \"id\": \"level1-0\", \"web\": \"https://www.google.com/\", \"ques\": \"How far?\"}\n";
        let t = parse(text, "t.jsonl").unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].id, "Allrecipes--0");
        assert_eq!(t[1].web_name, "www.google.com");
        assert_eq!(
            (t[0].question.as_str(), t[0].start_url.as_str()),
            ("Find a lasagna.", "https://www.allrecipes.com/")
        );
        assert_eq!(filter(t.clone(), "^Allrecipes").unwrap().len(), 1);
        assert_eq!(filter(t, "google").unwrap().len(), 1);
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        for (text, needle) in [
            ("{\"id\": \"a\", \"ques\": \"q\", \"web\": \"https://a\"}\nnot json\n", "t.jsonl:2:"),
            ("{\"ques\": \"q\", \"web\": \"https://a\"}\n", "missing or empty \"id\""),
            ("{\"id\": \"a\", \"web\": \"https://a\"}\n", "missing \"ques\""),
            ("{\"id\": \"a\", \"ques\": \"q\", \"web\": \"ftp://a\"}\n", "http(s) URL"),
            ("{\"id\": \"a\", \"ques\": \"q\", \"web\": \"https://a\"}\n{\"id\": \"a\", \"ques\": \"q\", \"web\": \"https://a\"}\n", "appears twice"),
        ] {
            let e = parse(text, "t.jsonl").unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
        }
        assert!(filter(vec![], "(").is_err());
    }
}
