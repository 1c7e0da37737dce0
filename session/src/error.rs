//! What can go wrong in a task session, said so a user knows what to do next.

use snapshots::StoreError;

/// Errors of [`crate::TaskProxy`] and [`crate::run_tasks`].
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The store failed (open, create, finalize).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The proxy could not be set up or failed while serving.
    #[error("task proxy: {0}")]
    Proxy(#[from] proxy::ServeError),
    /// Binding the loopback port failed.
    #[error("cannot bind a task proxy on 127.0.0.1: {0}")]
    Bind(#[source] std::io::Error),
    /// The run directory could not be read or written.
    #[error(transparent)]
    RunDir(#[from] trajectory::RunDirError),
    /// The task's wire log could not be written.
    #[error("wire log: {0}")]
    Wire(#[from] trajectory::wire::WireError),
    /// A replay without the task's snapshot.
    #[error("no snapshot {name:?} for task {task:?}: record it with `webfreeze run --mode record`")]
    NoSnapshot {
        /// Snapshot name.
        name: String,
        /// Task id.
        task: String,
        /// Why the lookup failed.
        #[source]
        source: StoreError,
    },
    /// Recording would replace a snapshot another run directory recorded.
    #[error(
        "snapshot {name:?} already exists, recorded by the run in {from}; name --out differently \
         (snapshots are named after its last component) or remove it with `webfreeze snapshots rm {name}`"
    )]
    SnapshotClash {
        /// Snapshot name.
        name: String,
        /// The run directory that recorded it.
        from: String,
    },
    /// `snapshots explore` could not drive its browser.
    #[error("exploring: {0}")]
    Explore(String),
    /// `snapshots crawl` could not start or drive its browser.
    #[error("crawling: {0}")]
    Crawl(String),
    /// `coverage` could not start.
    #[error("coverage: {0}")]
    Coverage(String),
    /// Record and replay need a store.
    #[error("{0} mode needs a store")]
    NoStore(&'static str),
    /// The policy could not be set up for a task.
    #[cfg(feature = "run")]
    #[error(transparent)]
    Policy(#[from] agent::policy::PolicyError),
    /// The model client could not be built.
    #[error(transparent)]
    Llm(#[from] trajectory::llm::LlmError),
    /// The run directory holds another shard (or an unsharded run) of the task list.
    #[error("{dir} holds {was}, not {now}: give each shard its own --out directory")]
    ShardMismatch {
        /// The run directory.
        dir: String,
        /// What it holds.
        was: String,
        /// What this run is.
        now: String,
    },
    /// A sealed snapshot's search index could not be derived (`crate::seal`).
    #[error("{snapshot}: the frozen search index was not stored: {source}")]
    SearchIndex {
        /// Snapshot name.
        snapshot: String,
        /// Why.
        #[source]
        source: replay::search::SearchIndexError,
    },
    /// A sealed snapshot could not join its site union (`crate::seal`).
    #[error("{snapshot}: its site union entries were not stored: {source}")]
    SiteUnion {
        /// Snapshot name.
        snapshot: String,
        /// Why.
        #[source]
        source: StoreError,
    },
    /// A file or directory could not be written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A run's recorded settings cannot be used (a rescore re-executes with them).
    #[cfg(feature = "run")]
    #[error(transparent)]
    Settings(#[from] agent::settings::SettingsError),
    /// Judging a run failed (`crate::eval_run`).
    #[cfg(feature = "run")]
    #[error(transparent)]
    Eval(#[from] evaluator::evaluate::EvalError),
    /// The run was stopped (Ctrl-C); finished tasks are kept.
    #[error("interrupted: finished tasks are kept; run the same command again to do the rest")]
    Interrupted,
}
