//! The replay handler: answers every request from a snapshot, never from the network unless asked.
//!
//! - Matching is layered ([`matcher`]): exact key, normalised key ([`rules`]), fuzzy, miss; each answer's
//!   layer is counted in the [`Report`].
//! - Sequence cursors: identical requests get the recorded responses in recorded order within an episode;
//!   after the last, the last repeats. An episode is one proxy session; `POST /__webfreeze/reset` sent to
//!   the proxy itself starts a new one (`GET /__webfreeze/report` returns the report so far).
//! - Misses: 404 with a text body naming the URL (default), or forwarded live, or forwarded and recorded
//!   ([`OnMiss`]). **In 404 mode the handler never returns `Forward`, so the proxy never dials an origin.**
//! - Responses: recorded status and headers minus hop-by-hop, Content-Encoding (bodies are stored
//!   decoded), Content-Length (recomputed) and Alt-Svc; Range requests get 206/416 from the stored body;
//!   HTML gets the [`shim`] injected when asked, with the page's CSP patched to allow it.
//! - WebSockets: a recorded handshake is accepted and its connection's messages played back
//!   ([`websocket`]); a client message never recorded is a WebSocket miss.

pub mod batches;
pub mod inject;
pub mod matcher;
pub mod overlay;
pub mod refresh;
pub mod rules;
pub mod search;
pub mod shim;
pub mod sieve;
pub mod websocket;

use std::sync::{Arc, Mutex};

use proxy::ProxyError;
use recorder::{HostFilter, RecCtx, Recorder};
use snapshots::{Manifest, Store};

use crate::rules::Rules;

pub use proxy_settings::MissPolicy;

/// What to do when nothing in the snapshot matches.
pub enum OnMiss {
    /// Answer 404 (never touches the network).
    NotFound,
    /// Forward to the live origin.
    Live,
    /// Forward to the live origin and record the exchange with this recorder.
    Record(Arc<Recorder>),
}

impl OnMiss {
    /// `policy` at work for a replay of `of`: for [`MissPolicy::Record`], a new snapshot `misses`
    /// (labelled `misses_of`, seeded with `of`'s time zone) and its recorder; the writer is returned so the
    /// caller seals it when the replay ends.
    pub fn start(
        policy: MissPolicy,
        store: &Store,
        misses: &str,
        of: &Manifest,
        clock: Arc<dyn clock::Clock>,
    ) -> Result<(OnMiss, Option<Arc<snapshots::SnapshotWriter>>), snapshots::StoreError> {
        Ok(match policy {
            MissPolicy::NotFound => (OnMiss::NotFound, None),
            MissPolicy::Live => (OnMiss::Live, None),
            MissPolicy::Record => {
                let now = clock.now_ms();
                let w = Arc::new(store.create_snapshot(snapshots::NewSnapshot {
                    name: misses.to_string(),
                    created_ms: now,
                    seed: snapshots::Seed { start_ms: now, time_zone: of.seed.time_zone.clone() },
                    source: snapshots::SnapshotSource::Record,
                    labels: std::collections::BTreeMap::from([("misses_of".to_string(), of.name.clone())]),
                })?);
                let rec = Recorder::new(w.clone(), clock, HostFilter::new(&[], &[]));
                (OnMiss::Record(Arc::new(rec)), Some(w))
            }
        })
    }
}

impl std::fmt::Debug for OnMiss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OnMiss::NotFound => "404",
            OnMiss::Live => "live",
            OnMiss::Record(_) => "record",
        })
    }
}

pub use proxy_settings::NotCaptured;

/// Replay settings.
#[derive(Debug)]
pub struct ReplayConfig {
    /// Miss policy.
    pub on_miss: OnMiss,
    /// Volatile-parameter rules.
    pub rules: Rules,
    /// Inject the determinism shim into HTML responses.
    pub inject_shim: bool,
    /// Clock step of the shim's `Date` per read, in ms.
    pub shim_step_ms: u32,
    /// Fuzzy candidates scoring under this (query-parameter overlap, 0..1) are misses. Candidates whose
    /// parameters name another resource are ruled out whatever their score.
    pub fuzzy_min_score: f64,
    /// Exchanges recorded without their body.
    pub not_captured: NotCaptured,
    /// Serve freshness as recorded, relative to this clock's now ([`refresh`]: `Date`, `Expires`,
    /// `Last-Modified` and cookies' `Expires` shifted by one offset); None serves them as stored.
    pub refresh: Option<Refresh>,
    /// Snapshots consulted, in order, for what this one lacks ([`overlay`]); none by default.
    pub overlays: overlay::Overlays,
    /// The frozen search engine ([`search`]); off by default.
    pub search: search::SearchConfig,
    /// How recorded WebSocket server messages are timed.
    pub ws_pacing: websocket::WsPacing,
    /// Where each answered request goes (the task's wire log, [`wire`]); None keeps nothing.
    pub wire: Option<Arc<dyn proxy_report::wire::WireTap>>,
    /// Answer nothing from the replayed snapshot itself, only from the overlays (`webfreeze coverage`: a
    /// task against the rest of its site's frozen web). Its seed, time zone and name still apply.
    pub hide_own: bool,
}

