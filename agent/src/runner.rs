//! One task, start to end: launch the browser against the given proxy, load the start page, then observe,
//! decide, act until the policy answers or the step budget runs out. Everything is written to the task's
//! directory as it happens; a failure (browser, page, model) ends the task with a recorded error and never
//! escapes as a panic, so a run goes on with its next task.

use std::time::Instant;

use crate::action::{ActionSpace, AnyAction};
use crate::browser::{ObservationKind, Session};
use crate::policy::{system_prompt, user_text, webarena_user_text, Policy, Prompt};
use crate::tasks::shop_api::ShopApi;
use crate::tasks::Task;
use trajectory::llm::Message;
use trajectory::{Outcome, Reproduction, RunMode, Step, TaskDir, Timings, Trajectory, TRAJECTORY_VERSION};

pub use trajectory::task_env::{ProxyProbe, TaskEnv};

mod checks;
mod config;
mod files;
mod state_probes;
pub use state_probes::PROBE_HEADER;
mod stats;

use crate::browser::ProfileGuard;
pub(crate) use config::browser_options;
pub use config::{AgentConfig, DEFAULT_SETTLE_MS};
use files::Files;

use checks::final_checks;
pub use stats::coverage;
use stats::{delta, guard_flags};

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
        question: task.question.clone(),
        start_url: task.start_url.clone(),
        mode: env.mode,
        snapshot: env.snapshot.clone(),
        policy: policy.describe(),
        forked: policy.fork_point().map(|f| trajectory::Fork { run: f.run, at: f.at }),
        started_ms: env.started_ms,
        task_eval: task.setup.eval.clone(),
        benchmark: Some(task.benchmark),
        task_setup: (task.benchmark != trajectory::Benchmark::WebVoyager)
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
    let session = match Session::start(opts, cfg.browsers.as_ref()).await {
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
            let shop = task
                .setup
                .shop_api
                .as_deref()
                .and_then(|base| ShopApi::new(base, cfg.shop_admin.clone(), env.proxy, &env.ca_pem).ok());
            let eval = task.setup.eval.as_ref().and_then(trajectory::TaskEvalSpec::webarena);
            let mut probes = state_probes::StateProbes::of(eval, &env, shop);
            let extras = Extras { explorer: explorer.as_mut(), probes: probes.as_mut() };
            steps(cfg, &env, task, &images, &mut policy, &session, &mut t, &mut files, extras).await;
            t.exploration = explorer.map(|e| e.stats().clone());
            t.state_probes = probes.map(|p| p.stats);
        }
    }
    t.final_url = session
        .url()
        .await
        .unwrap_or_else(|_| t.steps.last().map(|s| s.url_after.clone()).unwrap_or_default());
    if let Some(eval) = task.setup.eval.as_ref().and_then(trajectory::TaskEvalSpec::webarena) {
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
    session
        .goto(&task.start_url)
        .await
        .map_err(|source| StartError::Page { url: task.start_url.clone(), source })?;
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

/// What runs beside the agent's steps while recording: exploration, and the task's state probes.
struct Extras<'a> {
    explorer: Option<&'a mut crate::explore::Explorer>,
    probes: Option<&'a mut state_probes::StateProbes>,
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
    extras: Extras<'_>,
) {
    let Extras { mut explorer, mut probes } = extras;
    let mut last_error: Option<String> = None;
    // Live and record: pages quoting the task with its answer are contamination evidence.
    let answer_check = (env.mode != RunMode::Replay)
        .then(|| crate::contamination::AnswerCheck::new(&task.question, &task.setup.reference_answers))
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
        // Recording a state task: its checked pages at this write epoch, before the step is observed.
        let probe_notes = match probes.as_deref_mut() {
            Some(p) => p.before_step(session, env).await,
            None => Vec::new(),
        };
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
        let mut notes = probe_notes;
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
        // What the page rendered: a recording keeps it for the frozen search engine, the live
        // contamination check reads it.
        let recording = env.mode == RunMode::Record;
        let page_text =
            if recording || answer_check.is_some() { session.page_text().await.ok() } else { None };
        if let (true, Some(p), Some(text)) = (recording, &env.probe, &page_text) {
            p.rendered_text(&obs.url, text);
        }
        if let Some(check) = answer_check.as_ref() {
            if let Some((question, answer)) = page_text.as_deref().and_then(|text| check.find(text)) {
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
            for (url, text) in ex.take_rendered() {
                if let Some(p) = &env.probe {
                    p.rendered_text(&url, &text);
                }
            }
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
