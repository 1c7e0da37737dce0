//! Serving a recorded exchange: headers cleaned, body from the hot cache, the store, or streamed chunk by
//! chunk for large bodies; Range requests (206/416); JSONP callback renaming; the shim injected into HTML
//! when asked. Also the request-body reader and the miss answer.

use bytes::Bytes;
use http::{header, HeaderName, HeaderValue, Response, StatusCode};
use http_body_util::BodyExt;
use proxy::{text_response, Body, Decision, ProxyError};
use snapshots::{Exchange, Store};

use crate::{refresh, shim, websocket, Replay, MAX_REQUEST_BODY, STREAM_ABOVE};

/// Bodies up to this size are kept in the replay's body cache (`caches`).
pub(crate) const CACHE_BODY_MAX: u64 = 256 << 10;

/// A recorded response's head as replay serves it, before the freshness headers of the moment
/// (`refresh`) and the body's length: built once per exchange ([`Replay::head_of`]), since parsing and
/// cleaning the recorded headers is most of an exact hit's own work.
#[derive(Debug)]
pub(crate) struct Head {
    status: StatusCode,
    headers: http::HeaderMap,
    is_html: bool,
    /// What serving shifts of its dates (`refresh`), parsed once.
    refresh: refresh::RefreshPlan,
}

impl Replay {
    /// `x`'s head (of snapshot `snapshot`), from the cache or built and kept.
    fn head_of(&self, snapshot: u64, x: &Exchange) -> std::sync::Arc<Head> {
        let key = (snapshot, x.seq);
        if let Some(h) = self.caches.heads.get(&key) {
            return h;
        }
        let head = std::sync::Arc::new(self.build_head(x));
        self.caches.heads.insert(key, head.clone());
        head
    }

