//! A run directory, read and written only here. Every file goes down atomically (temp file + rename in
//! the same directory), so a crash leaves the previous version or the new one, never half a file.
//!
//! Layout of `<run>/`:
//! - `run.json`: [`RunFile`]: how the run was made and one [`TaskStatus`] per task, rewritten as tasks
//!   start and end;
//! - `<task-id>/` ([`TaskDir`]; ids outside `[A-Za-z0-9._-]` are mapped, see [`task_dir_name`]):
//!   - `trajectory.json`: [`Trajectory`], written after every step (a crash loses at most the step in
//!     flight) and marked finished at the end; a rerun skips finished tasks;
//!   - `step-NN.png`: the labelled screenshot each step's decision was made on;
//!   - `wire.jsonl.zst`: replay runs: the requests the task's browser made and what answered them
//!     ([`crate::wire`]), written as the run goes; the network checks score the task on it;
//!   - `messages.json`: the system prompt and, per step, what was sent and the model's raw reply, so the
//!     run can be re-executed without the model (`trajectory:RUN`);
//!   - WebVoyager's own layout, so its evaluation scripts read our runs: `interact_messages.json` (the
//!     conversation, images replaced by file names) and `screenshot<N>.png` (1-based copies).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::settings::RunSettings;
use crate::types::{Outcome, RunMode, Trajectory, TRAJECTORY_VERSION};

/// Format version of `run.json`.
pub const RUN_FILE_VERSION: u32 = 1;

/// Errors reading or writing a run directory.
#[derive(Debug, thiserror::Error)]
pub enum RunDirError {
    /// I/O.
    #[error("{path}: {source}")]
    Io {
        /// File.
        path: String,
        /// Error.
        #[source]
        source: std::io::Error,
    },
    /// A file that is not what it should be.
    #[error("{path}: not a webfreeze {what}: {detail}")]
    Bad {
        /// File.
        path: String,
        /// trajectory / run file.
        what: &'static str,
        /// Why.
        detail: String,
    },
    /// No `run.json`.
    #[error("{0} is not a webfreeze run (no run.json)")]
    NotARun(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RunDirError + '_ {
    move |source| RunDirError::Io { path: path.display().to_string(), source }
}

/// Write `bytes` to `path` atomically: a temp file beside it, then a rename over it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), RunDirError> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes).map_err(io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io(path))
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), RunDirError> {
    std::fs::create_dir_all(to).map_err(io(to))?;
    for e in std::fs::read_dir(from).map_err(io(from))? {
        let e = e.map_err(io(from))?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type().map_err(io(&src))?.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            write_atomic(&dst, &std::fs::read(&src).map_err(io(&src))?)?;
        }
    }
    Ok(())
}

fn read_json<T: serde::de::DeserializeOwned>(
    path: &Path,
    what: &'static str,
) -> Result<Option<(T, u32)>, RunDirError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path)(e)),
    };
    let bad = |detail: String| RunDirError::Bad { path: path.display().to_string(), what, detail };
    #[derive(Deserialize)]
    struct Version {
        #[serde(default)]
        v: u32,
    }
    let v: Version = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
    let t: T = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
    Ok(Some((t, v.v)))
}

fn to_json<T: Serialize>(path: &Path, what: &'static str, t: &T) -> Result<Vec<u8>, RunDirError> {
    serde_json::to_vec_pretty(t).map_err(|e| RunDirError::Bad {
        path: path.display().to_string(),
        what,
        detail: e.to_string(),
    })
}

/// Where a task stands in `run.json`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Not started yet.
    #[default]
    Pending,
    /// Started; a rerun redoes it.
    Running,
    /// The agent answered.
    Answered,
    /// Ran out of steps.
    MaxSteps,
    /// Browser, page, proxy or model failure.
    Error,
    /// Was pending or running when the run was stopped (Ctrl-C).
    Interrupted,
    /// Stopped by the per-task wall-clock limit.
    Timeout,
    /// The site walled, denied or rate-limited the browser (`run --retry-blocked` redoes it).
    Blocked,
}

impl TaskState {
    /// True once the task has ended (answered, out of steps, failed, timed out): a rerun skips it.
    pub fn finished(self) -> bool {
        matches!(
            self,
            TaskState::Answered
                | TaskState::MaxSteps
                | TaskState::Error
                | TaskState::Timeout
                | TaskState::Blocked
        )
    }

