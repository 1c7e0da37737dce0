//! The recording handler: forwards every request live and tees the exchange into a snapshot as it streams.
//!
//! - Request and response bodies are written to the store chunk by chunk while they pass through (memory
//!   bounded by one store chunk per body); the response body is stored decoded (gzip, deflate, br, zstd),
//!   and if decoding fails the raw wire bytes are stored instead and the exchange is flagged
//!   `decode_failed`.
//! - The exchange is appended when the proxy's completion hook runs: complete exchanges as they are,
//!   exchanges whose origin body broke off (or whose client left) flagged `truncated` with what arrived.
//!   Requests that never got a response (connect errors, timeouts) are not recorded: the origin served
//!   nothing.
//! - Browser background traffic ([`HostFilter::browser_background`]) is forwarded but never recorded.
//! - Sequence numbers are taken when the request starts, so recorded order is request order.
//! - A WebSocket handshake (101) is one exchange whose [`snapshots::format::WebSocketLog`] holds the
//!   connection's messages (each payload a blob, stored as it passes), appended when the connection closes
//!   (or the proxy shuts down and closes it).

mod decode;
pub mod explore;
mod filter;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use clock::Clock;
use http::{header, Request};
use proxy::websocket::{WsFrom, WsKind, WsMessage};
use proxy::{Body, Decision, Handler, ProxyError, RequestInfo, UpstreamInfo};
use snapshots::format::{
    ExchangeFlags, Header, RequestRecord, ResponseRecord, Timings, WebSocketLog, WsOpcode, WsSide,
    WS_MAX_MESSAGES,
};
use snapshots::{BlobWriter, Exchange, KeyBuilder, SnapshotWriter};

pub use decode::Decoding;
pub use filter::HostFilter;

/// Records into one snapshot.
pub struct Recorder {
    writer: Arc<SnapshotWriter>,
    clock: Arc<dyn Clock>,
    filter: HostFilter,
    stats: Mutex<RecordStats>,
    on_store_error: Option<StoreErrorHook>,
}

/// Called with each error writing the store (a full disk, a failing device).
type StoreErrorHook = Box<dyn Fn(&snapshots::StoreError) + Send + Sync>;

/// Counters for the summary on exit.
#[derive(Debug, Clone, Default)]
pub struct RecordStats {
    /// Exchanges stored.
    pub recorded: u64,
    /// Exchanges stored flagged truncated.
    pub truncated: u64,
    /// Requests forwarded but not recorded (filtered hosts).
    pub skipped: u64,
    /// Requests that got no response (not recorded).
    pub failed: u64,
    /// Store errors (exchange lost).
    pub store_errors: u64,
    /// Decoded response-body bytes of the exchanges stored.
    pub body_bytes: u64,
    /// Writes stored that changed state (`proxy_report::writes`: a write method, answered 2xx or 3xx),
    /// state probes left out: a driver that sees this grow runs the task's state probes.
    pub writes: u64,
}

/// The request header a state probe's requests carry (never forwarded, never stored): the exchange is
/// recorded flagged [`ExchangeFlags::probe`].
pub const PROBE_HEADER: &str = "x-webfreeze-probe";

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").finish_non_exhaustive()
    }
}

/// Per-request recording state.
pub struct RecCtx {
    /// None when this request is not recorded.
    state: Mutex<Option<RecState>>,
}

struct RecState {
    seq: u64,
    started_ms: i64,
    started: Instant,
    method: String,
    url: String,
    version: String,
    headers: Vec<Header>,
    /// The request body as it streams into the store.
    req_body: BlobWriter,
    /// The first store error while storing the request body: the exchange is then not stored (its body
    /// lost a chunk), and the error is reported as the exchange's when it completes.
    req_failed: Option<snapshots::StoreError>,
    /// The request key, fed the body as it streams (the one key builder replay and import use too).
    key: Result<KeyBuilder, snapshots::KeyError>,
    response: Option<ResponseHead>,
    resp_body: Option<Decoding>,
    first_byte: Option<Instant>,
    /// The messages of a WebSocket this request opened (a 101 answer).
    ws: Option<WebSocketLog>,
    /// A state probe's request ([`PROBE_HEADER`]).
    probe: bool,
}

