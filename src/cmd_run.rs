//! `webfreeze run`: resolve the command line into `session::RunOptions` and run the task list (the loop
//! itself is `session::run_tasks`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agent::browser::{browser_version, find_chrome, ObservationKind};
use agent::runner::AgentConfig;
use clock::{Clock, SystemClock};
use session::{PolicySpec, ProxyMode, Recorded, RunOptions};
use snapshots::Store;

use crate::cli::{RunArgs, RunMode};
use crate::config::{llm_config, load_ca, parse_window, same_dir, upstream_config, Config};
use crate::usage::UsageError;

fn policy_spec(args: &RunArgs) -> anyhow::Result<PolicySpec> {
    if args.fork_at.is_some() && !args.policy.starts_with("trajectory:") {
        return Err(UsageError(format!(
            "--fork-at forks a recorded run: use it with --policy trajectory:RUN_DIR, not --policy {}",
            args.policy
        ))
        .into());
    }
    if args.policy == "llm" {
        return Ok(PolicySpec::Llm {
            config: llm_config(&args.llm)?,
            keep_screenshots: args.llm.keep_screenshots,
        });
    }
    if let Some(dir) = args.policy.strip_prefix("trajectory:") {
        let dir = PathBuf::from(dir);
        if same_dir(&dir, &args.out) {
            return Err(UsageError(format!(
                "--out {} is the run --policy re-executes; write the re-run to another directory",
                args.out.display()
            ))
            .into());
        }
        if let Some(at) = args.fork_at {
            return Ok(PolicySpec::Fork {
                run: dir,
                at,
                config: llm_config(&args.llm)?,
                keep_screenshots: args.llm.keep_screenshots,
            });
        }
        return Ok(PolicySpec::Trajectory(dir));
    }
    Err(UsageError(format!("--policy {:?}: expected `llm` or `trajectory:RUN_DIR`", args.policy)).into())
}

/// The run `--policy trajectory:RUN` re-executes, its run.json read once (None for a model).
fn recorded(policy: &PolicySpec) -> anyhow::Result<Option<Recorded>> {
    policy.recorded().map_err(|e| {
        let dir = match policy {
            PolicySpec::Trajectory(d) | PolicySpec::Fork { run: d, .. } => d.display().to_string(),
            PolicySpec::Llm { .. } => String::new(),
        };
        UsageError(format!("--policy trajectory:{dir}: {e}")).into()
    })
}

/// The settings given on the command line (`agent::settings` resolves them against a re-executed run's).
fn given(args: &RunArgs) -> anyhow::Result<agent::settings::Given> {
    Ok(agent::settings::Given {
        max_steps: args.max_steps,
        window: args.window.as_deref().map(parse_window).transpose()?,
        page_timeout_s: args.page_timeout,
        settle_ms: args.settle_ms,
        wait_ms: args.wait_ms,
        search_url: args.search_url.clone(),
        early_stop_parse_failures: args.early_stop_parse_failures,
        early_stop_repeats: args.early_stop_repeats,
        action_space: args.action_space,
        observation: args.observation,
    })
}

/// `--jobs N|auto`.
fn jobs(args: &RunArgs) -> anyhow::Result<usize> {
    match args.jobs.trim() {
        "auto" => Ok(session::auto_jobs_here()),
        n => match n.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(UsageError(format!("--jobs {n:?}: expected a number of at least 1, or `auto`")).into()),
        },
    }
}

/// `--task-timeout SECONDS`.
fn task_timeout(args: &RunArgs) -> anyhow::Result<Option<Duration>> {
    match args.task_timeout {
        Some(s) if !(s > 0.0 && s.is_finite()) => {
            Err(UsageError(format!("--task-timeout {s}: expected a positive number of seconds")).into())
        }
        Some(s) => Ok(Some(Duration::from_secs_f64(s))),
        None => Ok(None),
    }
}

