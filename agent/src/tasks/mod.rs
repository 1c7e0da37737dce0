//! Task files, sniffed from their content. Each benchmark ([`trajectory::Benchmark`]) has its room here:
//! its task reader and its objective (the benchmark's part of the prompt). This module holds what they
//! share ([`Task`], [`TaskError`]), the sniffing ([`load_with_sites`]) and the dispatch on the benchmark
//! ([`objective`], [`native_action_space`]), each an exhaustive `match`:
//! - WebVoyager: JSON Lines with `web_name`, `id`, `ques`, `web` (GAIA's web subset adds fields, which are
//!   kept). Errors name the file and line ([`webvoyager`]).
//! - WebArena / VisualWebArena: config JSON, one task per file (a directory of them, like WebArena's
//!   `config_files/`) or an array ([`webarena`]). Errors name the file, the task and the field.
//! - WebArena-Verified: a JSON array of tasks whose `eval` is a list of evaluators ([`verified`]).
//! - AssistantBench: JSON Lines with `id`, `task` and a gold `answer` ([`assistantbench`]).

use std::path::Path;

use serde::Deserialize;
use trajectory::Benchmark;

use crate::action::ActionSpace;

pub mod assistantbench;
pub mod helpers;
pub mod shop_api;
pub mod verified;
pub mod webarena;
pub mod webvoyager;

pub use webarena::{Sites, SitesError, TaskSetup};
pub use webvoyager::parse;

/// One task.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Task {
    /// Site name ("Allrecipes").
    pub web_name: String,
    /// Task id ("Allrecipes--3").
    pub id: String,
    /// The question (WebVoyager's `ques`, WebArena's `intent`, AssistantBench's `task`).
    pub question: String,
    /// Start URL (of the first tab, for a task that opens several; WebVoyager's `web`).
    pub start_url: String,
    /// The benchmark whose file the task was read from.
    #[serde(default)]
    pub benchmark: Benchmark,
    /// What a WebArena-format task sets up before its first navigation (empty for WebVoyager tasks).
    #[serde(skip)]
    pub setup: TaskSetup,
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
    #[error("{path}:{line}: {detail}")]
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

/// Read a WebVoyager task file (WebArena-format files need their sites: [`load_with_sites`]).
pub fn load(path: &Path) -> Result<Vec<Task>, TaskError> {
    load_with_sites(path, &Sites::default())
}

/// Read a task file or a directory of WebArena config files; the benchmark is sniffed ([`sniff`]).
/// `sites` resolves WebArena's `__SHOPPING__`-style placeholders and AssistantBench's start page.
pub fn load_with_sites(path: &Path, sites: &Sites) -> Result<Vec<Task>, TaskError> {
    let p = path.display().to_string();
    if path.is_dir() {
        return webarena::load_dir(path, sites);
    }
    let text = std::fs::read_to_string(path).map_err(|e| TaskError::Io { path: p.clone(), source: e })?;
    let base = path.parent().unwrap_or(Path::new("."));
    match sniff(&text, &p)? {
        (Benchmark::WebVoyager, _) => webvoyager::parse(&text, &p),
        (Benchmark::AssistantBench, _) => assistantbench::parse(&text, &p, sites),
        (Benchmark::WebArena, v) => webarena::from_value(v.unwrap_or_default(), &p, base, sites),
        (Benchmark::WebArenaVerified, v) => verified::parse(&v.unwrap_or_default(), &p, base, sites),
    }
}

/// Which benchmark a task file's text is (and its JSON, when the whole file is one document): a JSON
/// array, or one object with an `intent`, is WebArena's (WebArena-Verified's when its `eval`s are lists);
/// JSON Lines with `task` and no `ques` AssistantBench's; anything else is read as WebVoyager's.
pub fn sniff(text: &str, path: &str) -> Result<(Benchmark, Option<serde_json::Value>), TaskError> {
    if webarena::looks_like(text) {
        let v = webarena::json_text(text, path)?;
        let b = if verified::looks_like(&v) { Benchmark::WebArenaVerified } else { Benchmark::WebArena };
        return Ok((b, Some(v)));
    }
    if assistantbench::looks_like(text) {
        return Ok((Benchmark::AssistantBench, None));
    }
    Ok((Benchmark::WebVoyager, None))
}

/// The task as the model is given it: the question, with what the task's benchmark asks of the answer.
pub fn objective(task: &Task) -> std::borrow::Cow<'_, str> {
    match task.benchmark {
        Benchmark::WebVoyager | Benchmark::WebArena => std::borrow::Cow::Borrowed(&task.question),
        Benchmark::WebArenaVerified => verified::objective(task).into(),
        Benchmark::AssistantBench => assistantbench::objective(task).into(),
    }
}

/// The action space the benchmark's own harness gives its agents (`run` says so when another is used).
pub fn native_action_space(b: Benchmark) -> ActionSpace {
    match b {
        Benchmark::WebVoyager | Benchmark::AssistantBench => ActionSpace::WebVoyager,
        Benchmark::WebArena | Benchmark::WebArenaVerified => ActionSpace::WebArena,
    }
}

/// A task's site name when its file names none: its start URL's authority (`host` or `host:port`, as the
/// URL parser writes it), or `unknown`. The one reading every task format's reader shares.
pub(crate) fn site_name_of(url: &str) -> String {
    url::Url::parse(url)
        .ok()
        .filter(|u| u.has_host())
        .map(|u| u[url::Position::BeforeHost..url::Position::AfterPort].to_string())
        .unwrap_or_else(|| "unknown".to_string())
}

/// The non-blank lines of a JSON Lines task file, with their 1-based numbers (a byte-order mark dropped).
pub(crate) fn json_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim().trim_start_matches('\u{feff}')))
        .filter(|(_, l)| !l.is_empty())
}

/// A task id as task files write it: a non-empty text, or a number.
pub(crate) fn task_id(v: Option<serde_json::Value>) -> Option<String> {
    match v {
        Some(serde_json::Value::String(s)) if !s.trim().is_empty() => Some(s),
        Some(serde_json::Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}

/// Keep the tasks whose id or site matches `pattern`.
pub fn filter(tasks: Vec<Task>, pattern: &str) -> Result<Vec<Task>, TaskError> {
    let re = regex::Regex::new(pattern).map_err(|e| TaskError::Filter(pattern.to_string(), e.to_string()))?;
    Ok(tasks.into_iter().filter(|t| re.is_match(&t.id) || re.is_match(&t.web_name)).collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_site_name_is_the_start_urls_authority() {
        let rows = [
            ("https://www.allrecipes.com/recipes/", "www.allrecipes.com"),
            ("http://127.0.0.1:7770/admin", "127.0.0.1:7770"),
            ("https://shop.test", "shop.test"),
            ("https://Shop.Test:443/x", "shop.test"),
            ("http://[::1]:8080/", "[::1]:8080"),
            ("not a url", "unknown"),
            ("data:text/html,hi", "unknown"),
        ];
        for (url, want) in rows {
            assert_eq!(super::site_name_of(url), want, "{url}");
        }
    }
}
