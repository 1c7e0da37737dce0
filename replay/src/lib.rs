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

pub mod matcher;
pub mod rules;
pub mod shim;

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{header, HeaderName, HeaderValue, Request, Response, StatusCode};
use http_body_util::BodyExt;
use proxy::{text_response, Body, Decision, Handler, ProxyError, RequestInfo, UpstreamInfo};
use recorder::{HostFilter, RecCtx, Recorder};
use serde::Serialize;
use snapshots::{Exchange, Manifest, Store};

use crate::matcher::{Incoming, Layer};
use crate::rules::Rules;

/// What to do when nothing in the snapshot matches.
pub enum OnMiss {
    /// Answer 404 (never touches the network).
    NotFound,
    /// Forward to the live origin.
    Live,
    /// Forward to the live origin and record the exchange with this recorder.
    Record(Arc<Recorder>),
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
}

impl Default for ReplayConfig {
    fn default() -> Self {
        Self { on_miss: OnMiss::NotFound, rules: Rules::builtin(), inject_shim: true, shim_step_ms: 1 }
    }
}

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
    /// Misses.
    pub missed: u64,
    /// Browser background requests answered 404 (not counted as misses).
    pub background: u64,
    /// Every miss.
    pub misses: Vec<MissEntry>,
    /// Every fuzzy match.
    pub fuzzy_matches: Vec<FuzzyEntry>,
    /// Recorded exchanges in the snapshot.
    pub recorded_exchanges: u64,
    /// Distinct recorded exchanges served.
    pub served_exchanges: u64,
    /// served / recorded.
    pub coverage: f64,
}

#[derive(Default)]
struct State {
    episode: u64,
    cursors: HashMap<[u8; 32], usize>,
    exact: u64,
    normalised: u64,
    fuzzy: u64,
    missed: u64,
    background: u64,
    served: BTreeSet<u64>,
    misses: Vec<MissEntry>,
    fuzzy_matches: Vec<FuzzyEntry>,
}

/// Answers from one snapshot.
pub struct Replay {
    store: Store,
    manifest: Manifest,
    cfg: ReplayConfig,
    shim_js: String,
    state: Mutex<State>,
    /// Hot bodies (up to [`CACHE_BODY_MAX`] each), so repeated requests skip the store; bounded by count.
    bodies: Mutex<lru::LruCache<String, Bytes>>,
    /// Exact-key matches already looked up (the snapshot is immutable while replayed), bounded by count.
    exact: Mutex<lru::LruCache<[u8; 32], matcher::Match>>,
}

/// Exact-key match results kept in memory.
const CACHE_MATCHES: usize = 4096;
/// Bodies up to this size are kept in the in-memory LRU.
const CACHE_BODY_MAX: u64 = 256 << 10;
/// Entries in the body LRU (at most 256 KiB each: <= 128 MiB, typically far less).
const CACHE_BODIES: usize = 512;

impl std::fmt::Debug for Replay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replay").field("snapshot", &self.manifest.name).finish_non_exhaustive()
    }
}

