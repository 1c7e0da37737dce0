//! The crawl of one site: its browser walk (`agent::crawl`) behind a recording proxy, into the next part.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent::crawl::{CrawlOptions, CrawlProgress, CrawlState};
use agent::runner::{AgentConfig, TaskEnv};
use clock::Clock;
use proxy::{CertificateAuthority, ProxyConfig};
use recorder::{HostFilter, Recorder};
use snapshots::{Manifest, NewSnapshot, Seed, SnapshotSource, Store};
use trajectory::RunMode;

use crate::error::SessionError;
use crate::names::{crawl_layers, crawl_prefix, site_slug, site_snapshots};

/// What a crawl needs besides the store and the recording.
pub struct CrawlSiteOptions {
    /// The browser and its settings.
    pub agent: AgentConfig,
    /// Budgets, pacing, robots.txt.
    pub crawl: CrawlOptions,
    /// More URLs to start from.
    pub starts: Vec<String>,
    /// The proxy CA.
    pub ca: Arc<CertificateAuthority>,
    /// How the recording proxy reaches origins.
    pub proxy: ProxyConfig,
    /// Time stamps.
    pub clock: Arc<dyn Clock>,
    /// Where crawl states are kept (`<dir>/<run>/<site>.json`).
    pub state_dir: PathBuf,
}

/// Where a crawl stands after a page, for progress on a terminal.
#[derive(Debug, Clone)]
pub struct SiteCrawlProgress<'a> {
    /// The browser walk.
    pub crawl: &'a CrawlProgress<'a>,
    /// Pages loaded by this invocation.
    pub pages_now: usize,
    /// Exchanges recorded by this invocation.
    pub exchanges: u64,
    /// Response-body bytes recorded by this invocation.
    pub bytes: u64,
}

/// What one crawl invocation did.
#[derive(Debug, Clone)]
pub struct CrawlReport {
    /// The part recorded.
    pub part: Manifest,
    /// The crawl's state after it (all invocations).
    pub state: CrawlState,
    /// Pages loaded by this invocation.
    pub pages_now: usize,
    /// Wall time of this invocation.
    pub secs: f64,
}

fn state_path(dir: &Path, run: &str, web_name: &str) -> PathBuf {
    dir.join(site_slug(run)).join(format!("{}.json", site_slug(web_name)))
}

fn read_state(path: &Path) -> Result<Option<CrawlState>, SessionError> {
    match std::fs::read(path) {
        Ok(b) => serde_json::from_slice(&b).map(Some).map_err(|e| {
            SessionError::Crawl(format!(
                "{}: not a crawl state ({e}); remove it to start over",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(SessionError::Crawl(format!("{}: {e}", path.display()))),
    }
}

/// Crawl site `web_name` of recording `run` into its next part (see the module docs).
pub async fn crawl_site(
    store: &Store,
    run: &str,
    web_name: &str,
    o: CrawlSiteOptions,
    progress: &(dyn Fn(&SiteCrawlProgress<'_>) + Send + Sync),
) -> Result<CrawlReport, SessionError> {
    let members = site_snapshots(store, run, web_name)?;
    let mut starts: Vec<String> = Vec::new();
    for m in &members {
        starts.extend(crate::explore_snapshot::recorded_documents(store, m)?.into_iter().map(|d| d.url));
    }
    starts.extend(o.starts.iter().cloned());
    if starts.is_empty() {
        return Err(SessionError::Crawl(format!(
            "no recorded document of site {web_name:?} in recording {run:?}, and no --start URL: nothing to crawl from"
        )));
    }
    let sites: BTreeSet<String> = starts.iter().filter_map(|u| agent::explore::host_of(u)).collect();
    let path = state_path(&o.state_dir, run, web_name);
    let mut state = match read_state(&path)? {
        Some(s) => s,
        None => CrawlState::new(starts.iter().cloned()),
    };
    // Start URLs given later join a resumed crawl.
    for u in &o.starts {
        if !state.done.contains(u) && !state.queue.iter().any(|(q, _)| q == u) {
            state.queue.push_back((u.clone(), 0));
        }
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| SessionError::Crawl(format!("{}: {e}", dir.display())))?;
    }
    let parts = crawl_layers(store, run, web_name)?;
    let name = format!("{}{:03}", crawl_prefix(run, web_name), parts.len() + 1);
    if store.manifest(&name).is_ok() {
        store.remove(&name)?;
    }
    let started = o.clock.now_ms();
    let seed_of = members.first().map(|m| m.seed.time_zone.clone()).unwrap_or_else(|| "UTC".into());
    let labels = BTreeMap::from([
        ("web_name".to_string(), web_name.to_string()),
        ("run".to_string(), run.to_string()),
        ("crawl_of".to_string(), web_name.to_string()),
    ]);
    let writer = Arc::new(store.create_snapshot(NewSnapshot {
        name: name.clone(),
        created_ms: started,
        seed: Seed { start_ms: started, time_zone: seed_of.clone() },
        source: SnapshotSource::Record,
        labels,
    })?);
    let rec = Arc::new(Recorder::new(writer.clone(), o.clock.clone(), HostFilter::new(&[], &[])));
    let counted = rec.clone();
    // The crawl opens links only, but page scripts may write: the side-effect guard stands in front.
    let guard_log = Arc::new(proxy::guard::GuardLog::default());
    let guarded = Arc::new(proxy::guard::Guard::new(
        rec,
        Arc::new(proxy::guard::GuardConfig::standard(Vec::new())),
        guard_log,
    ));
    let server = crate::loopback::Loopback::start(guarded, o.ca.clone(), o.proxy.clone()).await?;
    let env = TaskEnv {
        proxy: server.addr,
        ca_spki: o.ca.info().spki_sha256.clone(),
        ca_pem: o.ca.cert_pem().to_string(),
        init_scripts: vec![replay::shim::for_snapshot(&name, started, 1)],
        time_zone: Some(seed_of),
        locale: members.first().and_then(|m| m.labels.get("locale").cloned()),
        mode: RunMode::Record,
        snapshot: Some(name.clone()),
        started_ms: started,
        probe: None,
    };
    let before = state.pages;
    let t0 = std::time::Instant::now();
    let save = |s: &CrawlState| {
        let bytes = serde_json::to_vec(s).unwrap_or_default();
        if let Err(e) = trajectory::write_atomic(&path, &bytes) {
            tracing::error!("crawl state: {e}");
        }
    };
    let told = |p: &CrawlProgress<'_>| {
        let r = counted.stats();
        progress(&SiteCrawlProgress {
            crawl: p,
            pages_now: p.state.pages - before,
            exchanges: r.recorded,
            bytes: r.body_bytes,
        })
    };
    let crawled =
        agent::crawl::crawl_with_browser(&o.agent, &env, &mut state, &sites, &o.crawl, &save, &told).await;
    save(&state);
    server.stop().await;
    let now = o.clock.now_ms();
    match crawled {
        Ok(()) => {
            let m = writer.finalize(now)?;
            crate::seal::after_seal(store, &m.name);
            Ok(CrawlReport {
                part: store.manifest(&m.name).unwrap_or(m),
                pages_now: state.pages - before,
                state,
                secs: t0.elapsed().as_secs_f64(),
            })
        }
        Err(e) => {
            let _ = writer.interrupt(now);
            Err(SessionError::Crawl(format!("{e} (the crawl's state is kept: run it again to resume)")))
        }
    }
}
