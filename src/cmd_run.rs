//! `webfreeze run`: the agent over a task file, live, recording or replaying. Each task gets its own
//! proxy on an ephemeral loopback port inside this process (pass-through, recorder or replay handler)
//! and its own browser; `--jobs N` runs N tasks at once.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent::browser::find_chrome;
use agent::llm::{Llm, LlmConfig};
use agent::policy::{LlmPolicy, Policy, TrajectoryPolicy};
use agent::runner::{run_task, AgentConfig, ProxyProbe, TaskEnv};
use agent::tasks::Task;
use agent::trajectory::{read_trajectory, task_dir, write_atomic, Outcome, ProxyStats, Trajectory};
use anyhow::Context as _;
use proxy::{CertificateAuthority, Handler, Proxy, ProxyConfig};
use recorder::{HostFilter, Recorder};
use replay::rules::Rules;
use replay::{OnMiss, Replay, ReplayConfig};
use serde::{Deserialize, Serialize};
use snapshots::{Clock, NewSnapshot, Seed, SnapshotSource, Store, SystemClock};

use crate::cli::{LlmArgs, MissPolicy, RunArgs, RunMode};
use crate::cmd_proxy::{load_ca, upstream_config};
use crate::config::Config;
use crate::UsageError;

/// `run.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunFile {
    /// Format version.
    pub v: u32,
    /// webfreeze version.
    pub webfreeze: String,
    /// live / record / replay.
    pub mode: String,
    /// Policy.
    pub policy: String,
    /// Task file.
    pub tasks_file: String,
    /// Snapshots written (record) or read (replay): `<name>/<task-id>`.
    #[serde(default)]
    pub snapshots: Option<String>,
    /// Browser binary.
    pub chrome: String,
    /// What `<chrome> --version` printed.
    #[serde(default)]
    pub chrome_version: String,
    /// Settings that shape the trajectories.
    pub config: serde_json::Value,
    /// Start of the latest invocation (ms since epoch).
    pub started_ms: i64,
    /// End of the latest invocation.
    #[serde(default)]
    pub finished_ms: Option<i64>,
    /// Per task.
    pub tasks: BTreeMap<String, TaskStatus>,
}

/// One task's line in `run.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskStatus {
    /// Site.
    pub web_name: String,
    /// pending / running / answered / max_steps / error.
    pub status: String,
    /// Steps taken.
    #[serde(default)]
    pub steps: usize,
    /// Final answer.
    #[serde(default)]
    pub answer: Option<String>,
    /// Error.
    #[serde(default)]
    pub error: Option<String>,
    /// Duration.
    #[serde(default)]
    pub duration_ms: u64,
}

const RUN_FILE_VERSION: u32 = 1;

fn status_of(t: &Trajectory) -> TaskStatus {
    let status = serde_json::to_value(t.outcome).ok().and_then(|v| v.as_str().map(str::to_string));
    TaskStatus {
        web_name: t.web_name.clone(),
        status: status.unwrap_or_default(),
        steps: t.steps.len(),
        answer: t.answer.clone(),
        error: t.error.clone(),
        duration_ms: t.duration_ms,
    }
}

/// Read `<dir>/run.json`.
pub fn read_run_file(dir: &Path) -> anyhow::Result<RunFile> {
    let p = dir.join("run.json");
    let bytes = std::fs::read(&p)
        .with_context(|| format!("{} is not a webfreeze run (no run.json)", dir.display()))?;
    serde_json::from_slice(&bytes).with_context(|| format!("{}: not a webfreeze run file", p.display()))
}

enum PolicySpec {
    Llm(LlmConfig),
    Trajectory(PathBuf),
}