/// Per-request state: only used when a miss is forwarded and recorded.
pub struct ReplayCtx {
    rec: RecCtx,
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
        // The PRNG seed derives from the snapshot, so every replay of it draws the same numbers.
        let rng_seed = shim::rng_seed(&manifest.name, manifest.seed.start_ms);
        let shim_js = shim::script(manifest.seed.start_ms, rng_seed, cfg.shim_step_ms);
        let cap = std::num::NonZeroUsize::new(CACHE_BODIES).unwrap_or(std::num::NonZeroUsize::MIN);
        Self {
            store,
            manifest,
            cfg,
            shim_js,
            state: Mutex::new(State { episode: 1, ..Default::default() }),
            bodies: Mutex::new(lru::LruCache::new(cap)),
            exact: Mutex::new(lru::LruCache::new(
                std::num::NonZeroUsize::new(CACHE_MATCHES).unwrap_or(std::num::NonZeroUsize::MIN),
            )),
        }
    }

    /// The shim this replay injects (the agent installs the same script through CDP).
    pub fn shim_js(&self) -> &str {
        &self.shim_js
    }

    /// Start a new episode: sequence cursors rewind.
    pub fn reset(&self) -> u64 {
        match self.state.lock() {
            Ok(mut s) => {
                s.cursors.clear();
                s.episode += 1;
                s.episode
            }
            Err(_) => 0,
        }
    }

    /// The report so far.
    pub fn report(&self) -> Report {
        let s = match self.state.lock() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        let recorded = self.manifest.counts.exchanges;
        Report {
            snapshot: self.manifest.name.clone(),
            episodes: s.episode,
            requests: s.exact + s.normalised + s.fuzzy + s.missed,
            exact: s.exact,
            normalised: s.normalised,
            fuzzy: s.fuzzy,
            missed: s.missed,
            background: s.background,
            misses: s.misses.clone(),
            fuzzy_matches: s.fuzzy_matches.clone(),
            recorded_exchanges: recorded,
            served_exchanges: s.served.len() as u64,
            coverage: if recorded == 0 { 0.0 } else { s.served.len() as f64 / recorded as f64 },
        }
    }

    /// Count a miss in the report (what is then done with the request depends on the miss policy).
    fn record_miss(&self, method: &str, url: &str) {
        let action = match self.cfg.on_miss {
            OnMiss::NotFound => "404",
            OnMiss::Live => "live",
            OnMiss::Record(_) => "record",
        };
        if let Ok(mut s) = self.state.lock() {
            s.missed += 1;
            let episode = s.episode;
            s.misses.push(MissEntry {
                episode,
                method: method.into(),
                url: url.into(),
                action: action.into(),
            });
        }
        tracing::info!("replay miss ({action}): {method} {url}");
    }

    fn serve(
        &self,
        req_headers: &http::HeaderMap,
        x: &Exchange,
        callback: Option<(String, String)>,
    ) -> Result<Response<Body>, ProxyError> {
        let store_err = |e: snapshots::StoreError| {
            ProxyError::new(proxy::Side::Handler, proxy::ErrorKind::Other, "", e.to_string())
        };
        let mut b =
            Response::builder().status(StatusCode::from_u16(x.response.status).unwrap_or(StatusCode::OK));
        let mut is_html = false;
        let mut csp: Vec<(HeaderName, String)> = Vec::new();
        {
            let Some(h) = b.headers_mut() else {
                return Err(ProxyError::new(
                    proxy::Side::Handler,
                    proxy::ErrorKind::Other,
                    "",
                    "bad recorded status",
                ));
            };
            for hd in &x.response.headers {
                let Ok(name) = HeaderName::from_bytes(hd.name.as_bytes()) else { continue };
                let Ok(value) = HeaderValue::from_str(&hd.value) else { continue };
                if name == header::CONTENT_TYPE && hd.value.to_ascii_lowercase().contains("text/html") {
                    is_html = true;
                }
                if name == header::CONTENT_SECURITY_POLICY {
                    csp.push((name, hd.value.clone()));
                    continue;
                }
                h.append(name, value);
            }
            proxy::headers::clean_response(h);
            for n in [header::CONTENT_ENCODING, header::CONTENT_LENGTH, header::TRANSFER_ENCODING] {
                h.remove(n);
            }
            let inject = self.cfg.inject_shim && is_html;
            for (name, value) in csp {
                let v = if inject { shim::patch_csp(&value) } else { value };
                if let Ok(v) = HeaderValue::from_str(&v) {
                    h.append(name, v);
                }
            }
            if inject {
                h.remove(header::ETAG);
            }
        }
        let Some(body_ref) = &x.response.body else {
            return b.body(proxy::body::empty()).map_err(|e| {
                ProxyError::new(proxy::Side::Handler, proxy::ErrorKind::Other, "", e.to_string())
            });
        };
        let range = req_headers.get(header::RANGE).and_then(|v| v.to_str().ok()).map(str::to_string);
        let transform = (self.cfg.inject_shim && is_html) || callback.is_some();
        if body_ref.size > STREAM_ABOVE && !transform && range.is_none() {
            let body = stream_blob(self.store.clone(), body_ref.hash.clone());
            if let Some(h) = b.headers_mut() {
                h.insert(header::CONTENT_LENGTH, HeaderValue::from(body_ref.size));
            }
            return b.body(body).map_err(|e| {
                ProxyError::new(proxy::Side::Handler, proxy::ErrorKind::Other, "", e.to_string())
            });
        }
        let cached = self.bodies.lock().ok().and_then(|mut c| c.get(&body_ref.hash).cloned());
        let stored = match cached {
            Some(b) => b,
            None => {
                let b = Bytes::from(self.store.blob_bytes(&body_ref.hash).map_err(store_err)?);
                if body_ref.size <= CACHE_BODY_MAX {
                    if let Ok(mut c) = self.bodies.lock() {
                        c.put(body_ref.hash.clone(), b.clone());
                    }
                }
                b
            }
        };
        if !transform && range.is_none() {
            if let Some(h) = b.headers_mut() {
                h.insert(header::CONTENT_LENGTH, HeaderValue::from(stored.len()));
            }
            return b.body(proxy::body::full(stored)).map_err(|e| {
                ProxyError::new(proxy::Side::Handler, proxy::ErrorKind::Other, "", e.to_string())
            });
        }
        let mut bytes = stored.to_vec();
        if self.cfg.inject_shim && is_html {
            bytes = shim::inject_html(&bytes, &self.shim_js);
        }
        if let Some((recorded, requested)) = callback {
            // JSONP: the recorded body calls the recorded callback name; call the page's instead.
            let text = String::from_utf8_lossy(&bytes);
            if let Some(i) = text.find(&format!("{recorded}(")) {
                let mut out = text[..i].to_string();
                out.push_str(&requested);
                out.push_str(&text[i + recorded.len()..]);
                bytes = out.into_bytes();
            }
        }
        if let (Some(r), 200) = (range, x.response.status) {
            return Ok(range_response(b, &r, bytes));
        }
        if let Some(h) = b.headers_mut() {
            h.insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
        }
        b.body(proxy::body::full(bytes))
            .map_err(|e| ProxyError::new(proxy::Side::Handler, proxy::ErrorKind::Other, "", e.to_string()))
    }
}

