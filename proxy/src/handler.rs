//! The handler trait: the proxy's phases, which recorder and replay implement (after pingora's
//! `ProxyHttp`). The proxy owns accept, CONNECT, TLS and certificate minting; for each request it calls, in
//! order:
//!
//! 1. [`Handler::new_ctx`]: per-request state, shared by the later phases.
//! 2. [`Handler::request`]: the request head with its streaming body; answer locally
//!    ([`Decision::Respond`]) or let the proxy forward it ([`Decision::Forward`], possibly modified).
//! 3. [`Handler::request_chunk`]: each request-body chunk as it streams to the origin (forwarded only); a
//!    body of declared length up to 1 MiB is read whole first and handed over as one chunk, all of it even
//!    when the origin answers without reading it.
//! 4. [`Handler::response_head`]: the origin's response head (hop-by-hop and Alt-Svc already removed),
//!    with the origin's address and ALPN; the handler may edit it.
//! 5. [`Handler::response_chunk`]: each response-body chunk as it streams to the client.
//!    [`Handler::to_client`] sees the response before the client does (its body wired to this hook) and
//!    may hand the client another: what the handler observed is always the origin's.
//! 6. [`Handler::complete`]: always, exactly once, when the exchange is over: `Ok` if the response body
//!    reached its end, else the error and which side caused it (client gone, origin cut, timeout).
//!
//! A WebSocket handshake goes through the same phases; when the origin answers 101 and the handler
//! [observes WebSockets](Handler::observes_websocket), each message it relays goes to
//! [`Handler::websocket_message`] before `complete`, which runs when the connection closes. A handler that
//! answers a handshake itself puts a [`crate::websocket::Scripted`] on its 101 response.
//!
//! Hooks 3-6 may run on different tasks; the context is shared (`Sync`), so handlers keep mutable state
//! behind a lock inside it. Chunk hooks run inline on the data path: keep them short.

use std::future::Future;
use std::net::SocketAddr;

use bytes::Bytes;
use http::{Request, Response, Version};

use crate::body::Body;
use crate::error::ProxyError;
use crate::websocket::{WsMessage, WsVerdict};

/// Facts about the request's connection.
#[derive(Debug, Clone)]
pub struct RequestInfo {
    /// Proxy-wide request number.
    pub id: u64,
    /// The client's address.
    pub client_addr: SocketAddr,
    /// True when the client spoke TLS to us (inside a CONNECT tunnel).
    pub tls: bool,
    /// ALPN agreed with the client ("h2", "http/1.1"), if TLS.
    pub client_alpn: Option<String>,
    /// HTTP version the client used.
    pub client_version: Version,
}

/// Facts about the upstream exchange, given with the response head.
#[derive(Debug, Clone, Default)]
pub struct UpstreamInfo {
    /// Address of the origin server we talked to.
    pub server_addr: Option<SocketAddr>,
    /// ALPN agreed with the origin ("h2", "http/1.1"), if TLS.
    pub alpn: Option<String>,
    /// HTTP version spoken with the origin.
    pub version: Option<Version>,
}

/// What to do with a request.
pub enum Decision {
    /// Send it to the origin (the URI is absolute).
    Forward(Request<Body>),
    /// Answer it without contacting any origin.
    Respond(Response<Body>),
}

impl std::fmt::Debug for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Decision::Forward(r) => write!(f, "Forward({} {})", r.method(), r.uri()),
            Decision::Respond(r) => write!(f, "Respond({})", r.status()),
        }
    }
}

