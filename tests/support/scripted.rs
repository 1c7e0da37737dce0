//! The setup many tests repeat for `webfreeze run`: its arguments ([`RunArgs`]: the task file, the mode,
//! the output directory, then what the test is about) and a scripted task ([`Scripted`]: a one-task file
//! and a recorded-trajectory script of replies for it).

use std::path::{Path, PathBuf};

use super::strs;

/// A task file holding `task` (a WebVoyager task as JSON) and a script of `replies` for it, in `home`.
pub(crate) struct Scripted {
    /// The task file.
    pub tasks: PathBuf,
    /// The replies, as `--policy trajectory:` reads them.
    pub script: PathBuf,
}

impl Scripted {
    pub(crate) fn new(home: &Path, task: &str, replies: &[&str]) -> Scripted {
        let tasks = home.join("tasks.jsonl");
        std::fs::write(&tasks, task).unwrap();
        let script = home.join("script");
        let task = agent::tasks::load(&tasks).unwrap().remove(0);
        agent::policy::write_script(&script, &[(task, replies.iter().map(|s| s.to_string()).collect())])
            .unwrap();
        Scripted { tasks, script }
    }

    /// `run --tasks T --mode MODE --out OUT --policy trajectory:SCRIPT`; add the rest with `extend`.
    pub(crate) fn run_args(&self, mode: &str, out: &Path) -> Vec<String> {
        RunArgs::new(&self.tasks, mode, out)
            .opt("--policy", format!("trajectory:{}", self.script.display()))
            .build()
    }
}

/// `webfreeze run` arguments: `run --tasks T --mode MODE --out OUT`, then the options a test adds.
#[derive(Debug, Clone)]
pub(crate) struct RunArgs(Vec<String>);

impl RunArgs {
    pub(crate) fn new(tasks: &Path, mode: &str, out: &Path) -> RunArgs {
        RunArgs(strs(&[
            "run",
            "--tasks",
            tasks.to_str().unwrap(),
            "--mode",
            mode,
            "--out",
            out.to_str().unwrap(),
        ]))
    }

    /// The model at `api_base` (a test's fake or local server), which needs no key.
    pub(crate) fn model(self, api_base: &str) -> RunArgs {
        self.opt("--api-base", api_base).opt("--api-key-env", "NO_SUCH_KEY_VAR")
    }

    /// `--settle-ms MS`.
    pub(crate) fn settle_ms(self, ms: u32) -> RunArgs {
        self.opt("--settle-ms", ms.to_string())
    }

    /// `--task-filter RE`.
    pub(crate) fn filter(self, re: &str) -> RunArgs {
        self.opt("--task-filter", re)
    }

    /// One option and its value.
    pub(crate) fn opt(mut self, flag: &str, value: impl Into<String>) -> RunArgs {
        self.0.push(flag.to_string());
        self.0.push(value.into());
        self
    }

    /// Arguments as they are (flags, `DemoSites::reach`).
    pub(crate) fn args<S: AsRef<str>>(mut self, more: impl IntoIterator<Item = S>) -> RunArgs {
        self.0.extend(more.into_iter().map(|s| s.as_ref().to_string()));
        self
    }

    pub(crate) fn build(self) -> Vec<String> {
        self.0
    }
}