/// Read a request body whole, up to [`MAX_REQUEST_BODY`].
fn read_body(
    mut body: Body,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Bytes, String>> + Send>> {
    Box::pin(async move {
        let mut buf = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = match frame {
                Ok(f) => f,
                Err(e) => return Err(e.to_string()),
            };
            if let Ok(d) = frame.into_data() {
                if buf.len() + d.len() > MAX_REQUEST_BODY {
                    return Err(format!("request body over {} MiB", MAX_REQUEST_BODY >> 20));
                }
                buf.extend_from_slice(&d);
            }
        }
        Ok(Bytes::from(buf))
    })
}

fn miss_response(snapshot: &str, method: &str, url: &str) -> Response<Body> {
    let mut r = text_response(
        StatusCode::NOT_FOUND,
        &format!("webfreeze replay: snapshot {snapshot:?} has no recorded response for {method} {url}\n"),
    );
    r.headers_mut().insert("x-webfreeze-miss", HeaderValue::from_static("1"));
    r
}

/// Stream a large blob chunk by chunk from a reader thread; two chunks in flight at most, so memory stays
/// bounded whatever the body size.
fn stream_blob(store: Store, hash: String) -> Body {
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, String>>(2);
    std::thread::spawn(move || {
        let mut reader = match store.read_blob(&hash) {
            Ok(r) => r,
            Err(e) => {
                let _ = tx.blocking_send(Err(e.to_string()));
                return;
            }
        };
        loop {
            let item = match reader.next_chunk() {
                Ok(Some(c)) => Ok(Bytes::from(c)),
                Ok(None) => return,
                Err(e) => Err(e.to_string()),
            };
            let stop = item.is_err();
            if tx.blocking_send(item).is_err() || stop {
                return;
            }
        }
    });
    proxy::body::boxed(ChannelBody { rx })
}

/// A body fed by the reader thread through a bounded channel.
struct ChannelBody {
    rx: tokio::sync::mpsc::Receiver<Result<Bytes, String>>,
}

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = proxy::BoxError;
    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        self.rx.poll_recv(cx).map(|item| match item {
            Some(Ok(b)) => Some(Ok(http_body::Frame::data(b))),
            Some(Err(e)) => Some(Err(e.into())),
            None => None,
        })
    }
}

