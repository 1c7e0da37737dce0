//! What a run is given: its policy ([`PolicySpec`], a recorded run's [`Recorded`] settings read back), its
//! options ([`RunOptions`], with [`RunOptions::scripted`]'s defaults) and what `run.json` keeps of them
//! ([`RunOptions::settings`]). [`crate::run_tasks`] runs them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent::policy::fork::ForkPolicy;
use agent::policy::{LlmPolicy, Policy, TrajectoryPolicy};
use agent::runner::AgentConfig;
use agent::tasks::Task;
use clock::Clock;
use proxy::{CertificateAuthority, ProxyConfig};
use snapshots::Store;
use trajectory::llm::{Llm, LlmConfig};
use trajectory::{RunDir, RunFile, RunSettings};

use crate::error::SessionError;
use crate::shard::Shard;
use crate::task_proxy::{canonical_run_dir, ProxyMode};

/// What decides the actions.
#[derive(Debug, Clone)]
pub enum PolicySpec {
    /// A vision model over the OpenAI-compatible API.
    Llm {
        /// Where and which model.
        config: LlmConfig,
        /// Screenshots kept in the model's context.
        keep_screenshots: usize,
    },
    /// Re-execute the replies recorded in an earlier run directory (checking each step against it).
    Trajectory(PathBuf),
    /// Re-execute the first `at` recorded steps of a run directory, then ask the model
    /// (`agent::policy::fork`).
    Fork {
        /// The recorded run.
        run: PathBuf,
        /// Recorded steps re-executed before the model takes over.
        at: u32,
        /// Where and which model.
        config: LlmConfig,
        /// Screenshots kept in the model's context.
        keep_screenshots: usize,
    },
}

impl PolicySpec {
    /// `llm:MODEL` or `trajectory:RUN`, as run.json and trajectories name it.
    pub fn describe(&self) -> String {
        match self {
            PolicySpec::Llm { config, .. } => format!("llm:{}", config.model),
            PolicySpec::Trajectory(d) => format!("trajectory:{}", d.display()),
            PolicySpec::Fork { run, at, config, .. } => {
                format!("fork:{}@{at}+llm:{}", run.display(), config.model)
            }
        }
    }

    /// The policy for one task.
    pub fn for_task(&self, task: &Task) -> Result<Policy, SessionError> {
        Ok(match self {
            PolicySpec::Llm { config, keep_screenshots } => {
                Policy::Llm(LlmPolicy::new(Llm::new(config.clone())?, *keep_screenshots))
            }
            PolicySpec::Trajectory(run) => Policy::Trajectory(Box::new(TrajectoryPolicy::load(run, task)?)),
            PolicySpec::Fork { run, at, config, keep_screenshots } => {
                Policy::Fork(Box::new(ForkPolicy::new(
                    TrajectoryPolicy::load(run, task)?,
                    *at,
                    LlmPolicy::new(Llm::new(config.clone())?, *keep_screenshots),
                )?))
            }
        })
    }

    /// The run this policy re-executes (Trajectory and Fork), its `run.json` read once: its settings
    /// supply every setting a re-execution is not given (both halves: `agent::settings::Settings::resolve`,
    /// [`crate::FrozenWeb::resolve`]), its snapshots replay's default recording ([`Recorded::snapshots`]).
    /// None for a model.
    pub fn recorded(&self) -> Result<Option<Recorded>, SessionError> {
        match self {
            PolicySpec::Trajectory(dir) | PolicySpec::Fork { run: dir, .. } => {
                let rf = RunDir::new(dir).read_run_file()?;
                Ok(Some(Recorded { dir: dir.clone(), run_file: rf }))
            }
            PolicySpec::Llm { .. } => Ok(None),
        }
    }
}

/// A run a policy re-executes, as its `run.json` says ([`PolicySpec::recorded`]).
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Its directory.
    pub dir: PathBuf,
    /// Its `run.json`.
    pub run_file: RunFile,
}

impl Recorded {
    /// Its settings.
    pub fn settings(&self) -> &RunSettings {
        &self.run_file.settings
    }

    /// Replay's default recording for a re-execution: the snapshots the re-executed run used (its
    /// run.json says), else its directory's name.
    pub fn snapshots(&self) -> Option<String> {
        self.run_file
            .snapshots
            .clone()
            .or_else(|| self.dir.file_name().and_then(|n| n.to_str()).map(str::to_string))
    }
}

impl ProxyMode {
    /// Record mode for the run directory `out`: the recording is named after its last component, and the
    /// snapshots remember the canonical directory. Creates `out`.
    pub fn record(store: Store, out: &Path) -> Result<Self, SessionError> {
        RunDir::new(out).create()?;
        let run_dir = canonical_run_dir(out);
        let run = run_dir.file_name().and_then(|n| n.to_str()).unwrap_or("run").to_string();
        Ok(ProxyMode::Record { store, run, run_dir: run_dir.display().to_string() })
    }

    /// The recording written (record) or read (replay).
    pub fn snapshots(&self) -> Option<&str> {
        match self {
            ProxyMode::Live => None,
            ProxyMode::Record { run, .. } | ProxyMode::Replay { run, .. } => Some(run),
        }
    }
}

