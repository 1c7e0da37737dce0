//! `merge_runs`: shard run directories made by hand (run.json, trajectories, snapshots in per-shard
//! stores), merged, and every refusal it owes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agent::tasks::Task;
use session::{merge_runs, MergeError, MergeOptions, Shard};
use snapshots::{NewSnapshot, Seed, SnapshotSource, Store};
use trajectory::{Outcome, RunDir, RunFile, RunMode, TaskStatus, Trajectory, TRAJECTORY_VERSION};

fn tasks(n: usize) -> Vec<Task> {
    (0..n)
        .map(|i| Task {
            web_name: "Shop".into(),
            id: format!("Shop--{i}"),
            question: "q".into(),
            start_url: "https://shop.test/".into(),
            benchmark: Default::default(),
            setup: Default::default(),
        })
        .collect()
}

/// Shard `i` of `n` over `all` in `root/shard-i`; record mode writes each task's snapshot into `store`.
fn make_shard(root: &Path, all: &[Task], i: u32, n: u32, mode: RunMode, store: Option<&Store>) -> PathBuf {
    let dir = root.join(format!("shard-{i}"));
    let run = RunDir::new(&dir);
    run.create().unwrap();
    let (mine, info) = Shard { index: i, count: n }.select(all.to_vec());
    let name = format!("shard-{i}");
    let mut rf = RunFile {
        v: 1,
        mode,
        policy: "trajectory:/script".into(),
        started_ms: 1_000 + i64::from(i),
        finished_ms: Some(5_000 + i64::from(i)),
        snapshots: Some(if mode == RunMode::Record { name.clone() } else { "recorded".into() }),
        shard: Some(info),
        ..Default::default()
    };
    for t in mine {
        let snapshot = format!("{}/{}", rf.snapshots.as_deref().unwrap(), t.id);
        if let Some(s) = store {
            let w = s
                .create_snapshot(NewSnapshot {
                    name: snapshot.clone(),
                    created_ms: 1_000,
                    seed: Seed { start_ms: 1_000, time_zone: "UTC".into() },
                    source: SnapshotSource::Record,
                    labels: BTreeMap::from([("task".to_string(), t.id.clone())]),
                })
                .unwrap();
            w.finalize(2_000).unwrap();
        }
        let tr = Trajectory {
            v: TRAJECTORY_VERSION,
            task_id: t.id.clone(),
            web_name: t.web_name.clone(),
            mode,
            snapshot: Some(snapshot),
            outcome: Outcome::Answered,
            answer: Some(format!("answer of {}", t.id)),
            ..Default::default()
        };
        let td = run.task(&t.id);
        td.create().unwrap();
        td.write_trajectory(&tr).unwrap();
        td.write_file("step-01.png", b"png").unwrap();
        rf.tasks.insert(t.id.clone(), TaskStatus::of(&tr));
    }
    run.write_run_file(&rf).unwrap();
    dir
}

fn opts(shards: Vec<PathBuf>, out: PathBuf) -> MergeOptions {
    MergeOptions { shards, out, partial: false }
}

#[test]
fn record_shards_merge_with_their_stores_into_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let all = tasks(7);
    let stores: Vec<Store> = (0..3).map(|_| Store::in_memory()).collect();
    let dirs: Vec<PathBuf> = (0..3)
        .map(|i| make_shard(tmp.path(), &all, i, 3, RunMode::Record, Some(&stores[i as usize])))
        .collect();
    let target = Store::in_memory();
    let out = tmp.path().join("merged");
    // Shards in any order.
    let shards = vec![dirs[2].clone(), dirs[0].clone(), dirs[1].clone()];
    let report = merge_runs(&opts(shards, out.clone()), Some(&target), &stores).unwrap();
    assert_eq!((report.shards, report.tasks, report.snapshots_copied), (3, 7, 7));
    let rf = RunDir::new(&out).read_run_file().unwrap();
    assert_eq!(rf.shard, None);
    assert_eq!(rf.snapshots.as_deref(), Some("merged"));
    assert_eq!(rf.tasks.len(), 7);
    assert_eq!((rf.started_ms, rf.finished_ms), (1_000, Some(5_002)));
    for t in &all {
        let tr = RunDir::new(&out).task(&t.id).read_trajectory().unwrap().unwrap();
        let want = format!("merged/{}", t.id);
        assert_eq!(tr.snapshot.as_deref(), Some(want.as_str()));
        assert_eq!(tr.answer, Some(format!("answer of {}", t.id)));
        assert!(RunDir::new(&out).task(&t.id).path().join("step-01.png").is_file());
        let m = target.manifest(&want).unwrap();
        assert!(m.recorded_as().starts_with("shard-"), "{:?}", m.labels);
        assert_eq!(m.labels.get("task"), Some(&t.id));
        assert!(m.labels.get("run_dir").unwrap().ends_with("/merged"));
    }
    assert!(!tmp.path().join(".merged.merging").exists(), "no staging directory left");
    // Merging again into the same place is refused, not mixed.
    let again = merge_runs(&opts(dirs.clone(), out), Some(&target), &stores).unwrap_err();
    assert!(matches!(again, MergeError::OutExists(_)), "{again}");
}

#[test]
fn replay_shards_merge_without_a_store() {
    let tmp = tempfile::tempdir().unwrap();
    let all = tasks(4);
    let dirs: Vec<PathBuf> =
        (0..2).map(|i| make_shard(tmp.path(), &all, i, 2, RunMode::Replay, None)).collect();
    let out = tmp.path().join("runs/replayed");
    let r = merge_runs(&opts(dirs, out.clone()), None, &[]).unwrap();
    assert_eq!((r.tasks, r.snapshots_copied, r.snapshots.as_deref()), (4, 0, Some("recorded")));
    let tr = RunDir::new(&out).task("Shop--1").read_trajectory().unwrap().unwrap();
    assert_eq!(tr.snapshot.as_deref(), Some("recorded/Shop--1"), "replay keeps the recording it read");
}