/// The clock [`ReplayConfig::refresh`] measures "now" with.
#[derive(Clone)]
pub struct Refresh(pub Arc<dyn clock::Clock>);

impl std::fmt::Debug for Refresh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Refresh(clock)")
    }
}

impl Default for ReplayConfig {
    fn default() -> Self {
        Self {
            on_miss: OnMiss::NotFound,
            rules: Rules::builtin(),
            inject_shim: true,
            shim_step_ms: 1,
            fuzzy_min_score: 0.0,
            not_captured: NotCaptured::NotFound,
            refresh: None,
            overlays: overlay::Overlays::default(),
            search: search::SearchConfig::default(),
            ws_pacing: websocket::WsPacing::default(),
            wire: None,
            hide_own: false,
        }
    }
}

mod report;
use report::State;
pub use report::{
    dest_renders, AssembledEntry, FuzzyEntry, MissEntry, OverlayEntry, ReplayReport, SearchEntry,
};

/// Answers from one snapshot.
pub struct Replay {
    store: Store,
    manifest: Manifest,
    cfg: ReplayConfig,
    shim_js: String,
    state: Mutex<State>,
    /// The hot caches every connection shares (keys, exact matches, heads, bodies).
    caches: caches::Caches,
    /// The frozen search engine's index, built on the first search.
    search_index: search::LazyIndex,
    /// Bounds the store work (lookups, candidate reads) blocking at once; see [`proxy::offload`].
    offload: proxy::Offload,
    /// WebSocket misses, reported by the connections being played (which outlive a request).
    ws_misses: websocket::WsMisses,
    /// The next wire entry's number.
    wire_seq: std::sync::atomic::AtomicU64,
    /// The GET search forms the replayed pages declare (`--search site`), read on first need.
    declared: std::sync::OnceLock<Vec<search::DeclaredSearch>>,
    /// The replayed snapshot's state-changing writes (`epochs`), read on first need.
    writes: std::sync::OnceLock<Vec<u64>>,
}

/// A request's key and its digest, derived once.
pub(crate) type Keyed = std::sync::Arc<(snapshots::RequestKey, [u8; 32])>;

impl std::fmt::Debug for Replay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replay").field("snapshot", &self.manifest.name).finish_non_exhaustive()
    }
}

/// Per-request state: a forwarded miss's recording, and the request's wire note.
pub struct ReplayCtx {
    rec: RecCtx,
    wire: wire::WireNote,
}

const RESET_PATH: &str = "/__webfreeze/reset";
const REPORT_PATH: &str = "/__webfreeze/report";
/// Request bodies are read whole to derive the key; beyond this the request is refused (413).
const MAX_REQUEST_BODY: usize = 64 << 20;
/// Bodies up to this size are served from memory; larger ones stream chunk by chunk.
const STREAM_ABOVE: u64 = 8 << 20;

fn poisoned<T>(_: T) -> ProxyError {
    ProxyError::new(proxy::Side::Handler, proxy::ErrorKind::Other, "", "replay state lock poisoned")
}

impl Replay {
    /// Replay `snapshot` from `store`.
    pub fn new(store: Store, manifest: Manifest, cfg: ReplayConfig) -> Self {
        // The same shim the recording installed: every replay of it reads the same clock and numbers
        // (seeded from the name it was recorded under, also when it was copied under another name).
        let shim_js = shim::for_snapshot(manifest.recorded_as(), manifest.seed.start_ms, cfg.shim_step_ms);
        Self {
            store,
            manifest,
            cfg,
            shim_js,
            state: Mutex::new(State { episode: 1, ..Default::default() }),
            caches: caches::Caches::default(),
            search_index: search::LazyIndex::default(),
            offload: proxy::Offload::per_core(),
            ws_misses: websocket::WsMisses::default(),
            wire_seq: std::sync::atomic::AtomicU64::new(0),
            declared: std::sync::OnceLock::new(),
            writes: std::sync::OnceLock::new(),
        }
    }

    /// The shim this replay injects (the agent installs the same script through CDP).
    pub fn shim_js(&self) -> &str {
        &self.shim_js
    }

    /// Start a new episode: sequence cursors rewind, and the wire tap starts the episode's log.
    pub fn reset(&self) -> u64 {
        let episode = match self.state.lock() {
            Ok(mut s) => {
                s.cursors.clear();
                s.epoch = 0;
                s.epoch_cursors.clear();
                s.episode += 1;
                s.episode
            }
            Err(_) => return 0,
        };
        if let Some(tap) = &self.cfg.wire {
            tap.new_episode(episode);
        }
        episode
    }

