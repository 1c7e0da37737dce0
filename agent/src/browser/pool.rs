//! Warm browsers: Chromium processes kept across a run's tasks, each task in a fresh browser context.
//!
//! Starting Chromium is most of a replayed task's time (663 of 1,487 ms on the demo). A pool keeps the
//! processes and gives each task a new context (`Target.createBrowserContext`): its own cookies, storage,
//! HTTP cache, permissions and, through the context's own proxy setting, its own task proxy. The context
//! is disposed when the task ends, and with it everything the task left in the browser, so a task sees
//! the same browser whichever tasks ran before it in the same process.
//!
//! A process leaves the pool, closed, after [`PoolOptions::recycle_after`] tasks, when a task's tab
//! crashed or its context could not be disposed, when its processes use more than
//! [`PoolOptions::memory_ceiling_mib`] after a task, or when its task was dropped mid-run (a task
//! timeout, Ctrl-C: the process is killed rather than reused in an unknown state). A process serves up
//! to [`PoolOptions::contexts_per_browser`] tasks at once.
//!
//! The process itself is started with a proxy that answers nothing (a closed loopback port): only the
//! contexts reach a task proxy, and Chromium's own background requests go nowhere.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::browser::Browser;
use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::browser_protocol::target::{CreateBrowserContextParams, GetBrowserContextsParams};

use super::error::bounded;
use super::profile::ProfileGuard;
use super::{BrowserError, BrowserOptions};

/// The process-level proxy of a pooled browser: a loopback port nothing listens on (the discard port),
/// so nothing but a context's own traffic leaves the browser.
pub(super) const NOWHERE: &str = "127.0.0.1:9";

/// How warm browsers are kept (`webfreeze run --browser-recycle N --browser-memory-mib M`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolOptions {
    /// Replace a process after it has served this many tasks.
    pub recycle_after: u32,
    /// Replace a process when, after a task, its processes together use more than this, MiB.
    pub memory_ceiling_mib: Option<u64>,
    /// Tasks one process serves at once, each in its own context (1: a process per concurrent task, so a
    /// browser crash ends one task only).
    pub contexts_per_browser: usize,
}

impl Default for PoolOptions {
    /// 50 tasks a process, a GiB of memory, one task at a time.
    fn default() -> Self {
        Self { recycle_after: 50, memory_ceiling_mib: Some(1024), contexts_per_browser: 1 }
    }
}

/// What a pool did, for a run's summary and the throughput bench.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Processes started.
    pub launched: u32,
    /// Contexts handed out (tasks started).
    pub leases: u32,
    /// Processes replaced after [`PoolOptions::recycle_after`] tasks.
    pub recycled_tasks: u32,
    /// Processes replaced for their memory.
    pub recycled_memory: u32,
    /// Processes replaced after a crash, a failed disposal or a dropped task.
    pub recycled_broken: u32,
    /// The most memory one process (and its renderers) used after a task, KiB.
    pub peak_memory_kib: u64,
}

/// What makes two browser processes interchangeable: everything set when Chromium starts. The proxy is
/// not in it (each context has its own).
#[derive(Debug, Clone, PartialEq, Eq)]
struct LaunchKey {
    chrome: std::path::PathBuf,
    ca_spki: String,
    width: u32,
    height: u32,
    js_heap_mb: Option<u32>,
    disclose_automation: bool,
    page_timeout: Duration,
}

impl LaunchKey {
    fn of(o: &BrowserOptions) -> Self {
        Self {
            chrome: o.chrome.clone(),
            ca_spki: o.ca_spki.clone(),
            width: o.width,
            height: o.height,
            js_heap_mb: o.js_heap_mb,
            disclose_automation: o.disclose_automation,
            page_timeout: o.page_timeout,
        }
    }
}

/// One kept process.
pub(super) struct Warm {
    pub(super) browser: Browser,
    handler: tokio::task::JoinHandle<()>,
    key: LaunchKey,
    /// Its profile; dropping it kills whatever of the process tree is left.
    profile: ProfileGuard,
    served: AtomicU32,
    active: AtomicUsize,
    retiring: AtomicBool,
}