    fn build_head(&self, x: &Exchange) -> Head {
        let mut h = http::HeaderMap::new();
        let mut is_html = false;
        let mut csp: Vec<(HeaderName, String)> = Vec::new();
        for hd in &x.response.headers {
            let Ok(name) = HeaderName::from_bytes(hd.name.as_bytes()) else { continue };
            let Ok(value) = HeaderValue::from_str(&hd.value) else { continue };
            if name == header::CONTENT_TYPE && hd.value.to_ascii_lowercase().contains("text/html") {
                is_html = true;
            }
            if name == header::CONTENT_SECURITY_POLICY || name == header::CONTENT_SECURITY_POLICY_REPORT_ONLY
            {
                csp.push((name, hd.value.clone()));
                continue;
            }
            h.append(name, value);
        }
        proxy::headers::clean_response(&mut h);
        for n in [header::CONTENT_LENGTH, header::TRANSFER_ENCODING] {
            h.remove(n);
        }
        // Stored bodies are decoded, except one whose decoding failed: it is the wire bytes, served with
        // their encoding so the browser fails on them as it did on the origin's.
        if !x.flags.decode_failed {
            h.remove(header::CONTENT_ENCODING);
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
        Head {
            status: StatusCode::from_u16(x.response.status).unwrap_or(StatusCode::OK),
            refresh: refresh::RefreshPlan::of(&h),
            headers: h,
            is_html,
        }
    }

    /// Accept a recorded WebSocket's handshake (a fresh `Sec-WebSocket-Accept` for this client's key, no
    /// extensions: messages are played uncompressed) and hand the proxy its recorded connection to play.
    pub(crate) async fn serve_websocket(
        &self,
        x: &Exchange,
        log: &snapshots::format::WebSocketLog,
        client_key: &[u8],
        url: &str,
    ) -> Decision {
        let episode = self.state.lock().map(|s| s.episode).unwrap_or(0);
        let playback = websocket::Playback {
            url: url.to_string(),
            pacing: self.cfg.ws_pacing,
            rules: self.cfg.rules.clone(),
            episode,
            misses: self.ws_misses.clone(),
        };
        let script =
            match self.offload.run(|| websocket::RecordedSocket::load(&self.store, log, playback)).await {
                Ok(s) => s,
                Err(e) => {
                    return Decision::Respond(text_response(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        &format!("webfreeze replay: cannot read the WebSocket messages of {url}: {e}\n"),
                    ))
                }
            };
        let mut res = Response::new(proxy::body::empty());
        *res.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
        let h = res.headers_mut();
        for hd in &x.response.headers {
            let Ok(name) = HeaderName::from_bytes(hd.name.as_bytes()) else { continue };
            let Ok(value) = HeaderValue::from_str(&hd.value) else { continue };
            if [header::SEC_WEBSOCKET_ACCEPT, header::SEC_WEBSOCKET_EXTENSIONS, header::CONTENT_LENGTH]
                .contains(&name)
            {
                continue;
            }
            h.append(name, value);
        }
        proxy::headers::clean_response(h);
        h.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        if let Ok(v) = HeaderValue::from_str(&proxy::websocket::accept_key(client_key)) {
            h.insert(header::SEC_WEBSOCKET_ACCEPT, v);
        }
        res.extensions_mut().insert(proxy::websocket::Scripted::new(script));
        Decision::Respond(res)
    }

    pub(crate) fn serve_exchange(
        &self,
        req_headers: &http::HeaderMap,
        x: &Exchange,
        snapshot: &snapshots::Manifest,
        callback: Option<(String, String)>,
    ) -> Result<Response<Body>, ProxyError> {
        let store_err = |e: snapshots::StoreError| {
            ProxyError::new(proxy::Side::Handler, proxy::ErrorKind::Other, "", e.to_string())
        };
        let source = &snapshot.source;
        let head = self.head_of(snapshot.id, x);
        let is_html = head.is_html;
        let mut b = Response::builder().status(head.status);
        if let Some(h) = b.headers_mut() {
            *h = head.headers.clone();
            if let Some(r) = &self.cfg.refresh {
                head.refresh.apply(h, x.started_ms, r.0.now_ms());
            }
        }
        let Some(body_ref) = &x.response.body else {
            return b.body(proxy::body::empty()).map_err(|e| {
                ProxyError::new(proxy::Side::Handler, proxy::ErrorKind::Other, "", e.to_string())
            });
        };
        let range = req_headers.get(header::RANGE).and_then(|v| v.to_str().ok()).map(str::to_string);
        let transform = (self.cfg.inject_shim && is_html) || callback.is_some();
        // The proxy recorded the origin cutting this body short: the browser gets the same cut. (A HAR or
        // WARC saying "truncated" may only mean its tool kept part of the body, so imports serve it whole.)
        let cut = x.flags.truncated && matches!(source, snapshots::SnapshotSource::Record);
        if body_ref.size > STREAM_ABOVE && !transform && range.is_none() && !cut {
            let body = stream_blob(self.store.clone(), body_ref.hash.clone());
            if let Some(h) = b.headers_mut() {
                h.insert(header::CONTENT_LENGTH, HeaderValue::from(body_ref.size));
            }
            return b.body(body).map_err(|e| {
                ProxyError::new(proxy::Side::Handler, proxy::ErrorKind::Other, "", e.to_string())
            });
        }
        let cached = self.caches.bodies.get(body_ref.hash.as_str());
        let stored = match cached {
            Some(b) => b,
            None => {
                // A read and a decompression: store work, off the async workers.
                let b =
                    Bytes::from(proxy::offload(|| self.store.blob_bytes(&body_ref.hash)).map_err(store_err)?);
                if body_ref.size <= CACHE_BODY_MAX {
                    self.caches.bodies.insert(body_ref.hash.clone(), b.clone());
                }
                b
            }
        };
        if cut && !transform && range.is_none() {
            return b.body(proxy::body::cut_short(stored, "the recorded response was cut short")).map_err(
                |e| ProxyError::new(proxy::Side::Handler, proxy::ErrorKind::Other, "", e.to_string()),
            );
        }
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

/// Why a request body could not be read, or a recorded body streamed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BodyError {
    /// The client's body failed while it was read (the client's side).
    #[error("{0}")]
    Read(proxy::BoxError),
    /// The client's body is larger than replay reads (the client's side).
    #[error("request body over {} MiB", .0 >> 20)]
    TooLarge(usize),
    /// The store failed reading a recorded body (this side).
    #[error(transparent)]
    Store(#[from] snapshots::StoreError),
    /// The blocking task reading a recorded body failed (this side).
    #[error("blob reader: {0}")]
    Task(#[from] tokio::task::JoinError),
}

impl BodyError {
    /// The status to answer a request whose body could not be read with.
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            BodyError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            BodyError::Read(_) => StatusCode::BAD_REQUEST,
            BodyError::Store(_) | BodyError::Task(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// Read a request body whole, up to [`MAX_REQUEST_BODY`].
pub(crate) fn read_body(
    mut body: Body,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Bytes, BodyError>> + Send>> {
    Box::pin(async move {
        let mut buf = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(BodyError::Read)?;
            if let Ok(d) = frame.into_data() {
                if buf.len() + d.len() > MAX_REQUEST_BODY {
                    return Err(BodyError::TooLarge(MAX_REQUEST_BODY));
                }
                buf.extend_from_slice(&d);
            }
        }
        Ok(Bytes::from(buf))
    })
}

/// Whether a request is for the site's icon (`/favicon.ico`, `favicon-32x32.png`, `apple-touch-icon.png`).
pub(crate) fn is_icon_request(method: &str, url: &str) -> bool {
    if !method.eq_ignore_ascii_case("GET") {
        return false;
    }
    let path = url.split(['?', '#']).next().unwrap_or("");
    let last = path.rsplit('/').next().unwrap_or("").to_ascii_lowercase();
    (last.starts_with("favicon") || last.starts_with("apple-touch-icon"))
        && [".ico", ".png", ".svg", ".gif"].iter().any(|e| last.ends_with(e))
}

/// The synthetic empty icon: 204, marked so a reader of the traffic knows it was not recorded.
pub(crate) fn synthetic_icon() -> Response<Body> {
    let mut r = Response::new(proxy::body::empty());
    *r.status_mut() = StatusCode::NO_CONTENT;
    r.headers_mut().insert("x-webfreeze", HeaderValue::from_static("synthetic-icon"));
    r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// The answer to an exchange recorded without its body, under `NotCaptured::NotFound`.
pub(crate) fn not_captured_response(snapshot: &str, method: &str, url: &str) -> Response<Body> {
    let mut r = text_response(
        StatusCode::NOT_FOUND,
        &format!(
            "webfreeze replay: snapshot {snapshot:?} recorded {method} {url} without its body (the capture left it out); \
             replay with --not-captured empty to serve it empty\n"
        ),
    );
    r.headers_mut().insert("x-webfreeze", HeaderValue::from_static("body-not-captured"));
    r
}

pub(crate) fn miss_response(snapshot: &str, method: &str, url: &str) -> Response<Body> {
    let mut r = text_response(
        StatusCode::NOT_FOUND,
        &format!("webfreeze replay: snapshot {snapshot:?} has no recorded response for {method} {url}\n"),
    );
    r.headers_mut().insert("x-webfreeze-miss", HeaderValue::from_static("1"));
    r
}

/// The answer to a page whose state at the run's write epoch no recording knows (`epochs`): 404, marked
/// `x-webfreeze-miss: state-unknown`.
pub(crate) fn state_unknown_response(
    snapshot: &str,
    method: &str,
    url: &str,
    epoch: usize,
) -> Response<Body> {
    let mut r = text_response(
        StatusCode::NOT_FOUND,
        &format!(
            "webfreeze replay: snapshot {snapshot:?} recorded {method} {url} only after writes this run has \
             not made (the run is at write epoch {epoch}): its state here is unknown\n"
        ),
    );
    r.headers_mut().insert("x-webfreeze-miss", HeaderValue::from_static("state-unknown"));
    r
}

/// Stream a large blob chunk by chunk, each read on the blocking pool; two chunks in flight at most, so
/// memory stays bounded whatever the body size.
fn stream_blob(store: Store, hash: String) -> Body {
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, BodyError>>(2);
    // Each read is one job on tokio's blocking pool (no thread per body, none held while a slow client
    // leaves the channel full); the channel bounds what is read ahead.
    tokio::spawn(async move {
        let opened = tokio::task::spawn_blocking(move || store.read_blob(&hash)).await;
        let mut reader = match opened {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                let _ = tx.send(Err(e.into())).await;
                return;
            }
            Err(e) => {
                let _ = tx.send(Err(e.into())).await;
                return;
            }
        };
        loop {
            let step = tokio::task::spawn_blocking(move || {
                let chunk = reader.next_chunk();
                (reader, chunk)
            })
            .await;
            let (r, chunk) = match step {
                Ok(x) => x,
                Err(e) => {
                    let _ = tx.send(Err(e.into())).await;
                    return;
                }
            };
            reader = r;
            let item = match chunk {
                Ok(Some(c)) => Ok(Bytes::from(c)),
                Ok(None) => return,
                Err(e) => Err(e.into()),
            };
            let stop = item.is_err();
            if tx.send(item).await.is_err() || stop {
                return;
            }
        }
    });
    proxy::body::boxed(ChannelBody { rx })
}

/// A body fed by the blob reader through a bounded channel.
struct ChannelBody {
    rx: tokio::sync::mpsc::Receiver<Result<Bytes, BodyError>>,
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