/// The phases a proxy handler implements. All hooks but `new_ctx` and `request` have no-op defaults.
pub trait Handler: Send + Sync + 'static {
    /// Per-request state.
    type Ctx: Send + Sync + 'static;

    /// Make the state for a new request.
    fn new_ctx(&self, info: &RequestInfo) -> Self::Ctx;

    /// Decide: forward (the default is to forward unchanged) or answer locally.
    fn request(&self, ctx: &Self::Ctx, req: Request<Body>) -> impl Future<Output = Decision> + Send;

    /// A chunk of the request body on its way to the origin.
    fn request_chunk(&self, _ctx: &Self::Ctx, _chunk: &Bytes) {}

    /// The origin's response head, before the client sees it.
    fn response_head(&self, _ctx: &Self::Ctx, _upstream: &UpstreamInfo, _res: &mut http::response::Parts) {}

    /// A chunk of the response body on its way to the client.
    fn response_chunk(&self, _ctx: &Self::Ctx, _chunk: &Bytes) {}

    /// The response as the client will get it, after [`Handler::response_head`], its body wired to
    /// [`Handler::response_chunk`] and completion (reading it drives them, as the client would). A handler
    /// may give the client another response (the determinism shim injected into HTML while recording);
    /// what it observed stays the origin's. The default passes it on unread.
    fn to_client(
        &self,
        _ctx: &Self::Ctx,
        res: Response<Body>,
    ) -> impl Future<Output = Response<Body>> + Send {
        async move { res }
    }

    /// The exchange is over. Runs exactly once per request that reached [`Handler::request`].
    fn complete(&self, _ctx: &Self::Ctx, _outcome: Result<(), ProxyError>) {}

    /// Whether forwarded WebSocket connections are relayed message by message, each shown to
    /// [`Handler::websocket_message`] (recording). The default copies their bytes unchanged.
    fn observes_websocket(&self) -> bool {
        false
    }

    /// A message of a forwarded WebSocket connection, before it is passed on (only when
    /// [`Handler::observes_websocket`]). Runs inline on the relay: keep it short.
    fn websocket_message(&self, _ctx: &Self::Ctx, _msg: &WsMessage) {}

    /// A relayed WebSocket message, before it is passed on: whether it goes. What the relay calls; the
    /// default shows the message to [`Handler::websocket_message`] and lets it go. The guards refuse a
    /// client message that acts (`crate::guard::socket`).
    fn websocket_verdict(&self, ctx: &Self::Ctx, msg: &WsMessage) -> WsVerdict {
        self.websocket_message(ctx, msg);
        WsVerdict::Pass
    }

    /// A client message a guard refused (never passed on), and why: the run's wire log keeps it
    /// (`crate::wire_tap`). The default does nothing.
    fn websocket_refused(&self, _ctx: &Self::Ctx, _msg: &WsMessage, _why: &proxy_report::guard::Blocked) {}

    /// Whether this handler forwards requests to the origins (live, record) or never dials out (replay).
    /// The server derives two behaviours from it, for forwarding handlers only:
    /// - a CONNECT is answered only after the origin accepted a TCP connection (502 naming the reason if
    ///   not), so a browser learns at once that a site is unreachable instead of hanging in a tunnel to
    ///   nowhere;
    /// - the browser's own background hosts (update checks, safe browsing) are answered 204 here instead
    ///   of being forwarded, unless the server is told to forward them. Replay answers those itself.
    fn forwards_to_origins(&self) -> bool {
        false
    }

    /// Whether a forwarded exchange the client leaves before its end (it navigated away, closed the tab,
    /// reset the stream) is still read from the origin to its end, through [`Handler::response_chunk`] and
    /// [`Handler::complete`], as if the client had stayed. The recorder says yes: a page an agent left
    /// while it loaded keeps every subresource it asked for, which its replay, faster, will ask for
    /// again. Bounded by the upstream timeout (for the head and between chunks) and
    /// [`crate::ProxyConfig::abandoned_body_limit`]; a live pass-through has no reason to.
    fn finishes_abandoned(&self) -> bool {
        false
    }

    /// A request addressed to the proxy itself (origin-form on the proxy port, e.g.
    /// `POST /__webfreeze/reset`). The default answers 400 explaining how to use a proxy.
    fn direct(&self, req: Request<Body>) -> impl Future<Output = Response<Body>> + Send {
        let path = req.uri().path().to_string();
        async move {
            crate::body::text_response(
                http::StatusCode::BAD_REQUEST,
                &format!(
                    "webfreeze is an HTTP proxy: configure your client to use it as a proxy \
                     (e.g. curl --proxy http://ADDR); {path} is not a proxy endpoint\n"
                ),
            )
        }
    }
}

/// The live pass-through handler of `webfreeze proxy`: forwards everything unchanged.
#[derive(Debug, Default, Clone, Copy)]
pub struct PassThrough;

impl Handler for PassThrough {
    type Ctx = ();

    fn new_ctx(&self, _info: &RequestInfo) {}

