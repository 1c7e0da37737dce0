//! A run's settings as `run.json` keeps them ([`RunSettings`], its own room), and each setting's enum,
//! defined once here: the command line parses them (clap's `ValueEnum`, derived behind this crate's `clap`
//! feature, which only the binary turns on), `run.json` names them (serde), and the agent uses
//! [`ActionSpace`] and [`ObservationKind`] as its own. The proxy half's enums ([`MissPolicy`],
//! [`FrozenWebUnit`], [`SearchMode`], [`WsPacing`]) are defined once in the leaf crate `proxy_settings`,
//! which replay serves by too, and re-exported here.
//!
//! Two halves: the agent's ([`AgentSettings`]: what the browser and the model did) is read back by a
//! re-execution (`agent::settings::Settings::resolve`); the proxy's ([`ProxySettings`]: what answered the
//! browser) by a re-execution and a rescore, which serve what the run served (`session::settings`). Their
//! names and values are the ones every run has written, so old run files read as before.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

pub use proxy_settings::{FrozenWebUnit, MissPolicy, SearchMode, WsPacing};

/// The settings that shape a run's trajectories, as `run.json`'s `config` keeps them: written once, by
/// `session::run_tasks` from what the run was given (`session::RunOptions`), and read back once by whatever
/// re-executes or re-scores the run. On disk one flat object (the halves' keys side by side, as every run
/// has written them); optional settings are written only when a run uses them, so a run without them
/// writes what runs before them wrote.
///
/// Reading is strict: a key neither half knows is an error naming it ([`UnknownSettings`]), not kept and
/// ignored. A misspelled key would otherwise re-execute or re-score a run with a setting it never had; a
/// key written by a newer webfreeze is a setting this one cannot honour, so it refuses the run and says
/// to upgrade rather than reproduce it differently. (Serde's `deny_unknown_fields` does not work with
/// `flatten`, so the keys are checked against the halves' own field lists before each half is read.)
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunSettings {
    /// What the browser and the model did.
    #[serde(flatten)]
    pub agent: AgentSettings,
    /// What answered the browser.
    #[serde(flatten)]
    pub proxy: ProxySettings,
}

/// The agent's half of [`RunSettings`]: read back by a re-execution (`agent::settings`), each setting
/// unless given again. A run.json without a `config` section (the oldest runs) reads as zeros, which
/// `agent::settings` does not take for settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentSettings {
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
    /// Where `Google` goes (and, in a replay, one of the frozen search engine's pages).
    pub search_url: String,
    /// Model temperature (0 for recorded replies).
    pub temperature: f64,
    /// Screenshots kept in the model's context (0 for recorded replies).
    pub keep_screenshots: usize,
    /// Stop after this many replies in a row that did not parse.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub early_stop_parse_failures: Option<u32>,
    /// Stop after this many repeats of one action.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub early_stop_repeats: Option<u32>,
    /// The action space (None: WebVoyager's, as runs before this field).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action_space: Option<ActionSpace>,
    /// The observation (None: Set-of-Marks, as runs before this field).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observation: Option<ObservationKind>,
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
}

/// The proxy's half of [`RunSettings`]: what answered the browser. Read back by a rescore (which serves
/// what the run served) and a replayed re-execution (its frozen web, unless given again).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProxySettings {
    /// Replay's miss policy (`NotFound` for runs that were not replays).
    pub on_miss: MissPolicy,
    /// Replay runs: what besides the task's own snapshot answered (`--frozen-web`). None: not a replay,
    /// or a run from before it was recorded (which served the task's own snapshot only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frozen_web: Option<FrozenWebUnit>,
    /// Replay runs: when the frozen search engine answered (`--search`). None as for `frozen_web`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchMode>,
    /// Replay runs: how recorded WebSocket server messages were timed (`--ws-pacing`). None as for
    /// `frozen_web` (runs before it was recorded were paced as recorded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ws_pacing: Option<WsPacing>,
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
}

/// Keys in a run's settings that no half knows (misspelled, or written by a newer webfreeze).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown run setting{} {}: misspelled, or written by a newer webfreeze (upgrade to read this run); \
     the settings are {}",
    if .keys.len() == 1 { "" } else { "s" },
    .keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", "),
    RunSettings::keys().collect::<Vec<_>>().join(", ")
)]
pub struct UnknownSettings {
    /// The keys, sorted.
    pub keys: Vec<String>,
}

impl RunSettings {
    /// Every key a run's settings may have: the agent half's, then the proxy half's.
    pub fn keys() -> impl Iterator<Item = &'static str> {
        fields_of::<AgentSettings>().iter().chain(fields_of::<ProxySettings>()).copied()
    }

    /// The keys of `map` that are no setting (empty: all are).
    pub fn unknown_keys<'a>(map: impl IntoIterator<Item = &'a String>) -> Vec<String> {
        map.into_iter().filter(|k| !Self::keys().any(|known| known == k.as_str())).cloned().collect()
    }
}

