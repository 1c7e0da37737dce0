//! One task's proxy: a webfreeze proxy on an ephemeral loopback port inside this process, in live, record
//! or replay mode, with everything a browser harness needs to point a browser at it (address, CA pin, the
//! scripts to install before page scripts, time zone and locale) and a probe for per-step counters.
//!
//! It owns what record and replay must agree on: the snapshot's name (`<run>/<task-id>`) and labels, the
//! determinism shim's seeding (both call `replay::shim::for_snapshot` with the snapshot's name and start),
//! the miss recorder of `--on-miss record`. [`TaskProxy::finish`] drains the proxy and seals the snapshots;
//! a `TaskProxy` dropped without it (a cancelled task) stops its proxy and seals them as `interrupted`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clock::Clock;
use proxy::{CertificateAuthority, CountingPassThrough, Handler, Proxy, ProxyConfig, ServeError};
use recorder::explore::ExploreSplit;
use recorder::HostFilter;
use replay::rules::Rules;
use replay::NotCaptured;
use snapshots::{SnapshotWriter, Store};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use trajectory::task_env::{ProxyProbe, TaskEnv};
use trajectory::RunMode;

use crate::error::SessionError;
use crate::frozen_web::FrozenWeb;
use crate::open::{open_record, replay_target, MissesOpening, RecordOpening, ReplayServing, SHIM_STEP_MS};
use crate::probes::{LiveProbe, RecordProbe, ReplayProbe};

/// How long a finishing task proxy may take to drain requests still waiting on an origin.
const DRAIN: Duration = Duration::from_secs(10);

/// What replay does when no recorded exchange matches (`Record`: into `<snapshot>/misses`).
pub use replay::MissPolicy;

/// Where a task's pages come from.
#[derive(Debug, Clone)]
pub enum ProxyMode {
    /// The live web through a counting pass-through.
    Live,
    /// The live web, recorded into the snapshot `<run>/<task-id>`.
    Record {
        /// The store to write.
        store: Store,
        /// The recording's name (the run directory's name for `webfreeze run`).
        run: String,
        /// The run directory, kept in the snapshot's labels so another run never replaces it silently.
        run_dir: String,
    },
    /// The snapshot `<run>/<task-id>`, with no network unless `on_miss` says otherwise.
    Replay {
        /// The store to read (and write, for `MissPolicy::Record`).
        store: Store,
        /// The recording whose snapshots to replay.
        run: String,
        /// Miss policy.
        on_miss: MissPolicy,
        /// What else answers what the task's snapshot lacks ([`FrozenWeb`]).
        frozen_web: FrozenWeb,
    },
}

impl ProxyMode {
    /// The run mode this proxy mode serves.
    pub fn run_mode(&self) -> RunMode {
        match self {
            ProxyMode::Live => RunMode::Live,
            ProxyMode::Record { .. } => RunMode::Record,
            ProxyMode::Replay { .. } => RunMode::Replay,
        }
    }
}

use crate::names::{explore_name, snapshot_name};

/// Per-task settings.
#[derive(Clone)]
pub struct TaskProxyOptions {
    /// Task id (names the snapshot).
    pub task_id: String,
    /// Site name (a snapshot label).
    pub web_name: String,
    /// How the proxy reaches origins (trust roots, `--resolve`, timeouts).
    pub proxy: ProxyConfig,
    /// The clock snapshots are stamped with.
    pub clock: Arc<dyn Clock>,
    /// Record: the time zone stored in the snapshot and emulated. Replay uses the snapshot's.
    pub time_zone: String,
    /// The locale the browser reports (record stores it; replay uses the snapshot's when it has one).
    pub locale: String,
    /// Record: the agent explores (`agent::explore`); its marked traffic is recorded into the task's
    /// exploration snapshot `<run>/<task-id>/explore` instead of the task's own.
    pub explore: bool,
    /// Live, record, and replay's misses sent live: the side-effect and contamination guards
    /// (`proxy::guard`); None: unguarded.
    pub guard: Option<Arc<proxy::guard::GuardConfig>>,
    /// Replay and live: where each request and what answered it go (the task's wire log,
    /// `trajectory::wire`). Record keeps none: its requests are its recording's.
    pub wire: Option<Arc<dyn proxy_report::wire::WireTap>>,
}

