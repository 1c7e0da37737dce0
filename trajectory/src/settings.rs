//! The settings of a run that decide what its replay served, typed as `run.json` ([`crate::RunConfig`])
//! keeps them: read back by a rescore, which serves what the run served. Their names are the ones every
//! run has written, so old run files read as before.

use serde::{Deserialize, Serialize};

/// Replay's miss policy, as `run.json` names it (the names every run has written).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum MissSetting {
    /// A miss is answered 404.
    #[default]
    NotFound,
    /// A miss goes to the live site.
    Live,
    /// A miss goes live and is recorded.
    Record,
}

/// What a replay run served besides the task's own snapshot (`--frozen-web`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FrozenWebUnit {
    /// The task's own snapshot only.
    Task,
    /// Then the other snapshots of its site in the same recording.
    Site,
}

/// When a replay run's frozen search engine answered (`--search`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FrozenSearch {
    /// Never.
    Off,
    /// A search no recording answers.
    Fallback,
    /// Every search.
    Always,
    /// As fallback, and a site's own search.
    Site,
}