#[test]
fn merges_that_would_lose_or_mix_tasks_are_refused() {
    type Setup = fn(&Path, &[Task]) -> (Vec<PathBuf>, bool);
    let table: &[(&str, Setup, &str)] = &[
        (
            "a missing shard",
            |r, all| {
                (
                    vec![
                        make_shard(r, all, 0, 3, RunMode::Replay, None),
                        make_shard(r, all, 2, 3, RunMode::Replay, None),
                    ],
                    false,
                )
            },
            "missing shard 1/3",
        ),
        (
            "a shard twice",
            |r, all| {
                let a = make_shard(r, all, 0, 2, RunMode::Replay, None);
                let copy = r.join("copy-of-0");
                std::fs::create_dir_all(&copy).unwrap();
                std::fs::copy(a.join("run.json"), copy.join("run.json")).unwrap();
                (vec![a, copy, make_shard(r, all, 1, 2, RunMode::Replay, None)], false)
            },
            "given twice",
        ),
        (
            "shards of different lists",
            |r, all| {
                let other = make_shard(&r.join("other"), &tasks(5), 1, 2, RunMode::Replay, None);
                (vec![make_shard(r, all, 0, 2, RunMode::Replay, None), other], false)
            },
            "the task list differs",
        ),
        (
            "different modes",
            |r, all| {
                let s = Store::in_memory();
                (
                    vec![
                        make_shard(r, all, 0, 2, RunMode::Replay, None),
                        make_shard(r, all, 1, 2, RunMode::Record, Some(&s)),
                    ],
                    false,
                )
            },
            "the mode differs",
        ),
        (
            "a run that is not a shard",
            |r, _| {
                let d = r.join("plain");
                RunDir::new(&d).create().unwrap();
                RunDir::new(&d).write_run_file(&RunFile { v: 1, ..Default::default() }).unwrap();
                (vec![d], false)
            },
            "without --shard",
        ),
        (
            "a task in two shards",
            |r, all| {
                let a = make_shard(r, all, 0, 2, RunMode::Replay, None);
                let b = make_shard(r, all, 1, 2, RunMode::Replay, None);
                let mut rf = RunDir::new(&b).read_run_file().unwrap();
                let stolen = RunDir::new(&a).read_run_file().unwrap().tasks.into_iter().next().unwrap();
                rf.tasks.insert(stolen.0, stolen.1);
                RunDir::new(&b).write_run_file(&rf).unwrap();
                (vec![a, b], false)
            },
            "in both",
        ),
        (
            "a shard that lost a task",
            |r, all| {
                let b = make_shard(r, all, 1, 2, RunMode::Replay, None);
                let mut rf = RunDir::new(&b).read_run_file().unwrap();
                rf.tasks.pop_first();
                RunDir::new(&b).write_run_file(&rf).unwrap();
                (vec![make_shard(r, all, 0, 2, RunMode::Replay, None), b], false)
            },
            "the task list has 6",
        ),
        (
            "an unfinished task",
            |r, all| {
                let b = make_shard(r, all, 1, 2, RunMode::Replay, None);
                let mut rf = RunDir::new(&b).read_run_file().unwrap();
                rf.tasks.values_mut().next().unwrap().status = trajectory::TaskState::Interrupted;
                RunDir::new(&b).write_run_file(&rf).unwrap();
                (vec![make_shard(r, all, 0, 2, RunMode::Replay, None), b], false)
            },
            "not finished",
        ),
        (
            "record shards whose store was not given",
            |r, all| {
                let s = Store::in_memory();
                (vec![make_shard(r, all, 0, 1, RunMode::Record, Some(&s))], true)
            },
            "in none of the stores",
        ),
    ];
    for (case, setup, want) in table {
        let tmp = tempfile::tempdir().unwrap();
        let (dirs, needs_store) = setup(tmp.path(), &tasks(6));
        let target = Store::in_memory();
        let out = tmp.path().join("merged");
        let err = merge_runs(&opts(dirs, out.clone()), needs_store.then_some(&target), &[]).unwrap_err();
        assert!(err.to_string().contains(want), "{case}: {err}");
        assert!(!out.exists(), "{case}: nothing merged");
        assert!(!tmp.path().join(".merged.merging").exists(), "{case}: no staging left");
    }
}

#[test]
fn partial_merges_keep_unfinished_tasks_for_a_rerun() {
    let tmp = tempfile::tempdir().unwrap();
    let all = tasks(4);
    let a = make_shard(tmp.path(), &all, 0, 2, RunMode::Replay, None);
    let b = make_shard(tmp.path(), &all, 1, 2, RunMode::Replay, None);
    let mut rf = RunDir::new(&b).read_run_file().unwrap();
    let (id, st) = rf.tasks.iter_mut().next().unwrap();
    st.status = trajectory::TaskState::Pending;
    let id = id.clone();
    RunDir::new(&b).write_run_file(&rf).unwrap();
    let out = tmp.path().join("merged");
    let o = MergeOptions { shards: vec![a, b], out: out.clone(), partial: true };
    let r = merge_runs(&o, None, &[]).unwrap();
    assert_eq!(r.unfinished, vec![id.clone()]);
    let merged = RunDir::new(&out).read_run_file().unwrap();
    assert_eq!(merged.tasks[&id].status, trajectory::TaskState::Pending);
}