/// A running task proxy. See the module docs.
pub struct TaskProxy {
    addr: SocketAddr,
    ca_spki: String,
    ca_pem: String,
    mode: RunMode,
    init_scripts: Vec<String>,
    time_zone: Option<String>,
    locale: String,
    snapshot: Option<String>,
    probe: Arc<dyn ProxyProbe>,
    clock: Arc<dyn Clock>,
    /// Sends the proxy's shutdown; None once finished.
    stop: Option<oneshot::Sender<()>>,
    server: Option<JoinHandle<Result<(), ServeError>>>,
    /// Snapshots this proxy writes (the recording, or replay's misses), sealed at the end.
    writers: Vec<Arc<SnapshotWriter>>,
    /// What the guards refused (live and record).
    guard_log: Arc<proxy::guard::GuardLog>,
    /// Record: the text the browser rendered of the pages the agent and exploration observed, kept with
    /// every snapshot sealed at the end (the frozen search engine indexes it).
    rendered: Arc<std::sync::Mutex<snapshots::RenderedPages>>,
}

impl std::fmt::Debug for TaskProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskProxy")
            .field("addr", &self.addr)
            .field("mode", &self.mode)
            .field("snapshot", &self.snapshot)
            .finish_non_exhaustive()
    }
}

fn replace(store: &Store, name: &str) -> Result<(), SessionError> {
    if store.manifest(name).is_ok() {
        store.remove(name)?;
    }
    Ok(())
}

