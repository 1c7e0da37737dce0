//! `webfreeze snapshots explore NAME`: exploration for any harness's recording. The recorded documents are
//! revisited live in Chromium (each with the cookies it was recorded with) and explored from as
//! `run --mode record --explore` would have (`agent::explore`); everything is recorded into the snapshot's
//! exploration layer `NAME/explore`, which replay consults after `NAME` itself. So a BrowserGym or Playwright
//! recording gains the same coverage as webfreeze's own agent's.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use agent::explore::{ExploreOptions, Revisit};
use agent::runner::{AgentConfig, TaskEnv};
use clock::Clock;
use proxy::{CertificateAuthority, ProxyConfig};
use recorder::explore::ExploreSplit;
use recorder::HostFilter;
use snapshots::{Manifest, Store};
use trajectory::{Exploration, RunMode};

use crate::error::SessionError;
use crate::names::explore_name;

/// What `snapshots explore` needs besides the snapshot.
pub struct ExploreSnapshotOptions {
    /// The browser and its settings.
    pub agent: AgentConfig,
    /// Budgets.
    pub explore: ExploreOptions,
    /// The proxy CA.
    pub ca: Arc<CertificateAuthority>,
    /// How the recording proxy reaches origins.
    pub proxy: ProxyConfig,
    /// Time stamps.
    pub clock: Arc<dyn Clock>,
}

/// The documents a snapshot recorded (GET, 2xx, HTML), each URL once, in recorded order, with the
/// `Cookie` header each was asked for with.
pub fn recorded_documents(store: &Store, m: &Manifest) -> Result<Vec<Revisit>, SessionError> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for x in store.exchanges(m) {
        let x = x?;
        if !replay::search::is_document(&x) {
            continue;
        }
        if seen.insert(x.request.url.clone()) {
            let cookies = x.request.header("cookie").map(str::to_string);
            out.push(Revisit { url: x.request.url.clone(), cookies });
        }
    }
    Ok(out)
}

/// Explore from the documents of snapshot `name` into `NAME/explore` (replaced if it exists). Returns the
/// exploration layer's manifest and what exploration did.
pub async fn explore_snapshot(
    store: &Store,
    name: &str,
    o: ExploreSnapshotOptions,
    progress: &(dyn Fn(usize, usize, &str) + Send + Sync),
) -> Result<(Manifest, Exploration), SessionError> {
    let m = store.manifest(name)?;
    store.check_snapshot(&m)?;
    let docs = recorded_documents(store, &m)?;
    let layer = explore_name(name);
    // What the site's other recordings, explorations and crawl hold is on the frozen web already: the
    // budget goes to pages no one recorded.
    if let (crate::names::SnapshotName::Task { run, .. }, Some(site)) =
        (crate::names::SnapshotName::parse(name), m.labels.get("web_name"))
    {
        let mut known = crate::names::site_snapshots(store, run, site)?;
        let explored: Vec<Manifest> =
            known.iter().filter_map(|k| store.manifest(&explore_name(&k.name)).ok()).collect();
        known.extend(explored);
        known.extend(crate::names::crawl_layers(store, run, site)?);
        for k in known.iter().filter(|k| k.name != name && k.name != layer) {
            for d in recorded_documents(store, k)? {
                o.explore.frontier.mark_seen(&d.url);
            }
        }
    }
    if store.manifest(&layer).is_ok() {
        store.remove(&layer)?;
    }
    let mut labels = BTreeMap::from([("explore_of".to_string(), name.to_string())]);
    if let Some(w) = m.labels.get("web_name") {
        labels.insert("web_name".into(), w.clone());
    }
    // The layer's own shim is not used: its pages are the recording's (below).
    let opened = crate::open::open_record(crate::open::RecordOpening {
        store,
        name: &layer,
        time_zone: m.seed.time_zone.clone(),
        labels,
        hosts: HostFilter::new(&[], &[]),
        shim_step_ms: 1,
        clock: o.clock.clone(),
    })?;
    let (writer, started) = (opened.writer, opened.started_ms);
    let rec = Arc::new(opened.recorder);
    // The revisits and the exploration alike go to the layer; the marking header is stripped.
    let handler = Arc::new(ExploreSplit::new(rec.clone(), rec));
    let server = crate::loopback::Loopback::start(handler, o.ca.clone(), o.proxy.clone()).await?;
    let env = TaskEnv {
        proxy: server.addr,
        ca_spki: o.ca.info().spki_sha256.clone(),
        ca_pem: o.ca.cert_pem().to_string(),
        // The recording's clock and random numbers, as its pages computed them.
        init_scripts: vec![replay::shim::for_snapshot(m.recorded_as(), m.seed.start_ms, 1)],
        time_zone: Some(m.seed.time_zone.clone()),
        locale: m.labels.get("locale").cloned(),
        mode: RunMode::Record,
        snapshot: Some(layer),
        started_ms: started,
        probe: None,
    };
    let total = docs.len();
    let explored = agent::background::revisit_and_explore(&o.agent, &env, &docs, o.explore, &|i, u| {
        progress(i, total, u)
    })
    .await;
    server.stop().await;
    let now = o.clock.now_ms();
    match explored {
        Ok(stats) => {
            // The manifest as stored, naming its index.
            Ok((crate::seal::finalize(&writer, now)?, stats))
        }
        Err(e) => {
            let _ = writer.interrupt(now);
            Err(SessionError::Explore(e.to_string()))
        }
    }
}