fn policy_spec(args: &RunArgs) -> anyhow::Result<PolicySpec> {
    if args.policy == "llm" {
        return Ok(PolicySpec::Llm(llm_config(&args.llm)?));
    }
    if let Some(dir) = args.policy.strip_prefix("trajectory:") {
        let dir = PathBuf::from(dir);
        let same = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(a), Ok(b)) => a == b,
            _ => a == b,
        };
        if same(&dir, &args.out) {
            return Err(UsageError(format!(
                "--out {} is the run --policy re-executes; write the re-run to another directory",
                args.out.display()
            ))
            .into());
        }
        read_run_file(&dir)
            .map_err(|e| UsageError(format!("--policy trajectory:{}: {e:#}", dir.display())))?;
        return Ok(PolicySpec::Trajectory(dir));
    }
    Err(UsageError(format!("--policy {:?}: expected `llm` or `trajectory:RUN_DIR`", args.policy)).into())
}

/// The model API settings from the flags and the key's environment variable.
pub fn llm_config(a: &LlmArgs) -> anyhow::Result<LlmConfig> {
    let key = std::env::var(&a.api_key_env).unwrap_or_default();
    if key.is_empty() && a.api_base.contains("api.openai.com") {
        return Err(UsageError(format!(
            "the model API at {} needs a key: set {} (or point --api-base at a local OpenAI-compatible server)",
            a.api_base, a.api_key_env
        ))
        .into());
    }
    let mut c = LlmConfig::new(&a.api_base, &a.model, &key);
    c.temperature = a.temperature;
    c.attempts = a.api_attempts.max(1);
    c.timeout = Duration::from_secs_f64(a.api_timeout.max(1.0));
    c.backoff = Duration::from_secs_f64(a.api_backoff.clamp(0.0, 300.0));
    Ok(c)
}

