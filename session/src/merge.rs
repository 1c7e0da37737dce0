//! Joining shard run directories (`webfreeze run --shard I/N`) into one run: `webfreeze merge`.
//!
//! Checks before anything is written: every input is a shard of the same task list (same size and id
//! digest, same count, mode and policy, and for replay the same recording); every shard index is
//! present exactly once (missing ones are named); no task is in two shards; together they hold the whole
//! list; every task finished (unless `partial`). Then the task directories are copied into a hidden
//! directory beside `out`, which is renamed into place at the end: a crash never leaves a half-merged run
//! visible. In record mode each task's snapshot is copied from the store its shard recorded into (any of
//! `sources`, or the target itself) into the target store as `<out-name>/<task-id>`, keeping the name it
//! was recorded under for the replay shim's seed; the merged run replays like a single-machine one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use snapshots::Store;
use trajectory::{RunDir, RunFile, RunMode, ShardInfo};

use crate::names::snapshot_name;
use crate::task_proxy::canonical_run_dir;

/// What to merge.
#[derive(Debug, Clone)]
pub struct MergeOptions {
    /// The shard run directories.
    pub shards: Vec<PathBuf>,
    /// The merged run directory (must not exist, or be empty).
    pub out: PathBuf,
    /// Accept unfinished tasks (they stay pending in the merged run; running it again does them).
    pub partial: bool,
}

/// What a merge did.
#[derive(Debug, Clone, Default)]
pub struct MergeReport {
    /// Shards joined.
    pub shards: usize,
    /// Tasks in the merged run.
    pub tasks: usize,
    /// Tasks that had not finished (only with `partial`).
    pub unfinished: Vec<String>,
    /// Snapshots copied into the target store (record mode).
    pub snapshots_copied: usize,
    /// The merged run's recording name (record mode: `<out-name>`; replay: the shards' recording).
    pub snapshots: Option<String>,
}

