//! Guards for live and recording runs: a handler that wraps another ([`Guard`]) and answers locally, never
//! forwarding, what a run must not do on the open web:
//!
//! - **writes that act in the world** ([`writes`]): placing an order, paying, booking, posting, voting,
//!   sending a message, deleting an account, on any host but the ones the run owns
//!   ([`GuardConfig::own_hosts`]: WebArena's `--site` hosts, `--allow-writes`);
//! - **places a benchmark's answers are published** ([`answers`]): its repositories, dataset pages,
//!   leaderboards, on every host.
//!
//! A refused request gets a page saying what was refused and why (status 403, header
//! [`BLOCKED_HEADER`]); the wrapped handler sees it as the exchange's response, so a recording stores it
//! and a replay answers the same. Every refusal is kept in the [`GuardLog`] with its evidence.
//!
//! A WebSocket's client messages are judged too ([`socket`]): while the write guard is on, forwarded
//! sockets are relayed message by message, and a JSON message that acts is judged as the request it stands
//! for and dropped (never reaching the origin), kept in the [`GuardLog`] (method `WS`, the socket's URL) and
//! shown to the wrapped handler's [`Handler::websocket_refused`] (the run's wire log).

pub mod acts;
pub mod answers;
mod bodies;
pub mod cases;
mod commands;
mod creates;
mod facts;
mod flags;
pub mod graphql;
mod harmless;
pub mod heldout;
mod idents;
pub mod learned;
mod links;
pub mod platforms;
mod rules_file;
pub mod socket;
mod sql;
mod table;
mod vocab;
pub mod writes;

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{header, HeaderValue, Request, Response, StatusCode};
use http_body_util::BodyExt;

use crate::body::{full, Body};
use crate::handler::{Decision, Handler, RequestInfo, UpstreamInfo};
use crate::websocket::{WsFrom, WsKind, WsMessage, WsVerdict};

pub use answers::{AnswerHit, AnswerPlaces};
pub use facts::{body_fields, field_names, WriteFacts};
pub use rules_file::GuardRulesError;
pub use writes::{WriteHit, WriteRules, CONTROL_HEADER};

/// The label of the control a click used ([`CONTROL_HEADER`]): the proxy takes the header off every
/// request, whatever the handler, and hands its value to the handler as this request extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlLabel(pub String);

/// The proxy endpoint an agent tells the label of the control it is clicking through (`PUT` with the label as
/// the body, `DELETE` when the click's requests are over): requests that arrive meanwhile carry it as a
/// [`ControlLabel`], with no header added to them (a header the page did not send makes Chromium preflight
/// a cross-origin request). [`CONTROL_HEADER`] is still read, for agents that send it.
pub const CONTROL_PATH: &str = "/__webfreeze/control";

/// The label of the control being clicked, as the agent last told it through [`CONTROL_PATH`].
#[derive(Debug, Default)]
pub struct ControlSlot(std::sync::Mutex<Option<String>>);

impl ControlSlot {
    /// Set (or clear) the label.
    pub fn set(&self, label: Option<String>) {
        if let Ok(mut g) = self.0.lock() {
            *g = label.filter(|l| !l.trim().is_empty());
        }
    }

    /// The label now, if any.
    pub fn get(&self) -> Option<String> {
        self.0.lock().ok().and_then(|g| g.clone())
    }
}

/// The header on a refused request's answer: `write; rule=ID` or `answers; family=NAME`.
pub const BLOCKED_HEADER: &str = "x-webfreeze-blocked";

/// Request bodies up to this size are read to judge their fields; a larger one is judged by its path and
/// label only.
const BODY_PEEK: usize = 1 << 20;

/// What the guards refuse.
#[derive(Debug, Clone, Default)]
pub struct GuardConfig {
    /// The side-effect rule table; None: writes are not guarded (`--no-write-guard`).
    pub writes: Option<WriteRules>,
    /// The places answers are published; None: not guarded (`--no-answer-guard`).
    pub answers: Option<AnswerPlaces>,
    /// Hosts whose writes pass (sites the run owns): exact host names, or `*.domain` for its subdomains.
    pub own_hosts: Vec<String>,
}

impl GuardConfig {
    /// Both guards with the built-in tables; writes to `own_hosts` pass.
    pub fn standard(own_hosts: Vec<String>) -> Self {
        Self { writes: Some(WriteRules::builtin()), answers: Some(AnswerPlaces::builtin()), own_hosts }
    }