struct ResponseHead {
    status: u16,
    version: String,
    headers: Vec<Header>,
    content_encoding: Option<String>,
    upstream: UpstreamInfo,
}

fn headers_of(h: &http::HeaderMap) -> Vec<Header> {
    h.iter().map(|(k, v)| Header::new(k.as_str(), String::from_utf8_lossy(v.as_bytes()))).collect()
}

fn version_str(v: http::Version) -> &'static str {
    match v {
        http::Version::HTTP_09 => "HTTP/0.9",
        http::Version::HTTP_10 => "HTTP/1.0",
        http::Version::HTTP_11 => "HTTP/1.1",
        http::Version::HTTP_2 => "HTTP/2",
        http::Version::HTTP_3 => "HTTP/3",
        _ => "unknown",
    }
}

impl Recorder {
    /// Record into `writer`, stamping times with `clock`, recording only hosts `filter` admits.
    pub fn new(writer: Arc<SnapshotWriter>, clock: Arc<dyn Clock>, filter: HostFilter) -> Self {
        Self { writer, clock, filter, stats: Mutex::new(RecordStats::default()), on_store_error: None }
    }

    /// Call `hook` on every error writing the store. `webfreeze record` stops recording on the first one
    /// (a full disk): the exchanges stored before it stay, the snapshot ends `interrupted`.
    pub fn on_store_error(mut self, hook: impl Fn(&snapshots::StoreError) + Send + Sync + 'static) -> Self {
        self.on_store_error = Some(Box::new(hook));
        self
    }

