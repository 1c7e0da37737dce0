//! The settings that shape a trajectory: the step budget, the window, the waits, the search page, the early
//! stops, the action space and the observation. Each is as given, else what the re-executed run recorded
//! in its `run.json` (its agent half, `trajectory::AgentSettings`), else the default: one place, so
//! `run --policy trajectory:RUN`, `eval --rescore` and `coverage` re-execute a run the way it ran, and
//! write down the same settings for the next re-execution. (The proxy half, what answered the browser,
//! resolves the same way in `session::settings`.)

use std::time::Duration;

use trajectory::{AgentSettings, Benchmark};

use crate::action::ActionSpace;
use crate::browser::ObservationKind;
use crate::runner::{AgentConfig, DEFAULT_SETTLE_MS};

/// Settings given for this run (the command line's flags); None: not given.
#[derive(Debug, Clone, Default)]
pub struct Given {
    /// Step budget.
    pub max_steps: Option<u32>,
    /// Window and viewport (width, height).
    pub window: Option<(u32, u32)>,
    /// Page timeout, seconds.
    pub page_timeout_s: Option<f64>,
    /// Quiet period of a settling page, ms.
    pub settle_ms: Option<u64>,
    /// How long `Wait` waits, ms.
    pub wait_ms: Option<u64>,
    /// Where `Google` goes.
    pub search_url: Option<String>,
    /// Stop after this many replies in a row that did not parse.
    pub early_stop_parse_failures: Option<u32>,
    /// Stop after this many repeats of one action.
    pub early_stop_repeats: Option<u32>,
    /// Action space.
    pub action_space: Option<ActionSpace>,
    /// Observation.
    pub observation: Option<ObservationKind>,
}

/// The settings a run uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Step budget (at least 1).
    pub max_steps: u32,
    /// Window and viewport.
    pub window: (u32, u32),
    /// Page timeout, seconds.
    pub page_timeout_s: f64,
    /// Quiet period, ms.
    pub settle_ms: u64,
    /// `Wait`, ms.
    pub wait_ms: u64,
    /// Where `Google` goes.
    pub search_url: String,
    /// Early stop on parse failures (None: off).
    pub early_stop_parse_failures: Option<u32>,
    /// Early stop on repeats (None: off).
    pub early_stop_repeats: Option<u32>,
    /// Action space.
    pub action_space: ActionSpace,
    /// Observation.
    pub observation: ObservationKind,
}

/// Why the settings cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// An observation WebVoyager's actions cannot point into.
    #[error(
        "--observation {0} needs --action-space webarena (WebVoyager's actions name Set-of-Marks labels)"
    )]
    ObservationNeedsWebArena(ObservationKind),
}

/// Defaults of a run that neither gives nor re-executes a setting.
const DEFAULT_MAX_STEPS: u32 = 15;
const DEFAULT_WINDOW: (u32, u32) = (1024, 768);
const DEFAULT_PAGE_TIMEOUT_S: f64 = 30.0;
const DEFAULT_WAIT_MS: u64 = 5000;
const DEFAULT_SEARCH_URL: &str = "https://www.google.com/";

impl Settings {
    /// Each setting as given, else as `recorded` (the re-executed run's `run.json`, its agent half), else the default. The
    /// default action space is the one `benchmark`'s own harness gives its agents
    /// ([`crate::tasks::native_action_space`]; WebVoyager's without one); a re-executed run that recorded
    /// none ran WebVoyager's, every run's then.
    pub fn resolve(
        given: &Given,
        recorded: Option<&AgentSettings>,
        benchmark: Option<Benchmark>,
    ) -> Result<Settings, SettingsError> {
        // A run.json without a config section (older runs) reads as zeros: those are not settings.
        let rc = recorded.filter(|c| c.max_steps > 0);
        let window = given
            .window
            .or_else(|| rc.map(|c| (c.window[0], c.window[1])).filter(|(w, h)| *w >= 200 && *h >= 200))
            .unwrap_or(DEFAULT_WINDOW);
        let native = benchmark.map_or(ActionSpace::WebVoyager, crate::tasks::native_action_space);
        let action_space = given
            .action_space
            .or_else(|| recorded.map(|c| c.action_space.unwrap_or(ActionSpace::WebVoyager)))
            .unwrap_or(native);
        let observation = given
            .observation
            .or_else(|| recorded.and_then(|c| c.observation))
            .unwrap_or(ObservationKind::Som);
        if action_space == ActionSpace::WebVoyager && observation != ObservationKind::Som {
            return Err(SettingsError::ObservationNeedsWebArena(observation));
        }
        Ok(Settings {
            max_steps: given.max_steps.or(rc.map(|c| c.max_steps)).unwrap_or(DEFAULT_MAX_STEPS).max(1),
            window,
            page_timeout_s: given
                .page_timeout_s
                .or(rc.map(|c| c.page_timeout_s))
                .unwrap_or(DEFAULT_PAGE_TIMEOUT_S),
            settle_ms: given.settle_ms.or(rc.map(|c| c.settle_ms)).unwrap_or(DEFAULT_SETTLE_MS),
            wait_ms: given.wait_ms.or(rc.map(|c| c.wait_ms)).unwrap_or(DEFAULT_WAIT_MS),
            search_url: given
                .search_url
                .clone()
                .or(rc.map(|c| c.search_url.clone()).filter(|u| !u.is_empty()))
                .unwrap_or_else(|| DEFAULT_SEARCH_URL.into()),
            early_stop_parse_failures: given
                .early_stop_parse_failures
                .or(rc.and_then(|c| c.early_stop_parse_failures)),
            early_stop_repeats: given.early_stop_repeats.or(rc.and_then(|c| c.early_stop_repeats)),
            action_space,
            observation,
        })
    }

