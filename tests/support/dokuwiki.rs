//! DokuWiki for the suite: `demo::dokuwiki` (shared with `cargo xtask bench coverage`), and what the tests
//! that run an agent on it share: the arguments that reach it, and a one-task WebArena file for it.

use std::path::{Path, PathBuf};

pub(crate) use demo::dokuwiki::{DokuWiki, WIKI_PASSWORD, WIKI_USER};

/// The arguments that let a recording reach the wiki as `https://wiki.test/`: its CA and its address.
pub(crate) fn reach(wiki: &DokuWiki) -> Vec<String> {
    vec![
        "--upstream-ca".to_string(),
        wiki.ca_file.display().to_string(),
        "--resolve".to_string(),
        format!("wiki.test:443:{}", wiki.addr),
    ]
}

/// A one-task WebArena file in `dir` (`tasks.json`, task id 1): start at the wiki's start page with
/// `intent`, scored by its answer including `must_include`.
pub(crate) fn wiki_task(dir: &Path, intent: &str, must_include: &str) -> PathBuf {
    let tasks = dir.join("tasks.json");
    let task = serde_json::json!([{
        "sites": ["wiki"], "task_id": 1, "require_login": false, "storage_state": null,
        "start_url": "https://wiki.test/doku.php?id=start", "geolocation": null,
        "intent": intent, "require_reset": false,
        "eval": {"eval_types": ["string_match"], "reference_answers": {"must_include": [must_include]},
                 "reference_url": "", "program_html": []},
    }]);
    std::fs::write(&tasks, task.to_string()).expect("the task file is written");
    tasks
}
