//! Task sessions: webfreeze as a library for any browser harness.
//!
//! A harness that drives its own browser (Playwright, BrowserGym, a Python loop over CDP) starts one
//! [`TaskProxy`] per task (live, record into `<run>/<task-id>`, or replay it), points its browser at
//! [`TaskProxy::addr`] with the CA pin from [`TaskProxy::ca_spki`], installs
//! [`TaskProxy::init_scripts`] before page scripts (the determinism shim that record and replay agree
//! on), and calls [`TaskProxy::finish`] at the end to seal the snapshot. `cargo run --example embed -p
//! webfreeze-session` records and replays one task that way, in process.
//!
//! [`run_tasks`] is the whole loop of `webfreeze run` with webfreeze's own Chromium agent: a task list,
//! `jobs` at a time, into a run directory (`trajectory::RunDir`), resumable, with progress callbacks and
//! a shutdown signal; with a [`Shard`] it runs one part of the list, and [`merge_runs`] joins the parts'
//! run directories (and the stores they recorded into) into one run.
//!
//! Dependencies: this crate sits above `proxy`, `recorder`, `replay`, `snapshots` and `trajectory`, and,
//! with the `run` feature (on by default), `agent`; only the binary, the demo, xtask and tests sit above
//! it. The task proxy hands a browser driver `trajectory::task_env` values, so a harness that only wants
//! [`TaskProxy`] builds this crate with `default-features = false` and compiles no browser crate
//! (`tests/architecture.rs` checks it).

#[cfg(feature = "run")]
mod coverage;
mod crawl;
mod episode_wire;
mod error;
#[cfg(feature = "run")]
mod eval;
#[cfg(feature = "run")]
mod explore_snapshot;
// Which replayed runs the frozen web scores: read with the run's network events (the run feature).
#[cfg(feature = "run")]
pub mod frozen_verdict;
mod frozen_web;
#[cfg(feature = "run")]
mod loopback;
mod merge;
mod merge_recordings;
mod names;
#[cfg(feature = "run")]
pub mod network_events;
mod open;
#[cfg(feature = "run")]
mod plan;
mod probes;
#[cfg(feature = "run")]
mod rescore;
#[cfg(feature = "run")]
mod run;
#[cfg(feature = "run")]
mod run_options;
pub mod seal;
mod settings;
#[cfg(feature = "run")]
mod shard;
mod task_proxy;
mod union_sieve;

#[cfg(feature = "run")]
pub use coverage::{
    check_answer, compare as coverage_of, coverage_run, held_out_text, site_pages,
    summarise as summarise_coverage, AnswerCheck, CoverageReport, FrozenPage, SiteCoverage, TaskCoverage,
};
#[cfg(feature = "run")]
pub use crawl::{crawl_site, CrawlReport, CrawlSiteOptions, SiteCrawlProgress};
pub use episode_wire::{episode_dir, episode_id, EpisodeWire};
pub use error::SessionError;
#[cfg(feature = "run")]
pub use eval::{eval_run, EvalProgress, Evaluated, Rescore};
#[cfg(feature = "run")]
pub use explore_snapshot::{explore_snapshot, recorded_documents, ExploreSnapshotOptions};
pub use frozen_web::{site_union, union_layers, FrozenWeb, UnionLayers};
pub use merge::{merge_runs, MergeError, MergeOptions, MergeReport};
pub use merge_recordings::{
    merge_recordings, merge_snapshots, MergeRecordingsError, RecordingsMerged, SnapshotMerge,
};
pub use names::{
    check_recording_name, crawl_layers, crawl_part_name, crawl_prefix, explore_name, misses_name,
    recording_of, recording_prefix, site_slug, site_snapshots, site_union_name, site_union_of, snapshot_name,
    task_of, BadRecordingName, SnapshotName,
};
pub use open::{
    misses_go_live, open_record, replay_store, replay_target, AssembledReplay, MissesOpening,
    OpenedRecording, OpenedReplay, RecordOpening, ReplayServing, ReplayTarget, SHIM_STEP_MS,
};
#[cfg(feature = "run")]
pub use plan::{check_fork, task_list, task_notes, ForkTooLate, TaskListError, TaskListRequest};
pub use replay::search::SearchMode;
#[cfg(feature = "run")]
pub use rescore::{rescore_run, Rescored, RESCORE_DIR};
#[cfg(feature = "run")]
pub use run::{auto_jobs, auto_jobs_here, run_tasks, Progress, RunOutcome, RunPlan, TASK_MEMORY_BYTES};
#[cfg(feature = "run")]
pub use run_options::{PolicySpec, Recorded, RunOptions};
pub use settings::{guards_setting, GivenFrozenWeb};
#[cfg(feature = "run")]
pub use shard::{task_set_digest, BadShard, Shard};
pub use task_proxy::{check_no_clash, MissPolicy, ProxyMode, TaskProxy, TaskProxyOptions};
/// The unit of the frozen web a replayed task sees: the run setting itself.
pub use trajectory::FrozenWebUnit;
pub use union_sieve::StoredUnion;
