//! One task, start to end: launch the browser against the given proxy, load the start page, then observe,
//! decide, act until the policy answers or the step budget runs out. Everything is written to the task's
//! directory as it happens; a failure (browser, page, model) ends the task with a recorded error and never
//! escapes as a panic, so a run goes on with its next task.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::action::{ActionSpace, AnyAction};
use crate::browser::{BrowserOptions, ObservationKind, Session};
use crate::policy::{system_prompt, user_text, webarena_user_text, Policy, Prompt};
use crate::tasks::shop_api::ShopApi;
use crate::tasks::Task;
use trajectory::llm::Message;
use trajectory::{Outcome, Reproduction, RunMode, Step, TaskDir, Timings, Trajectory, TRAJECTORY_VERSION};

/// The task's browser profile directory. Chromium's processes (browser, zygotes, renderers, GPU) all
/// carry it on their command line; when a task's future is dropped mid-run (`--task-timeout`, Ctrl-C)
/// the browser handle only kills the main process, so on drop every process still naming the profile
/// is killed before the directory is removed. After a normal close there are none and this is a scan
/// of `/proc`.
pub(crate) struct ProfileGuard(pub(crate) tempfile::TempDir);

impl ProfileGuard {
    pub(crate) fn path(&self) -> &std::path::Path {
        self.0.path()
    }
}

impl Drop for ProfileGuard {
    fn drop(&mut self) {
        let needle = self.0.path().as_os_str().as_encoded_bytes().to_vec();
        let me = std::process::id();
        let Ok(procs) = std::fs::read_dir("/proc") else { return };
        for e in procs.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
            if pid as u32 == me {
                continue;
            }
            let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else { continue };
            if cmd.windows(needle.len()).any(|w| w == needle.as_slice()) {
                if let Some(p) = rustix::process::Pid::from_raw(pid) {
                    let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
                }
            }
        }
    }
}

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
        }
    }
}

pub use trajectory::task_env::{ProxyProbe, TaskEnv};

mod checks;
mod stats;

use checks::final_checks;
pub use stats::coverage;
use stats::{delta, guard_flags};

struct Files {
    dir: TaskDir,
    system: &'static str,
    transcript: Vec<Message>,
    messages: Vec<serde_json::Value>,
}

impl Files {
    fn save(&self, t: &Trajectory) {
        let mut errs = Vec::new();
        if let Err(e) = self.dir.write_trajectory(t) {
            errs.push(e.to_string());
        }
        let msgs = serde_json::json!({ "system": self.system, "policy": t.policy, "steps": self.messages });
        for (name, v) in [
            ("messages.json", msgs),
            ("interact_messages.json", serde_json::to_value(&self.transcript).unwrap_or_default()),
        ] {
            if let Err(e) = self.dir.write_json(name, &v) {
                errs.push(e.to_string());
            }
        }
        for e in errs {
            tracing::error!("task {}: cannot write its files: {e}", t.task_id);
        }
    }

    fn png(&self, name: &str, png: &[u8]) -> Result<(), trajectory::RunDirError> {
        self.dir.write_file(name, png)
    }
}