/// A text-only model behind a vision observation cannot be told from its replies: warn once when the
/// server's model listing says so.
fn warn_if_blind(policy: &PolicySpec, observation: ObservationKind) -> anyhow::Result<()> {
    let (PolicySpec::Llm { config, .. } | PolicySpec::Fork { config, .. }) = policy else { return Ok(()) };
    if observation == ObservationKind::AxTree {
        return Ok(());
    }
    let llm = trajectory::llm::Llm::new(config.clone())?;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    if rt.block_on(llm.vision_support()) == Some(false) {
        eprintln!(
            "warning: {}/models lists {:?} without image input: it will not see the screenshots the \
             observation sends (for a text-only model use --action-space webarena --observation axtree)",
            config.api_base, config.model
        );
    }
    Ok(())
}

/// The proxy each task runs behind: live, recording into the store, or replaying `--snapshots RUN`. A
/// replay's frozen web is as given, else as the re-executed run's replay served it, else the default
/// (`session::FrozenWeb::resolve`); its miss policy is always as given (sealed unless told otherwise).
fn proxy_mode(
    cfg: &Config,
    args: &RunArgs,
    recorded: Option<&Recorded>,
    search_url: &str,
) -> anyhow::Result<ProxyMode> {
    Ok(match args.mode {
        RunMode::Live => ProxyMode::Live,
        RunMode::Record => ProxyMode::record(Store::open(&cfg.store)?, &args.out)?,
        RunMode::Replay => {
            let run = args.snapshots.clone().or_else(|| recorded.and_then(Recorded::snapshots)).ok_or_else(|| {
                UsageError(
                    "--mode replay needs --snapshots RUN: the recording whose RUN/<task-id> snapshots to replay"
                        .into(),
                )
            })?;
            let on_miss = args.on_miss;
            let given = session::GivenFrozenWeb {
                unit: args.frozen_web,
                search: args.search,
                ws_pacing: args.ws_pacing,
            };
            ProxyMode::Replay {
                store: session::replay_store(&cfg.store, on_miss)?,
                run,
                on_miss,
                frozen_web: session::FrozenWeb::resolve(
                    &given,
                    recorded.map(|r| &r.settings().proxy),
                    search_url,
                ),
            }
        }
    })
}

pub(crate) fn run(cfg: &Config, args: RunArgs) -> anyhow::Result<()> {
    let (jobs, task_timeout) = (jobs(&args)?, task_timeout(&args)?);
    let given = given(&args)?; // a usage error (--window) before anything else is looked at
    let policy = policy_spec(&args)?;
    let recorded = recorded(&policy)?;
    let mut sites = match &args.sites_file {
        Some(f) => agent::tasks::Sites::from_file(f).map_err(|e| UsageError(e.to_string()))?,
        None => agent::tasks::Sites::default(),
    };
    sites.extend(agent::tasks::Sites::from_pairs(&args.sites).map_err(|e| UsageError(e.to_string()))?);
    let reference_answers = match &args.reference_file {
        Some(f) => evaluator::reference::load_webvoyager(f)
            .map_err(|e| UsageError(e.to_string()))?
            .into_iter()
            .map(|(id, a)| (id, a.ans))
            .collect(),
        None => Default::default(),
    };
    let tasks = session::task_list(&session::TaskListRequest {
        path: &args.tasks,
        sites: &sites,
        reference_answers: &reference_answers,
        filter: args.task_filter.as_deref(),
    })
    .map_err(|e| UsageError(e.to_string()))?;
    // Re-executing a run: its run.json, read once, supplies every setting not given here (the agent half
    // here, the proxy half in `proxy_mode`); else the tasks' benchmark picks the action space its own
    // harness uses.
    let benchmark = tasks.first().map(|t| t.benchmark);
    let settings =
        agent::settings::Settings::resolve(&given, recorded.as_ref().map(|r| &r.settings().agent), benchmark)
            .map_err(|e| UsageError(e.to_string()))?;
    let (action_space, observation) = (settings.action_space, settings.observation);
    warn_if_blind(&policy, observation)?;
    // What the run will not do as asked: said before running, not found out after.
    for note in session::task_notes(&tasks, action_space) {
        eprintln!("{note}");
    }
    if let PolicySpec::Fork { run, at, .. } = &policy {
        session::check_fork(run, *at, &tasks).map_err(|e| UsageError(e.to_string()))?;
    }
    if args.out.file_name().and_then(|n| n.to_str()).is_none() {
        return Err(UsageError(format!("--out {}: needs a directory name", args.out.display())).into());
    }
    let mode = proxy_mode(cfg, &args, recorded.as_ref(), &settings.search_url)?;
    let chrome = find_chrome(args.chrome.as_deref())?;
    let mut agent = AgentConfig::new(chrome.clone());
    settings.apply(&mut agent);
    agent.js_heap_mb = args.browser_js_heap_mb;
    agent.browsers = args.browser_pool();
    agent.disclose_automation = args.disclose_automation;
    agent.explore = explore_options(&args)?;
    agent.shop_admin = crate::config::shop_admin();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let guard = guards(&args, &sites)?;
    let opts = RunOptions {
        out: args.out.clone(),
        mode,
        policy,
        agent,
        ca: load_ca(cfg)?,
        proxy: upstream_config(&args.upstream)?,
        clock,
        time_zone: cfg.time_zone(args.time_zone.as_deref()),
        locale: args.locale.clone(),
        jobs,
        shard: args.shard,
        task_timeout,
        retry_blocked: args.retry_blocked,
        guard,
        tasks_file: args.tasks.display().to_string(),
        chrome_version: browser_version(&chrome),
    };
    crate::output::run_with_progress(opts, tasks)?;
    Ok(())
}