    /// What run.json says of the guards.
    pub fn summary(&self) -> serde_json::Value {
        serde_json::json!({
            "write_guard": self.writes.is_some(),
            "write_guard_strict": self.writes.as_ref().is_some_and(WriteRules::is_strict),
            "write_guard_learned": self.writes.as_ref().is_some_and(WriteRules::is_learned),
            "answer_guard": self.answers.is_some(),
            "own_hosts": self.own_hosts,
        })
    }

    fn owns(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        self.own_hosts.iter().any(|o| {
            let o = o.to_ascii_lowercase();
            match o.strip_prefix("*.") {
                Some(d) => host == d || host.ends_with(&format!(".{d}")),
                None => host == o,
            }
        })
    }
}

pub use proxy_report::guard::{Blocked, BlockedKind};

/// Every refusal of a guard, in order (shared with whoever reports them).
#[derive(Debug, Default)]
pub struct GuardLog(Mutex<Vec<Blocked>>);

impl GuardLog {
    /// The refusals so far.
    pub fn blocked(&self) -> Vec<Blocked> {
        self.0.lock().map(|b| b.clone()).unwrap_or_default()
    }

    fn push(&self, b: Blocked) {
        tracing::warn!("guard refused {}", b.line());
        if let Ok(mut v) = self.0.lock() {
            v.push(b);
        }
    }
}

/// The guards around a handler (see the module docs).
pub struct Guard<H> {
    inner: Arc<H>,
    cfg: Arc<GuardConfig>,
    log: Arc<GuardLog>,
}

impl<H> std::fmt::Debug for Guard<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard").field("cfg", &self.cfg).finish_non_exhaustive()
    }
}

impl<H: Handler> Guard<H> {
    /// Guard `inner` with `cfg`, logging refusals to `log`.
    pub fn new(inner: Arc<H>, cfg: Arc<GuardConfig>, log: Arc<GuardLog>) -> Self {
        if cfg.writes.as_ref().is_some_and(WriteRules::is_learned) {
            learned::warm();
        }
        Self { inner, cfg, log }
    }

    /// Why `req` must not go out, if it must not; `body` is its body when it was read.
    fn judge(&self, req: &Request<Body>, body: Option<&[u8]>, label: Option<&str>) -> Option<Blocked> {
        let ct = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
        self.cfg.judge(req.method().as_str(), req.uri(), ct, body, label)
    }
}

impl GuardConfig {
    /// Why a request must not go out, if it must not: `body` is its body when it was read whole, `label`
    /// the control the agent used. What the proxy asks of every request, and `webfreeze guard check` of a
    /// recording's.
    pub fn judge(
        &self,
        method: &str,
        uri: &http::Uri,
        content_type: Option<&str>,
        body: Option<&[u8]>,
        label: Option<&str>,
    ) -> Option<Blocked> {
        self.judge_as(method, uri, content_type, body, label, true)
    }

    /// [`GuardConfig::judge`], with the learned judge asked (`learned`, when the rules allow it) or not: a
    /// WebSocket message is judged by the rules alone, as the model learned HTTP requests, not a socket
    /// protocol's verbs and payloads.
    pub(crate) fn judge_as(
        &self,
        method: &str,
        uri: &http::Uri,
        content_type: Option<&str>,
        body: Option<&[u8]>,
        label: Option<&str>,
        learned: bool,
    ) -> Option<Blocked> {
        let host = uri.host().unwrap_or_default();
        let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
        let (m, url) = (method.to_string(), uri.to_string());
        if let Some(hit) = self.answers.as_ref().and_then(|a| a.judge(host, uri.path())) {
            return Some(Blocked {
                kind: BlockedKind::Answers,
                method: m,
                url,
                why: format!("publishes {}'s answers", hit.family),
                rule: hit.family,
                evidence: hit.place,
            });
        }
        // A sink is answered by the proxy and never reaches a site.
        if crate::sink::is_sink(uri) {
            return None;
        }
        let rules = self.writes.as_ref().filter(|_| !self.owns(host))?;
        let facts = WriteFacts::of_request(method, host, path, content_type, body, label);
        let block = |hit: WriteHit| Blocked {
            kind: BlockedKind::Write,
            method: m.clone(),
            url: url.clone(),
            rule: hit.rule,
            why: hit.why,
            evidence: hit.matched,
        };
        // The rules decide what they name, act or harmless; what they leave unnamed (a write no rule
        // names, a GET no rule reads as an act) is the learned judge's to read, and strict refuses a write
        // it lets pass.
        let ask_model = learned && rules.learned;
        let unnamed = match rules.judge_as(&facts, true) {
            Some(hit) if hit.rule != writes::UNNAMED => return Some(block(hit)),
            Some(hit) => Some(hit),
            None if method == "GET" => None,
            None => return None,
        };
        if let Some(hit) = ask_model.then(|| learned::judge(method, uri, content_type, body, label)).flatten()
        {
            return Some(Blocked {
                rule: learned::RULE.to_string(),
                why: format!(
                    "reads as an act to the model trained on the guard's tables (p = {:.2})",
                    hit.probability
                ),
                evidence: hit.features.join(", "),
                ..block(WriteHit::default())
            });
        }
        unnamed.filter(|_| rules.is_strict()).map(block)
    }
}

