//! A run's settings as `run.json` keeps them ([`RunConfig`], its own room) and their types. The proxy half (miss
//! policy, frozen web, search) is read back by a rescore, which serves what the run served; the agent half
//! (action space, observation, early stops, model budget, exploration, warm browsers) by a re-execution
//! (`agent::settings`). Their names and values are the ones every run has written, so old run files read as
//! before.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The settings that shape a run's trajectories, as `run.json` keeps them: written once by the run, read
/// back once by whatever re-executes or re-scores it (`agent::settings::Settings::resolve`,
/// `session::rescore::served_as_run`). The agent half: the step budget to `keep_screenshots`, the early
/// stops to `warm_browsers`; the proxy half: `on_miss` to `locale`, and `guards`. Optional settings are
/// written only when a run uses them, so a run without them writes what runs before them wrote.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunConfig {
    /// Step budget per task.
    pub max_steps: u32,
    /// Window and viewport.
    pub window: [u32; 2],
    /// Page-load and browser-call bound.
    pub page_timeout_s: f64,
    /// Quiet period that makes a page settled.
    pub settle_ms: u64,
    /// What `Wait` waits.
    pub wait_ms: u64,
    /// Where `Google` goes.
    pub search_url: String,
    /// Replay's miss policy.
    pub on_miss: MissSetting,
    /// Model temperature.
    pub temperature: f64,
    /// Screenshots kept in the model's context.
    pub keep_screenshots: usize,
    /// Replay runs: what besides the task's own snapshot answered (`--frozen-web`). None: not a replay,
    /// or a run from before it was recorded (which served the task's own snapshot only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frozen_web: Option<FrozenWebUnit>,
    /// Replay runs: when the frozen search engine answered (`--search`). None as for `frozen_web`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<FrozenSearch>,
    /// The time zone the browsers emulated (recorded since this field; the snapshots' own seeds say it
    /// for a replay).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// The locale the browsers emulated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// The guards of a live or recording run (None: none, or a replay that never dialled out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guards: Option<GuardsSetting>,
    /// Stop after this many replies in a row that did not parse.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub early_stop_parse_failures: Option<u32>,
    /// Stop after this many repeats of one action.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub early_stop_repeats: Option<u32>,
    /// The action space (None: WebVoyager's, as runs before this field).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action_space: Option<ActionSpaceSetting>,
    /// The observation (None: Set-of-Marks, as runs before this field).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observation: Option<ObservationSetting>,
    /// The model's reply budget (model runs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<MaxTokensSetting>,
    /// Exploration while recording.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explore: Option<ExploreSetting>,
    /// A fork's recorded steps re-executed before the model decides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fork_at: Option<u32>,
    /// Warm browsers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warm_browsers: Option<WarmBrowsersSetting>,
    /// Keys written by newer versions, kept as they were.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

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
