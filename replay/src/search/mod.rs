//! A frozen search engine: in replay, a search engine's results page that no recording answers (Google,
//! Bing, DuckDuckGo, or the run's `--search-url`) is answered with results rendered from a full-text index
//! of the documents of the snapshots being replayed (the replayed one, then its overlays), as links that
//! then replay. Deterministic (same query, same bytes; ties by URL), marked as what it is (the
//! `frozen-search` layer in the report, `x-webfreeze-layer: frozen-search`, a note on the page).
//!
//! Each snapshot's index (`index`, on tantivy, with its own tokenizer `words`) is built when the recording
//! is sealed or imported and stored beside it (`stored`); the first search of a replay loads the stored
//! indexes of its snapshots (deriving in memory any that is missing or of another version) and joins them
//! (a replay that never searches pays nothing), once per process for every replay of the same snapshots
//! (`shared`). A document's text is what the browser rendered when the
//! recording observed the page (`Store::rendered_text`), else the recorded HTML's visible text with its entities
//! decoded. `--search site` (`site`) answers a site's own search the same way, in the site's own results
//! page for another query when the frozen web holds one (`template`: the page's result list refilled,
//! `x-webfreeze-template` naming the page it was made from), else in the generic page (`page`).

pub mod engines;
pub mod index;
mod markup;
pub mod page;
pub mod shared;
pub mod site;
pub mod stored;
pub mod template;
pub mod words;

use std::sync::OnceLock;

use snapshots::{Manifest, Store, StoreError};

pub use engines::{search_request, SearchRequest};
pub use index::{Doc, Hit, Joined, SearchIndex, INDEX_VERSION};
pub use shared::{shared_index, SharedIndex};
pub use site::{
    declared_search, declared_searches, opensearch_links, opensearch_search, page_searches, site_search,
    DeclaredSearch, SiteSearch,
};
pub use stored::{load_index, store_index, SearchIndexError, StoredIndex};

pub use proxy_settings::SearchMode;

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

/// How many of a site's recorded results pages are tried as a template before the generic page answers.
const TEMPLATES_TRIED: usize = 4;

/// The header naming the site's results page a frozen results page was made from (`template`).
pub const TEMPLATE_HEADER: &str = "x-webfreeze-template";

/// Whether a recorded exchange is a page: a GET answered 2xx with `text/html` (what the frozen search
/// engine indexes and `snapshots explore` revisits).
pub fn is_document(x: &snapshots::Exchange) -> bool {
    x.request.method == "GET"
        && (200..300).contains(&x.response.status)
        && x.response.header("content-type").is_some_and(|v| v.to_ascii_lowercase().contains("text/html"))
}

/// The HTML documents a snapshot recorded (GET, 2xx, `text/html`, with their body), in recorded order:
/// each with the text the browser rendered when the recording observed it, else its HTML's visible text;
/// entities decoded in both the title and the text.
pub fn documents(store: &Store, m: &Manifest) -> Result<Vec<Doc>, StoreError> {
    let rendered = store.rendered_text(m)?;
    let mut out = Vec::new();
    for x in store.exchanges(m) {
        let x = x?;
        let Some(body) = &x.response.body else { continue };
        if !is_document(&x) || body.size > DOC_MAX {
            continue;
        }
        let bytes = store.blob_bytes(&body.hash)?;
        let page = String::from_utf8_lossy(&bytes);
        let text = match rendered.get(&x.request.url) {
            Some(t) => t.clone(),
            None => html_escape::decode_html_entities(&wall::visible_text(&page)).into_owned(),
        };
        out.push(Doc {
            url: x.request.url.clone(),
            title: html_escape::decode_html_entities(wall::html_title(&page)).into_owned(),
            text,
        });
    }
    Ok(out)
}

/// The index of a replay, loaded on its first search: its view of the index it shares with the other
/// replays of the same snapshots ([`shared`]).
#[derive(Default)]
pub(crate) struct LazyIndex(OnceLock<SharedIndex>);

impl LazyIndex {
    /// The index, or why it could not be loaded (kept: every later search gets the same answer).
    pub(crate) fn get(
        &self,
        store: &Store,
        snapshots: &[&Manifest],
        held_out: Option<&Manifest>,
    ) -> Result<&SearchIndex, &SearchIndexError> {
        self.0.get_or_init(|| shared_index(store, snapshots, held_out)).get()
    }

    /// The shared index's load number, once loaded (replays sharing one index have the same).
    #[cfg(test)]
    pub(crate) fn load(&self) -> Option<u64> {
        self.0.get().and_then(SharedIndex::load)
    }
}