/// Answer a single `bytes=` range from the whole body: 206 with Content-Range, or 416.
fn range_response(mut b: http::response::Builder, range: &str, bytes: Vec<u8>) -> Response<Body> {
    let len = bytes.len() as u64;
    let parsed = range.trim().strip_prefix("bytes=").and_then(|spec| {
        if spec.contains(',') {
            return None; // multiple ranges: serve the whole body
        }
        let (s, e) = spec.split_once('-')?;
        let (s, e) = (s.trim(), e.trim());
        Some(if s.is_empty() {
            let n: u64 = e.parse().ok()?;
            if n == 0 {
                Err(())
            } else {
                Ok((len.saturating_sub(n), len.saturating_sub(1)))
            }
        } else {
            let start: u64 = s.parse().ok()?;
            let end: u64 = if e.is_empty() {
                len.saturating_sub(1)
            } else {
                e.parse::<u64>().ok()?.min(len.saturating_sub(1))
            };
            if start >= len || start > end {
                Err(())
            } else {
                Ok((start, end))
            }
        })
    });
    let full = |mut b: http::response::Builder, bytes: Vec<u8>| {
        if let Some(h) = b.headers_mut() {
            h.insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
        }
        b.body(proxy::body::full(bytes))
            .unwrap_or_else(|_| text_response(StatusCode::INTERNAL_SERVER_ERROR, "bad response\n"))
    };
    match parsed {
        None => full(b, bytes),
        Some(Err(())) => {
            let mut r = text_response(StatusCode::RANGE_NOT_SATISFIABLE, "requested range not satisfiable\n");
            if let Ok(v) = HeaderValue::from_str(&format!("bytes */{len}")) {
                r.headers_mut().insert(header::CONTENT_RANGE, v);
            }
            r
        }
        Some(Ok((s, e))) => {
            b = b.status(StatusCode::PARTIAL_CONTENT);
            if let Some(h) = b.headers_mut() {
                if let Ok(v) = HeaderValue::from_str(&format!("bytes {s}-{e}/{len}")) {
                    h.insert(header::CONTENT_RANGE, v);
                }
                h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
            }
            let slice = bytes[s as usize..=e as usize].to_vec();
            full(b, slice)
        }
    }
}

impl Handler for Replay {
    type Ctx = ReplayCtx;

    fn new_ctx(&self, _info: &RequestInfo) -> ReplayCtx {
        ReplayCtx { rec: Recorder::ctx() }
    }