    /// The report so far.
    pub fn report(&self) -> ReplayReport {
        let s = match self.state.lock() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        let recorded = self.manifest.counts.exchanges;
        let site_union = s.overlay_counts.get(&overlay::OverlayKind::SiteUnion).copied().unwrap_or(0);
        let explore = s.overlay_counts.get(&overlay::OverlayKind::Explore).copied().unwrap_or(0);
        let crawl = s.overlay_counts.get(&overlay::OverlayKind::Crawl).copied().unwrap_or(0);
        let overlay_total: u64 = s.overlay_counts.values().sum();
        let ws_misses = self.ws_misses.lock().map(|m| m.clone()).unwrap_or_default();
        ReplayReport {
            snapshot: self.manifest.name.clone(),
            episodes: s.episode,
            requests: s.exact
                + s.normalised
                + s.fuzzy
                + overlay_total
                + s.frozen_search
                + s.assembled.len() as u64
                + s.missed
                + s.without_body
                + s.synthetic,
            exact: s.exact,
            normalised: s.normalised,
            fuzzy: s.fuzzy,
            site_union,
            explore,
            crawl,
            frozen_search: s.frozen_search,
            frozen_search_queries: s.frozen_search_queries.clone(),
            assembled_batches: s.assembled.len() as u64,
            assembled: s.assembled.clone(),
            missed: s.missed,
            background: s.background,
            misses: s.misses.clone(),
            render_misses: s.misses.iter().filter(|m| m.render).count() as u64,
            state_unknown: s.misses.iter().filter(|m| m.action == STATE_UNKNOWN).count() as u64,
            websocket_missed: ws_misses.len() as u64,
            websocket_misses: ws_misses,
            fuzzy_matches: s.fuzzy_matches.clone(),
            recorded_exchanges: recorded,
            served_exchanges: s.served.len() as u64,
            fuzzy_min_score: self.cfg.fuzzy_min_score,
            without_body: s.without_body,
            without_body_urls: s.without_body_urls.clone(),
            preferred_with_body: s.preferred_with_body.clone(),
            synthetic: s.synthetic,
            synthetic_urls: s.synthetic_urls.clone(),
            coverage: if recorded == 0 { 0.0 } else { s.served.len() as f64 / recorded as f64 },
            walls: s.walls.clone(),
            overlays: self
                .cfg
                .overlays
                .layers
                .iter()
                .map(|o| format!("{} {}", o.kind, o.manifest.name))
                .collect(),
            overlay_answers: s.overlay_answers.clone(),
        }
    }

    /// The replayed snapshot's state-changing writes, read once (store work: call it off the async workers).
    fn recorded_writes(&self) -> &[u64] {
        self.writes.get_or_init(|| {
            epochs::recorded_writes(&self.store, &self.manifest).unwrap_or_else(|e| {
                tracing::warn!(
                    "replay: cannot read {}'s writes ({e}); pages follow recorded order",
                    self.manifest.name
                );
                Vec::new()
            })
        })
    }

    /// Count a miss in the report (what is then done with the request depends on the miss policy).
    fn record_miss(&self, method: &str, url: &str, dest: Option<&str>) {
        let action = match self.cfg.on_miss {
            OnMiss::NotFound => "404",
            OnMiss::Live => "live",
            OnMiss::Record(_) => "record",
        };
        self.note_miss(action, method, url, dest);
    }

    /// Count a page whose state at the run's epoch no recording knows (`epochs`): a miss marked
    /// [`STATE_UNKNOWN`], answered 404 whatever the miss policy (the live site shows today's state, not
    /// the one the run's writes left).
    fn record_state_unknown(&self, method: &str, url: &str, dest: Option<&str>) {
        self.note_miss(STATE_UNKNOWN, method, url, dest);
    }

    fn note_miss(&self, action: &str, method: &str, url: &str, dest: Option<&str>) {
        if let Ok(mut s) = self.state.lock() {
            s.missed += 1;
            let episode = s.episode;
            s.misses.push(MissEntry {
                episode,
                method: method.into(),
                url: url.into(),
                action: action.into(),
                dest: dest.map(str::to_string),
                render: report::dest_renders(dest),
            });
        }
        tracing::info!("replay miss ({action}): {method} {url}");
    }
}

pub mod epochs;

/// A miss's action when the page's state at the run's write epoch is unknown (`epochs`).
pub const STATE_UNKNOWN: &str = "state-unknown";
mod answer;
mod caches;
mod classify;
mod handler;
mod lookup;
mod serving;
pub mod wire;

#[cfg(test)]
mod tests;