impl crate::Replay {
    /// Answer a search request from the index, if this replay's search mode and the request say so.
    pub(crate) fn answer_from_search(&self, url: &str, sr: &SearchRequest) -> proxy::Decision {
        // The form sends to the results path: DuckDuckGo's is its home page, the others' `/search`.
        let action = match url::Url::parse(url) {
            Ok(u) if u.path() == "/" && !u.host_str().unwrap_or("").ends_with("duckduckgo.com") => {
                "/search".into()
            }
            Ok(u) => u.path().to_string(),
            Err(_) => "/search".into(),
        };
        let form = page::Form { action, field: "q".into(), hidden: Vec::new() };
        self.answer_search_page(url, &form, sr.query.as_deref(), sr.offset, None, None)
    }

    /// Answer a site's own search from the index: the site's documents only, on a page at its path.
    pub(crate) fn answer_from_site_search(&self, url: &str, ss: &SiteSearch) -> proxy::Decision {
        let Ok(u) = url::Url::parse(url) else {
            return self.answer_search_page(url, &page::Form::default(), None, 0, None, None);
        };
        let form =
            page::Form { action: u.path().to_string(), field: ss.field.clone(), hidden: ss.hidden.clone() };
        let template = self.results_template(url, ss);
        self.answer_search_page(url, &form, Some(&ss.query), ss.offset, u.host_str(), template.as_ref())
    }

    /// The site's own results page for another query, as the frozen web holds it (any layer this replay
    /// searches, never a page hidden from it): (its URL, its query, its HTML), the first of at most
    /// [`TEMPLATES_TRIED`] that holds a result list (`template`).
    fn results_template(&self, url: &str, ss: &SiteSearch) -> Option<(String, String, String)> {
        let hidden = self.cfg.overlays.hidden.as_ref();
        let mut tried = 0;
        for m in self.searched_snapshots() {
            let Ok(xs) = self.store.scan_host_path(m, url) else { continue };
            for x in xs.into_iter().filter(is_document) {
                let Ok(u) = url::Url::parse(&x.request.url) else { continue };
                let Some(old) =
                    u.query_pairs().find(|(k, _)| *k == ss.field.as_str()).map(|(_, v)| v.into_owned())
                else {
                    continue;
                };
                if old.trim().is_empty()
                    || old == ss.query
                    || hidden.is_some_and(|h| h.contains(&x.request.url))
                {
                    continue;
                }
                let Some(b) = x.response.body.as_ref().filter(|b| b.size <= DOC_MAX) else { continue };
                let Ok(bytes) = self.store.blob_bytes(&b.hash) else { continue };
                let html = String::from_utf8_lossy(&bytes).into_owned();
                // A probe with no hits: does the page hold a result list at all?
                if template::refill(&html, &x.request.url, &ss.field, &old, &ss.query, &[]).is_some() {
                    return Some((x.request.url, old, html));
                }
                tried += 1;
                if tried >= TEMPLATES_TRIED {
                    return None;
                }
            }
        }
        None
    }