/// Why shards cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no shard run directories given")]
    NoShards,
    /// An input that is not a shard run.
    #[error("{dir}: {why}")]
    NotAShard {
        /// The directory.
        dir: String,
        /// What is wrong.
        why: String,
    },
    /// Two shards that do not belong together.
    #[error("{a} and {b} are not shards of one run: {what} differs ({va} vs {vb})")]
    Mismatch {
        /// What differs.
        what: &'static str,
        /// First shard.
        a: String,
        /// Its value.
        va: String,
        /// Second shard.
        b: String,
        /// Its value.
        vb: String,
    },
    /// The same shard twice.
    #[error("shard {index}/{count} given twice: {a} and {b}")]
    DuplicateShard {
        /// Index.
        index: u32,
        /// Count.
        count: u32,
        /// First.
        a: String,
        /// Second.
        b: String,
    },
    /// Shards not given.
    #[error("missing shard{} {} of {count} ({present} of {count} given): run them (`webfreeze run ... --shard I/{count}`) and merge again", if .missing.len() == 1 { "" } else { "s" }, .missing.iter().map(|i| format!("{i}/{count}")).collect::<Vec<_>>().join(", "))]
    MissingShards {
        /// Missing indices.
        missing: Vec<u32>,
        /// Count.
        count: u32,
        /// How many were given.
        present: usize,
    },
    /// A task in two shards.
    #[error("task {task:?} is in both {a} and {b}: shards must not overlap")]
    Overlap {
        /// Task id.
        task: String,
        /// First shard.
        a: String,
        /// Second shard.
        b: String,
    },
    /// The shards together do not hold the whole list.
    #[error("the shards hold {have} tasks, the task list has {want}: a shard's run.json is incomplete (was it run with another --task-filter?)")]
    NotTheWhole {
        /// Tasks found.
        have: usize,
        /// Tasks in the list.
        want: usize,
    },
    /// Tasks that have not finished.
    #[error("{} task{} not finished ({}): rerun their shards (finished tasks are skipped), or pass --partial to merge anyway", .tasks.len(), if .tasks.len() == 1 { " is" } else { "s are" }, .tasks.iter().take(5).map(|(t, s, d)| format!("{t} {s} in {d}")).collect::<Vec<_>>().join("; "))]
    Unfinished {
        /// (task, state, shard dir).
        tasks: Vec<(String, &'static str, String)>,
    },
    /// The output exists.
    #[error("--out {0} exists and is not empty; merge into a new directory")]
    OutExists(String),
    /// A recorded task's snapshot is in none of the stores.
    #[error("snapshot {name:?} (task {task:?} of {shard}) is in none of the stores given ({stores}); pass the shard's store with --from-store")]
    SnapshotMissing {
        /// Snapshot.
        name: String,
        /// Task.
        task: String,
        /// Shard dir.
        shard: String,
        /// Where we looked.
        stores: String,
    },
    /// Record-mode shards need a target store.
    #[error("record-mode shards need a store to merge their snapshots into")]
    NoStore,
    /// The target store already has a merged snapshot of another run.
    #[error("snapshot {name:?} already exists, from the run in {from}; name --out differently or remove it with `webfreeze snapshots rm {name}`")]
    SnapshotClash {
        /// Name.
        name: String,
        /// Its run directory.
        from: String,
    },
    /// Run directory I/O.
    #[error(transparent)]
    RunDir(#[from] trajectory::RunDirError),
    /// Store.
    #[error(transparent)]
    Store(#[from] snapshots::StoreError),
    /// File system.
    #[error("{path}: {source}")]
    Io {
        /// Path.
        path: String,
        /// Error.
        #[source]
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> MergeError + '_ {
    move |source| MergeError::Io { path: path.display().to_string(), source }
}

fn show(p: &Path) -> String {
    p.display().to_string()
}

struct Input {
    dir: PathBuf,
    rf: RunFile,
    shard: ShardInfo,
}

fn read_inputs(shards: &[PathBuf]) -> Result<Vec<Input>, MergeError> {
    let mut inputs = Vec::new();
    for dir in shards {
        let rf = RunDir::new(dir).read_run_file()?;
        let shard = rf.shard.clone().ok_or_else(|| MergeError::NotAShard {
            dir: show(dir),
            why: "not a shard (its run.json has no shard; it was run without --shard I/N)".into(),
        })?;
        inputs.push(Input { dir: dir.clone(), rf, shard });
    }
    Ok(inputs)
}

fn check_together(inputs: &[Input], partial: bool) -> Result<Vec<String>, MergeError> {
    let first = inputs.first().ok_or(MergeError::NoShards)?;
    let facts = |i: &Input| -> [(&'static str, String); 6] {
        [
            (
                "the task list",
                format!(
                    "{} tasks, ids {}",
                    i.shard.tasks_total,
                    &i.shard.task_set[..12.min(i.shard.task_set.len())]
                ),
            ),
            ("the shard count", i.shard.count.to_string()),
            ("the mode", i.rf.mode.as_str().to_string()),
            ("the policy", i.rf.policy.clone()),
            (
                "the recording replayed",
                if i.rf.mode == RunMode::Replay { format!("{:?}", i.rf.snapshots) } else { String::new() },
            ),
            ("the step budget", i.rf.settings.agent.max_steps.to_string()),
        ]
    };
    let want = facts(first);
    for i in &inputs[1..] {
        for ((what, va), (_, vb)) in want.iter().zip(facts(i)) {
            if *va != vb {
                return Err(MergeError::Mismatch {
                    what,
                    a: show(&first.dir),
                    va: va.clone(),
                    b: show(&i.dir),
                    vb,
                });
            }
        }
    }
    let count = first.shard.count;
    let mut by_index: BTreeMap<u32, &Input> = BTreeMap::new();
    for i in inputs {
        if let Some(prev) = by_index.insert(i.shard.index, i) {
            return Err(MergeError::DuplicateShard {
                index: i.shard.index,
                count,
                a: show(&prev.dir),
                b: show(&i.dir),
            });
        }
    }
    let missing: Vec<u32> = (0..count).filter(|i| !by_index.contains_key(i)).collect();
    if !missing.is_empty() {
        return Err(MergeError::MissingShards { missing, count, present: inputs.len() });
    }
    let mut owner: BTreeMap<&str, &Path> = BTreeMap::new();
    let mut unfinished = Vec::new();
    for i in inputs {
        for (id, st) in &i.rf.tasks {
            if let Some(a) = owner.insert(id, &i.dir) {
                return Err(MergeError::Overlap { task: id.clone(), a: show(a), b: show(&i.dir) });
            }
            if !st.status.finished() {
                unfinished.push((id.clone(), st.status.as_str(), show(&i.dir)));
            }
        }
    }
    if owner.len() != first.shard.tasks_total {
        return Err(MergeError::NotTheWhole { have: owner.len(), want: first.shard.tasks_total });
    }
    if !unfinished.is_empty() && !partial {
        return Err(MergeError::Unfinished { tasks: unfinished });
    }
    Ok(unfinished.into_iter().map(|(t, _, _)| t).collect())
}

/// Copy a directory tree (task directories: files, no links).
fn out_is_free(out: &Path) -> Result<(), MergeError> {
    match std::fs::read_dir(out).map(|mut d| d.next().is_some()) {
        Ok(true) => Err(MergeError::OutExists(show(out))),
        Ok(false) => std::fs::remove_dir(out).map_err(io(out)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io(out)(e)),
    }
}

/// Merge `opts.shards` into `opts.out`. `target` is the store record-mode snapshots are merged into;
/// `sources` are the shards' own stores (searched in order, then `target`).
pub fn merge_runs(
    opts: &MergeOptions,
    target: Option<&Store>,
    sources: &[Store],
) -> Result<MergeReport, MergeError> {
    let inputs = read_inputs(&opts.shards)?;
    let unfinished = check_together(&inputs, opts.partial)?;
    out_is_free(&opts.out)?;
    let name = opts
        .out
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| MergeError::OutExists(format!("{} (needs a directory name)", show(&opts.out))))?
        .to_string();
    let parent = match opts.out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(io(&parent))?;
    // The snapshots are labelled with the run directory as it will be once renamed into place.
    let out_canon = canonical_run_dir(&parent).join(&name);
    let staging = parent.join(format!(".{name}.merging"));
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(io(&staging))?;
    }
    let record = inputs[0].rf.mode == RunMode::Record;
    let store = if record { Some(target.ok_or(MergeError::NoStore)?) } else { None };
    let r = stage(&inputs, &staging, &name, &out_canon, store, sources, unfinished);
    match r {
        Ok(report) => {
            std::fs::rename(&staging, &opts.out).map_err(io(&opts.out))?;
            Ok(report)
        }
        Err(e) => {
            // Snapshots already copied stay in the target, labelled with this run directory: merging into
            // it again replaces them.
            let _ = std::fs::remove_dir_all(&staging);
            Err(e)
        }
    }
}

fn stage(
    inputs: &[Input],
    staging: &Path,
    name: &str,
    out_canon: &Path,
    store: Option<&Store>,
    sources: &[Store],
    unfinished: Vec<String>,
) -> Result<MergeReport, MergeError> {
    let record = store.is_some();
    let staged = RunDir::new(staging);
    staged.create()?;
    let mut merged = RunFile { shard: None, tasks: BTreeMap::new(), ..inputs[0].rf.clone() };
    let mut report = MergeReport { shards: inputs.len(), unfinished, ..Default::default() };
    let mut copied_names = BTreeSet::new();
    for i in inputs {
        let src_run = RunDir::new(&i.dir);
        for (id, st) in &i.rf.tasks {
            let (from, to) = (src_run.task(id), staged.task(id));
            if from.path().is_dir() {
                to.copy_from(&from)?;
            }
            if let (Some(store), Some(mut t)) = (store, to.read_trajectory()?) {
                let shard_name =
                    t.snapshot.clone().or_else(|| i.rf.snapshots.as_deref().map(|r| snapshot_name(r, id)));
                if let Some(shard_name) = shard_name {
                    let new_name = snapshot_name(name, id);
                    copy_snapshot(store, sources, &shard_name, &new_name, id, &i.dir, out_canon)?;
                    copied_names.insert(new_name.clone());
                    t.snapshot = Some(new_name);
                    to.write_trajectory(&t)?;
                }
            }
            merged.tasks.insert(id.clone(), st.clone());
        }
        merged.started_ms = merged.started_ms.min(i.rf.started_ms);
        merged.finished_ms = match (merged.finished_ms, i.rf.finished_ms) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
    }
    if record {
        merged.snapshots = Some(name.to_string());
        if let Some(s) = store {
            s.flush()?;
        }
    }
    report.snapshots = merged.snapshots.clone();
    report.tasks = merged.tasks.len();
    report.snapshots_copied = copied_names.len();
    staged.write_run_file(&merged)?;
    Ok(report)
}

fn copy_snapshot(
    target: &Store,
    sources: &[Store],
    from: &str,
    to: &str,
    task: &str,
    shard_dir: &Path,
    out_canon: &Path,
) -> Result<(), MergeError> {
    let out_label = out_canon.display().to_string();
    if let Ok(m) = target.manifest(to) {
        let owner = m.labels.get("run_dir").cloned().unwrap_or_else(|| "(unknown)".into());
        if owner != out_label {
            return Err(MergeError::SnapshotClash { name: to.to_string(), from: owner });
        }
        // Left by a merge into this same directory that did not finish: redo it.
        target.remove(to)?;
    }
    let src = sources
        .iter()
        .find(|s| s.manifest(from).is_ok())
        .or_else(|| target.manifest(from).is_ok().then_some(target))
        .ok_or_else(|| MergeError::SnapshotMissing {
            name: from.to_string(),
            task: task.to_string(),
            shard: show(shard_dir),
            stores: std::iter::once(target)
                .chain(sources)
                .map(|s| s.path().map(show).unwrap_or_else(|| "in memory".into()))
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    let mut labels = src.manifest(from)?.labels;
    labels.insert("run".into(), out_canon.file_name().and_then(|n| n.to_str()).unwrap_or_default().into());
    labels.insert("run_dir".into(), out_label);
    target.copy_snapshot_from(src, from, to, labels)?;
    crate::seal::after_seal(target, to);
    Ok(())
}
