//! `webfreeze merge`: join shard run directories (and, in record mode, the stores they recorded into).
//! The checks and the copying are `session::merge_runs`.

use anyhow::Context as _;
use session::{merge_runs, MergeOptions};
use snapshots::Store;
use trajectory::{RunDir, RunMode};

use crate::cli::MergeArgs;
use crate::config::{same_dir, Config};

pub(crate) fn run(cfg: &Config, a: MergeArgs) -> anyhow::Result<()> {
    let first = &a.shards[0];
    let record = RunDir::new(first).read_run_file()?.mode == RunMode::Record;
    // Only record-mode shards carry snapshots to merge; the others never open a store.
    let (target, sources) = if record {
        let target = Store::open(&cfg.store)?;
        let mut sources = Vec::new();
        for dir in a.from_store.iter().filter(|d| !same_dir(d, &cfg.store)) {
            sources
                .push(Store::open_read_only(dir).with_context(|| format!("--from-store {}", dir.display()))?);
        }
        (Some(target), sources)
    } else {
        (None, Vec::new())
    };
    let opts = MergeOptions { shards: a.shards.clone(), out: a.out.clone(), partial: a.partial };
    let r = merge_runs(&opts, target.as_ref(), &sources)?;
    eprintln!(
        "merged {} shard(s), {} task(s) into {}{}",
        r.shards,
        r.tasks,
        a.out.display(),
        match (&r.snapshots, r.snapshots_copied) {
            (Some(name), n) if n > 0 =>
                format!("; {n} snapshot(s) copied into {} as {name}/<task-id>", cfg.store.display()),
            (Some(name), _) => format!("; replays snapshots {name}/<task-id>"),
            _ => String::new(),
        }
    );
    if !r.unfinished.is_empty() {
        eprintln!(
            "{} task(s) unfinished, left pending: {}; `webfreeze run` with the same task file and --out {} does them",
            r.unfinished.len(),
            r.unfinished.join(", "),
            a.out.display()
        );
    }
    Ok(())
}