    // The explicit `impl Future + Send` form keeps the trait's Send bound visible at the impl.
    #[allow(clippy::manual_async_fn)]
    fn request(
        &self,
        ctx: &ReplayCtx,
        req: Request<Body>,
    ) -> impl std::future::Future<Output = Decision> + Send {
        async move {
            let (parts, body) = req.into_parts();
            let url = parts.uri.to_string();
            let method = parts.method.as_str().to_string();
            let host = parts.uri.host().unwrap_or_default().to_string();
            let body = match read_body(body).await {
                Ok(b) => b,
                Err(e) => {
                    return Decision::Respond(text_response(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        &format!("webfreeze replay: cannot read the request body for {url}: {e}\n"),
                    ))
                }
            };
            if HostFilter::is_background(&host) {
                if let Ok(mut s) = self.state.lock() {
                    s.background += 1;
                }
                return Decision::Respond(miss_response(&self.manifest.name, &method, &url));
            }
            let headers: Vec<(String, String)> = parts
                .headers
                .iter()
                .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                .collect();
            let ct =
                parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_string);
            let incoming = Incoming {
                method: &method,
                url: &url,
                content_type: ct.as_deref(),
                body: &body,
                headers: &headers,
            };
            // The key is derived once: it indexes the exact-match cache and the store.
            let key = snapshots::request_key(&method, &url, ct.as_deref(), &body).ok();
            let digest = key.as_ref().map(|k| k.digest());
            let cached = digest.and_then(|d| self.exact.lock().ok().and_then(|mut c| c.get(&d).cloned()));
            let looked_up = match (cached, &key) {
                (Some(m), _) => Ok(Some(m)),
                (None, None) => Ok(None), // a URL that cannot be keyed cannot match
                (None, Some(key)) => {
                    matcher::find(&self.store, &self.manifest, &self.cfg.rules, &incoming, key).inspect(
                        |found| {
                            if let (Some(d), Some(m)) = (digest, found) {
                                if m.layer == Layer::Exact {
                                    if let Ok(mut c) = self.exact.lock() {
                                        c.put(d, m.clone());
                                    }
                                }
                            }
                        },
                    )
                }
            };
            let found = match looked_up {
                Ok(f) => f,
                Err(e) => {
                    tracing::error!("replay lookup for {url}: {e}");
                    return Decision::Respond(text_response(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        &format!("webfreeze replay: store error for {url}: {e}\n"),
                    ));
                }
            };
            let Some(m) = found else {
                return match &self.cfg.on_miss {
                    OnMiss::NotFound => {
                        self.record_miss(&method, &url);
                        Decision::Respond(miss_response(&self.manifest.name, &method, &url))
                    }
                    OnMiss::Live | OnMiss::Record(_) => {
                        self.record_miss(&method, &url);
                        let req = Request::from_parts(parts, proxy::body::full(body));
                        if let OnMiss::Record(rec) = &self.cfg.on_miss {
                            rec.begin(&ctx.rec, &req);
                        }
                        Decision::Forward(req)
                    }
                };
            };
            let chosen = {
                let Ok(mut s) = self.state.lock().map_err(poisoned) else {
                    return Decision::Respond(text_response(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "replay state lost\n",
                    ));
                };
                let cursor = s.cursors.entry(m.group).or_insert(0);
                let i = (*cursor).min(m.exchanges.len().saturating_sub(1));
                *cursor += 1;
                let x = m.exchanges[i].clone();
                match m.layer {
                    Layer::Exact => s.exact += 1,
                    Layer::Normalised => s.normalised += 1,
                    Layer::Fuzzy => {
                        s.fuzzy += 1;
                        let episode = s.episode;
                        s.fuzzy_matches.push(FuzzyEntry {
                            episode,
                            url: url.clone(),
                            recorded_url: x.request.url.clone(),
                            score: m.score,
                        });
                    }
                }
                s.served.insert(x.seq);
                x
            };
            tracing::debug!("replay {} {method} {url} -> #{}", m.layer, chosen.seq);
            let callback =
                match (self.cfg.rules.callback_of(&chosen.request.url), self.cfg.rules.callback_of(&url)) {
                    (Some(a), Some(b)) if a != b => Some((a, b)),
                    _ => None,
                };
            match self.serve(&parts.headers, &chosen, callback) {
                Ok(r) => Decision::Respond(r),
                Err(e) => Decision::Respond(text_response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &format!("webfreeze replay: cannot serve {url}: {}\n", e.message),
                )),
            }
        }
    }

    fn request_chunk(&self, ctx: &ReplayCtx, chunk: &Bytes) {
        if matches!(self.cfg.on_miss, OnMiss::Record(_)) {
            recorder::on_request_chunk(&ctx.rec, chunk);
        }
    }

    fn response_head(&self, ctx: &ReplayCtx, up: &UpstreamInfo, res: &mut http::response::Parts) {
        if let OnMiss::Record(rec) = &self.cfg.on_miss {
            recorder::on_response_head(rec, &ctx.rec, up, res);
        }
    }

    fn response_chunk(&self, ctx: &ReplayCtx, chunk: &Bytes) {
        if matches!(self.cfg.on_miss, OnMiss::Record(_)) {
            recorder::on_response_chunk(&ctx.rec, chunk);
        }
    }

    fn complete(&self, ctx: &ReplayCtx, outcome: Result<(), ProxyError>) {
        if let OnMiss::Record(rec) = &self.cfg.on_miss {
            recorder::on_complete(rec, &ctx.rec, outcome);
        }
    }

    #[allow(clippy::manual_async_fn)]
    fn direct(&self, req: Request<Body>) -> impl std::future::Future<Output = Response<Body>> + Send {
        let path = req.uri().path().to_string();
        let method = req.method().clone();
        async move {
            match (method.as_str(), path.as_str()) {
                ("POST", RESET_PATH) => {
                    let e = self.reset();
                    text_response(StatusCode::OK, &format!("episode {e}\n"))
                }
                ("GET", REPORT_PATH) => {
                    let json = serde_json::to_string_pretty(&self.report()).unwrap_or_else(|_| "{}".into());
                    let mut r = text_response(StatusCode::OK, &json);
                    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
                    r
                }
                _ => text_response(
                    StatusCode::NOT_FOUND,
                    &format!("webfreeze replay proxy: use it as an HTTP proxy; endpoints here are POST {RESET_PATH} and GET {REPORT_PATH} (not {method} {path})\n"),
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests;