impl<'de> Deserialize<'de> for RunSettings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut agent = serde_json::Map::deserialize(d)?;
        let unknown = RunSettings::unknown_keys(agent.keys());
        if !unknown.is_empty() {
            return Err(D::Error::custom(UnknownSettings { keys: unknown }));
        }
        let proxy: serde_json::Map<String, serde_json::Value> =
            fields_of::<ProxySettings>().iter().filter_map(|k| agent.remove_entry(*k)).collect();
        // Each half with the path of a bad value (`observation: unknown variant ...`).
        fn half<'de, T: Deserialize<'de>, E: serde::de::Error>(
            m: serde_json::Map<String, serde_json::Value>,
        ) -> Result<T, E> {
            serde_path_to_error::deserialize(serde_json::Value::Object(m)).map_err(E::custom)
        }
        Ok(RunSettings { agent: half(agent)?, proxy: half(proxy)? })
    }
}

/// The field names serde's derive gives struct `T`: what it passes to `deserialize_struct`, asked of a
/// deserializer that records them and reads nothing. One list per half, so the known keys cannot drift
/// from the fields.
fn fields_of<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    struct Probe<'a>(&'a mut &'static [&'static str]);
    impl<'de> Deserializer<'de> for Probe<'_> {
        type Error = serde::de::value::Error;
        fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(Self::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(Self::Error::custom("fields recorded"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
            unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Probe(&mut fields));
    fields
}

/// Which grammar the model writes actions in (`--action-space`); the agent's own (`agent::action`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum ActionSpace {
    /// WebVoyager's 7 actions, one tab (links that would open a tab stay in it).
    #[default]
    #[cfg_attr(feature = "clap", value(name = "webvoyager"))]
    WebVoyager,
    /// WebArena's actions, real tabs.
    #[cfg_attr(feature = "clap", value(name = "webarena"))]
    WebArena,
}

impl std::fmt::Display for ActionSpace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::WebVoyager => "webvoyager",
            Self::WebArena => "webarena",
        })
    }
}

/// What the agent observes at a step (`--observation`); the agent's own (`agent::browser`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum ObservationKind {
    /// The screenshot with Set-of-Marks labels and the list of labelled elements (WebVoyager, VWA).
    #[default]
    #[serde(rename = "som")]
    #[cfg_attr(feature = "clap", value(name = "som"))]
    Som,
    /// The accessibility tree as text (WebArena); the screenshot is kept for the record, unlabelled.
    #[serde(rename = "axtree")]
    #[cfg_attr(feature = "clap", value(name = "axtree"))]
    AxTree,
    /// The labelled screenshot and the accessibility tree, whose lines carry the labels (VWA's SoM agent).
    #[serde(rename = "som+axtree")]
    #[cfg_attr(feature = "clap", value(name = "som+axtree", alias = "axtree+som"))]
    SomAxTree,
}

impl std::fmt::Display for ObservationKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Som => "som",
            Self::AxTree => "axtree",
            Self::SomAxTree => "som+axtree",
        })
    }
}

/// The model's reply budget and the request field that carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MaxTokensSetting {
    /// `max_tokens` or `max_completion_tokens`.
    pub field: MaxTokensField,
    /// The budget.
    pub value: u32,
}

/// The request field that carries the model's reply budget (`--max-tokens-field`; `run.json` and the
/// request body name it alike).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum MaxTokensField {
    /// `"max_tokens": N` (most servers, llama.cpp, vLLM).
    #[default]
    #[cfg_attr(feature = "clap", value(name = "max_tokens"))]
    MaxTokens,
    /// `"max_completion_tokens": N` (newer OpenAI models, which refuse `max_tokens`).
    #[cfg_attr(feature = "clap", value(name = "max_completion_tokens"))]
    MaxCompletionTokens,
}

impl MaxTokensField {
    /// The field's name in a request body.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MaxTokens => "max_tokens",
            Self::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

/// Which guards a live or recording run had.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardsSetting {
    /// The side-effect guard.
    pub write_guard: bool,
    /// It refused every write no rule names (`--strict-write-guard`); absent: it did not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub write_guard_strict: bool,
    /// What the rules let pass was read again by the learned judge (on unless `--no-learned-guard`);
    /// absent: it was not (a run from before it, or with it off).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub write_guard_learned: bool,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_known_keys_are_the_fields_of_both_halves() {
        let keys: Vec<&str> = RunSettings::keys().collect();
        for k in ["max_steps", "warm_browsers", "temperature", "on_miss", "ws_pacing", "guards"] {
            assert!(keys.contains(&k), "{k}: {keys:?}");
        }
        assert_eq!(keys.len(), 16 + 7, "{keys:?}");
    }
}
