//! What replay reports: how each request was answered (per layer), every miss and fuzzy match, the
//! overlays' and the frozen search engine's answers, and the walls it served.

use serde::{Deserialize, Serialize};

/// One miss in the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MissEntry {
    /// Episode it happened in.
    pub episode: u64,
    /// Method.
    pub method: String,
    /// Requested URL.
    pub url: String,
    /// What was done: "404", "live", "record", or "state-unknown" (a page that carries state, recorded only
    /// after writes the run has not made: answered 404, marked, whatever the miss policy; see
    /// `replay::epochs`).
    pub action: String,
    /// What the browser wanted it for (`Sec-Fetch-Dest`: document, style, script, font, image, empty for
    /// fetch/XHR, manifest ...), when it said.
    pub dest: Option<String>,
    /// Whether the page's rendering needed it: a document, frame, stylesheet, script, font or image.
    /// Beacons, manifests, service-worker scripts and fetches without a destination did not.
    pub render: bool,
}

/// One fuzzy match in the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverlayEntry {
    /// Episode.
    pub episode: u64,
    /// The overlay's layer (`explore`, `site-union`).
    pub layer: OverlayKind,
    /// Method.
    pub method: String,
    /// Requested URL.
    pub url: String,
    /// The snapshot that answered.
    pub snapshot: String,
    /// How it matched inside that snapshot (exact, normalised, fuzzy).
    pub matched: Layer,
    /// `Sec-Fetch-Dest` of the request, when it said.
    pub dest: Option<String>,
}

/// A ResourceLoader batch nobody recorded, assembled from recorded batches that hold its modules
/// (`replay::batches`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssembledEntry {
    /// Episode.
    pub episode: u64,
    /// Requested URL.
    pub url: String,
    /// How many modules it asked for.
    pub modules: u64,
    /// The recorded exchanges (sequence numbers in the replayed snapshot) its modules were cut from.
    pub from: Vec<u64>,
    /// Those recorded in another layer of the frozen web (a held-out task's replay reads only these).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub from_layers: Vec<crate::RecordedRef>,
}

/// One search answered by the frozen search engine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// What a replay answered, missed and served, over its episodes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayReport {
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
    /// Answers from the site's crawl, never exact.
    #[serde(default)]
    pub crawl: u64,
    /// Search engine pages answered by the frozen search engine from the replayed pages' index.
    pub frozen_search: u64,
    /// Those searches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frozen_search_queries: Vec<SearchEntry>,
    /// ResourceLoader batches nobody recorded, assembled from recorded batches that hold their modules
    /// (`replay::batches`), never counted as exact.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub assembled_batches: u64,
    /// Those batches, and where their modules came from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assembled: Vec<AssembledEntry>,
    /// Misses.
    pub missed: u64,
    /// Browser background requests answered 404 (not counted as misses).
    pub background: u64,
    /// Every miss.
    pub misses: Vec<MissEntry>,
    /// Misses the page's rendering needed (see [`MissEntry::render`]).
    pub render_misses: u64,
    /// Misses marked `state-unknown` (counted in `missed` too): pages whose state at the run's write epoch
    /// no recording knows.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub state_unknown: u64,
    /// Client WebSocket messages no recorded one matched (not counted in `requests` or `missed`).
    pub websocket_missed: u64,
    /// Those messages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub websocket_misses: Vec<WsMissEntry>,
    /// Every fuzzy match.
    pub fuzzy_matches: Vec<FuzzyEntry>,
    /// Requests answered from an exchange recorded without its body (not hits: 404 or empty, as
    /// configured).
    pub without_body: u64,
    /// Those requests' URLs.
    pub without_body_urls: Vec<String>,
    /// Requests whose next recorded copy had no body and were answered by a later copy that had one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preferred_with_body: Vec<String>,
    /// Misses answered with a synthetic empty favicon (204, `x-webfreeze: synthetic-icon`), not hits.
    pub synthetic: u64,
    /// Those requests' URLs.
    pub synthetic_urls: Vec<String>,
    /// The score under which fuzzy candidates were misses (candidates naming another resource are
    /// ruled out whatever their score).
    pub fuzzy_min_score: f64,
    /// The snapshots consulted after this one, in order (`LAYER NAME`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overlays: Vec<String>,
    /// Every answer an overlay gave.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overlay_answers: Vec<OverlayEntry>,
    /// Recorded exchanges in the snapshot.
    pub recorded_exchanges: u64,
    /// Distinct recorded exchanges served.
    pub served_exchanges: u64,
    /// served / recorded.
    pub coverage: f64,
    /// Documents served that were recorded as a bot wall, an access denial or a rate limit: the snapshot
    /// froze the wall, not the site (re-record them: `webfreeze run --retry-blocked`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub walls: Vec<wall::Blocked>,
}

/// Which layer of matching found the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    /// Same request key.
    Exact,
    /// Same key once volatile parameters are stripped.
    Normalised,
    /// Best-scoring exchange of the same method, host and path.
    Fuzzy,
}

impl std::fmt::Display for Layer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Layer::Exact => "exact",
            Layer::Normalised => "normalised",
            Layer::Fuzzy => "fuzzy",
        })
    }
}

/// What an overlay (a snapshot consulted after the replayed one) is, which names its layer in the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum OverlayKind {
    /// Pages the recording agent could have reached, opened while recording (`explore`).
    #[serde(rename = "explore")]
    Explore,
    /// Another task's recording of the same site in the same run (`site-union`).
    #[serde(rename = "site-union")]
    SiteUnion,
    /// The site's crawl (`webfreeze snapshots crawl`), consulted after the recordings (`crawl`).
    #[serde(rename = "crawl")]
    Crawl,
}

impl OverlayKind {
    /// Its name in reports and in replay's layer header.
    pub fn name(self) -> &'static str {
        match self {
            OverlayKind::Explore => "explore",
            OverlayKind::SiteUnion => "site-union",
            OverlayKind::Crawl => "crawl",
        }
    }
}

impl std::fmt::Display for OverlayKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A client WebSocket message no recorded one matched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WsMissEntry {
    /// Episode.
    pub episode: u64,
    /// The WebSocket's URL.
    pub url: String,
    /// The message (its first 200 characters; binary as `<N bytes>`).
    pub message: String,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