    /// The name used in files and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Pending => "pending",
            TaskState::Running => "running",
            TaskState::Answered => "answered",
            TaskState::MaxSteps => "max_steps",
            TaskState::Error => "error",
            TaskState::Interrupted => "interrupted",
            TaskState::Timeout => "timeout",
            TaskState::Blocked => "blocked",
        }
    }
}

impl From<Outcome> for TaskState {
    fn from(o: Outcome) -> Self {
        match o {
            Outcome::Running => TaskState::Running,
            Outcome::Answered => TaskState::Answered,
            Outcome::MaxSteps => TaskState::MaxSteps,
            Outcome::Error => TaskState::Error,
            Outcome::Timeout => TaskState::Timeout,
            Outcome::Blocked => TaskState::Blocked,
        }
    }
}

/// One task's line in `run.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskStatus {
    /// Site.
    pub web_name: String,
    /// Where it stands.
    pub status: TaskState,
    /// Steps taken.
    #[serde(default)]
    pub steps: usize,
    /// Final answer.
    #[serde(default)]
    pub answer: Option<String>,
    /// Error.
    #[serde(default)]
    pub error: Option<String>,
    /// Duration.
    #[serde(default)]
    pub duration_ms: u64,
}

impl TaskStatus {
    /// A task not started yet.
    pub fn pending(web_name: &str) -> Self {
        Self { web_name: web_name.to_string(), ..Default::default() }
    }

    /// The line for a trajectory as it stands.
    pub fn of(t: &Trajectory) -> Self {
        Self {
            web_name: t.web_name.clone(),
            status: t.outcome.into(),
            steps: t.steps.len(),
            answer: t.answer.clone(),
            error: t.error.clone(),
            duration_ms: t.duration_ms,
        }
    }
}

/// `run.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunFile {
    /// Format version.
    pub v: u32,
    /// webfreeze version.
    pub webfreeze: String,
    /// Where the pages came from.
    pub mode: RunMode,
    /// `llm:MODEL`, `trajectory:RUN` or `script`.
    pub policy: String,
    /// Task file.
    pub tasks_file: String,
    /// Snapshots written (record) or read (replay): `<name>/<task-id>`.
    #[serde(default)]
    pub snapshots: Option<String>,
    /// Browser binary.
    #[serde(default)]
    pub chrome: String,
    /// What `<chrome> --version` printed.
    #[serde(default)]
    pub chrome_version: String,
    /// Settings that shape the trajectories (the `config` object; absent in the oldest runs).
    #[serde(default, rename = "config")]
    pub settings: RunSettings,
    /// Start of the latest invocation (ms since epoch).
    pub started_ms: i64,
    /// End of the latest invocation.
    #[serde(default)]
    pub finished_ms: Option<i64>,
    /// Per task, by id.
    #[serde(default)]
    pub tasks: BTreeMap<String, TaskStatus>,
    /// Set when this run is one shard of a larger task list (`webfreeze run --shard I/N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
}

/// Which part of which task list a shard run holds: what `webfreeze merge` checks shards against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// 0-based shard index (`I` of `--shard I/N`).
    pub index: u32,
    /// Number of shards (`N`).
    pub count: u32,
    /// Tasks in the whole list (all shards together).
    pub tasks_total: usize,
    /// BLAKE3 (hex) of the whole list's task ids, sorted and newline-joined: shards of one list agree.
    pub task_set: String,
}

impl RunFile {
    /// The run file of hand-written replies ([`RunMode::Script`]).
    pub fn script(tasks_file: &str) -> Self {
        Self {
            v: RUN_FILE_VERSION,
            webfreeze: env!("CARGO_PKG_VERSION").into(),
            mode: RunMode::Script,
            policy: "script".into(),
            tasks_file: tasks_file.into(),
            ..Default::default()
        }
    }
}

/// Task ids become directory names: anything but `[A-Za-z0-9._-]` becomes `_`.
pub fn task_dir_name(id: &str) -> String {
    let s: String =
        id.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect();
    if s.is_empty() || s.starts_with('.') {
        format!("_{s}")
    } else {
        s
    }
}