    fn store_error(&self, what: &str, e: &snapshots::StoreError) {
        tracing::error!("{what}: {e}");
        self.bump(|s| s.store_errors += 1);
        if let Some(hook) = &self.on_store_error {
            hook(e);
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> RecordStats {
        self.stats.lock().map(|s| s.clone()).unwrap_or_default()
    }

    fn bump(&self, f: impl FnOnce(&mut RecordStats)) {
        if let Ok(mut s) = self.stats.lock() {
            f(&mut s);
        }
    }

    /// Start recording a request (used by replay's record-on-miss as well as by [`Handler::request`]).
    pub fn begin(&self, ctx: &RecCtx, req: &Request<Body>) {
        let host = req.uri().host().unwrap_or_default();
        if !self.filter.records(host) {
            self.bump(|s| s.skipped += 1);
            return;
        }
        let seq = match self.writer.reserve_seq() {
            Ok(s) => s,
            Err(e) => {
                self.store_error(&format!("recording {}", req.uri()), &e);
                return;
            }
        };
        let st = RecState {
            seq,
            started_ms: self.clock.now_ms(),
            started: Instant::now(),
            method: req.method().as_str().to_string(),
            url: req.uri().to_string(),
            version: version_str(req.version()).to_string(),
            headers: headers_of(req.headers())
                .into_iter()
                .filter(|h| !h.name.eq_ignore_ascii_case(PROBE_HEADER))
                .collect(),
            req_body: self.writer.store().blob_writer(),
            req_failed: None,
            key: KeyBuilder::new(
                req.method().as_str(),
                &req.uri().to_string(),
                req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()),
            ),
            response: None,
            resp_body: None,
            first_byte: None,
            ws: None,
            probe: req.headers().contains_key(PROBE_HEADER),
        };
        if let Ok(mut g) = ctx.state.lock() {
            *g = Some(st);
        }
    }

    /// A new, not-yet-recording context.
    pub fn ctx() -> RecCtx {
        RecCtx { state: Mutex::new(None) }
    }

    /// Store the exchange: its last body chunks, its index entries and the manifest's counts, off the
    /// async workers ([`proxy::offload`]).
    fn finish(&self, ctx: &RecCtx, outcome: Result<(), ProxyError>) {
        proxy::offload(|| self.finish_inline(ctx, outcome))
    }

    fn finish_inline(&self, ctx: &RecCtx, outcome: Result<(), ProxyError>) {
        let Some(st) = ctx.state.lock().ok().and_then(|mut g| g.take()) else { return };
        let Some(head) = st.response else {
            // No response head: the origin served nothing worth freezing.
            self.bump(|s| s.failed += 1);
            return;
        };
        let truncated = outcome.is_err();
        let (probe, status) = (st.probe, head.status);
        let write = !probe && proxy_report::writes::is_state_write(&st.method, &st.url);
        let result = (|| -> Result<Exchange, snapshots::StoreError> {
            if let Some(e) = st.req_failed {
                return Err(e);
            }
            let req_body = if st.req_body.is_empty() { None } else { Some(st.req_body.finish()?) };
            let key = st.key?.finish();
            let (body, decode_failed) = match st.resp_body {
                Some(d) => {
                    let (b, failed) = d.finish()?;
                    (Some(b), failed)
                }
                None => (Some(self.writer.store().put_blob(b"")?), false),
            };
            let now = Instant::now();
            Ok(Exchange {
                seq: st.seq,
                started_ms: st.started_ms,
                key: key.hex(),
                request: RequestRecord {
                    method: st.method,
                    url: st.url,
                    version: st.version,
                    headers: st.headers,
                    body: req_body,
                },
                response: ResponseRecord {
                    status: head.status,
                    version: head.version,
                    headers: head.headers,
                    body,
                    content_encoding: head.content_encoding,
                },
                timings: Timings {
                    wait_ms: st.first_byte.map(|t| (t - st.started).as_secs_f64() * 1000.0),
                    receive_ms: st.first_byte.map(|t| (now - t).as_secs_f64() * 1000.0),
                    total_ms: Some((now - st.started).as_secs_f64() * 1000.0),
                },
                alpn: head.upstream.alpn.clone(),
                server_addr: head.upstream.server_addr.map(|a| a.to_string()),
                flags: ExchangeFlags { truncated, body_not_captured: false, decode_failed, probe },
                websocket: st.ws,
            })
        })();
        let size = result.as_ref().ok().and_then(|x| x.response.body.as_ref()).map_or(0, |b| b.size);
        match result.and_then(|x| self.writer.append(x)) {
            Ok(_) => self.bump(|s| {
                s.recorded += 1;
                s.body_bytes += size;
                if write && proxy_report::writes::counts(status) {
                    s.writes += 1;
                }
                if truncated {
                    s.truncated += 1;
                }
            }),
            Err(e) => self.store_error("could not store an exchange", &e),
        }
    }
}

impl Handler for Recorder {
    type Ctx = RecCtx;

    fn new_ctx(&self, _info: &RequestInfo) -> RecCtx {
        Self::ctx()
    }

    fn request(
        &self,
        ctx: &RecCtx,
        mut req: Request<Body>,
    ) -> impl std::future::Future<Output = Decision> + Send {
        self.begin(ctx, &req);
        req.headers_mut().remove(PROBE_HEADER);
        std::future::ready(Decision::Forward(req))
    }

    fn request_chunk(&self, ctx: &RecCtx, chunk: &Bytes) {
        on_request_chunk(ctx, chunk);
    }

    fn response_head(&self, ctx: &RecCtx, up: &UpstreamInfo, res: &mut http::response::Parts) {
        on_response_head(self, ctx, up, res);
    }

    fn response_chunk(&self, ctx: &RecCtx, chunk: &Bytes) {
        on_response_chunk(ctx, chunk);
    }

    fn complete(&self, ctx: &RecCtx, outcome: Result<(), ProxyError>) {
        self.finish(ctx, outcome);
    }