/// Read up to [`BODY_PEEK`] bytes of a body: the bytes and the body to send on (the same bytes, then the
/// rest), and whether the bytes are all of it.
async fn peek(mut body: Body) -> (Vec<u8>, Body, bool) {
    use futures_util::StreamExt as _;
    let mut read = Vec::new();
    while read.len() <= BODY_PEEK {
        match body.frame().await {
            None => return (read.clone(), full(read), true),
            Some(Ok(f)) => {
                if let Ok(d) = f.into_data() {
                    read.extend_from_slice(&d);
                }
            }
            Some(Err(_)) => {
                let cut = crate::body::cut_short(read.clone(), "the client's request body failed");
                return (read, cut, false);
            }
        }
    }
    let first = http_body::Frame::data(Bytes::from(read.clone()));
    let head = futures_util::stream::once(std::future::ready(Ok::<_, crate::BoxError>(first)));
    let rest = body.into_data_stream().map(|r| r.map(http_body::Frame::data));
    (read, BodyExt::boxed(http_body_util::StreamBody::new(head.chain(rest))), false)
}

/// The page a refused request gets.
fn refusal_page(b: &Blocked) -> Response<Body> {
    let esc = |s: &str| html_escape::encode_double_quoted_attribute(s).into_owned();
    let (title, how) = match b.kind {
        BlockedKind::Write => (
            "webfreeze blocked a write",
            "This run guards live sites against side effects. To let this host's writes through, run with \
             <code>--allow-writes HOST</code> (or <code>--no-write-guard</code>).",
        ),
        BlockedKind::Answers => (
            "webfreeze blocked a page that publishes benchmark answers",
            "Reading it would contaminate the run. The list is in webfreeze's guard rules \
             (<code>--answer-guard-file</code> adds places, <code>--no-answer-guard</code> turns it off).",
        ),
    };
    let html = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head><body>\
         <h1>{title}</h1><p>{} {} was not sent: it {}.</p><p>Rule: <b>{}</b>; matched: {}.</p><p>{how}</p>\
         </body></html>",
        esc(&b.method),
        esc(&b.url),
        esc(&b.why),
        esc(&b.rule),
        esc(&b.evidence),
    );
    let mut r = Response::new(full(html));
    *r.status_mut() = StatusCode::FORBIDDEN;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    let kind = match b.kind {
        BlockedKind::Write => format!("write; rule={}", b.rule),
        BlockedKind::Answers => format!("answers; family={}", b.rule),
    };
    if let Ok(v) = HeaderValue::from_str(&kind) {
        h.insert(BLOCKED_HEADER, v);
    }
    r
}

/// The wrapped handler's context, and the URL of the WebSocket this exchange opened (if it is one).
#[derive(Debug)]
pub struct GuardCtx<C> {
    inner: C,
    socket: std::sync::OnceLock<http::Uri>,
}

impl<H: Handler> Guard<H> {
    /// Why a client message of the socket must not go, if it must not (the write guard judges it).
    fn judge_message(&self, ctx: &GuardCtx<H::Ctx>, msg: &WsMessage) -> Option<Blocked> {
        if msg.from != WsFrom::Client || msg.kind == WsKind::Close || self.cfg.writes.is_none() {
            return None;
        }
        socket::judge_message(&self.cfg, ctx.socket.get()?, &msg.payload)
    }
}

impl<H: Handler> Handler for Guard<H> {
    type Ctx = GuardCtx<H::Ctx>;

