//! The proxy half of a run's settings and replay's own flags, each enum defined once: `replay` serves by them, `run.json` names
//! them (serde, through `trajectory::ProxySettings`) and the command line parses them (clap's
//! `ValueEnum`, derived behind this crate's `clap` feature, which only the binary turns on, through
//! `trajectory`'s). A leaf crate (serde only) so that replay, which knows no run directory, and
//! trajectory, which knows no replay, share them without a conversion between two copies.
//!
//! The serde names are the ones every run has written, so old run files read as before; the doc comments
//! of the variants are the command line's help.

use serde::{Deserialize, Serialize};

/// What replay does when no recorded exchange matches (`--on-miss`). Replay's `OnMiss` is the policy at
/// work (with the recorder of misses).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum MissPolicy {
    /// Answer 404 with a text body naming the URL; never contact an origin.
    #[default]
    #[cfg_attr(feature = "clap", value(name = "404"))]
    NotFound,
    /// Forward misses to the live origin.
    Live,
    /// Forward misses live and record them into a second snapshot.
    Record,
}

/// What a replay serves besides the task's own snapshot (`--frozen-web`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum FrozenWebUnit {
    /// The task's own snapshot only: exactly what was recorded for it.
    Task,
    /// The task's own snapshot, then the other tasks' snapshots of its site in the same recording.
    #[default]
    Site,
}

/// When a replay's frozen search engine answers (`--search`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// Never: an unrecorded search is a miss.
    #[default]
    Off,
    /// A search no recording answers gets the frozen search engine's results (unless the replay sends
    /// misses live: then the live engine answers it).
    Fallback,
    /// Every search gets the frozen search engine's results, recorded or not.
    Always,
    /// As fallback, and a site's own search too: a GET to a path recorded with other values of its search
    /// parameter gets that site's matching pages.
    Site,
}

/// How a replay times recorded WebSocket server messages (`--ws-pacing`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum WsPacing {
    /// Each server message after the delay it had in the recording.
    #[default]
    Recorded,
    /// Server messages as soon as they are released.
    Fast,
}

/// How replay answers an exchange recorded without its body (`body_not_captured`, e.g. from a HAR that left
/// bodies out; `--not-captured`). Either way the report counts it as served without a body, never as a hit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum NotCaptured {
    /// Answer 404 naming the reason: the page sees the resource as missing, never as empty.
    #[default]
    #[cfg_attr(feature = "clap", value(name = "404"))]
    #[serde(rename = "404")]
    NotFound,
    /// The recorded status and headers with an empty body.
    Empty,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names `run.json` has always had for each value: a rename here would stop old runs reading.
    #[test]
    fn each_value_keeps_the_name_runs_have_written() {
        fn name<T: Serialize>(v: T) -> String {
            serde_json::to_string(&v).unwrap()
        }
        let rows: Vec<(String, &str)> = vec![
            (name(MissPolicy::NotFound), "\"NotFound\""),
            (name(MissPolicy::Live), "\"Live\""),
            (name(MissPolicy::Record), "\"Record\""),
            (name(FrozenWebUnit::Task), "\"task\""),
            (name(FrozenWebUnit::Site), "\"site\""),
            (name(SearchMode::Off), "\"off\""),
            (name(SearchMode::Fallback), "\"fallback\""),
            (name(SearchMode::Always), "\"always\""),
            (name(SearchMode::Site), "\"site\""),
            (name(WsPacing::Recorded), "\"recorded\""),
            (name(WsPacing::Fast), "\"fast\""),
        ];
        for (got, want) in rows {
            assert_eq!(got, want);
        }
    }
}