    /// Put the settings into an agent configuration (the rest of it, the browser and the exploration,
    /// stays as it is).
    pub fn apply(&self, agent: &mut AgentConfig) {
        (agent.width, agent.height) = self.window;
        agent.max_steps = self.max_steps;
        agent.page_timeout = Duration::from_secs_f64(self.page_timeout_s.max(1.0));
        agent.settle_quiet = Duration::from_millis(self.settle_ms);
        agent.wait = Duration::from_millis(self.wait_ms);
        agent.search_url = self.search_url.clone();
        // Early stops end a task where the run ended it; without them a re-execution would ask for a
        // reply the run never had.
        agent.stop_after_parse_failures = self.early_stop_parse_failures.unwrap_or(0);
        agent.stop_after_repeats = self.early_stop_repeats.unwrap_or(0);
        agent.action_space = self.action_space;
        agent.observation = self.observation;
    }

    /// The settings of an agent configuration (the inverse of [`Settings::apply`]; the early stops off
    /// are None).
    pub fn of_agent(agent: &AgentConfig) -> Settings {
        Settings {
            max_steps: agent.max_steps,
            window: (agent.width, agent.height),
            page_timeout_s: agent.page_timeout.as_secs_f64(),
            settle_ms: agent.settle_quiet.as_millis() as u64,
            wait_ms: agent.wait.as_millis() as u64,
            search_url: agent.search_url.clone(),
            early_stop_parse_failures: (agent.stop_after_parse_failures > 0)
                .then_some(agent.stop_after_parse_failures),
            early_stop_repeats: (agent.stop_after_repeats > 0).then_some(agent.stop_after_repeats),
            action_space: agent.action_space,
            observation: agent.observation,
        }
    }

