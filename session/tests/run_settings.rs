//! `run.json`'s settings are written once, by `RunOptions::settings`, from what the run is given (issue 62).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;

use agent::runner::AgentConfig;
use proxy::{CertificateAuthority, ProxyConfig};
use session::{FrozenWeb, PolicySpec, ProxyMode, RunOptions};
use snapshots::Store;
use trajectory::llm::LlmConfig;
use trajectory::{FrozenWebUnit, MissPolicy, RunSettings, SearchMode, WsPacing};

/// The one writer of run.json's settings: both halves from what the run is given, a replay's frozen web
/// (and its WebSocket pacing) included, and what it writes is what a re-execution reads back.
#[test]
fn a_runs_settings_are_what_it_was_given() {
    let home = tempfile::tempdir().unwrap();
    #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
    let now = time::OffsetDateTime::now_utc();
    let ca = Arc::new(CertificateAuthority::init(&home.path().join("ca"), true, now).unwrap());
    let mut agent = AgentConfig::new(PathBuf::from("chromium"));
    agent.max_steps = 9;
    agent.browsers = Some(agent::browser::BrowserPool::new(Default::default()));
    let frozen_web = FrozenWeb {
        unit: FrozenWebUnit::Task,
        search: replay::search::SearchMode::Always,
        search_urls: vec![agent.search_url.clone()],
        ws_pacing: replay::websocket::WsPacing::Fast,
        leave_out_own: false,
    };
    let mut config = LlmConfig::new("http://127.0.0.1:1/v1", "m", "");
    config.temperature = 0.5;
    let opts = RunOptions {
        out: home.path().join("run"),
        mode: ProxyMode::Replay {
            store: Store::in_memory(),
            run: "rec".into(),
            on_miss: session::MissPolicy::Live,
            frozen_web: frozen_web.clone(),
        },
        policy: PolicySpec::Fork { run: home.path().join("rec"), at: 2, config, keep_screenshots: 4 },
        agent,
        ca,
        proxy: ProxyConfig::default(),
        clock: Arc::new(clock::FixedClock::new(0)),
        time_zone: "Asia/Tokyo".into(),
        locale: "ja-JP".into(),
        jobs: 1,
        tasks_file: "tasks.jsonl".into(),
        chrome_version: String::new(),
        shard: None,
        task_timeout: None,
        retry_blocked: false,
        guard: Some(Arc::new(proxy::guard::GuardConfig::standard(vec!["shop.test".into()]))),
    };
    let s = opts.settings();
    let (a, p) = (&s.agent, &s.proxy);
    assert_eq!((a.max_steps, a.temperature, a.keep_screenshots, a.fork_at), (9, 0.5, 4, Some(2)));
    assert_eq!(a.max_tokens.as_ref().map(|m| (m.field.as_str(), m.value)), Some(("max_tokens", 1000)));
    assert!(a.warm_browsers.is_some() && a.explore.is_none());
    assert_eq!(
        (p.on_miss, p.frozen_web, p.search, p.ws_pacing),
        (MissPolicy::Live, Some(FrozenWebUnit::Task), Some(SearchMode::Always), Some(WsPacing::Fast))
    );
    assert_eq!((p.time_zone.as_deref(), p.locale.as_deref()), (Some("Asia/Tokyo"), Some("ja-JP")));
    assert_eq!(p.guards.as_ref().map(|g| g.own_hosts.clone()), Some(vec!["shop.test".to_string()]));
    // Read back through the file, a re-execution serves the same frozen web.
    let back: RunSettings = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
    assert_eq!(back, s);
    let again = FrozenWeb::resolve(&Default::default(), Some(&back.proxy), &back.agent.search_url);
    assert_eq!(again, frozen_web);
}