impl Drop for Warm {
    fn drop(&mut self) {
        self.handler.abort();
    }
}

/// Browser processes shared by a run's tasks. Cheap to share: hold it in an `Arc`.
pub struct BrowserPool {
    opts: PoolOptions,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    procs: Vec<Arc<Warm>>,
    stats: PoolStats,
}

impl std::fmt::Debug for BrowserPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrowserPool").field("opts", &self.opts).field("stats", &self.stats()).finish()
    }
}

/// A task's context in a pooled process. Give it back with [`Lease::release`]; dropped without that (a
/// dropped task), its process is killed.
pub(super) struct Lease {
    pool: Arc<BrowserPool>,
    pub(super) warm: Arc<Warm>,
    pub(super) context: BrowserContextId,
    released: bool,
}

impl BrowserPool {
    /// An empty pool; processes start as tasks ask for them.
    pub fn new(opts: PoolOptions) -> Arc<Self> {
        Arc::new(Self { opts, state: Mutex::new(State::default()) })
    }

    /// How the pool keeps its processes.
    pub fn options(&self) -> PoolOptions {
        self.opts
    }

    /// What the pool has done so far.
    pub fn stats(&self) -> PoolStats {
        self.state.lock().map(|s| s.stats).unwrap_or_default()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A fresh context for a task with these options, in a kept process that fits them or a new one.
    pub(super) async fn lease(self: &Arc<Self>, opts: &BrowserOptions) -> Result<Lease, BrowserError> {
        let key = LaunchKey::of(opts);
        let per = self.opts.contexts_per_browser.max(1);
        let found = {
            let mut st = self.state();
            st.stats.leases += 1;
            let w = st
                .procs
                .iter()
                .filter(|w| {
                    w.key == key
                        && !w.retiring.load(Ordering::Relaxed)
                        && w.active.load(Ordering::Relaxed) < per
                })
                .max_by_key(|w| w.active.load(Ordering::Relaxed))
                .cloned();
            if let Some(w) = &w {
                w.active.fetch_add(1, Ordering::Relaxed);
                w.served.fetch_add(1, Ordering::Relaxed);
            }
            w
        };
        let (warm, idle_others) = match found {
            Some(w) => (w, Vec::new()),
            None => {
                let w = Arc::new(self.launch(opts, key).await?);
                let idle_others = {
                    let mut st = self.state();
                    st.stats.launched += 1;
                    st.procs.push(w.clone());
                    // Processes for other launch settings that sit idle are not kept for later.
                    let (others, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut st.procs)
                        .into_iter()
                        .partition(|p| p.key != w.key && p.active.load(Ordering::Relaxed) == 0);
                    st.procs = keep;
                    others
                };
                (w, idle_others)
            }
        };
        // The lease exists before the context does (and before any other wait): dropped from here on (a
        // failed creation, or the task dropped while it waits), it hands the process back as broken, so a
        // process is never left counted busy.
        let mut lease = Lease {
            pool: self.clone(),
            warm,
            context: BrowserContextId::new(String::new()),
            released: false,
        };
        for p in idle_others {
            close(p).await;
        }
        let params = CreateBrowserContextParams::builder()
            .proxy_server(format!("http://{}", opts.proxy))
            .proxy_bypass_list("<-loopback>")
            .build();
        let create = lease.warm.browser.create_browser_context(params);
        lease.context = bounded(opts.page_timeout, "creating a browser context", create).await?;
        Ok(lease)
    }

    async fn launch(&self, opts: &BrowserOptions, key: LaunchKey) -> Result<Warm, BrowserError> {
        let dir = tempfile::Builder::new().prefix("webfreeze-warm-browser-").tempdir().map_err(|e| {
            BrowserError::Launch {
                path: opts.chrome.display().to_string(),
                detail: format!("cannot create a profile directory: {e}"),
            }
        })?;
        let profile = ProfileGuard(dir);
        let (browser, handler) = super::start_process(opts, profile.path(), NOWHERE).await?;
        Ok(Warm {
            browser,
            handler,
            key,
            profile,
            served: AtomicU32::new(1),
            active: AtomicUsize::new(1),
            retiring: AtomicBool::new(false),
        })
    }

    /// A task is done with `warm`; returns the process when it is to be closed now (retired and idle).
    fn give_back(&self, warm: &Arc<Warm>, healthy: bool, memory_kib: u64) -> Option<Arc<Warm>> {
        let mut st = self.state();
        st.stats.peak_memory_kib = st.stats.peak_memory_kib.max(memory_kib);
        let active = warm.active.fetch_sub(1, Ordering::Relaxed).saturating_sub(1);
        if !warm.retiring.load(Ordering::Relaxed) {
            let over = self.opts.memory_ceiling_mib.is_some_and(|m| memory_kib > m * 1024);
            let reason = if !healthy {
                Some(&mut st.stats.recycled_broken)
            } else if over {
                Some(&mut st.stats.recycled_memory)
            } else if warm.served.load(Ordering::Relaxed) >= self.opts.recycle_after {
                Some(&mut st.stats.recycled_tasks)
            } else {
                None
            };
            if let Some(n) = reason {
                *n += 1;
                warm.retiring.store(true, Ordering::Relaxed);
            }
        }
        if warm.retiring.load(Ordering::Relaxed) && active == 0 {
            st.procs.retain(|p| !Arc::ptr_eq(p, warm));
            return Some(warm.clone());
        }
        None
    }

    /// The browser contexts open in the pool's kept processes, as each process lists them
    /// (`Target.getBrowserContexts`). A task's context lives only while its task does: between tasks this
    /// is 0 (docs/ARCHITECTURE.md's invariant, checked by the warm-browser tests).
    pub async fn open_contexts(&self) -> Result<usize, BrowserError> {
        let procs: Vec<Arc<Warm>> = self.state().procs.clone();
        let mut open = 0;
        for w in procs {
            let listed = w.browser.execute(GetBrowserContextsParams::default());
            open += bounded(Duration::from_secs(5), "listing browser contexts", listed)
                .await?
                .result
                .browser_context_ids
                .len();
        }
        Ok(open)
    }

    /// Close every idle process (the end of a run); a process still serving a task closes when it is
    /// given back.
    pub async fn shutdown(&self) {
        let idle: Vec<Arc<Warm>> = {
            let mut st = self.state();
            let (idle, busy) = std::mem::take(&mut st.procs)
                .into_iter()
                .partition(|p| p.active.load(Ordering::Relaxed) == 0);
            st.procs = busy;
            for p in &st.procs {
                p.retiring.store(true, Ordering::Relaxed);
            }
            idle
        };
        for p in idle {
            close(p).await;
        }
    }
}

impl Lease {
    /// The task is over: dispose its context (closing its tabs, dropping its cookies, storage and cache)
    /// and give the process back, or close it if it is due or `healthy` is false.
    pub(super) async fn release(mut self, healthy: bool) {
        self.released = true;
        let disposed = tokio::time::timeout(
            Duration::from_secs(5),
            self.warm.browser.dispose_browser_context(self.context.clone()),
        )
        .await;
        let healthy = healthy && matches!(disposed, Ok(Ok(())));
        let memory = if healthy { self.warm.profile.memory_kib() } else { 0 };
        let (pool, warm) = (self.pool.clone(), self.warm.clone());
        // Released: its drop does nothing, and lets go of its share of the process.
        drop(self);
        if let Some(w) = pool.give_back(&warm, healthy, memory) {
            // The last share but `w`'s, so `close` can close it rather than leave it to be killed.
            drop(warm);
            close(w).await;
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if !self.released {
            // Dropped mid-task: the process is not reused. It is killed when its last user lets go.
            let _ = self.pool.give_back(&self.warm, false, 0);
        }
    }
}

/// Close a process that left the pool (killed if it does not close in 5 s). One still shared is left to
/// its last holder, whose drop kills it.
async fn close(w: Arc<Warm>) {
    if let Ok(mut w) = Arc::try_unwrap(w) {
        let closed = tokio::time::timeout(Duration::from_secs(5), w.browser.close()).await;
        if !matches!(closed, Ok(Ok(_))) {
            let _ = w.browser.kill().await;
        }
        let _ = tokio::time::timeout(Duration::from_secs(5), w.browser.wait()).await;
    }
}
