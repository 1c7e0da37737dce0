//! A task's files as the run goes: its trajectory, the model's messages, its screenshots (each written
//! whole, through `trajectory::run_dir`).

use trajectory::llm::Message;
use trajectory::{TaskDir, Trajectory};

pub(super) struct Files {
    pub(super) dir: TaskDir,
    pub(super) system: &'static str,
    /// The conversation as the model saw it (`interact_messages.json`).
    pub(super) transcript: Vec<Message>,
    /// Each step's prompt and reply (`messages.json`).
    pub(super) messages: Vec<serde_json::Value>,
}

impl Files {
    pub(super) fn save(&self, t: &Trajectory) {
        let mut errs = Vec::new();
        if let Err(e) = self.dir.write_trajectory(t) {
            errs.push(e.to_string());
        }
        let msgs = serde_json::json!({ "system": self.system, "policy": t.policy, "steps": self.messages });
        for (name, v) in [
            ("messages.json", msgs),
            ("interact_messages.json", serde_json::to_value(&self.transcript).unwrap_or_default()),
        ] {
            if let Err(e) = self.dir.write_json(name, &v) {
                errs.push(e.to_string());
            }
        }
        for e in errs {
            tracing::error!("task {}: cannot write its files: {e}", t.task_id);
        }
    }

    pub(super) fn png(&self, name: &str, png: &[u8]) -> Result<(), trajectory::RunDirError> {
        self.dir.write_file(name, png)
    }
}