    fn forwards_to_origins(&self) -> bool {
        true
    }

    fn finishes_abandoned(&self) -> bool {
        true
    }

    fn observes_websocket(&self) -> bool {
        true
    }

    fn websocket_message(&self, ctx: &RecCtx, msg: &WsMessage) {
        on_websocket_message(self, ctx, msg);
    }
}

/// Store a WebSocket message's payload and note it in the connection's log (public for handlers that
/// embed a recorder).
pub fn on_websocket_message(rec: &Recorder, ctx: &RecCtx, msg: &WsMessage) {
    let Ok(mut g) = ctx.state.lock() else { return };
    let Some(log) = g.as_mut().and_then(|st| st.ws.as_mut()) else { return };
    if log.messages.len() >= WS_MAX_MESSAGES {
        log.truncated = true;
        return;
    }
    let payload = match proxy::offload(|| rec.writer.store().put_blob(&msg.payload)) {
        Ok(p) => p,
        Err(e) => {
            drop(g);
            rec.store_error("could not store a WebSocket message", &e);
            return;
        }
    };
    log.messages.push(snapshots::format::WsMessage {
        from: match msg.from {
            WsFrom::Client => WsSide::Client,
            WsFrom::Server => WsSide::Server,
        },
        opcode: match msg.kind {
            WsKind::Text => WsOpcode::Text,
            WsKind::Binary => WsOpcode::Binary,
            WsKind::Close => WsOpcode::Close,
        },
        at_ms: msg.at.as_secs_f64() * 1000.0,
        payload,
        close_code: msg.close_code,
    });
}

/// Tee a request-body chunk (public for handlers that embed a recorder).
pub fn on_request_chunk(ctx: &RecCtx, chunk: &Bytes) {
    if let Ok(mut g) = ctx.state.lock() {
        if let Some(st) = g.as_mut() {
            // A write that fills a chunk stores it: off the async workers.
            let w = if st.req_body.write_flushes(chunk.len()) {
                proxy::offload(|| st.req_body.write(chunk))
            } else {
                st.req_body.write(chunk)
            };
            if let Err(e) = w {
                st.req_failed.get_or_insert(e);
            }
            if let Ok(k) = &mut st.key {
                k.update(chunk);
            }
        }
    }
}

/// Note the response head (public for handlers that embed a recorder).
pub fn on_response_head(rec: &Recorder, ctx: &RecCtx, up: &UpstreamInfo, res: &http::response::Parts) {
    if let Ok(mut g) = ctx.state.lock() {
        if let Some(st) = g.as_mut() {
            let ce =
                res.headers.get(header::CONTENT_ENCODING).and_then(|v| v.to_str().ok()).map(str::to_string);
            st.first_byte = Some(Instant::now());
            st.resp_body = Some(Decoding::new(rec.writer.store(), ce.as_deref()));
            if res.status == http::StatusCode::SWITCHING_PROTOCOLS {
                st.ws = Some(WebSocketLog::default());
            }
            st.response = Some(ResponseHead {
                status: res.status.as_u16(),
                version: up.version.map(version_str).unwrap_or("unknown").to_string(),
                headers: headers_of(&res.headers),
                content_encoding: ce,
                upstream: up.clone(),
            });
        }
    }
}

/// Tee a response-body chunk (public for handlers that embed a recorder).
pub fn on_response_chunk(ctx: &RecCtx, chunk: &Bytes) {
    if let Ok(mut g) = ctx.state.lock() {
        if let Some(d) = g.as_mut().and_then(|st| st.resp_body.as_mut()) {
            if d.may_store(chunk.len()) {
                proxy::offload(|| d.write(chunk));
            } else {
                d.write(chunk);
            }
        }
    }
}

/// Finish recording (public for handlers that embed a recorder).
pub fn on_complete(rec: &Recorder, ctx: &RecCtx, outcome: Result<(), ProxyError>) {
    rec.finish(ctx, outcome);
}
