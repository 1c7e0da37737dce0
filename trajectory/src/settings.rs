//! The types of a run's settings as `run.json` ([`crate::RunConfig`]) keeps them. The proxy half (miss
//! policy, frozen web, search) is read back by a rescore, which serves what the run served; the agent half
//! (action space, observation, early stops, model budget, exploration, warm browsers) by a re-execution
//! (`agent::settings`). Their names and values are the ones every run has written, so old run files read as
//! before.

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

/// The model's action space, as `run.json` names it (`--action-space`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionSpaceSetting {
    /// WebVoyager's seven actions.
    #[default]
    WebVoyager,
    /// WebArena's.
    WebArena,
}

/// What the model is shown of a page, as `run.json` names it (`--observation`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ObservationSetting {
    /// A labelled screenshot (Set-of-Marks).
    #[default]
    #[serde(rename = "som")]
    Som,
    /// WebArena's accessibility-tree text.
    #[serde(rename = "axtree")]
    AxTree,
    /// Both.
    #[serde(rename = "som+axtree")]
    SomAxTree,
}

/// The model's reply budget and the request field that carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MaxTokensSetting {
    /// `max_tokens` or `max_completion_tokens`.
    pub field: String,
    /// The budget.
    pub value: u32,
}

/// Which guards a live or recording run had.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardsSetting {
    /// The side-effect guard.
    pub write_guard: bool,
    /// The contamination guard.
    pub answer_guard: bool,
    /// Hosts the run owns, where writes are allowed (`--allow-writes`, `--site` hosts).
    #[serde(default)]
    pub own_hosts: Vec<String>,
}

/// Exploration while recording (`--explore`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExploreSetting {
    /// Links opened per page.
    pub links_per_page: usize,
    /// Pages per host.
    pub host_budget: usize,
    /// Link depth from the agent's pages.
    pub depth: u32,
    /// Pause between pages, ms.
    pub pace_ms: u64,
}

/// Warm browsers (`--browser-recycle`, `--browser-memory-mib`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarmBrowsersSetting {
    /// Tasks a process serves before it is replaced.
    pub recycle_after: u32,
    /// Memory after which a process is replaced, MiB.
    pub memory_ceiling_mib: Option<u64>,
    /// Tasks one process serves at once.
    pub contexts_per_browser: usize,
}