/// `<chrome> --version`, or "" when it does not say.
fn browser_version(chrome: &Path) -> String {
    std::process::Command::new(chrome)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn parse_window(s: &str) -> anyhow::Result<(u32, u32)> {
    let bad = || UsageError(format!("--window {s:?}: expected WIDTHxHEIGHT, e.g. 1024x768"));
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let (w, h): (u32, u32) = (w.trim().parse().map_err(|_| bad())?, h.trim().parse().map_err(|_| bad())?);
    if !(200..=4096).contains(&w) || !(200..=4096).contains(&h) {
        return Err(bad().into());
    }
    Ok((w, h))
}

struct RecProbe(Arc<Recorder>);

impl ProxyProbe for RecProbe {
    fn counters(&self) -> ProxyStats {
        let s = self.0.stats();
        ProxyStats { requests: s.recorded + s.skipped + s.failed, recorded: s.recorded, ..Default::default() }
    }
    fn report(&self) -> Option<serde_json::Value> {
        let s = self.0.stats();
        Some(serde_json::json!({
            "recorded": s.recorded, "truncated": s.truncated, "not_recorded": s.skipped,
            "no_response": s.failed, "store_errors": s.store_errors,
        }))
    }
}

/// The live pass-through handler, counting the page's requests and the ones that got no response.
#[derive(Default)]
struct Live {
    requests: std::sync::atomic::AtomicU64,
    failed: Mutex<Vec<String>>,
}

impl Handler for Live {
    /// The request's URL, once seen; None for browser background traffic (not counted).
    type Ctx = Mutex<Option<String>>;

    fn new_ctx(&self, _info: &proxy::RequestInfo) -> Self::Ctx {
        Mutex::new(None)
    }

    fn request(
        &self,
        ctx: &Self::Ctx,
        req: http::Request<proxy::Body>,
    ) -> impl std::future::Future<Output = proxy::Decision> + Send {
        let host = req.uri().host().unwrap_or("").to_string();
        if !HostFilter::is_background(&host) {
            self.requests.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if let Ok(mut c) = ctx.lock() {
                *c = Some(req.uri().to_string());
            }
        }
        std::future::ready(proxy::Decision::Forward(req))
    }

    fn complete(&self, ctx: &Self::Ctx, outcome: Result<(), proxy::ProxyError>) {
        let url = ctx.lock().ok().and_then(|mut c| c.take());
        if let (Some(url), Err(e)) = (url, outcome) {
            if let Ok(mut f) = self.failed.lock() {
                f.push(format!("{url}: {e}"));
            }
        }
    }
}

struct LiveProbe(Arc<Live>);

impl ProxyProbe for LiveProbe {
    fn counters(&self) -> ProxyStats {
        let failed_urls = self.0.failed.lock().map(|f| f.clone()).unwrap_or_default();
        ProxyStats {
            requests: self.0.requests.load(std::sync::atomic::Ordering::Relaxed),
            failed: failed_urls.len() as u64,
            failed_urls,
            ..Default::default()
        }
    }
    fn report(&self) -> Option<serde_json::Value> {
        let c = self.counters();
        Some(serde_json::json!({ "requests": c.requests, "no_response": c.failed, "failed": c.failed_urls }))
    }
}

struct ReplayProbe(Arc<Replay>);

impl ProxyProbe for ReplayProbe {
    fn counters(&self) -> ProxyStats {
        let r = self.0.report();
        ProxyStats {
            requests: r.requests,
            exact: r.exact,
            normalised: r.normalised,
            fuzzy: r.fuzzy,
            missed: r.missed,
            recorded: 0,
            miss_urls: r.misses.iter().map(|m| format!("{} {}", m.method, m.url)).collect(),
            fuzzy_urls: r.fuzzy_matches.iter().map(|f| format!("{} -> {}", f.url, f.recorded_url)).collect(),
            ..Default::default()
        }
    }
    fn report(&self) -> Option<serde_json::Value> {
        serde_json::to_value(self.0.report()).ok()
    }
}

/// What every task shares.
struct Shared {
    mode: RunMode,
    store: Option<Store>,
    ca: Arc<CertificateAuthority>,
    pcfg: ProxyConfig,
    agent: AgentConfig,
    policy: PolicySpec,
    snapshots: Option<String>,
    on_miss: MissPolicy,
    time_zone: String,
    locale: String,
    keep_screenshots: usize,
    clock: Arc<dyn Clock>,
    out: PathBuf,
}

/// Serve `handler` on an ephemeral loopback port while `f` runs.
async fn with_proxy<H: Handler, F, Fut>(handler: Arc<H>, sh: &Shared, f: F) -> anyhow::Result<Trajectory>
where
    F: FnOnce(SocketAddr) -> Fut,
    Fut: std::future::Future<Output = Trajectory>,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.context("cannot bind a task proxy")?;
    let addr = listener.local_addr()?;
    let proxy = Proxy::new(handler, sh.ca.clone(), sh.pcfg.clone())?;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let mut server = tokio::spawn(proxy.serve(listener, async move {
        let _ = rx.await;
    }));
    let t = f(addr).await;
    let _ = tx.send(());
    match tokio::time::timeout(Duration::from_secs(10), &mut server).await {
        Ok(Ok(Err(e))) => tracing::warn!("task proxy: {e}"),
        Err(_) => {
            // A request still waiting on an origin: stop it, so nothing reaches a finalized snapshot.
            tracing::warn!("task proxy did not drain within 10 s; stopping it");
            server.abort();
        }
        _ => {}
    }
    Ok(t)
}

fn error_trajectory(task: &Task, mode: &str, started_ms: i64, e: &anyhow::Error) -> Trajectory {
    Trajectory {
        v: agent::trajectory::TRAJECTORY_VERSION,
        task_id: task.id.clone(),
        web_name: task.web_name.clone(),
        question: task.ques.clone(),
        start_url: task.web.clone(),
        mode: mode.into(),
        outcome: Outcome::Error,
        error: Some(format!("{e:#}")),
        started_ms,
        ..Default::default()
    }
}