/// `--explore` and its budget, checked: exploration records, so it needs record mode, and a budget of 0
/// would explore nothing.
fn explore_options(args: &RunArgs) -> anyhow::Result<Option<agent::explore::ExploreOptions>> {
    if !args.explore {
        return Ok(None);
    }
    if args.mode != RunMode::Record {
        return Err(
            UsageError("--explore records the pages it opens: use it with --mode record".into()).into()
        );
    }
    for (flag, n) in [
        ("--explore-links", args.explore_links),
        ("--explore-host-budget", args.explore_host_budget),
        ("--explore-depth", args.explore_depth as usize),
    ] {
        if n == 0 {
            return Err(UsageError(format!(
                "{flag} 0 would explore nothing: give at least 1, or leave out --explore"
            ))
            .into());
        }
    }
    Ok(Some(agent::explore::ExploreOptions {
        links_per_page: args.explore_links,
        host_budget: args.explore_host_budget,
        depth: args.explore_depth,
        pace: Duration::from_millis(args.explore_pace_ms),
        // One frontier for the whole run: its tasks share what was explored.
        frontier: Default::default(),
    }))
}

/// The side-effect and contamination guards of a live or recording run, and of a replay whose misses go
/// live (`--on-miss live|record`); None in a replay that never dials out.
fn guards(
    args: &RunArgs,
    sites: &agent::tasks::Sites,
) -> anyhow::Result<Option<Arc<proxy::guard::GuardConfig>>> {
    use proxy::guard::{AnswerPlaces, GuardConfig, WriteRules};
    if args.mode == RunMode::Replay && !session::misses_go_live(args.on_miss) {
        return Ok(None);
    }
    let writes = match (&args.write_guard_file, args.no_write_guard) {
        (_, true) => None,
        (Some(f), false) => Some(WriteRules::with_file(f).map_err(|e| UsageError(e.to_string()))?),
        (None, false) => Some(WriteRules::builtin()),
    }
    .map(|w| if args.strict_write_guard { w.strict() } else { w })
    .map(|w| if args.no_learned_guard { w.without_learned() } else { w });
    let answers = match (&args.answer_guard_file, args.no_answer_guard) {
        (_, true) => None,
        (Some(f), false) => Some(AnswerPlaces::with_file(f).map_err(|e| UsageError(e.to_string()))?),
        (None, false) => Some(AnswerPlaces::builtin()),
    };
    let mut own_hosts = sites.hosts();
    own_hosts.extend(args.allow_writes.iter().cloned());
    Ok(Some(Arc::new(GuardConfig { writes, answers, own_hosts })))
}
