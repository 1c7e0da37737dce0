//! Task files, sniffed from their content:
//! - WebVoyager: JSON Lines with `web_name`, `id`, `ques`, `web` (GAIA's web subset adds fields, which are
//!   kept). Errors name the file and line.
//! - WebArena / VisualWebArena: config JSON, one task per file (a directory of them, like WebArena's
//!   `config_files/`) or an array ([`webarena`]). Errors name the file, the task and the field.
//! - WebArena-Verified: a JSON array of tasks whose `eval` is a list of evaluators ([`verified`]).

use std::path::Path;

use serde::Deserialize;

pub mod helpers;
pub mod shop_api;
pub mod verified;
pub mod webarena;

pub use webarena::{Sites, SitesError, TaskSetup};

/// One task.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Task {
    /// Site name ("Allrecipes").
    pub web_name: String,
    /// Task id ("Allrecipes--3").
    pub id: String,
    /// The question.
    pub ques: String,
    /// Start URL (of the first tab, for a task that opens several).
    pub web: String,
    /// What a WebArena-format task sets up before its first navigation (empty for WebVoyager tasks).
    #[serde(skip)]
    pub setup: TaskSetup,
}

#[derive(Deserialize)]
struct RawTask {
    #[serde(default)]
    web_name: Option<String>,
    id: Option<serde_json::Value>,
    ques: Option<String>,
    web: Option<String>,
    /// A demo-style check (`{"must_include": [...]}`): its strings are the task's reference answers.
    #[serde(default)]
    eval: Option<serde_json::Value>,
    /// A reference answer given with the task.
    #[serde(default)]
    reference_answer: Option<String>,
}

/// A task file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// The file cannot be read.
    #[error("cannot read task file {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A line is not a task.
    #[error("{path}:{line}: {detail} (each line must be a JSON object with web_name, id, ques, web)")]
    Bad {
        /// The file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        detail: String,
    },
    /// Two tasks share an id.
    #[error("{path}:{line}: task id {id:?} appears twice; ids name run directories and snapshots")]
    Duplicate {
        /// The file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// The id.
        id: String,
    },
    /// A WebArena-format task with a bad field.
    #[error("{path}: task {task}: {field}: {detail}")]
    Field {
        /// The file.
        path: String,
        /// The task id (or its index in the file when it has none).
        task: String,
        /// The field.
        field: String,
        /// What is wrong.
        detail: String,
    },
    /// A --task-filter that is not a regular expression.
    #[error("--task-filter {0:?} is not a valid regular expression: {1}")]
    Filter(String, String),
}

/// Parse task lines; `path` only names the source in errors. Blank lines are skipped. Tasks without
/// `web_name` (GAIA) get the start URL's host.
pub fn parse(text: &str, path: &str) -> Result<Vec<Task>, TaskError> {
    let mut out: Vec<Task> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let l = line.trim().trim_start_matches('\u{feff}');
        if l.is_empty() {
            continue;
        }
        let bad = |detail: String| TaskError::Bad { path: path.to_string(), line: line_no, detail };
        let raw: RawTask = serde_json::from_str(l).map_err(|e| bad(e.to_string()))?;
        let id = match raw.id {
            Some(serde_json::Value::String(s)) if !s.trim().is_empty() => s,
            Some(serde_json::Value::Number(n)) => n.to_string(),
            _ => return Err(bad("missing or empty \"id\"".into())),
        };
        let ques = raw.ques.filter(|q| !q.trim().is_empty()).ok_or_else(|| bad("missing \"ques\"".into()))?;
        let web = raw
            .web
            .filter(|w| w.starts_with("http://") || w.starts_with("https://"))
            .ok_or_else(|| bad("missing \"web\" or not an http(s) URL".into()))?;
        let web_name = raw.web_name.filter(|w| !w.trim().is_empty()).unwrap_or_else(|| {
            web.split("//").nth(1).and_then(|r| r.split('/').next()).unwrap_or("unknown").to_string()
        });
        if !seen.insert(id.clone()) {
            return Err(TaskError::Duplicate { path: path.to_string(), line: line_no, id });
        }
        let mut reference_answers = raw.eval.as_ref().map(webarena::answers_of).unwrap_or_default();
        reference_answers.extend(raw.reference_answer);
        out.push(Task {
            web_name,
            id,
            ques,
            web,
            setup: TaskSetup { reference_answers, ..TaskSetup::default() },
        });
    }
    Ok(out)
}

/// Read a WebVoyager task file (WebArena-format files need their sites: [`load_with_sites`]).
pub fn load(path: &Path) -> Result<Vec<Task>, TaskError> {
    load_with_sites(path, &Sites::default())
}

/// Read a task file or a directory of WebArena config files; the format is sniffed: a JSON array, or one
/// JSON object with an `intent`, is WebArena's; anything else is read as WebVoyager JSON Lines. `sites`
/// resolves WebArena's `__SHOPPING__`-style placeholders.
pub fn load_with_sites(path: &Path, sites: &Sites) -> Result<Vec<Task>, TaskError> {
    let p = path.display().to_string();
    if path.is_dir() {
        return webarena::load_dir(path, sites);
    }
    let text = std::fs::read_to_string(path).map_err(|e| TaskError::Io { path: p.clone(), source: e })?;
    if webarena::looks_like(&text) {
        // Read once; WebArena-Verified's files are arrays too, told apart by their eval lists.
        let v = webarena::json_text(&text, &p)?;
        let base = path.parent().unwrap_or(Path::new("."));
        if verified::looks_like(&v) {
            return verified::parse(&v, &p, base, sites);
        }
        return webarena::from_value(v, &p, base, sites);
    }
    parse(&text, &p)
}

/// Keep the tasks whose id or site matches `pattern`.
pub fn filter(tasks: Vec<Task>, pattern: &str) -> Result<Vec<Task>, TaskError> {
    let re = regex::Regex::new(pattern).map_err(|e| TaskError::Filter(pattern.to_string(), e.to_string()))?;
    Ok(tasks.into_iter().filter(|t| re.is_match(&t.id) || re.is_match(&t.web_name)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webvoyager_and_gaia_lines() {
        let text = "\u{feff}{\"web_name\": \"Allrecipes\", \"id\": \"Allrecipes--0\", \"ques\": \"Find a lasagna.\", \"web\": \"https://www.allrecipes.com/\"}\n\n{\"task_id\": \"e1\", \"Level\": 1, \"id\": \"level1-0\", \"web\": \"https://www.google.com/\", \"ques\": \"How far?\"}\n";
        let t = parse(text, "t.jsonl").unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].id, "Allrecipes--0");
        assert_eq!(t[1].web_name, "www.google.com");
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