/// A run directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunDir {
    root: PathBuf,
}

impl RunDir {
    /// The run at `root` (nothing is read or created yet).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// Write one file of the run, by its path inside the run directory, atomically, creating its
    /// directories (a bundle's run files unpacked). A path that is absolute or climbs out of the run
    /// (`..`) is refused.
    pub fn write_file(&self, rel: &str, bytes: &[u8]) -> Result<(), RunDirError> {
        let inside = Path::new(rel).components().all(|c| matches!(c, std::path::Component::Normal(_)));
        if !inside || rel.is_empty() {
            return Err(RunDirError::Bad {
                path: rel.to_string(),
                what: "run directory path",
                detail: "not a path inside the run directory".into(),
            });
        }
        let to = self.root.join(rel);
        if let Some(p) = to.parent() {
            std::fs::create_dir_all(p).map_err(io(p))?;
        }
        write_atomic(&to, bytes)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Create the directory if needed.
    pub fn create(&self) -> Result<(), RunDirError> {
        std::fs::create_dir_all(&self.root).map_err(io(&self.root))
    }

    /// `run.json`'s path.
    pub fn run_file_path(&self) -> PathBuf {
        self.root.join("run.json")
    }

    /// `run.json`; [`RunDirError::NotARun`] when absent.
    pub fn read_run_file(&self) -> Result<RunFile, RunDirError> {
        let path = self.run_file_path();
        let (rf, v) = read_json::<RunFile>(&path, "run file")?
            .ok_or_else(|| RunDirError::NotARun(self.root.display().to_string()))?;
        if v > RUN_FILE_VERSION {
            return Err(RunDirError::Bad {
                path: path.display().to_string(),
                what: "run file",
                detail: format!("format v{v} is newer than this webfreeze (v{RUN_FILE_VERSION}); upgrade"),
            });
        }
        Ok(rf)
    }

    /// Write `run.json` atomically.
    pub fn write_run_file(&self, rf: &RunFile) -> Result<(), RunDirError> {
        let path = self.run_file_path();
        write_atomic(&path, &to_json(&path, "run file", rf)?)
    }

    /// One task's directory.
    pub fn task(&self, id: &str) -> TaskDir {
        TaskDir { dir: self.root.join(task_dir_name(id)) }
    }

    /// Every task directory holding a trajectory, sorted by task id.
    pub fn trajectories(&self) -> Result<Vec<(TaskDir, Trajectory)>, RunDirError> {
        let rd = std::fs::read_dir(&self.root).map_err(io(&self.root))?;
        let mut out = Vec::new();
        for entry in rd.flatten() {
            let dir = TaskDir { dir: entry.path() };
            if !dir.dir.is_dir() {
                continue;
            }
            if let Some(t) = dir.read_trajectory()? {
                out.push((dir, t));
            }
        }
        out.sort_by(|a, b| a.1.task_id.cmp(&b.1.task_id));
        Ok(out)
    }
}

/// One task's directory in a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskDir {
    dir: PathBuf,
}

impl TaskDir {
    /// Its path.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Copy every file of `from` (another run's directory of a task, subdirectories included) into this
    /// one, each written atomically (`webfreeze merge`).
    pub fn copy_from(&self, from: &TaskDir) -> Result<(), RunDirError> {
        copy_tree(&from.dir, &self.dir)
    }

