//! What replay reports: how each request was answered (per layer), every miss and fuzzy match, and the
//! per-episode state behind it.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

/// One miss in the report.
#[derive(Debug, Clone, Serialize)]
pub struct MissEntry {
    /// Episode it happened in.
    pub episode: u64,
    /// Method.
    pub method: String,
    /// Requested URL.
    pub url: String,
    /// What was done: "404", "live", "record".
    pub action: String,
    /// What the browser wanted it for (`Sec-Fetch-Dest`: document, style, script, font, image, empty for
    /// fetch/XHR, manifest ...), when it said.
    pub dest: Option<String>,
    /// Whether the page's rendering needed it: a document, frame, stylesheet, script, font or image.
    /// Beacons, manifests, service-worker scripts and fetches without a destination did not.
    pub render: bool,
}

/// Whether a request with this `Sec-Fetch-Dest` feeds the page's rendering.
pub fn dest_renders(dest: Option<&str>) -> bool {
    matches!(
        dest.map(str::to_ascii_lowercase).as_deref(),
        Some("document" | "iframe" | "frame" | "style" | "script" | "font" | "image" | "video" | "audio")
    )
}

/// One fuzzy match in the report.
#[derive(Debug, Clone, Serialize)]
pub struct FuzzyEntry {
    /// Episode.
    pub episode: u64,
    /// Requested URL.
    pub url: String,
    /// The recorded URL served instead.
    pub recorded_url: String,
    /// Its score (query overlap).
    pub score: f64,
}

/// One answer from an overlay (a snapshot consulted after the replayed one).
#[derive(Debug, Clone, Serialize)]
pub struct OverlayEntry {
    /// Episode.
    pub episode: u64,
    /// The overlay's layer (`explore`, `site-union`).
    pub layer: crate::overlay::OverlayKind,
    /// Method.
    pub method: String,
    /// Requested URL.
    pub url: String,
    /// The snapshot that answered.
    pub snapshot: String,
    /// How it matched inside that snapshot (exact, normalised, fuzzy).
    pub matched: crate::matcher::Layer,
    /// `Sec-Fetch-Dest` of the request, when it said.
    pub dest: Option<String>,
}

/// One search answered by the frozen search engine.
#[derive(Debug, Clone, Serialize)]
pub struct SearchEntry {
    /// Episode.
    pub episode: u64,
    /// Requested URL.
    pub url: String,
    /// The query (None: the engine's home page).
    pub query: Option<String>,
    /// Documents that matched.
    pub results: u64,
}

/// The replay report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Snapshot replayed.
    pub snapshot: String,
    /// Episodes (1 + resets).
    pub episodes: u64,
    /// Requests answered, background traffic excluded.
    pub requests: u64,
    /// Requests per layer.
    pub exact: u64,
    /// Normalised-layer answers.
    pub normalised: u64,
    /// Fuzzy answers.
    pub fuzzy: u64,
    /// Answers from other tasks' recordings of the same site (the site union), never counted as exact.
    pub site_union: u64,
    /// Answers from the task's exploration (pages its recording agent could have reached), never exact.
    pub explore: u64,
    /// Search engine pages answered by the frozen search engine from the replayed pages' index.
    pub frozen_search: u64,
    /// Those searches.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub frozen_search_queries: Vec<SearchEntry>,
    /// Misses.
    pub missed: u64,
    /// Browser background requests answered 404 (not counted as misses).
    pub background: u64,
    /// Every miss.
    pub misses: Vec<MissEntry>,
    /// Misses the page's rendering needed (see [`MissEntry::render`]).
    pub render_misses: u64,
    /// Client WebSocket messages no recorded one matched (not counted in `requests` or `missed`).
    pub websocket_missed: u64,
    /// Those messages.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub websocket_misses: Vec<crate::websocket::WsMissEntry>,
    /// Every fuzzy match.
    pub fuzzy_matches: Vec<FuzzyEntry>,
    /// Requests answered from an exchange recorded without its body (not hits: 404 or empty, as
    /// configured).
    pub without_body: u64,
    /// Those requests' URLs.
    pub without_body_urls: Vec<String>,
    /// Requests whose next recorded copy had no body and were answered by a later copy that had one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub preferred_with_body: Vec<String>,
    /// Misses answered with a synthetic empty favicon (204, `x-webfreeze: synthetic-icon`), not hits.
    pub synthetic: u64,
    /// Those requests' URLs.
    pub synthetic_urls: Vec<String>,
    /// The score under which fuzzy candidates were misses (candidates naming another resource are
    /// ruled out whatever their score).
    pub fuzzy_min_score: f64,
    /// The snapshots consulted after this one, in order (`LAYER NAME`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overlays: Vec<String>,
    /// Every answer an overlay gave.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overlay_answers: Vec<OverlayEntry>,
    /// Recorded exchanges in the snapshot.
    pub recorded_exchanges: u64,
    /// Distinct recorded exchanges served.
    pub served_exchanges: u64,
    /// served / recorded.
    pub coverage: f64,
    /// Documents served that were recorded as a bot wall, an access denial or a rate limit: the snapshot
    /// froze the wall, not the site (re-record them: `webfreeze run --retry-blocked`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub walls: Vec<wall::Blocked>,
}

/// Per-episode cursors and counters behind the report.
#[derive(Default)]
pub(crate) struct State {
    pub(crate) episode: u64,
    pub(crate) cursors: HashMap<[u8; 32], usize>,
    pub(crate) exact: u64,
    pub(crate) normalised: u64,
    pub(crate) fuzzy: u64,
    pub(crate) missed: u64,
    pub(crate) background: u64,
    pub(crate) served: BTreeSet<u64>,
    pub(crate) misses: Vec<MissEntry>,
    pub(crate) fuzzy_matches: Vec<FuzzyEntry>,
    pub(crate) without_body: u64,
    pub(crate) without_body_urls: Vec<String>,
    pub(crate) synthetic: u64,
    pub(crate) synthetic_urls: Vec<String>,
    pub(crate) walls: Vec<wall::Blocked>,
    pub(crate) overlay_counts: std::collections::BTreeMap<crate::overlay::OverlayKind, u64>,
    pub(crate) overlay_answers: Vec<OverlayEntry>,
    pub(crate) frozen_search: u64,
    pub(crate) frozen_search_queries: Vec<SearchEntry>,
    pub(crate) preferred_with_body: Vec<String>,
}