fn mode_name(m: RunMode) -> &'static str {
    match m {
        RunMode::Live => "live",
        RunMode::Record => "record",
        RunMode::Replay => "replay",
    }
}

async fn one_task(sh: Arc<Shared>, task: Task) -> Trajectory {
    let started = sh.clock.now_ms();
    let dir = task_dir(&sh.out, &task.id);
    let mode = mode_name(sh.mode);
    let r = task_inner(&sh, &task, &dir, started).await;
    match r {
        Ok(t) => t,
        Err(e) => {
            let t = error_trajectory(&task, mode, started, &e);
            let _ = std::fs::create_dir_all(&dir);
            if let Err(w) = agent::trajectory::write_trajectory(&dir, &t) {
                tracing::error!("task {}: {w}", task.id);
            }
            t
        }
    }
}

async fn task_inner(sh: &Shared, task: &Task, dir: &Path, started: i64) -> anyhow::Result<Trajectory> {
    let policy = match &sh.policy {
        PolicySpec::Llm(c) => Policy::Llm(LlmPolicy::new(Llm::new(c.clone())?, sh.keep_screenshots)),
        PolicySpec::Trajectory(run) => Policy::Trajectory(Box::new(TrajectoryPolicy::load(run, task)?)),
    };
    // A rerun of an unfinished task starts it afresh.
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("cannot clear {}", dir.display()))?;
    }
    let mut env = TaskEnv {
        proxy: SocketAddr::from(([127, 0, 0, 1], 0)),
        ca_spki: sh.ca.info().spki_sha256.clone(),
        init_scripts: Vec::new(),
        time_zone: None,
        locale: Some(sh.locale.clone()),
        mode: mode_name(sh.mode).into(),
        snapshot: None,
        started_ms: started,
        probe: None,
    };
    let cfg = &sh.agent;
    match sh.mode {
        RunMode::Live => {
            let live = Arc::new(Live::default());
            env.probe = Some(Arc::new(LiveProbe(live.clone())));
            with_proxy(live, sh, |addr| {
                env.proxy = addr;
                run_task(cfg, env, task, policy, dir)
            })
            .await
        }
        RunMode::Record => {
            let store = sh.store.as_ref().context("no store")?;
            let name = format!("{}/{}", sh.snapshots.as_deref().unwrap_or("run"), task.id);
            if store.manifest(&name).is_ok() {
                store
                    .remove(&name)
                    .with_context(|| format!("cannot replace the earlier snapshot {name:?}"))?;
            }
            let writer = Arc::new(store.create_snapshot(NewSnapshot {
                name: name.clone(),
                created_ms: started,
                seed: Seed { start_ms: started, time_zone: sh.time_zone.clone() },
                source: SnapshotSource::Record,
                labels: BTreeMap::from([
                    ("locale".to_string(), sh.locale.clone()),
                    ("task".to_string(), task.id.clone()),
                    ("web_name".to_string(), task.web_name.clone()),
                    ("run".to_string(), sh.snapshots.clone().unwrap_or_default()),
                    ("run_dir".to_string(), sh.out.display().to_string()),
                ]),
            })?);
            let rec = Arc::new(Recorder::new(writer.clone(), sh.clock.clone(), HostFilter::new(&[], &[])));
            // The page sees the same clock and random numbers now as in every replay of this snapshot.
            env.init_scripts = vec![replay::shim::script(started, replay::shim::rng_seed(&name, started), 1)];
            env.time_zone = Some(sh.time_zone.clone());
            env.snapshot = Some(name);
            env.probe = Some(Arc::new(RecProbe(rec.clone())));
            let t = with_proxy(rec, sh, |addr| {
                env.proxy = addr;
                run_task(cfg, env, task, policy, dir)
            })
            .await;
            writer.finalize(sh.clock.now_ms())?;
            t
        }
        RunMode::Replay => {
            let store = sh.store.as_ref().context("no store")?;
            let base = sh.snapshots.as_deref().context("no --snapshots")?;
            let name = format!("{base}/{}", task.id);
            let manifest = store.manifest(&name).with_context(|| {
                format!(
                    "no snapshot {name:?} for task {:?}: record it with `webfreeze run --mode record`",
                    task.id
                )
            })?;
            let mut miss_writer = None;
            let on_miss = match sh.on_miss {
                MissPolicy::NotFound => OnMiss::NotFound,
                MissPolicy::Live => OnMiss::Live,
                MissPolicy::Record => {
                    let now = sh.clock.now_ms();
                    let misses = format!("{name}/misses");
                    if store.manifest(&misses).is_ok() {
                        store.remove(&misses)?;
                    }
                    let w = Arc::new(store.create_snapshot(NewSnapshot {
                        name: misses,
                        created_ms: now,
                        seed: Seed { start_ms: now, time_zone: manifest.seed.time_zone.clone() },
                        source: SnapshotSource::Record,
                        labels: BTreeMap::from([("misses_of".to_string(), name.clone())]),
                    })?);
                    miss_writer = Some(w.clone());
                    OnMiss::Record(Arc::new(Recorder::new(w, sh.clock.clone(), HostFilter::new(&[], &[]))))
                }
            };
            let tz = manifest.seed.time_zone.clone();
            // The snapshot's locale when it recorded one (runs before v0.1 did not).
            if let Some(l) = manifest.labels.get("locale") {
                env.locale = Some(l.clone());
            }
            // The agent installs the shim through CDP, so the proxy does not inject it as well.
            let rp = Arc::new(Replay::new(
                store.clone(),
                manifest,
                ReplayConfig { on_miss, rules: Rules::builtin(), inject_shim: false, shim_step_ms: 1 },
            ));
            env.init_scripts = vec![rp.shim_js().to_string()];
            env.time_zone = Some(tz);
            env.snapshot = Some(name);
            env.probe = Some(Arc::new(ReplayProbe(rp.clone())));
            let t = with_proxy(rp, sh, |addr| {
                env.proxy = addr;
                run_task(cfg, env, task, policy, dir)
            })
            .await;
            if let Some(w) = miss_writer {
                w.finalize(sh.clock.now_ms())?;
            }
            t
        }
    }
}

