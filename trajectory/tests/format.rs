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

/// `run-v1-settings/run.json` has every setting as the runs of stop 56 wrote them, untyped keys beside the
/// typed ones: each reads typed now, and a key nobody knows is kept.
#[test]
fn v1_settings_written_as_untyped_keys_read_typed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-v1-settings");
    let c = RunDir::new(dir).read_run_file().unwrap().config;
    assert_eq!(c.action_space, Some(trajectory::ActionSpaceSetting::WebArena));
    assert_eq!(c.observation, Some(trajectory::ObservationSetting::SomAxTree));
    assert_eq!((c.early_stop_parse_failures, c.early_stop_repeats, c.fork_at), (Some(2), Some(3), Some(2)));
    assert_eq!(
        c.max_tokens,
        Some(trajectory::MaxTokensSetting { field: "max_completion_tokens".into(), value: 512 })
    );
    let g = c.guards.as_ref().unwrap();
    assert_eq!(
        (g.write_guard, g.answer_guard, g.own_hosts.as_slice()),
        (true, false, &["shop.test".to_string()][..])
    );
    assert_eq!(c.explore.map(|e| (e.links_per_page, e.host_budget, e.depth, e.pace_ms)), Some((3, 40, 1, 0)));
    assert_eq!(c.warm_browsers.map(|w| (w.recycle_after, w.memory_ceiling_mib)), Some((50, Some(1024))));
    assert_eq!(c.extra.keys().collect::<Vec<_>>(), ["a_key_of_a_newer_version"]);
    // Written back, the same keys and values.
    let again: serde_json::Value = serde_json::to_value(&c).unwrap();
    let before: serde_json::Value = serde_json::from_slice(
        &std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-v1-settings/run.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(again, before["config"]);
}
