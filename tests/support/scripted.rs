//! A scripted task run, the setup many tests repeat: a one-task file, a recorded-trajectory script of
//! replies for it, and the `webfreeze run` arguments that play the script (issue 30's builder; tests move
//! to it as they are touched).

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

    /// `run --tasks T --mode MODE --policy trajectory:SCRIPT --out OUT`; add the rest with `extend`.
    pub(crate) fn run_args(&self, mode: &str, out: &Path) -> Vec<String> {
        strs(&[
            "run",
            "--tasks",
            self.tasks.to_str().unwrap(),
            "--mode",
            mode,
            "--policy",
            &format!("trajectory:{}", self.script.display()),
            "--out",
            out.to_str().unwrap(),
        ])
    }
}