    /// The results page for `query` (None: a search box only), of documents on `host` when given: in the
    /// site's own results page `template` (its URL, its query, its HTML) when there is one.
    fn answer_search_page(
        &self,
        url: &str,
        form: &page::Form,
        query: Option<&str>,
        offset: usize,
        host: Option<&str>,
        template: Option<&(String, String, String)>,
    ) -> proxy::Decision {
        use http::{header, HeaderValue, StatusCode};
        let snapshots = self.searched_snapshots();
        let held_out = self.cfg.hide_own.then_some(&self.manifest);
        let ix = match self.search_index.get(&self.store, &snapshots, held_out) {
            Ok(ix) => ix,
            Err(e) => {
                tracing::error!("frozen search index: {e}");
                return proxy::Decision::Respond(proxy::text_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &format!("webfreeze frozen search: no results served: {e}\n"),
                ));
            }
        };
        // A page hidden from this replay (a held-out task's private crawl page) is no hit, left out before the
        // results are paged.
        let no_hidden = std::collections::BTreeSet::new();
        let except = self.cfg.overlays.hidden.as_deref().unwrap_or(&no_hidden);
        let (total, hits) = match query.map(|q| ix.search_except(q, offset, page::PER_PAGE, host, except)) {
            Some(Ok(found)) => found,
            Some(Err(e)) => {
                tracing::error!("frozen search: {e}");
                return proxy::Decision::Respond(proxy::text_response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &format!("webfreeze frozen search: the query failed: {e}\n"),
                ));
            }
            None => (0, Vec::new()),
        };
        let in_template = template.zip(query).and_then(|((t_url, old, t_html), q)| {
            template::refill(t_html, t_url, &form.field, old, q, &hits).map(|h| (h, t_url.clone()))
        });
        let (html, template_url) = match in_template {
            Some((h, t)) => (h, Some(t)),
            None => (page::render(form, query, offset, total, &hits, ix.len()), None),
        };
        if let Ok(mut s) = self.state.lock() {
            s.frozen_search += 1;
            let episode = s.episode;
            s.frozen_search_queries.push(crate::SearchEntry {
                episode,
                url: url.to_string(),
                query: query.map(str::to_string),
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
        // The site's own results page this one was made from.
        if let Some(v) = template_url.and_then(|t| HeaderValue::from_str(&t).ok()) {
            h.insert(http::HeaderName::from_static(TEMPLATE_HEADER), v);
        }
        proxy::Decision::Respond(r)
    }

    /// The search request `url` is, when this replay answers searches at all.
    pub(crate) fn as_search(&self, method: &str, url: &str) -> Option<SearchRequest> {
        if self.cfg.search.mode == SearchMode::Off || !method.eq_ignore_ascii_case("GET") {
            return None;
        }
        search_request(url, &self.cfg.search.urls)
    }

    /// The site search `url` is, under `--search site`: judged against the documents recorded at its host
    /// and path in this replay's snapshots.
    pub(crate) fn as_site_search(&self, method: &str, url: &str) -> Option<SiteSearch> {
        if self.cfg.search.mode != SearchMode::Site
            || !method.eq_ignore_ascii_case("GET")
            || !url.contains('?')
        {
            return None;
        }
        let mut recorded = Vec::new();
        for m in self.searched_snapshots() {
            match self.store.scan_host_path(m, url) {
                Ok(xs) => recorded.extend(xs.into_iter().filter(is_document).map(|x| x.request.url)),
                Err(e) => tracing::warn!("site search: {}: {e}", m.name),
            }
        }
        site_search(url, &recorded).or_else(|| declared_search(url, self.declared_searches()))
    }

    /// The snapshots the frozen search and the site search read: the replayed one (unless it is hidden,
    /// [`crate::ReplayConfig::hide_own`]: a held-out task meets none of its own pages, in a result list
    /// either), then the overlays.
    fn searched_snapshots(&self) -> Vec<&Manifest> {
        let own = (!self.cfg.hide_own).then_some(&self.manifest);
        own.into_iter().chain(self.cfg.overlays.layers.iter().map(|o| &o.manifest)).collect()
    }

    /// The GET search forms the replayed snapshot's and its overlays' pages declare, read once.
    fn declared_searches(&self) -> &[DeclaredSearch] {
        self.declared
            .get_or_init(|| {
                let mut out: Vec<DeclaredSearch> = Vec::new();
                // A site links its description from every page: each is read once.
                let mut read = std::collections::BTreeSet::new();
                let layers = self.searched_snapshots();
                for m in layers.iter().copied() {
                    // One exchange at a time: a large snapshot is never held whole.
                    for x in self.store.exchanges(m).filter_map(Result::ok).filter(is_document) {
                        let Some(b) = x.response.body.as_ref().filter(|b| b.size <= DOC_MAX) else {
                            continue;
                        };
                        let Ok(bytes) = self.store.blob_bytes(&b.hash) else { continue };
                        let html = String::from_utf8_lossy(&bytes);
                        let (mut found, links) = page_searches(&html, &x.request.url);
                        // An OpenSearch description the page links, when the recording holds it.
                        for link in links {
                            if !read.insert(link.clone()) {
                                continue;
                            }
                            // Any layer may hold it, not only the page's: the crawl fetches a site's
                            // description into its part while the first page that links it is often the
                            // task's own (issue 61). The first layer that holds it answers.
                            for holder in layers.iter().copied() {
                                let Ok(docs) = self.store.scan_host_path(holder, &link) else { continue };
                                let before = found.len();
                                for d in docs.iter().filter(|d| d.request.url == link) {
                                    let Some(b) = &d.response.body else { continue };
                                    let Ok(xml) = self.store.blob_bytes(&b.hash) else { continue };
                                    found.extend(opensearch_search(&String::from_utf8_lossy(&xml)));
                                }
                                if found.len() > before {
                                    break;
                                }
                            }
                        }
                        for d in found {
                            if !out.contains(&d) {
                                out.push(d);
                            }
                        }
                    }
                }
                out
            })
            .as_slice()
    }
}
