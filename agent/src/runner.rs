//! One task, start to end: launch the browser against the given proxy, load the start page, then observe,
//! decide, act until the policy answers or the step budget runs out. Everything is written to the task's
//! directory as it happens; a failure (browser, page, model) ends the task with a recorded error and never
//! escapes as a panic, so a run goes on with its next task. The steps themselves, phase by phase, are
//! `runner/task_run.rs`'s.

use std::time::Instant;

use crate::action::ActionSpace;
use crate::browser::Session;
use crate::policy::{system_prompt, Policy};
use crate::tasks::shop_api::ShopApi;
use crate::tasks::Task;
use trajectory::llm::Message;
use trajectory::{Outcome, RunMode, TaskDir, Trajectory, TRAJECTORY_VERSION};

pub use trajectory::task_env::{ProxyProbe, TaskEnv};

mod checks;
mod config;
mod files;
mod state_probes;
pub use state_probes::PROBE_HEADER;
mod stats;
mod task_run;

use crate::browser::ProfileGuard;
pub(crate) use config::browser_options;
pub use config::{AgentConfig, DEFAULT_SETTLE_MS};
use files::Files;

use checks::final_checks;
pub use stats::coverage;
use stats::guard_flags;
use task_run::{EarlyStop, TaskRun};

/// Run one task, writing into `dir` (created). Always returns the trajectory; errors are inside it. The
/// phases: the trajectory begun ([`begin`]), a browser profile and session, the start pages, the steps
/// ([`drive`]: a [`TaskRun`]), then the end-of-task checks and the proxy's report ([`wrap_up`]).
pub async fn run_task(
    cfg: &AgentConfig,
    env: TaskEnv,
    task: &Task,
    mut policy: Policy,
    dir: TaskDir,
) -> Trajectory {
    let t0 = Instant::now();
    let mut t = begin(task, &env, &policy);
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
        Ok(images) => drive(cfg, &env, task, &images, &mut policy, &session, &mut t, &mut files).await,
    }
    wrap_up(cfg, &env, task, session, &mut t, &mut files, &dir).await;
    t.duration_ms = t0.elapsed().as_millis() as u64;
    files.save(&t);
    t
}

/// The trajectory of `task` before anything ran: what the task, its environment and its policy are.
fn begin(task: &Task, env: &TaskEnv, policy: &Policy) -> Trajectory {
    Trajectory {
        snapshot: env.snapshot.clone(),
        forked: policy.fork_point().map(|f| trajectory::Fork { run: f.run, at: f.at }),
        ..blank_trajectory(task, env.mode, policy.describe(), env.started_ms)
    }
}

/// A task's trajectory before (or without) any step: the task's identity, its eval spec and set-up, how
/// it was run. The one start every trajectory has, the runner's and a session's for a task that never
/// reached the runner (an error, a timeout).
pub fn blank_trajectory(task: &Task, mode: RunMode, policy: String, started_ms: i64) -> Trajectory {
    Trajectory {
        v: TRAJECTORY_VERSION,
        task_id: task.id.clone(),
        web_name: task.web_name.clone(),
        question: task.question.clone(),
        start_url: task.start_url.clone(),
        mode,
        policy,
        started_ms,
        task_eval: task.setup.eval.clone(),
        benchmark: Some(task.benchmark),
        task_setup: (task.benchmark != trajectory::Benchmark::WebVoyager)
            .then(|| serde_json::to_value(crate::tasks::TaskSetup { eval: None, ..task.setup.clone() }).ok())
            .flatten(),
        ..Default::default()
    }
}

/// The steps, once the start pages loaded: exploration (recording only) and state probes (a recorded
/// state task) ride along with the [`TaskRun`], and what they did is kept on the trajectory.
#[allow(clippy::too_many_arguments)] // the task's parts, each borrowed once, handed to the TaskRun
async fn drive(
    cfg: &AgentConfig,
    env: &TaskEnv,
    task: &Task,
    images: &[Vec<u8>],
    policy: &mut Policy,
    session: &Session,
    t: &mut Trajectory,
    files: &mut Files,
) {
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
    let mut probes = state_probes::StateProbes::of(task.setup.eval.as_ref(), env, shop);
    TaskRun {
        cfg,
        env,
        task,
        task_images: images,
        policy,
        session,
        t,
        files,
        explorer: explorer.as_mut(),
        probes: probes.as_mut(),
        answer_check: task_run::answer_check(env, task),
        last_error: None,
        early_stop: EarlyStop::new(cfg),
    }
    .run()
    .await;
    t.exploration = explorer.map(|e| e.stats().clone());
    t.state_probes = probes.map(|p| p.stats);
}

/// After the steps: where the browser ended, the end-of-task checks (WebArena's program_html and image
/// checks, read in the same browser), the browser closed, the proxy's report and coverage, and how many
/// steps a re-run reproduced.
async fn wrap_up(
    cfg: &AgentConfig,
    env: &TaskEnv,
    task: &Task,
    session: Session,
    t: &mut Trajectory,
    files: &mut Files,
    dir: &TaskDir,
) {
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
            files.save(t);
        }
    }
    session.close().await;
    if let Some(p) = &env.probe {
        t.proxy_report = p.report();
        let total = p.counters();
        if t.mode == RunMode::Replay {
            t.coverage = Some(coverage(&t.steps, &total));
        }
        guard_flags(t, &total);
    }
    // Only a re-run of a run with observations (not of a hand-written script) checks reproduction.
    if t.steps.iter().any(|s| s.reproduced.is_some()) {
        t.reproduced_steps = Some(
            t.steps.iter().filter(|s| s.reproduced.as_ref().is_some_and(|r| r.url && r.screenshot)).count()
                as u32,
        );
    }
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