impl TaskProxy {
    /// Start a proxy for one task on `127.0.0.1:0`. Record replaces an earlier snapshot of the same name
    /// (check [`check_no_clash`] first when another run may own it); replay needs the task's snapshot.
    pub async fn start(
        mode: &ProxyMode,
        ca: Arc<CertificateAuthority>,
        opts: &TaskProxyOptions,
    ) -> Result<Self, SessionError> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(SessionError::Bind)?;
        let addr = listener.local_addr().map_err(SessionError::Bind)?;
        let mut tp = TaskProxy {
            addr,
            ca_spki: ca.info().spki_sha256.clone(),
            ca_pem: ca.cert_pem().to_string(),
            mode: mode.run_mode(),
            init_scripts: Vec::new(),
            time_zone: None,
            locale: opts.locale.clone(),
            snapshot: None,
            probe: Arc::new(LiveProbe(Arc::new(CountingPassThrough::default()))),
            clock: opts.clock.clone(),
            stop: None,
            server: None,
            writers: Vec::new(),
            guard_log: Arc::default(),
            rendered: Arc::default(),
        };
        match mode {
            ProxyMode::Live => tp.start_live(listener, ca, opts)?,
            ProxyMode::Record { store, run, run_dir } => {
                tp.start_record(store, run, run_dir, listener, ca, opts)?
            }
            ProxyMode::Replay { store, run, on_miss, frozen_web } => {
                tp.start_replay(store, run, *on_miss, frozen_web, listener, ca, opts)?
            }
        }
        Ok(tp)
    }

    /// The live web, counted (and tapped into the wire log when asked): it keeps no record.
    fn start_live(
        &mut self,
        listener: tokio::net::TcpListener,
        ca: Arc<CertificateAuthority>,
        opts: &TaskProxyOptions,
    ) -> Result<(), SessionError> {
        let live = Arc::new(CountingPassThrough::default());
        self.probe = Arc::new(LiveProbe(live.clone()));
        // The live web keeps no record: the task's wire log is what it sent and got.
        match &opts.wire {
            Some(tap) => {
                let tapped = proxy::wire_tap::WireTapped::new(live, tap.clone());
                self.serve_guarded(Arc::new(tapped), listener, ca, opts)?;
            }
            None => self.serve_guarded(live, listener, ca, opts)?,
        }
        Ok(())
    }

    /// A recording of the task (and of its exploration, when asked) into `store` under `run`.
    fn start_record(
        &mut self,
        store: &Store,
        run: &str,
        run_dir: &str,
        listener: tokio::net::TcpListener,
        ca: Arc<CertificateAuthority>,
        opts: &TaskProxyOptions,
    ) -> Result<(), SessionError> {
        let name = snapshot_name(run, &opts.task_id);
        replace(store, &name)?;
        // A recording of this task (its own, or its exploration's): the task's clock and time zone,
        // the run's labels plus `labels`.
        let recording = |name: &str, labels: &[(&str, &String)]| {
            let mut all = BTreeMap::from([
                ("web_name".to_string(), opts.web_name.clone()),
                ("run".to_string(), run.to_string()),
                ("run_dir".to_string(), run_dir.to_string()),
            ]);
            all.extend(labels.iter().map(|(k, v)| (k.to_string(), (*v).clone())));
            open_record(RecordOpening {
                store,
                name,
                time_zone: opts.time_zone.clone(),
                labels: all,
                hosts: HostFilter::new(&[], &[]),
                shim_step_ms: SHIM_STEP_MS,
                clock: opts.clock.clone(),
            })
        };
        let opened = recording(&name, &[("locale", &opts.locale), ("task", &opts.task_id)])?;
        self.writers.push(opened.writer.clone());
        let rec = Arc::new(opened.recorder);
        // The page sees the same clock and random numbers now as in every replay of this snapshot.
        self.init_scripts = vec![opened.shim_js];
        self.time_zone = Some(opts.time_zone.clone());
        self.probe = Arc::new(RecordProbe(rec.clone(), self.rendered.clone()));
        if opts.explore {
            let explore = explore_name(&name);
            replace(store, &explore)?;
            let layer = recording(&explore, &[("explore_of", &name)])?;
            self.writers.push(layer.writer);
            let ex = Arc::new(layer.recorder);
            self.snapshot = Some(name);
            self.serve_guarded(Arc::new(ExploreSplit::new(rec, ex)), listener, ca, opts)?;
        } else {
            self.snapshot = Some(name);
            self.serve_guarded(rec, listener, ca, opts)?;
        }
        Ok(())
    }

    /// A replay of the task's snapshot in `run` over the frozen web `frozen_web` asks for.
    #[allow(clippy::too_many_arguments)] // the replay mode's four parts and the serving three
    fn start_replay(
        &mut self,
        store: &Store,
        run: &str,
        on_miss: MissPolicy,
        frozen_web: &FrozenWeb,
        listener: tokio::net::TcpListener,
        ca: Arc<CertificateAuthority>,
        opts: &TaskProxyOptions,
    ) -> Result<(), SessionError> {
        let name = snapshot_name(run, &opts.task_id);
        let manifest = store.manifest(&name).map_err(|source| SessionError::NoSnapshot {
            name: name.clone(),
            task: opts.task_id.clone(),
            source,
        })?;
        let target = replay_target(store, manifest)?;
        let overlays = crate::frozen_web::overlays(
            store,
            run,
            target.manifest(),
            &opts.web_name,
            frozen_web.unit,
            frozen_web.leave_out_own,
        )?;
        // The run's own misses snapshot of an earlier attempt is replaced.
        let opened = target.open(MissesOpening {
            on_miss,
            misses: None,
            replace_misses: true,
            clock: opts.clock.clone(),
        })?;
        self.time_zone = Some(opened.manifest.seed.time_zone.clone());
        // The snapshot's locale when it recorded one (runs before v0.1 did not).
        if let Some(l) = opened.manifest.labels.get("locale") {
            self.locale = l.clone();
        }
        let served = opened.assemble(
            store,
            ReplayServing {
                rules: Rules::builtin(),
                // The browser gets the shim through CDP, so the proxy does not inject it as well.
                inject_shim: false,
                fuzzy_min_score: 0.0,
                not_captured: NotCaptured::default(),
                // Caches and cookies see recording-time freshness whenever the replay runs.
                refresh: Some(opts.clock.clone()),
                overlays,
                search: replay::search::SearchConfig {
                    mode: frozen_web.search,
                    urls: frozen_web.search_urls.clone(),
                },
                ws_pacing: frozen_web.ws_pacing,
                wire: opts.wire.clone(),
                hide_own: frozen_web.leave_out_own,
            },
        );
        self.writers.extend(served.miss_writer);
        let rp = served.replay;
        self.init_scripts = vec![rp.shim_js().to_string()];
        self.snapshot = Some(name);
        self.probe = Arc::new(ReplayProbe(rp.clone()));
        if served.guard_misses {
            self.serve_guarded(rp, listener, ca, opts)?;
        } else {
            self.serve(rp, listener, ca, opts)?;
        }
        Ok(())
    }

    /// [`TaskProxy::serve`] behind the guards the options ask for; the probe then counts refusals too.
    fn serve_guarded<H: Handler>(
        &mut self,
        handler: Arc<H>,
        listener: tokio::net::TcpListener,
        ca: Arc<CertificateAuthority>,
        opts: &TaskProxyOptions,
    ) -> Result<(), SessionError> {
        let Some(cfg) = &opts.guard else { return self.serve(handler, listener, ca, opts) };
        self.probe =
            Arc::new(crate::probes::GuardedProbe { inner: self.probe.clone(), log: self.guard_log.clone() });
        let guarded = proxy::guard::Guard::new(handler, cfg.clone(), self.guard_log.clone());
        self.serve(Arc::new(guarded), listener, ca, opts)
    }

    fn serve<H: Handler>(
        &mut self,
        handler: Arc<H>,
        listener: tokio::net::TcpListener,
        ca: Arc<CertificateAuthority>,
        opts: &TaskProxyOptions,
    ) -> Result<(), SessionError> {
        let proxy = Proxy::new(handler, ca, opts.proxy.clone())?;
        let (tx, rx) = oneshot::channel::<()>();
        self.server = Some(tokio::spawn(proxy.serve(listener, async move {
            let _ = rx.await;
        })));
        self.stop = Some(tx);
        Ok(())
    }

    /// The proxy's address (`http://ADDR` as the browser's proxy).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Base64 SHA-256 of the proxy CA's SPKI (Chromium: `--ignore-certificate-errors-spki-list`).
    pub fn ca_spki(&self) -> &str {
        &self.ca_spki
    }

    /// Scripts to install before any page script (record and replay: the determinism shim).
    pub fn init_scripts(&self) -> &[String] {
        &self.init_scripts
    }

    /// The time zone to emulate (record: the one stored; replay: the snapshot's; live: none).
    pub fn time_zone(&self) -> Option<&str> {
        self.time_zone.as_deref()
    }

    /// The locale to emulate.
    pub fn locale(&self) -> &str {
        &self.locale
    }

    /// The snapshot written (record) or read (replay).
    pub fn snapshot(&self) -> Option<&str> {
        self.snapshot.as_deref()
    }

    /// Counters of the requests so far (call it around each step for per-step figures).
    pub fn probe(&self) -> Arc<dyn ProxyProbe> {
        self.probe.clone()
    }

    /// What the agent needs to run a task against this proxy.
    pub fn agent_env(&self, started_ms: i64) -> TaskEnv {
        TaskEnv {
            proxy: self.addr,
            ca_spki: self.ca_spki.clone(),
            ca_pem: self.ca_pem.clone(),
            init_scripts: self.init_scripts.clone(),
            time_zone: self.time_zone.clone(),
            locale: Some(self.locale.clone()),
            mode: self.mode,
            snapshot: self.snapshot.clone(),
            started_ms,
            probe: Some(self.probe.clone()),
        }
    }

    /// The text the browser rendered of the pages observed so far.
    fn rendered(&self) -> snapshots::RenderedPages {
        self.rendered.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Stop the proxy (requests still waiting on an origin get [`DRAIN`], then are cut, so nothing reaches a
    /// sealed snapshot) and seal its snapshots `complete`.
    pub async fn finish(mut self) -> Result<(), SessionError> {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(mut server) = self.server.take() {
            match tokio::time::timeout(DRAIN, &mut server).await {
                Ok(Ok(Err(e))) => tracing::warn!("task proxy: {e}"),
                Err(_) => {
                    tracing::warn!("task proxy did not drain within {DRAIN:?}; stopping it");
                    server.abort();
                }
                _ => {}
            }
        }
        let now = self.clock.now_ms();
        for w in std::mem::take(&mut self.writers) {
            // Sealing writes the manifest and flushes every column family, and reading every recorded page
            // for the index is store work: off the async workers. The rendered text first: the index reads it.
            let rendered = self.rendered();
            let sealed = tokio::task::spawn_blocking(move || {
                crate::seal::finish(&w, now, crate::seal::Ending::Complete, rendered)
            });
            match sealed.await {
                Ok(r) => {
                    r?;
                }
                Err(e) => tracing::warn!("search index: {e}"),
            }
        }
        Ok(())
    }
}

impl Drop for TaskProxy {
    fn drop(&mut self) {
        // Not finished: the task was cancelled. Stop serving and seal what it wrote as interrupted.
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(server) = self.server.take() {
            server.abort();
        }
        let now = self.clock.now_ms();
        let rendered = self.rendered();
        for w in self.writers.drain(..) {
            // What the browser rendered before the cancel is kept too (`snapshots search-index` reads it).
            if let Err(e) = crate::seal::finish(&w, now, crate::seal::Ending::Cancelled, rendered.clone()) {
                tracing::warn!("cannot mark a cancelled task's snapshot interrupted: {e}");
            }
        }
    }
}

/// Refuse to record over a snapshot of the same name that another run directory recorded.
pub fn check_no_clash(
    store: &Store,
    run: &str,
    run_dir: &str,
    task_ids: &[String],
) -> Result<(), SessionError> {
    for id in task_ids {
        let name = snapshot_name(run, id);
        if let Ok(m) = store.manifest(&name) {
            let from = m.labels.get("run_dir").map(String::as_str).unwrap_or("(unknown)");
            if from != run_dir {
                return Err(SessionError::SnapshotClash { name, from: from.to_string() });
            }
        }
    }
    Ok(())
}

/// The run directory as snapshots label it: canonical when it exists.
pub(crate) fn canonical_run_dir(out: &std::path::Path) -> PathBuf {
    std::fs::canonicalize(out).unwrap_or_else(|_| out.to_path_buf())
}