/// Everything a run needs besides its tasks.
#[derive(Clone)]
pub struct RunOptions {
    /// The run directory (created; finished tasks in it are skipped).
    pub out: PathBuf,
    /// Where the pages come from.
    pub mode: ProxyMode,
    /// What decides the actions.
    pub policy: PolicySpec,
    /// Browser and step settings.
    pub agent: AgentConfig,
    /// The proxy CA.
    pub ca: Arc<CertificateAuthority>,
    /// How task proxies reach origins.
    pub proxy: ProxyConfig,
    /// Time stamps and the recording seed.
    pub clock: Arc<dyn Clock>,
    /// Record: the time zone stored and emulated.
    pub time_zone: String,
    /// The locale the browser reports.
    pub locale: String,
    /// Tasks at once, each with its own browser and proxy.
    pub jobs: usize,
    /// The task file, as run.json names it.
    pub tasks_file: String,
    /// What `<chrome> --version` printed (run.json).
    pub chrome_version: String,
    /// Run only this shard of the task list (the list passed to [`run_tasks`] is the whole list).
    pub shard: Option<Shard>,
    /// Wall-clock limit per task: past it the task's browser and proxy are dropped (the browser killed)
    /// and the task is recorded as [`Outcome::Timeout`] with the steps it had taken.
    pub task_timeout: Option<std::time::Duration>,
    /// Re-run the tasks of `out` that ended [`Outcome::Blocked`] (`run --retry-blocked`).
    pub retry_blocked: bool,
    /// Live and record: the side-effect and contamination guards; None: unguarded.
    pub guard: Option<Arc<proxy::guard::GuardConfig>>,
}

impl RunOptions {
    /// A live run of the recorded actions in `script` (a run directory's trajectories), one task at a time,
    /// with the usual defaults: UTC, `en_US`, no shard, no time limit, unguarded, the browser's version as
    /// `agent.chrome` reports it. Benches and commands change what they need with struct update syntax
    /// (`RunOptions { out, mode, ..RunOptions::scripted(..) }`).
    pub fn scripted(
        script: &std::path::Path,
        agent: AgentConfig,
        ca: Arc<CertificateAuthority>,
        proxy: ProxyConfig,
        clock: Arc<dyn Clock>,
    ) -> RunOptions {
        RunOptions {
            out: PathBuf::new(),
            mode: ProxyMode::Live,
            policy: PolicySpec::Trajectory(script.to_path_buf()),
            chrome_version: agent::browser::browser_version(&agent.chrome),
            agent,
            ca,
            proxy,
            clock,
            time_zone: "UTC".into(),
            locale: "en_US".into(),
            jobs: 1,
            tasks_file: "bench".into(),
            shard: None,
            task_timeout: None,
            retry_blocked: false,
            guard: None,
        }
    }

    /// What `run.json` keeps of these options: the one writer of a run's settings, from what the run is
    /// given (so what is written is what ran). The agent half from the agent's configuration and the
    /// policy (a model's temperature, context and budget; recorded replies have none: 0), the proxy half
    /// from the mode (a replay's miss policy and frozen web), the time zone, the locale and the guards.
    pub fn settings(&self) -> RunSettings {
        let mut s = RunSettings::default();
        agent::settings::Settings::of_agent(&self.agent).record(&mut s.agent);
        let model = match &self.policy {
            PolicySpec::Llm { config, keep_screenshots }
            | PolicySpec::Fork { config, keep_screenshots, .. } => Some((config, *keep_screenshots)),
            PolicySpec::Trajectory(_) => None,
        };
        if let Some((config, keep)) = model {
            s.agent.temperature = config.temperature;
            s.agent.keep_screenshots = keep;
            s.agent.max_tokens = Some(trajectory::MaxTokensSetting {
                field: config.max_tokens_field,
                value: config.max_tokens,
            });
        }
        s.agent.fork_at = match &self.policy {
            PolicySpec::Fork { at, .. } => Some(*at),
            _ => None,
        };
        s.agent.explore = self.agent.explore.as_ref().map(|e| trajectory::ExploreSetting {
            links_per_page: e.links_per_page,
            host_budget: e.host_budget,
            depth: e.depth,
            pace_ms: u64::try_from(e.pace.as_millis()).unwrap_or(u64::MAX),
        });
        s.agent.warm_browsers = self.agent.browsers.as_ref().map(|pool| {
            let o = pool.options();
            trajectory::WarmBrowsersSetting {
                recycle_after: o.recycle_after,
                memory_ceiling_mib: o.memory_ceiling_mib,
                contexts_per_browser: o.contexts_per_browser,
            }
        });
        if let ProxyMode::Replay { on_miss, frozen_web, .. } = &self.mode {
            s.proxy.on_miss = *on_miss;
            frozen_web.record(&mut s.proxy);
        }
        s.proxy.time_zone = Some(self.time_zone.clone());
        s.proxy.locale = Some(self.locale.clone());
        s.proxy.guards = self.guard.as_deref().map(crate::settings::guards_setting);
        s
    }
}
