//! The run directory's format is a boundary: a run written by v1 must keep reading. The fixture under
//! `tests/fixtures/run-v1/` was written by webfreeze 0.1 (`run.json` with every task state, one trajectory);
//! never regenerate it, add `run-v2/` beside it when the format changes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use trajectory::{
    ActionSpace, AgentSettings, ExploreSetting, FrozenWebUnit, GuardsSetting, MaxTokensField,
    MaxTokensSetting, MissPolicy, ObservationKind, Outcome, ProxySettings, RunDir, RunMode, RunSettings,
    SearchMode, TaskState, TaskStatus, WarmBrowsersSetting,
};

fn fixture() -> RunDir {
    RunDir::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-v1"))
}

#[test]
fn v1_run_file_reads_with_typed_states() {
    let rf = fixture().read_run_file().unwrap();
    assert_eq!(rf.v, 1);
    assert_eq!(rf.mode, RunMode::Record);
    assert_eq!(rf.snapshots.as_deref(), Some("recorded"));
    assert_eq!(rf.settings.agent.max_steps, 15);
    assert_eq!(rf.settings.agent.window, [1024, 768]);
    let states: Vec<(&str, TaskState)> = rf.tasks.iter().map(|(k, v)| (k.as_str(), v.status)).collect();
    assert_eq!(
        states,
        vec![
            ("News--1", TaskState::Interrupted),
            ("Shop--1", TaskState::Answered),
            ("Shop--2", TaskState::MaxSteps),
            ("Shop--3", TaskState::Error),
            ("Shop--4", TaskState::Pending),
            ("Shop--5", TaskState::Running),
        ]
    );
    assert_eq!(rf.tasks["Shop--1"].answer.as_deref(), Some("12.50"));
}

#[test]
fn v1_trajectory_reads_and_matches_its_status_line() {
    let run = fixture();
    let t = run.task("Shop--1").read_trajectory().unwrap().unwrap();
    assert_eq!(t.outcome, Outcome::Answered);
    assert_eq!(t.mode, RunMode::Record);
    assert_eq!(t.steps.len(), 2);
    assert_eq!(t.steps[0].proxy.recorded, 3);
    assert!(t.steps[1].reproduced.as_ref().is_some_and(|r| r.url && !r.screenshot));
    let line = TaskStatus::of(&t);
    assert_eq!(line, run.read_run_file().unwrap().tasks["Shop--1"]);
    let all = run.trajectories().unwrap();
    assert_eq!(all.len(), 1);
}

#[test]
fn a_written_run_file_reads_back_equal() {
    let d = tempfile::tempdir().unwrap();
    let rf = fixture().read_run_file().unwrap();
    let copy = RunDir::new(d.path());
    copy.write_run_file(&rf).unwrap();
    assert_eq!(copy.read_run_file().unwrap(), rf);
}

