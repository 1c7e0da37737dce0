//! Which benchmark a task comes from: the one value the task reader sets, the task and its trajectory carry,
//! and the agent (prompt, action space) and the evaluator (scorer) dispatch on. Every `match` on it is
//! exhaustive, so adding a variant makes the compiler name each room a new benchmark fills (ARCHITECTURE,
//! "Adding a benchmark").

use serde::{Deserialize, Serialize};

/// A benchmark whose task files webfreeze reads and whose tasks it scores.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Benchmark {
    /// WebVoyager (and GAIA's web subset, and this project's demo tasks): JSON Lines with `ques` and `web`;
    /// scored by reference answers and the model judge.
    #[default]
    #[serde(rename = "webvoyager")]
    WebVoyager,
    /// WebArena and VisualWebArena: config JSON with an `eval` object of eval types.
    #[serde(rename = "webarena")]
    WebArena,
    /// WebArena-Verified: WebArena's tasks re-audited, each `eval` a list of evaluators.
    #[serde(rename = "webarena-verified")]
    WebArenaVerified,
    /// AssistantBench: JSON Lines with `task` and a gold `answer`, started from a search engine and
    /// scored by their answer-type metrics (partial credit in 0..1).
    #[serde(rename = "assistantbench")]
    AssistantBench,
}

impl Benchmark {
    /// Every benchmark, in a fixed order (for `--help` and errors).
    pub const ALL: [Benchmark; 4] =
        [Benchmark::WebVoyager, Benchmark::WebArena, Benchmark::WebArenaVerified, Benchmark::AssistantBench];

    /// The name used in files, flags and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Benchmark::WebVoyager => "webvoyager",
            Benchmark::WebArena => "webarena",
            Benchmark::WebArenaVerified => "webarena-verified",
            Benchmark::AssistantBench => "assistantbench",
        }
    }
}

impl std::fmt::Display for Benchmark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A benchmark name this build does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown benchmark {0:?}: expected one of webvoyager, webarena, webarena-verified, assistantbench")]
pub struct UnknownBenchmark(pub String);

impl std::str::FromStr for Benchmark {
    type Err = UnknownBenchmark;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Benchmark::ALL.into_iter().find(|b| b.as_str() == s).ok_or_else(|| UnknownBenchmark(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_text_and_json() {
        for b in Benchmark::ALL {
            assert_eq!(b.as_str().parse::<Benchmark>(), Ok(b));
            assert_eq!(serde_json::to_value(b).unwrap(), serde_json::json!(b.as_str()));
            assert_eq!(serde_json::from_value::<Benchmark>(serde_json::json!(b.as_str())).unwrap(), b);
        }
        assert!("mind2web".parse::<Benchmark>().unwrap_err().to_string().contains("assistantbench"));
    }
}
