//! Merging snapshots in one store (`webfreeze snapshots merge`): a list of snapshots into one
//! ([`merge_snapshots`]), or whole recordings task by task ([`merge_recordings`], `--runs`: each task's
//! `RUN/TASK` snapshots, in the order the recordings are given, into `INTO/TASK`). A merged snapshot is
//! sealed like any other ([`crate::seal::after_seal`]). Run directories are joined by [`crate::merge_runs`].

use std::collections::BTreeMap;

use snapshots::{Manifest, Merged, Store};

use crate::error::SessionError;
use crate::names::{check_recording_name, snapshot_name, task_of, BadRecordingName};

/// Why recordings cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeRecordingsError {
    /// A name given is not a recording's.
    #[error("--runs takes recording names: {0}")]
    Source(BadRecordingName),
    /// The new recording's name is not one.
    #[error("--into with --runs names the new recording (its tasks become INTO/TASK): {0}")]
    Into(BadRecordingName),
    /// A recording has no task snapshot in the store.
    #[error(
        "no recording {0:?} in the store: no snapshot is named {0}/TASK (`webfreeze snapshots list` shows what there is)"
    )]
    NoRecording(String),
    /// The store refused.
    #[error(transparent)]
    Session(Box<SessionError>),
}

impl From<SessionError> for MergeRecordingsError {
    fn from(e: SessionError) -> Self {
        MergeRecordingsError::Session(Box::new(e))
    }
}

impl From<snapshots::StoreError> for MergeRecordingsError {
    fn from(e: snapshots::StoreError) -> Self {
        SessionError::from(e).into()
    }
}

/// What merging one snapshot did.
#[derive(Debug, Clone)]
pub enum SnapshotMerge {
    /// Merged now; `replaced`: the exchanges of an unfinished snapshot of the same merge it replaced.
    Now {
        /// The merged snapshot.
        manifest: Box<Manifest>,
        /// An unfinished earlier attempt of the same merge, replaced (its exchange count).
        replaced: Option<u64>,
    },
    /// The same merge had finished it already (a sealed snapshot is never replaced).
    Before,
}

/// Merges `sources` into `into` (the store decides what an existing `into` means:
/// [`Store::merge_again`]) and seals the result.
pub fn merge_snapshots(store: &Store, sources: &[String], into: &str) -> Result<SnapshotMerge, SessionError> {
    let refs: Vec<&str> = sources.iter().map(String::as_str).collect();
    match store.merge_again(&refs, into, Default::default())? {
        Merged::Before => Ok(SnapshotMerge::Before),
        Merged::Now { manifest, replaced } => {
            crate::seal::after_seal(store, into);
            store.flush()?;
            Ok(SnapshotMerge::Now { manifest, replaced })
        }
    }
}

/// Each task's snapshots in the recordings `runs`, in the order the recordings are given.
fn recording_tasks(
    store: &Store,
    runs: &[String],
) -> Result<BTreeMap<String, Vec<String>>, MergeRecordingsError> {
    for r in runs {
        check_recording_name(r).map_err(MergeRecordingsError::Source)?;
    }
    let mut tasks: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for run in runs {
        let mut found = 0;
        for m in store.manifests_under(&crate::names::recording_prefix(run))? {
            // Direct children only: `RUN/TASK/misses` (a replay's overlay) is merged by name.
            if let Some(task) = task_of(run, &m.name) {
                tasks.entry(task.to_string()).or_default().push(m.name.clone());
                found += 1;
            }
        }
        if found == 0 {
            return Err(MergeRecordingsError::NoRecording(run.clone()));
        }
    }
    Ok(tasks)
}

/// What [`merge_recordings`] did.
#[derive(Debug, Clone, Default)]
pub struct RecordingsMerged {
    /// Tasks merged now.
    pub merged: usize,
    /// Tasks the same merge had finished before.
    pub before: usize,
}

/// Merges the recordings `runs` task by task into the recording `into`; every destination is checked
/// before anything is written. `progress(done, total, destination, what happened)` after each task.
pub fn merge_recordings(
    store: &Store,
    runs: &[String],
    into: &str,
    progress: &dyn Fn(usize, usize, &str, &SnapshotMerge, usize),
) -> Result<RecordingsMerged, MergeRecordingsError> {
    check_recording_name(into).map_err(MergeRecordingsError::Into)?;
    let tasks = recording_tasks(store, runs)?;
    for (task, sources) in &tasks {
        let refs: Vec<&str> = sources.iter().map(String::as_str).collect();
        store.merge_target(&refs, &snapshot_name(into, task))?;
    }
    let mut out = RecordingsMerged::default();
    for (i, (task, sources)) in tasks.iter().enumerate() {
        let dest = snapshot_name(into, task);
        let done = merge_snapshots(store, sources, &dest)?;
        match &done {
            SnapshotMerge::Now { .. } => out.merged += 1,
            SnapshotMerge::Before => out.before += 1,
        }
        progress(i + 1, tasks.len(), &dest, &done, sources.len());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(store: &Store, name: &str, urls: &[&str]) {
        let urls: Vec<String> = urls.iter().map(|u| u.to_string()).collect();
        crate::union_sieve::tests::record_named(store, name, Default::default(), &urls);
    }

    #[test]
    fn recordings_merge_task_by_task_and_a_second_time_is_a_no_op() {
        let store = Store::in_memory();
        record(&store, "a/t1", &["https://s.test/1"]);
        record(&store, "a/t1/misses", &["https://s.test/m"]);
        record(&store, "b/t1", &["https://s.test/2"]);
        record(&store, "b/t2", &["https://s.test/3"]);
        let runs = vec!["a".to_string(), "b".to_string()];
        let tasks = recording_tasks(&store, &runs).unwrap();
        assert_eq!(tasks["t1"], ["a/t1", "b/t1"], "direct children, in the order given");
        assert_eq!(tasks["t2"], ["b/t2"]);
        let r = merge_recordings(&store, &runs, "ab", &|_, _, _, _, _| {}).unwrap();
        assert_eq!((r.merged, r.before), (2, 0));
        assert_eq!(store.manifest("ab/t1").unwrap().counts.exchanges, 2);
        let r = merge_recordings(&store, &runs, "ab", &|_, _, _, _, _| {}).unwrap();
        assert_eq!((r.merged, r.before), (0, 2));
        // (runs, into, error)
        for (runs, into, want) in [
            (vec!["a/t1"], "c", "--runs takes recording names"),
            (vec!["a"], "c/d", "--into with --runs"),
            (vec!["nope"], "c", "no recording \"nope\""),
        ] {
            let runs: Vec<String> = runs.into_iter().map(String::from).collect();
            let e = merge_recordings(&store, &runs, into, &|_, _, _, _, _| {}).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
    }
}
