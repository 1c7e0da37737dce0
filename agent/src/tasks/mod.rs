//! Task files, sniffed from their content; each benchmark's format is a module of its own, and this one
//! holds what they share ([`Task`], [`TaskError`]) and the sniffing ([`load_with_sites`]):
//! - WebVoyager: JSON Lines with `web_name`, `id`, `ques`, `web` (GAIA's web subset adds fields, which are
//!   kept). Errors name the file and line ([`webvoyager`]).
//! - WebArena / VisualWebArena: config JSON, one task per file (a directory of them, like WebArena's
//!   `config_files/`) or an array ([`webarena`]). Errors name the file, the task and the field.
//! - WebArena-Verified: a JSON array of tasks whose `eval` is a list of evaluators ([`verified`]).

use std::path::Path;

use serde::Deserialize;

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
    /// The question.
    pub ques: String,
    /// Start URL (of the first tab, for a task that opens several).
    pub web: String,
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
    webvoyager::parse(&text, &p)
}

/// Keep the tasks whose id or site matches `pattern`.
pub fn filter(tasks: Vec<Task>, pattern: &str) -> Result<Vec<Task>, TaskError> {
    let re = regex::Regex::new(pattern).map_err(|e| TaskError::Filter(pattern.to_string(), e.to_string()))?;
    Ok(tasks.into_iter().filter(|t| re.is_match(&t.id) || re.is_match(&t.web_name)).collect())
}