/// Run one task, writing into `dir` (created). Always returns the trajectory; errors are inside it.
pub async fn run_task(
    cfg: &AgentConfig,
    env: TaskEnv,
    task: &Task,
    mut policy: Policy,
    dir: TaskDir,
) -> Trajectory {
    let t0 = Instant::now();
    let mut t = Trajectory {
        v: TRAJECTORY_VERSION,
        task_id: task.id.clone(),
        web_name: task.web_name.clone(),
        question: task.ques.clone(),
        start_url: task.web.clone(),
        mode: env.mode,
        snapshot: env.snapshot.clone(),
        policy: policy.describe(),
        forked: policy.fork_point().map(|f| trajectory::Fork { run: f.run, at: f.at }),
        started_ms: env.started_ms,
        task_eval: task.setup.eval.clone(),
        task_setup: (!task.setup.format.is_empty())
            .then(|| serde_json::to_value(crate::tasks::TaskSetup { eval: None, ..task.setup.clone() }).ok())
            .flatten(),
        ..Default::default()
    };
    policy.set_action_space(cfg.action_space);
    let system = system_prompt(cfg.action_space);
    let mut files = Files {
        dir: dir.clone(),
        system,
        transcript: vec![Message::text("system", system)],
        messages: Vec::new(),
    };
    if let Err(e) = dir.create() {
        t.outcome = Outcome::Error;
        t.error = Some(format!("cannot create the task directory: {e}"));
        return t;
    }
    let profile = tempfile::Builder::new()
        .prefix(&format!("webfreeze-profile-{}-", trajectory::run_dir::task_dir_name(&task.id)))
        .tempdir();
    let profile = match profile {
        Ok(p) => ProfileGuard(p),
        Err(e) => {
            t.outcome = Outcome::Error;
            t.error = Some(format!("cannot create a browser profile directory: {e}"));
            files.save(&t);
            return t;
        }
    };
    let opts = browser_options(cfg, &env, &task.setup, profile.path().to_path_buf());
    files.save(&t);
    let session = match Session::launch(opts).await {
        Ok(s) => s,
        Err(e) => {
            t.outcome = Outcome::Error;
            t.error = Some(e.to_string());
            t.duration_ms = t0.elapsed().as_millis() as u64;
            files.save(&t);
            return t;
        }
    };
    t.browser_start_ms = session.launch_ms;
    t.user_agent = (!cfg.disclose_automation).then(|| crate::browser::user_agent_of(&cfg.chrome)).flatten();
    match start(cfg, task, &session).await {
        Err(e) => {
            t.outcome = Outcome::Error;
            t.error = Some(e.to_string());
        }
        Ok(images) => {
            // Exploration only makes sense where pages are recorded.
            let mut explorer = cfg
                .explore
                .clone()
                .filter(|_| env.mode == trajectory::RunMode::Record)
                .map(crate::explore::Explorer::new);
            steps(cfg, &env, task, &images, &mut policy, &session, &mut t, &mut files, explorer.as_mut())
                .await;
            t.exploration = explorer.map(|e| e.stats().clone());
        }
    }
    t.final_url = session
        .url()
        .await
        .unwrap_or_else(|_| t.steps.last().map(|s| s.url_after.clone()).unwrap_or_default());
    if let Some(eval) = &task.setup.eval {
        let shop = task
            .setup
            .shop_api
            .as_deref()
            .map(|base| ShopApi::new(base, cfg.shop_admin.clone(), env.proxy, &env.ca_pem));
        let (html, images) = final_checks(&session, shop.as_ref(), eval, dir.path()).await;
        if !html.is_empty() || !images.is_empty() {
            (t.html_checks, t.image_checks) = (html, images);
            files.save(&t);
        }
    }
    session.close().await;
    if let Some(p) = &env.probe {
        t.proxy_report = p.report();
        let total = p.counters();
        if t.mode == RunMode::Replay {
            t.coverage = Some(coverage(&t.steps, &total));
        }
        guard_flags(&mut t, &total);
    }
    // Only a re-run of a run with observations (not of a hand-written script) checks reproduction.
    if t.steps.iter().any(|s| s.reproduced.is_some()) {
        t.reproduced_steps = Some(
            t.steps.iter().filter(|s| s.reproduced.as_ref().is_some_and(|r| r.url && r.screenshot)).count()
                as u32,
        );
    }
    t.duration_ms = t0.elapsed().as_millis() as u64;
    files.save(&t);
    t
}

