//! The agent's settings for a run ([`AgentConfig`]) and, from them, each task's browser options.

use std::path::PathBuf;
use std::time::Duration;

use crate::action::ActionSpace;
use crate::browser::{BrowserOptions, ObservationKind};
use trajectory::task_env::TaskEnv;

/// The default quiet period of a settling page, in milliseconds: a margin for a page's short timers. The
/// browser's events (requests, frames, the load event) decide the rest, so a longer one only slows steps;
/// a page whose scripts start requests on a longer timer needs `--settle-ms`.
pub const DEFAULT_SETTLE_MS: u64 = 50;

/// Agent settings shared by all tasks of a run.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// Browser binary.
    pub chrome: PathBuf,
    /// Window and viewport width.
    pub width: u32,
    /// Window and viewport height.
    pub height: u32,
    /// Step budget (each failed action costs one).
    pub max_steps: u32,
    /// Bound on page loads and on every browser call.
    pub page_timeout: Duration,
    /// A page has settled after this long without a request in flight, started or ended (and two frames
    /// drawn since; see `browser::settle`) [default: [`DEFAULT_SETTLE_MS`]].
    pub settle_quiet: Duration,
    /// What `Wait` waits.
    pub wait: Duration,
    /// Where `Google` goes.
    pub search_url: String,
    /// Cap on each renderer's JavaScript heap, MiB (see [`BrowserOptions::js_heap_mb`]).
    pub js_heap_mb: Option<u32>,
    /// Show the automation (see [`BrowserOptions::disclose_automation`]).
    pub disclose_automation: bool,
    /// Stop a task after this many unparseable replies in a row (WebArena uses 3); 0: never.
    pub stop_after_parse_failures: u32,
    /// Stop a task after the same action this many times in a row (WebArena uses 5); 0: never.
    pub stop_after_repeats: u32,
    /// The grammar of the model's actions (WebArena's has real tabs).
    pub action_space: ActionSpace,
    /// What the model observes.
    pub observation: ObservationKind,
    /// Record mode: explore the links the agent could have followed after each observation
    /// ([`crate::explore`]); None: no exploration.
    pub explore: Option<crate::explore::ExploreOptions>,
    /// The shop's admin account for WebArena's shop REST helpers ([`crate::tasks::shop_api`]);
    /// WebArena's public default unless the caller gives one.
    pub shop_admin: crate::tasks::shop_api::ShopAdmin,
    /// Warm browsers shared by the run's tasks, each task in a fresh context of a kept process
    /// ([`crate::browser::BrowserPool`]); None: a browser process per task.
    pub browsers: Option<std::sync::Arc<crate::browser::BrowserPool>>,
}

impl AgentConfig {
    /// WebVoyager's defaults: 1024x768, 15 steps.
    pub fn new(chrome: PathBuf) -> Self {
        Self {
            chrome,
            width: 1024,
            height: 768,
            max_steps: 15,
            page_timeout: Duration::from_secs(30),
            settle_quiet: Duration::from_millis(DEFAULT_SETTLE_MS),
            wait: Duration::from_secs(5),
            search_url: "https://www.google.com/".into(),
            js_heap_mb: None,
            disclose_automation: false,
            stop_after_parse_failures: 0,
            stop_after_repeats: 0,
            action_space: ActionSpace::WebVoyager,
            observation: ObservationKind::Som,
            explore: None,
            shop_admin: Default::default(),
            browsers: None,
        }
    }
}

/// The browser for a task: the agent's settings, the proxy's environment, the task's own set-up.
pub(crate) fn browser_options(
    cfg: &AgentConfig,
    env: &TaskEnv,
    setup: &crate::tasks::TaskSetup,
    profile: PathBuf,
) -> BrowserOptions {
    BrowserOptions {
        chrome: cfg.chrome.clone(),
        proxy: env.proxy,
        ca_spki: env.ca_spki.clone(),
        width: setup.viewport.0.unwrap_or(cfg.width),
        height: setup.viewport.1.unwrap_or(cfg.height),
        init_scripts: env.init_scripts.clone(),
        time_zone: env.time_zone.clone(),
        locale: env.locale.clone(),
        page_timeout: cfg.page_timeout,
        settle_quiet: cfg.settle_quiet,
        wait: cfg.wait,
        search_url: cfg.search_url.clone(),
        profile,
        js_heap_mb: cfg.js_heap_mb,
        disclose_automation: cfg.disclose_automation,
        real_tabs: cfg.action_space == ActionSpace::WebArena,
        observation: cfg.observation,
        storage_state: setup.storage_state.clone(),
        geolocation: setup.geolocation.as_ref().and_then(|g| {
            let f = |k: &str| g.get(k).and_then(serde_json::Value::as_f64);
            Some((f("latitude")?, f("longitude")?, f("accuracy").unwrap_or(100.0)))
        }),
    }
}
