//! The run directory's format is a boundary: a run written by v1 must keep reading. The fixture under
//! `tests/fixtures/run-v1/` was written by webfreeze 0.1 (`run.json` with every task state, one trajectory);
//! never regenerate it, add `run-v2/` beside it when the format changes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use trajectory::{Outcome, RunDir, RunMode, TaskState, TaskStatus};

fn fixture() -> RunDir {
    RunDir::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-v1"))
}

#[test]
fn v1_run_file_reads_with_typed_states() {
    let rf = fixture().read_run_file().unwrap();
    assert_eq!(rf.v, 1);
    assert_eq!(rf.mode, RunMode::Record);
    assert_eq!(rf.snapshots.as_deref(), Some("recorded"));
    assert_eq!(rf.config.max_steps, 15);
    assert_eq!(rf.config.window, [1024, 768]);
    let states: Vec<(&str, TaskState)> = rf.tasks.iter().map(|(k, v)| (k.as_str(), v.status)).collect();
    assert_eq!(
        states,
        vec![
            ("News--1", TaskState::Interrupted),
            ("Shop--1", TaskState::Answered),
            ("Shop--2", TaskState::MaxSteps),
            ("Shop--3", TaskState::Error),
            ("Shop--4", TaskState::Pending),
            ("Shop--5", TaskState::Running),
        ]
    );
    assert_eq!(rf.tasks["Shop--1"].answer.as_deref(), Some("12.50"));
}

#[test]
fn v1_trajectory_reads_and_matches_its_status_line() {
    let run = fixture();
    let t = run.task("Shop--1").read_trajectory().unwrap().unwrap();
    assert_eq!(t.outcome, Outcome::Answered);
    assert_eq!(t.mode, RunMode::Record);
    assert_eq!(t.steps.len(), 2);
    assert_eq!(t.steps[0].proxy.recorded, 3);
    assert!(t.steps[1].reproduced.as_ref().is_some_and(|r| r.url && !r.screenshot));
    let line = TaskStatus::of(&t);
    assert_eq!(line, run.read_run_file().unwrap().tasks["Shop--1"]);
    let all = run.trajectories().unwrap();
    assert_eq!(all.len(), 1);
}

#[test]
fn a_written_run_file_reads_back_equal() {
    let d = tempfile::tempdir().unwrap();
    let rf = fixture().read_run_file().unwrap();
    let copy = RunDir::new(d.path());
    copy.write_run_file(&rf).unwrap();
    assert_eq!(copy.read_run_file().unwrap(), rf);
}