pub fn run(cfg: &Config, args: RunArgs) -> anyhow::Result<()> {
    if args.jobs == 0 {
        return Err(UsageError("--jobs must be at least 1".into()).into());
    }
    let (width, height) = parse_window(&args.window)?;
    let policy = policy_spec(&args)?;
    let mut tasks = agent::tasks::load(&args.tasks).map_err(|e| UsageError(e.to_string()))?;
    if let Some(re) = &args.task_filter {
        tasks = agent::tasks::filter(tasks, re).map_err(|e| UsageError(e.to_string()))?;
    }
    if tasks.is_empty() {
        return Err(
            UsageError(format!("no tasks to run in {} (check --task-filter)", args.tasks.display())).into()
        );
    }
    let run_name = args
        .out
        .file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string)
        .ok_or_else(|| UsageError(format!("--out {}: needs a directory name", args.out.display())))?;
    let snapshots = match args.mode {
        RunMode::Live => None,
        RunMode::Record => Some(run_name.clone()),
        RunMode::Replay => Some(match (&args.snapshots, &policy) {
            (Some(s), _) => s.clone(),
            // The snapshots the re-executed run recorded or replayed.
            (None, PolicySpec::Trajectory(dir)) => read_run_file(dir)
                .ok()
                .and_then(|r| r.snapshots)
                .or_else(|| dir.file_name().and_then(|n| n.to_str()).map(str::to_string))
                .ok_or_else(|| UsageError("--snapshots RUN is needed in replay mode".into()))?,
            (None, PolicySpec::Llm(_)) => return Err(UsageError(
                "--mode replay needs --snapshots RUN: the recording whose RUN/<task-id> snapshots to replay"
                    .into(),
            )
            .into()),
        }),
    };
    let chrome = find_chrome(args.chrome.as_deref())?;
    let store = match (args.mode, args.on_miss) {
        (RunMode::Live, _) => None,
        (RunMode::Replay, MissPolicy::NotFound | MissPolicy::Live) => {
            Some(Store::open_read_only(&cfg.store)?)
        }
        _ => Some(Store::open(&cfg.store)?),
    };
    let ca = load_ca(cfg)?;
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let mut agent_cfg = AgentConfig::new(chrome.clone());
    agent_cfg.width = width;
    agent_cfg.height = height;
    agent_cfg.max_steps = args.max_steps.max(1);
    agent_cfg.page_timeout = Duration::from_secs_f64(args.page_timeout.max(1.0));
    agent_cfg.settle_quiet = Duration::from_millis(args.settle_ms);
    agent_cfg.wait = Duration::from_millis(args.wait_ms);
    agent_cfg.search_url = args.search_url.clone();
    std::fs::create_dir_all(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;

    let policy_name = match &policy {
        PolicySpec::Llm(c) => format!("llm:{}", c.model),
        PolicySpec::Trajectory(d) => format!("trajectory:{}", d.display()),
    };
    let mut run_file = RunFile {
        v: RUN_FILE_VERSION,
        webfreeze: env!("CARGO_PKG_VERSION").into(),
        mode: mode_name(args.mode).into(),
        policy: policy_name,
        tasks_file: args.tasks.display().to_string(),
        snapshots: snapshots.clone(),
        chrome: chrome.display().to_string(),
        chrome_version: browser_version(&chrome),
        config: serde_json::json!({
            "max_steps": agent_cfg.max_steps, "window": [width, height],
            "page_timeout_s": args.page_timeout, "settle_ms": args.settle_ms, "wait_ms": args.wait_ms,
            "search_url": args.search_url, "on_miss": format!("{:?}", args.on_miss),
            "temperature": args.llm.temperature, "keep_screenshots": args.llm.keep_screenshots,
        }),
        started_ms: clock.now_ms(),
        finished_ms: None,
        tasks: read_run_file(&args.out).map(|r| r.tasks).unwrap_or_default(),
    };
    // Finished tasks are kept; the rest run.
    let mut todo = Vec::new();
    let mut skipped = 0;
    for t in tasks {
        match read_trajectory(&task_dir(&args.out, &t.id)) {
            Ok(Some(tr)) if tr.finished() => {
                run_file.tasks.insert(t.id.clone(), status_of(&tr));
                skipped += 1;
            }
            _ => {
                run_file.tasks.insert(
                    t.id.clone(),
                    TaskStatus {
                        web_name: t.web_name.clone(),
                        status: "pending".into(),
                        steps: 0,
                        answer: None,
                        error: None,
                        duration_ms: 0,
                    },
                );
                todo.push(t);
            }
        }
    }
    // Record: a snapshot of the same name from another run directory is never replaced silently.
    let out_dir = std::fs::canonicalize(&args.out).unwrap_or_else(|_| args.out.clone());
    if let (RunMode::Record, Some(store), Some(base)) = (args.mode, &store, &snapshots) {
        for t in &todo {
            let name = format!("{base}/{}", t.id);
            if let Ok(m) = store.manifest(&name) {
                let from = m.labels.get("run_dir").map(String::as_str).unwrap_or("(unknown)");
                if from != out_dir.display().to_string() {
                    anyhow::bail!(
                        "snapshot {name:?} already exists, recorded by the run in {from}; name --out differently \
                         (snapshots are named after its last component) or remove it with `webfreeze snapshots rm {name}`"
                    );
                }
            }
        }
    }
    let run_path = args.out.join("run.json");
    let save = |rf: &RunFile| -> anyhow::Result<()> {
        write_atomic(&run_path, &serde_json::to_vec_pretty(rf)?)?;
        Ok(())
    };
    save(&run_file)?;
    if skipped > 0 {
        eprintln!("{skipped} task(s) already finished in {} are skipped", args.out.display());
    }
    eprintln!(
        "running {} task(s) in {} mode with {} (jobs {}) into {}",
        todo.len(),
        mode_name(args.mode),
        run_file.policy,
        args.jobs,
        args.out.display()
    );
    let shared = Arc::new(Shared {
        mode: args.mode,
        store,
        ca,
        pcfg: upstream_config(&args.upstream)?,
        agent: agent_cfg,
        policy,
        snapshots,
        on_miss: args.on_miss,
        time_zone: cfg.time_zone(args.time_zone.as_deref()),
        locale: args.locale.clone(),
        keep_screenshots: args.llm.keep_screenshots,
        clock: clock.clone(),
        out: out_dir.clone(),
    });
    let run_file = Arc::new(Mutex::new(run_file));
    let bar = crate::output::progress_bar(todo.len() as u64, "tasks");
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let interrupted = rt.block_on(async {
        let sem = Arc::new(tokio::sync::Semaphore::new(args.jobs));
        let mut set = tokio::task::JoinSet::new();
        for task in todo {
            let (sh, sem, rf, bar) = (shared.clone(), sem.clone(), run_file.clone(), bar.clone());
            let run_path = run_path.clone();
            set.spawn(async move {
                let _permit = sem.acquire_owned().await;
                if let Ok(mut r) = rf.lock() {
                    if let Some(s) = r.tasks.get_mut(&task.id) {
                        s.status = "running".into();
                    }
                }
                let t = one_task(sh, task).await;
                let line = format!(
                    "{:<28} {:<9} {:>2} steps  {}",
                    t.task_id,
                    serde_json::to_value(t.outcome)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                    t.steps.len(),
                    t.answer
                        .as_deref()
                        .or(t.error.as_deref())
                        .unwrap_or("")
                        .chars()
                        .take(70)
                        .collect::<String>()
                );
                crate::output::progress_line(&bar, &line);
                bar.inc(1);
                if let Ok(mut r) = rf.lock() {
                    r.tasks.insert(t.task_id.clone(), status_of(&t));
                    if let Ok(bytes) = serde_json::to_vec_pretty(&*r) {
                        if let Err(e) = write_atomic(&run_path, &bytes) {
                            tracing::error!("{e}");
                        }
                    }
                }
            });
        }
        let stop = crate::cmd_proxy::shutdown_signal();
        tokio::pin!(stop);
        let mut interrupted = false;
        loop {
            tokio::select! {
                r = set.join_next() => match r {
                    None => break,
                    Some(Err(e)) if !e.is_cancelled() => tracing::error!("a task panicked: {e}"),
                    Some(_) => {}
                },
                _ = &mut stop, if !interrupted => {
                    // Dropping a task's future kills its browser (kill-on-drop) and its proxy; its
                    // snapshot stays "recording" and is marked interrupted by the next writer.
                    interrupted = true;
                    set.abort_all();
                }
            }
        }
        interrupted
    });
    bar.finish_and_clear();
    let mut rf = run_file.lock().map_err(|_| anyhow::anyhow!("run state poisoned"))?.clone();
    if interrupted {
        for s in rf.tasks.values_mut() {
            if s.status == "running" || s.status == "pending" {
                s.status = "interrupted".into();
            }
        }
    }
    rf.finished_ms = Some(clock.now_ms());
    save(&rf)?;
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for s in rf.tasks.values() {
        *counts.entry(s.status.as_str()).or_default() += 1;
    }
    let summary: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    eprintln!("run {}: {} ({})", args.out.display(), summary.join(", "), run_path.display());
    if interrupted {
        anyhow::bail!("interrupted: finished tasks are kept; run the same command again to do the rest");
    }
    Ok(())
}