    fn new_ctx(&self, info: &RequestInfo) -> Self::Ctx {
        GuardCtx { inner: self.inner.new_ctx(info), socket: std::sync::OnceLock::new() }
    }

    #[allow(clippy::manual_async_fn)]
    fn request(
        &self,
        ctx: &Self::Ctx,
        req: Request<Body>,
    ) -> impl std::future::Future<Output = Decision> + Send {
        async move {
            let (parts, body) = req.into_parts();
            if crate::headers::is_websocket_upgrade(&parts.headers) {
                let _ = ctx.socket.set(parts.uri.clone());
            }
            let label =
                parts.extensions.get::<ControlLabel>().map(|l| l.0.clone()).filter(|l| !l.trim().is_empty());
            let writes = self.cfg.writes.is_some()
                && matches!(parts.method.as_str(), "POST" | "PUT" | "PATCH" | "DELETE")
                && !self.cfg.owns(parts.uri.host().unwrap_or_default());
            let (read, body, whole) = if writes { peek(body).await } else { (Vec::new(), body, false) };
            let req = Request::from_parts(parts, body);
            let Some(blocked) = self.judge(&req, whole.then_some(read.as_slice()), label.as_deref()) else {
                return self.inner.request(&ctx.inner, req).await;
            };
            // The wrapped handler sees the exchange as it happened: the request, then the refusal as its
            // response (a recording stores it; replay answers the same).
            let (parts, _) = req.into_parts();
            let req = Request::from_parts(parts, full(read.clone()));
            let page = refusal_page(&blocked);
            let ctx = &ctx.inner;
            match self.inner.request(ctx, req).await {
                // The wrapped handler answers it itself (replay, from its snapshot): nothing goes out.
                Decision::Respond(r) => Decision::Respond(r),
                Decision::Forward(_) => {
                    self.log.push(blocked);
                    if !read.is_empty() {
                        self.inner.request_chunk(ctx, &Bytes::from(read));
                    }
                    let (mut parts, body) = page.into_parts();
                    self.inner.response_head(ctx, &UpstreamInfo::default(), &mut parts);
                    let bytes = body.collect().await.map(|c| c.to_bytes()).unwrap_or_default();
                    self.inner.response_chunk(ctx, &bytes);
                    Decision::Respond(Response::from_parts(parts, full(bytes)))
                }
            }
        }
    }

    fn request_chunk(&self, ctx: &Self::Ctx, chunk: &Bytes) {
        self.inner.request_chunk(&ctx.inner, chunk)
    }

    fn response_head(&self, ctx: &Self::Ctx, up: &UpstreamInfo, res: &mut http::response::Parts) {
        self.inner.response_head(&ctx.inner, up, res)
    }

    fn response_chunk(&self, ctx: &Self::Ctx, chunk: &Bytes) {
        self.inner.response_chunk(&ctx.inner, chunk)
    }

    fn to_client(
        &self,
        ctx: &Self::Ctx,
        res: Response<Body>,
    ) -> impl std::future::Future<Output = Response<Body>> + Send {
        self.inner.to_client(&ctx.inner, res)
    }

    fn complete(&self, ctx: &Self::Ctx, outcome: Result<(), crate::error::ProxyError>) {
        self.inner.complete(&ctx.inner, outcome)
    }

    /// With the write guard on, sockets are relayed message by message so their messages can be judged.
    fn observes_websocket(&self) -> bool {
        self.cfg.writes.is_some() || self.inner.observes_websocket()
    }

    fn websocket_message(&self, ctx: &Self::Ctx, msg: &WsMessage) {
        self.inner.websocket_message(&ctx.inner, msg)
    }

    fn websocket_verdict(&self, ctx: &Self::Ctx, msg: &WsMessage) -> WsVerdict {
        let Some(blocked) = self.judge_message(ctx, msg) else {
            return self.inner.websocket_verdict(&ctx.inner, msg);
        };
        self.inner.websocket_refused(&ctx.inner, msg, &blocked);
        self.log.push(blocked);
        WsVerdict::Refuse
    }

    fn websocket_refused(&self, ctx: &Self::Ctx, msg: &WsMessage, why: &Blocked) {
        self.inner.websocket_refused(&ctx.inner, msg, why)
    }

    crate::forward_to_inner!(forwards_to_origins, finishes_abandoned, direct);
}