fn fixture_path(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// What a run's `config` must read as: its settings, or an error naming the key nobody knows.
enum Want {
    Settings(Box<RunSettings>),
    UnknownKey(&'static str),
}

/// Every shape of `run.json`'s settings runs have written reads as the same settings, and a key no
/// setting has is refused by name (issue 62): never kept and ignored.
/// - `run-v1`: the first settings (the agent's budget and waits, the miss policy, the model's);
/// - `run-v1-minimal`: no `config` at all (the oldest runs): zeros, which re-executions do not take;
/// - `run-v1-all-settings`: every setting as the flat `RunConfig` of before issue 62 wrote it (a forked
///   replay: frozen web and search, guards of its live misses, every agent setting);
/// - `run-v1-settings`: issue 50's fixture, whose `a_key_of_a_newer_version` was kept then and is refused now;
/// - a misspelled key.
#[test]
fn run_settings_of_every_shape_read_typed_and_unknown_keys_are_named() {
    let first = RunSettings {
        agent: AgentSettings {
            max_steps: 15,
            window: [1024, 768],
            page_timeout_s: 30.0,
            settle_ms: 300,
            wait_ms: 1000,
            search_url: "https://shop.test/".into(),
            temperature: 0.0,
            keep_screenshots: 3,
            ..Default::default()
        },
        proxy: ProxySettings { on_miss: MissPolicy::NotFound, ..Default::default() },
    };
    let all = RunSettings {
        agent: AgentSettings {
            max_steps: 9,
            window: [1366, 768],
            page_timeout_s: 30.0,
            settle_ms: 500,
            wait_ms: 5000,
            search_url: "https://www.google.com/".into(),
            temperature: 0.0,
            keep_screenshots: 3,
            early_stop_parse_failures: Some(2),
            early_stop_repeats: Some(3),
            action_space: Some(ActionSpace::WebArena),
            observation: Some(ObservationKind::SomAxTree),
            max_tokens: Some(MaxTokensSetting { field: MaxTokensField::MaxCompletionTokens, value: 512 }),
            explore: Some(ExploreSetting { links_per_page: 3, host_budget: 40, depth: 1, pace_ms: 0 }),
            fork_at: Some(2),
            warm_browsers: Some(WarmBrowsersSetting {
                recycle_after: 50,
                memory_ceiling_mib: Some(1024),
                contexts_per_browser: 1,
            }),
        },
        proxy: ProxySettings {
            on_miss: MissPolicy::Live,
            frozen_web: Some(FrozenWebUnit::Site),
            search: Some(SearchMode::Fallback),
            ws_pacing: None,
            time_zone: Some("Europe/Berlin".into()),
            locale: Some("de-DE".into()),
            guards: Some(GuardsSetting {
                write_guard: true,
                write_guard_strict: false,
                write_guard_learned: true,
                answer_guard: false,
                own_hosts: vec!["shop.test".into()],
            }),
        },
    };
    let d = tempfile::tempdir().unwrap();
    let misspelled = d.path().join("misspelled");
    std::fs::create_dir(&misspelled).unwrap();
    let text = std::fs::read_to_string(fixture_path("run-v1-all-settings/run.json")).unwrap();
    std::fs::write(misspelled.join("run.json"), text.replace("\"settle_ms\"", "\"setle_ms\"")).unwrap();
    let cases: Vec<(&str, std::path::PathBuf, Want)> = vec![
        ("the first settings", fixture_path("run-v1"), Want::Settings(Box::new(first))),
        ("no config", fixture_path("run-v1-minimal"), Want::Settings(Box::default())),
        ("every setting", fixture_path("run-v1-all-settings"), Want::Settings(Box::new(all))),
        (
            "a key of a newer version",
            fixture_path("run-v1-settings"),
            Want::UnknownKey("a_key_of_a_newer_version"),
        ),
        ("a misspelled key", misspelled, Want::UnknownKey("setle_ms")),
    ];
    for (name, dir, want) in cases {
        let read = RunDir::new(&dir).read_run_file();
        match want {
            Want::Settings(want) => {
                let rf = read.unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(rf.settings, *want, "{name}");
                // Round trip: written and read back, the same settings; and, where the file had a config,
                // the same keys and values it had.
                let copy = d.path().join(name.replace(' ', "-"));
                RunDir::new(&copy).create().unwrap();
                RunDir::new(&copy).write_run_file(&rf).unwrap();
                assert_eq!(RunDir::new(&copy).read_run_file().unwrap(), rf, "{name}");
                let file: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap();
                if file.get("config").is_some() {
                    assert_eq!(serde_json::to_value(&rf.settings).unwrap(), file["config"], "{name}");
                }
            }
            Want::UnknownKey(key) => {
                let e = read.expect_err(name).to_string();
                assert!(e.contains(&format!("unknown run setting `{key}`")), "{name}: {e}");
                assert!(
                    e.contains("settle_ms") && e.contains("ws_pacing"),
                    "{name}: the settings listed: {e}"
                );
            }
        }
    }
}

#[test]
fn a_bad_value_is_named_with_its_key() {
    let e =
        serde_json::from_value::<RunSettings>(serde_json::json!({"observation": "telepathy"})).unwrap_err();
    assert!(e.to_string().contains("observation") && e.to_string().contains("telepathy"), "{e}");
    let e = serde_json::from_value::<RunSettings>(serde_json::json!({"ws_pacing": "slow"})).unwrap_err();
    assert!(e.to_string().contains("ws_pacing") && e.to_string().contains("slow"), "{e}");
}