/// Why a task could not start (the task ends with this as its error).
#[derive(Debug, thiserror::Error)]
enum StartError {
    /// A start page did not load.
    #[error("the start page {url} did not load: {source}")]
    Page {
        /// The page.
        url: String,
        /// What the browser said.
        #[source]
        source: crate::browser::BrowserError,
    },
    /// The first tab could not be focused again.
    #[error("{0}")]
    Focus(crate::browser::BrowserError),
    /// An input image (VisualWebArena) could not be fetched through the browser.
    #[error("the task's input image {image} could not be loaded: {source}")]
    Fetched {
        /// The image's URL.
        image: String,
        /// What the browser said.
        #[source]
        source: crate::browser::BrowserError,
    },
    /// An input image file could not be read.
    #[error("the task's input image {image} could not be loaded: {source}")]
    Read {
        /// The image's path.
        image: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// Opens the start pages (with real tabs, one tab each, the first focused; else the first only) and
/// loads the task's input images (VisualWebArena) through the browser, so they are recorded and replayed
/// like the pages.
async fn start(cfg: &AgentConfig, task: &Task, session: &Session) -> Result<Vec<Vec<u8>>, StartError> {
    session.goto(&task.web).await.map_err(|source| StartError::Page { url: task.web.clone(), source })?;
    if cfg.action_space == ActionSpace::WebArena && task.setup.start_urls.len() > 1 {
        for u in &task.setup.start_urls[1..] {
            session.open_tab(u).await.map_err(|source| StartError::Page { url: u.clone(), source })?;
        }
        session.focus_tab(0).await.map_err(StartError::Focus)?;
    }
    let mut images = Vec::with_capacity(task.setup.images.len());
    for i in &task.setup.images {
        let image = i.clone();
        images.push(if i.starts_with("http://") || i.starts_with("https://") || i.starts_with("data:") {
            session.fetch_bytes(i).await.map_err(|source| StartError::Fetched { image, source })?
        } else {
            std::fs::read(i).map_err(|source| StartError::Read { image, source })?
        });
    }
    Ok(images)
}

#[allow(clippy::too_many_arguments)]
async fn steps(
    cfg: &AgentConfig,
    env: &TaskEnv,
    task: &Task,
    task_images: &[Vec<u8>],
    policy: &mut Policy,
    session: &Session,
    t: &mut Trajectory,
    files: &mut Files,
    mut explorer: Option<&mut crate::explore::Explorer>,
) {
    let mut last_error: Option<String> = None;
    // Live and record: pages quoting the task with its answer are contamination evidence.
    let answer_check = (env.mode != RunMode::Replay)
        .then(|| crate::contamination::AnswerCheck::new(&task.ques, &task.setup.reference_answers))
        .flatten();
    // WebArena's early stop: unparseable replies in a row, and the same action in a row.
    let mut parse_failures = 0u32;
    let mut repeats: (Option<String>, u32) = (None, 0);
    for n in 1..=cfg.max_steps {
        // Re-executing a run that stopped without an answer: stop where it stopped, as it did.
        if let Some((outcome, why)) = policy.recorded_end(n) {
            t.outcome = outcome;
            t.error = Some(why);
            return;
        }
        let before = env.probe.as_ref().map(|p| p.counters()).unwrap_or_default();
        let obs = match session.observe().await {
            Ok(o) => o,
            Err(e) => {
                t.outcome = Outcome::Error;
                t.error = Some(format!("step {n}: cannot observe the page: {e}"));
                return;
            }
        };
        let png_name = TaskDir::step_png(n);
        let mut notes = Vec::new();
        if let Some(pending) = &obs.unsettled {
            notes.push(format!(
                "the page had not settled within {:.0}s; still loading: {}",
                cfg.page_timeout.as_secs_f64(),
                pending.join(", ")
            ));
        }
        for (name, what) in [(png_name.clone(), "step"), (format!("screenshot{n}.png"), "webvoyager")] {
            if let Err(e) = files.png(&name, &obs.screenshot) {
                notes.push(format!("{what} screenshot: cannot write {name}: {e}"));
            }
        }
        if let Some(check) = answer_check.as_ref() {
            if let Ok(Some((question, answer))) = session.page_text().await.map(|text| check.find(&text)) {
                notes.push(format!(
                    "contamination: the page shows the task's question with its answer {answer:?}"
                ));
                t.guard.get_or_insert_default().answer_pages.push(trajectory::TextFlag {
                    step: n,
                    url: obs.url.clone(),
                    question,
                    answer,
                });
            }
        }
        // A wall is not the site: stop before the model spends a step on it, and say so.
        if let Ok(Some(b)) = session.wall().await {
            t.error = Some(format!(
                "step {n}: {} answered with a {} ({}, status {}): the task could not be attempted",
                b.host,
                match b.kind {
                    wall::BlockKind::Challenge => "bot wall",
                    wall::BlockKind::AccessDenied => "denial",
                    wall::BlockKind::RateLimited => "rate limit",
                },
                b.marker,
                b.status
            ));
            t.blocked = Some(b);
            t.outcome = Outcome::Blocked;
            t.steps.push(trajectory::Step {
                n,
                url_before: obs.url.clone(),
                url_after: obs.url.clone(),
                screenshot: png_name,
                screenshot_blake3: blake3::hash(&obs.screenshot).to_hex().to_string(),
                notes,
                ..Default::default()
            });
            return;
        }
        if let Some(ex) = explorer.as_deref_mut() {
            let opened = ex.after_observation(session, &obs.url).await;
            if !opened.is_empty() {
                notes.push(format!("explored {} linked page(s): {}", opened.len(), opened.join(" ")));
            }
        }
        let elements = obs.text.clone();
        let text = match cfg.action_space {
            ActionSpace::WebVoyager => user_text(task, n, last_error.as_deref(), &elements),
            ActionSpace::WebArena => webarena_user_text(
                task,
                &obs.url,
                &obs.tabs,
                obs.active_tab,
                &elements,
                t.steps.last().and_then(|s| s.action.as_deref()),
                last_error.as_deref(),
            ),
        };
        let mut images: Vec<&[u8]> = Vec::new();
        if cfg.observation != ObservationKind::AxTree {
            images.push(&obs.screenshot);
        }
        let task_images: Vec<&[u8]> =
            if n == 1 { task_images.iter().map(Vec::as_slice).collect() } else { Vec::new() };
        let decision = match policy
            .decide(&Prompt { step: n, text: &text, images: &images, task_images: &task_images })
            .await
        {
            Ok(d) => d,
            Err(e) => {
                t.outcome = Outcome::Error;
                t.error = Some(format!("step {n}: {e}"));
                return;
            }
        };
        // The transcript names the screenshot only when one was sent (not with axtree observations).
        files.transcript.push(if images.is_empty() {
            Message::text("user", &text)
        } else {
            let shot_ref = format!("screenshot{n}.png");
            Message {
                role: "user".into(),
                content: serde_json::json!([
                    {"type": "text", "text": text},
                    {"type": "image_url", "image_url": {"url": shot_ref}}
                ]),
            }
        });
        // WebVoyager's scripts look for `Action: ANSWER; ...` in the last reply: the transcript carries the
        // canonical form of a readable reply (the raw text is in messages.json and trajectory.json).
        let parsed = cfg.action_space.parse(&decision.raw_reply);
        let canonical = match &parsed {
            Ok(p) => format!("Thought: {}\nAction: {}", p.thought, p.action),
            Err(_) => decision.raw_reply.clone(),
        };
        files.transcript.push(Message::text("assistant", &canonical));
        files.messages.push(serde_json::json!({
            "step": n, "user": text, "screenshot": png_name, "images_sent": decision.images_sent,
            "reply": decision.raw_reply, "usage": decision.usage, "ms": decision.ms,
        }));
        t.usage += decision.usage;
        let screenshot_blake3 = blake3::hash(&obs.screenshot).to_hex().to_string();
        // Scripted trajectories carry no observations to compare with.
        let reproduced =
            policy.recorded_step(n).filter(|o| !o.screenshot_blake3.is_empty()).map(|o| Reproduction {
                url: o.url_before == obs.url,
                screenshot: o.screenshot_blake3 == screenshot_blake3,
                original_url: (o.url_before != obs.url).then(|| o.url_before.clone()),
            });
        let mut step = Step {
            n,
            url_before: obs.url.clone(),
            url_after: obs.url.clone(),
            screenshot: png_name,
            screenshot_blake3,
            elements,
            raw_reply: decision.raw_reply.clone(),
            notes,
            timings: Timings { observe_ms: obs.ms, decide_ms: decision.ms, ..Default::default() },
            usage: decision.usage,
            reproduced,
            ..Default::default()
        };
        last_error = None;
        let mut fatal = None;
        let mut answered = None;
        match parsed {
            Ok(p) => {
                step.thought = p.thought.clone();
                step.raw_action = p.raw_action.clone();
                step.action = Some(p.action.to_string());
                if let Some(a) = p.action.answer() {
                    answered = Some(a.to_string());
                } else {
                    let a0 = Instant::now();
                    let r = match &p.action {
                        AnyAction::WebVoyager(a) => session.perform(a).await,
                        AnyAction::WebArena(a) => session.perform_webarena(a).await,
                    };
                    step.timings.act_ms = a0.elapsed().as_millis() as u64;
                    step.timings.page_ms = session.take_page_ms().min(step.timings.act_ms);
                    if let Err(e) = r {
                        // A failed action may mean a dead browser: probe it before going on.
                        if e.is_fatal() || session.url().await.is_err() {
                            fatal = Some(e.to_string());
                        }
                        step.error = Some(e.to_string());
                        last_error = Some(e.to_string());
                    }
                }
            }
            Err(e) => {
                step.error = Some(e.to_string());
                last_error = Some(e.to_string());
            }
        }
        if fatal.is_none() {
            step.url_after = session.url().await.unwrap_or_else(|_| obs.url.clone());
        }
        if let Some(p) = &env.probe {
            step.proxy = delta(&before, &p.counters());
        }
        t.steps.push(step);
        if let Some(a) = answered {
            t.outcome = Outcome::Answered;
            t.answer = Some(a);
            files.save(t);
            return;
        }
        if let Some(e) = fatal {
            t.outcome = Outcome::Error;
            t.error = Some(format!("step {n}: {e}"));
            return;
        }
        let last = t.steps.last();
        match last.and_then(|s| s.action.clone()) {
            None => {
                parse_failures += 1;
                repeats = (None, 0);
            }
            Some(a) => {
                parse_failures = 0;
                repeats = if repeats.0.as_deref() == Some(a.as_str()) {
                    (Some(a), repeats.1 + 1)
                } else {
                    (Some(a), 1)
                };
            }
        }
        let stop = if cfg.stop_after_parse_failures > 0 && parse_failures >= cfg.stop_after_parse_failures {
            Some(format!(
                "stopped early: {parse_failures} unparseable replies in a row (--early-stop-parse-failures)"
            ))
        } else if cfg.stop_after_repeats > 0 && repeats.1 >= cfg.stop_after_repeats {
            Some(format!(
                "stopped early: the same action {} times in a row: {} (--early-stop-repeats)",
                repeats.1,
                repeats.0.as_deref().unwrap_or("")
            ))
        } else {
            None
        };
        if let Some(why) = stop {
            // No answer, like running out of steps; the reason stays with the trajectory.
            t.outcome = Outcome::MaxSteps;
            t.error = Some(why);
            files.save(t);
            return;
        }
        files.save(t);
    }
    t.outcome = Outcome::MaxSteps;
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