    /// Create it, empty: an earlier unfinished attempt's files are removed.
    pub fn create_empty(&self) -> Result<(), RunDirError> {
        if self.dir.exists() {
            std::fs::remove_dir_all(&self.dir).map_err(io(&self.dir))?;
        }
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))
    }

    /// Create it if needed, keeping what is there.
    pub fn create(&self) -> Result<(), RunDirError> {
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))
    }

    /// `trajectory.json`; `Ok(None)` when absent.
    pub fn read_trajectory(&self) -> Result<Option<Trajectory>, RunDirError> {
        let path = self.dir.join("trajectory.json");
        let Some((t, v)) = read_json::<Trajectory>(&path, "trajectory")? else { return Ok(None) };
        if v > TRAJECTORY_VERSION {
            return Err(RunDirError::Bad {
                path: path.display().to_string(),
                what: "trajectory",
                detail: format!("format v{v} is newer than this webfreeze (v{TRAJECTORY_VERSION}); upgrade"),
            });
        }
        Ok(Some(t))
    }

    /// Write `trajectory.json` atomically.
    pub fn write_trajectory(&self, t: &Trajectory) -> Result<(), RunDirError> {
        let path = self.dir.join("trajectory.json");
        write_atomic(&path, &to_json(&path, "trajectory", t)?)
    }

    /// Write one of the task's other files (screenshots, messages) atomically.
    pub fn write_file(&self, name: &str, bytes: &[u8]) -> Result<(), RunDirError> {
        write_atomic(&self.dir.join(name), bytes)
    }

    /// Write a JSON file beside the trajectory atomically.
    pub fn write_json(&self, name: &str, v: &serde_json::Value) -> Result<(), RunDirError> {
        let path = self.dir.join(name);
        write_atomic(&path, &to_json(&path, "run file", v)?)
    }

    /// Start the task's wire log (`wire.jsonl.zst`) for the attempt started at `started_ms`.
    pub fn create_wire(
        &self,
        run: &str,
        task_id: &str,
        started_ms: i64,
    ) -> Result<crate::wire::WireWriter, crate::wire::WireError> {
        crate::wire::WireWriter::create(&self.dir, run, task_id, started_ms)
    }

    /// The task's wire log, if it has one (`Ok(None)`: none was written, as in record and live runs, whose
    /// requests are their recording's).
    pub fn read_wire(&self, t: &Trajectory) -> Result<Option<crate::wire::WireLog>, crate::wire::WireError> {
        let path = self.dir.join(crate::wire::WIRE_FILE);
        if !path.exists() {
            return Ok(None);
        }
        crate::wire::read(&path, &t.task_id, t.started_ms).map(Some)
    }

    /// The screenshot file name of step `n`.
    pub fn step_png(n: u32) -> String {
        format!("step-{n:02}.png")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn task_dir_names() {
        for (id, want) in
            [("Shop--1", "Shop--1"), ("a/b c", "a_b_c"), ("", "_"), (".hidden", "_.hidden"), ("é", "_")]
        {
            assert_eq!(task_dir_name(id), want, "{id:?}");
        }
    }

    #[test]
    fn atomic_write_leaves_no_temp_file() {
        let d = tempfile::tempdir().unwrap();
        let run = RunDir::new(d.path());
        let t = run.task("x");
        t.create().unwrap();
        t.write_file(&TaskDir::step_png(1), b"png").unwrap();
        let names: Vec<String> = std::fs::read_dir(t.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["step-01.png".to_string()]);
    }

    /// A run's files by their path inside it (a bundle's run unpacked): only paths that stay inside; a
    /// task's directory copied whole into another run (a merge), subdirectories included.
    #[test]
    fn files_by_path_stay_inside_and_task_dirs_copy_whole() {
        let d = tempfile::tempdir().unwrap();
        let run = RunDir::new(d.path().join("run"));
        for (rel, ok) in [
            ("run.json", true),
            ("t1/step-01.png", true),
            ("t1/rescore/a/b.json", true),
            ("../outside", false),
            ("t1/../../outside", false),
            ("/etc/passwd", false),
            ("", false),
        ] {
            let r = run.write_file(rel, b"x");
            assert_eq!(r.is_ok(), ok, "{rel}: {r:?}");
        }
        assert!(!d.path().join("outside").exists());
        let other = RunDir::new(d.path().join("other"));
        other.task("t1").copy_from(&run.task("t1")).unwrap();
        for f in ["step-01.png", "rescore/a/b.json"] {
            assert_eq!(std::fs::read(other.task("t1").path().join(f)).unwrap(), b"x", "{f}");
        }
    }

    #[test]
    fn newer_run_file_is_refused_and_missing_one_is_not_a_run() {
        let d = tempfile::tempdir().unwrap();
        let run = RunDir::new(d.path());
        assert!(matches!(run.read_run_file(), Err(RunDirError::NotARun(_))));
        std::fs::write(
            run.run_file_path(),
            br#"{"v":99,"webfreeze":"9","mode":"live","policy":"p","tasks_file":"","started_ms":0}"#,
        )
        .unwrap();
        let e = run.read_run_file().unwrap_err().to_string();
        assert!(e.contains("newer"), "{e}");
    }
}