    fn request(&self, _ctx: &(), req: Request<Body>) -> impl Future<Output = Decision> + Send {
        std::future::ready(Decision::Forward(req))
    }

    fn forwards_to_origins(&self) -> bool {
        true
    }
}

/// The [`Handler`] methods a wrapping handler passes to the handler it wraps (`self.inner`), unchanged:
/// a wrapper (the guards, replay's shim injection) writes the phases it changes and lists the rest here,
/// so no phase is forgotten or written twice. The wrapper's `Ctx` is the inner handler's.
///
/// ```ignore
/// impl<H: Handler> Handler for Wrapper<H> {
///     type Ctx = H::Ctx;
///     fn to_client(..) { .. }            // the phase it changes
///     proxy::forward_to_inner!(new_ctx, request, request_chunk, response_head, response_chunk,
///         complete, forwards_to_origins, finishes_abandoned, direct, observes_websocket,
///         websocket_message);
/// }
/// ```
#[macro_export]
macro_rules! forward_to_inner {
    ($($phase:ident),+ $(,)?) => { $( $crate::forward_to_inner!(@ $phase); )+ };
    (@ new_ctx) => {
        fn new_ctx(&self, info: &$crate::RequestInfo) -> Self::Ctx {
            self.inner.new_ctx(info)
        }
    };
    (@ request) => {
        fn request(
            &self,
            ctx: &Self::Ctx,
            req: $crate::__http::Request<$crate::Body>,
        ) -> impl ::std::future::Future<Output = $crate::Decision> + Send {
            self.inner.request(ctx, req)
        }
    };
    (@ request_chunk) => {
        fn request_chunk(&self, ctx: &Self::Ctx, chunk: &$crate::__bytes::Bytes) {
            self.inner.request_chunk(ctx, chunk)
        }
    };
    (@ response_head) => {
        fn response_head(&self, ctx: &Self::Ctx, up: &$crate::UpstreamInfo, res: &mut $crate::__http::response::Parts) {
            self.inner.response_head(ctx, up, res)
        }
    };
    (@ response_chunk) => {
        fn response_chunk(&self, ctx: &Self::Ctx, chunk: &$crate::__bytes::Bytes) {
            self.inner.response_chunk(ctx, chunk)
        }
    };
    (@ to_client) => {
        fn to_client(
            &self,
            ctx: &Self::Ctx,
            res: $crate::__http::Response<$crate::Body>,
        ) -> impl ::std::future::Future<Output = $crate::__http::Response<$crate::Body>> + Send {
            self.inner.to_client(ctx, res)
        }
    };
    (@ complete) => {
        fn complete(&self, ctx: &Self::Ctx, outcome: Result<(), $crate::ProxyError>) {
            self.inner.complete(ctx, outcome)
        }
    };
    (@ forwards_to_origins) => {
        fn forwards_to_origins(&self) -> bool {
            self.inner.forwards_to_origins()
        }
    };
    (@ finishes_abandoned) => {
        fn finishes_abandoned(&self) -> bool {
            self.inner.finishes_abandoned()
        }
    };
    (@ direct) => {
        fn direct(
            &self,
            req: $crate::__http::Request<$crate::Body>,
        ) -> impl ::std::future::Future<Output = $crate::__http::Response<$crate::Body>> + Send {
            self.inner.direct(req)
        }
    };
    (@ observes_websocket) => {
        fn observes_websocket(&self) -> bool {
            self.inner.observes_websocket()
        }
    };
    (@ websocket_message) => {
        fn websocket_message(&self, ctx: &Self::Ctx, msg: &$crate::websocket::WsMessage) {
            self.inner.websocket_message(ctx, msg)
        }
    };
    (@ websocket_verdict) => {
        fn websocket_verdict(
            &self,
            ctx: &Self::Ctx,
            msg: &$crate::websocket::WsMessage,
        ) -> $crate::websocket::WsVerdict {
            self.inner.websocket_verdict(ctx, msg)
        }
    };
    (@ websocket_refused) => {
        fn websocket_refused(
            &self,
            ctx: &Self::Ctx,
            msg: &$crate::websocket::WsMessage,
            why: &$crate::guard::Blocked,
        ) {
            self.inner.websocket_refused(ctx, msg, why)
        }
    };
}
