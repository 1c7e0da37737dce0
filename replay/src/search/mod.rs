//! A frozen search engine: in replay, a search engine's results page that no recording answers (Google,
//! Bing, DuckDuckGo, or the run's `--search-url`) is answered with results rendered from a full-text index
//! of the documents of the snapshots being replayed (the replayed one, then its overlays), as links that
//! then replay. Deterministic (same query, same bytes; ties by URL), marked as what it is (the
//! `frozen-search` layer in the report, `x-webfreeze-layer: frozen-search`, a note on the page).
//!
//! The index is built in memory from the snapshots' recorded HTML documents when the first search request
//! arrives (a replay that never searches pays nothing).

pub mod engines;
pub mod index;
pub mod page;

use std::sync::OnceLock;

use snapshots::{Manifest, Store, StoreError};

pub use engines::{search_request, SearchRequest};
pub use index::{Doc, SearchIndex, INDEX_VERSION};

/// When the frozen search engine answers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SearchMode {
    /// Never: an unrecorded search is a miss.
    #[default]
    Off,
    /// A search request no recording answers (the default of `webfreeze run --mode replay`), unless the
    /// replay sends misses live (`OnMiss::Live`, `OnMiss::Record`): then the live engine answers it.
    Fallback,
    /// Every search request, recorded or not (the same results whatever the recording holds).
    Always,
}

/// Frozen search settings.
#[derive(Debug, Clone, Default)]
pub struct SearchConfig {
    /// When it answers.
    pub mode: SearchMode,
    /// Search pages besides Google's, Bing's and DuckDuckGo's (a run's `--search-url`).
    pub urls: Vec<String>,
}

/// Largest HTML document read into the index.
const DOC_MAX: u64 = 4 << 20;

/// Whether a recorded exchange is a page: a GET answered 2xx with `text/html` (what the frozen search
/// engine indexes and `snapshots explore` revisits).
pub fn is_document(x: &snapshots::Exchange) -> bool {
    x.request.method == "GET"
        && (200..300).contains(&x.response.status)
        && x.response.headers.iter().any(|h| {
            h.name.eq_ignore_ascii_case("content-type") && h.value.to_ascii_lowercase().contains("text/html")
        })
}

/// The HTML documents a snapshot recorded (GET, 2xx, `text/html`, with their body), in recorded order.
pub fn documents(store: &Store, m: &Manifest) -> Result<Vec<Doc>, StoreError> {
    let mut out = Vec::new();
    for x in store.exchanges(m) {
        let x = x?;
        let Some(body) = &x.response.body else { continue };
        if !is_document(&x) || body.size > DOC_MAX {
            continue;
        }
        let bytes = store.blob_bytes(&body.hash)?;
        let page = String::from_utf8_lossy(&bytes);
        out.push(Doc {
            url: x.request.url.clone(),
            title: trajectory::wall::html_title(&page).to_string(),
            text: trajectory::wall::visible_text(&page),
        });
    }
    Ok(out)
}

/// The index of a replay, built once on first use.
#[derive(Default)]
pub(crate) struct LazyIndex(OnceLock<Result<SearchIndex, String>>);

impl LazyIndex {
    pub(crate) fn get(&self, store: &Store, snapshots: &[&Manifest]) -> Result<&SearchIndex, String> {
        self.0
            .get_or_init(|| {
                let mut docs = Vec::new();
                for m in snapshots {
                    docs.extend(documents(store, m).map_err(|e| format!("{}: {e}", m.name))?);
                }
                Ok(SearchIndex::build(docs))
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl crate::Replay {
    /// Answer a search request from the index, if this replay's search mode and the request say so.
    pub(crate) fn answer_from_search(&self, url: &str, sr: &SearchRequest) -> proxy::Decision {
        use http::{header, HeaderValue, StatusCode};
        let snapshots: Vec<&Manifest> = std::iter::once(&self.manifest)
            .chain(self.cfg.overlays.layers.iter().map(|o| &o.manifest))
            .collect();
        let ix = match self.search_index.get(&self.store, &snapshots) {
            Ok(ix) => ix,
            Err(e) => {
                tracing::error!("frozen search index: {e}");
                return proxy::Decision::Respond(proxy::text_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &format!(
                        "webfreeze frozen search: the index could not be built ({e}); no results served\n"
                    ),
                ));
            }
        };
        let (total, hits) = match &sr.query {
            Some(q) => ix.search(q, sr.offset, page::PER_PAGE),
            None => (0, Vec::new()),
        };
        // The form sends to the results path: DuckDuckGo's is its home page, the others' `/search`.
        let action = match url::Url::parse(url) {
            Ok(u) if u.path() == "/" && !u.host_str().unwrap_or("").ends_with("duckduckgo.com") => {
                "/search".into()
            }
            Ok(u) => u.path().to_string(),
            Err(_) => "/search".into(),
        };
        let html = page::render(&action, sr.query.as_deref(), sr.offset, total, &hits, ix.len());
        if let Ok(mut s) = self.state.lock() {
            s.frozen_search += 1;
            let episode = s.episode;
            s.frozen_search_queries.push(crate::SearchEntry {
                episode,
                url: url.to_string(),
                query: sr.query.clone(),
                results: total as u64,
            });
        }
        tracing::debug!("replay frozen-search {url}: {total} result(s)");
        let mut r = http::Response::new(proxy::body::full(bytes::Bytes::from(html)));
        let h = r.headers_mut();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        h.insert(
            http::HeaderName::from_static(crate::overlay::LAYER_HEADER),
            HeaderValue::from_static("frozen-search"),
        );
        proxy::Decision::Respond(r)
    }

    /// The search request `url` is, when this replay answers searches at all.
    pub(crate) fn as_search(&self, method: &str, url: &str) -> Option<SearchRequest> {
        if self.cfg.search.mode == SearchMode::Off || !method.eq_ignore_ascii_case("GET") {
            return None;
        }
        search_request(url, &self.cfg.search.urls)
    }
}