    /// Writes them into `run.json`'s agent half ([`Settings::resolve`] reads them back).
    pub fn record(&self, config: &mut AgentSettings) {
        config.max_steps = self.max_steps;
        config.window = [self.window.0, self.window.1];
        config.page_timeout_s = self.page_timeout_s;
        config.settle_ms = self.settle_ms;
        config.wait_ms = self.wait_ms;
        config.search_url = self.search_url.clone();
        config.early_stop_parse_failures = self.early_stop_parse_failures;
        config.early_stop_repeats = self.early_stop_repeats;
        config.action_space = Some(self.action_space);
        config.observation = Some(self.observation);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run.json's settings as a run wrote them, with `keys` besides (read as a re-execution reads them).
    fn recorded(keys: &[(&str, serde_json::Value)]) -> AgentSettings {
        let mut v = serde_json::json!({"max_steps": 7, "window": [1280, 720], "page_timeout_s": 12.0,
            "settle_ms": 80, "wait_ms": 900, "search_url": "https://search.test/"});
        for (k, x) in keys {
            v[*k] = x.clone();
        }
        serde_json::from_value::<trajectory::RunSettings>(v).unwrap().agent
    }

    #[test]
    fn given_then_recorded_then_default() {
        let rc = recorded(&[
            ("action_space", "webarena".into()),
            ("observation", "axtree".into()),
            ("early_stop_repeats", 3.into()),
        ]);
        let old = AgentSettings::default(); // a run.json without a config section
        let webarena = Given { action_space: Some(ActionSpace::WebArena), ..Given::default() };
        let defaults = Settings {
            max_steps: 15,
            window: (1024, 768),
            page_timeout_s: 30.0,
            settle_ms: DEFAULT_SETTLE_MS,
            wait_ms: 5000,
            search_url: "https://www.google.com/".into(),
            early_stop_parse_failures: None,
            early_stop_repeats: None,
            action_space: ActionSpace::WebVoyager,
            observation: ObservationKind::Som,
        };
        let from_run = Settings {
            max_steps: 7,
            window: (1280, 720),
            page_timeout_s: 12.0,
            settle_ms: 80,
            wait_ms: 900,
            search_url: "https://search.test/".into(),
            early_stop_parse_failures: None,
            early_stop_repeats: Some(3),
            action_space: ActionSpace::WebArena,
            observation: ObservationKind::AxTree,
        };
        let verified = Some(Benchmark::WebArenaVerified);
        // Rows: name, flags, the re-executed run's settings, the tasks' benchmark, the settings used.
        type Case<'a> = (&'a str, Given, Option<&'a AgentSettings>, Option<Benchmark>, Settings);
        let cases: Vec<Case> = vec![
            ("nothing given, nothing recorded", Given::default(), None, None, defaults.clone()),
            (
                "a benchmark's own action space by default",
                Given::default(),
                None,
                verified,
                Settings { action_space: ActionSpace::WebArena, ..defaults.clone() },
            ),
            (
                "AssistantBench's harness is WebVoyager's",
                Given::default(),
                None,
                Some(Benchmark::AssistantBench),
                defaults.clone(),
            ),
            (
                "a flag wins over the benchmark's",
                Given { action_space: Some(ActionSpace::WebVoyager), ..Given::default() },
                None,
                verified,
                defaults.clone(),
            ),
            ("a re-execution takes the run's", Given::default(), Some(&rc), verified, from_run.clone()),
            (
                "flags win over the run's",
                Given {
                    max_steps: Some(2),
                    window: Some((800, 600)),
                    settle_ms: Some(0),
                    ..webarena.clone()
                },
                Some(&rc),
                None,
                Settings { max_steps: 2, window: (800, 600), settle_ms: 0, ..from_run.clone() },
            ),
            (
                // It ran WebVoyager's action space, the only default then, whatever its benchmark.
                "an old run.json's zeros are not settings",
                Given { max_steps: Some(0), ..Given::default() },
                Some(&old),
                verified,
                Settings { max_steps: 1, ..defaults.clone() },
            ),
        ];
        for (name, given, rc, benchmark, want) in cases {
            assert_eq!(Settings::resolve(&given, rc, benchmark).unwrap(), want, "{name}");
        }
    }

    #[test]
    fn what_cannot_be_used_is_refused_with_the_reason() {
        // A run.json with a setting this build does not know is refused where it is read, naming it.
        let e = serde_json::from_value::<trajectory::RunSettings>(
            serde_json::json!({"observation": "telepathy"}),
        )
        .unwrap_err();
        assert!(e.to_string().contains("telepathy"), "{e}");
        let axtree = Given { observation: Some(ObservationKind::AxTree), ..Given::default() };
        let e = Settings::resolve(&axtree, None, None).unwrap_err();
        assert!(matches!(e, SettingsError::ObservationNeedsWebArena(ObservationKind::AxTree)), "{e}");
        assert!(e.to_string().contains("--action-space webarena"), "{e}");
    }

    #[test]
    fn what_run_json_records_resolves_to_the_same_settings() {
        let given = Given {
            max_steps: Some(9),
            window: Some((1366, 768)),
            early_stop_parse_failures: Some(2),
            action_space: Some(ActionSpace::WebArena),
            observation: Some(ObservationKind::SomAxTree),
            ..Given::default()
        };
        let s = Settings::resolve(&given, None, None).unwrap();
        let mut rc = trajectory::RunSettings::default();
        s.record(&mut rc.agent);
        // Through the file and back.
        let rc = serde_json::from_str::<trajectory::RunSettings>(&serde_json::to_string(&rc).unwrap())
            .unwrap()
            .agent;
        assert_eq!(Settings::resolve(&Given::default(), Some(&rc), Some(Benchmark::WebArena)).unwrap(), s);
        let mut agent = AgentConfig::new(std::path::PathBuf::from("chromium"));
        s.apply(&mut agent);
        assert_eq!(Settings::of_agent(&agent), s);
    }
}
