//! The per-episode state behind replay's report; the report itself is data in `proxy_report` (kept in
//! trajectories, read without depending on replay).

use std::collections::{BTreeSet, HashMap};

pub use proxy_report::replay::{
    AssembledEntry, FuzzyEntry, MissEntry, OverlayEntry, ReplayReport, SearchEntry,
};

use proxy_report::replay::OverlayKind;

/// Whether a request with this `Sec-Fetch-Dest` feeds the page's rendering.
pub fn dest_renders(dest: Option<&str>) -> bool {
    matches!(
        dest.map(str::to_ascii_lowercase).as_deref(),
        Some("document" | "iframe" | "frame" | "style" | "script" | "font" | "image" | "video" | "audio")
    )
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
    pub(crate) overlay_counts: std::collections::BTreeMap<OverlayKind, u64>,
    pub(crate) overlay_answers: Vec<OverlayEntry>,
    pub(crate) frozen_search: u64,
    pub(crate) frozen_search_queries: Vec<SearchEntry>,
    pub(crate) preferred_with_body: Vec<String>,
    /// ResourceLoader batches assembled from recorded ones (`batches`).
    pub(crate) assembled: Vec<AssembledEntry>,
    /// The run's write epoch (`epochs`): how many of the recording's writes the run has made, in effect.
    pub(crate) epoch: usize,
    /// Per page and epoch, how many of its recordings in that epoch were served.
    pub(crate) epoch_cursors: HashMap<([u8; 32], usize), usize>,
}

impl crate::Replay {
    /// A document served from the snapshot that was recorded as a bot wall, denial or rate limit: the
    /// snapshot froze the wall, not the site; the report says so.
    pub(crate) fn note_wall(&self, x: &snapshots::Exchange) {
        let headers: Vec<(String, String)> =
            x.response.headers.iter().map(|h| (h.name.to_ascii_lowercase(), h.value.clone())).collect();
        let html = x
            .response
            .body
            .as_ref()
            .and_then(|b| self.store.read_blob(&b.hash).ok()?.next_chunk().ok().flatten())
            .map(|c| String::from_utf8_lossy(&c[..c.len().min(64 * 1024)]).into_owned())
            .unwrap_or_default();
        let doc = wall::DocumentResponse {
            url: &x.request.url,
            method: &x.request.method,
            status: x.response.status,
            headers: &headers,
            title: wall::html_title(&html),
            html: &html,
            text_len: wall::visible_text_len(&html),
        };
        if let Some(b) = wall::classify(&doc) {
            if let Ok(mut s) = self.state.lock() {
                if !s.walls.iter().any(|w| w.url == b.url) {
                    tracing::warn!(
                        "{}: the snapshot recorded a {:?} here ({}), not the site",
                        b.url,
                        b.kind,
                        b.marker
                    );
                    s.walls.push(b);
                }
            }
        }
    }
}
