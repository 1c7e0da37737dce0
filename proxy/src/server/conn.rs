//! A client connection served as HTTP/1.1 or h2: the proxy port's own connection (absolute-form
//! requests, `CONNECT`, the control endpoint, the handler's direct requests) and a tunnel's inner one, and
//! each request's way through the handler's decision.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use http::{header, HeaderName, HeaderValue, Method, Request, Response, StatusCode, Uri};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::Watcher;
use tokio::io::{AsyncRead, AsyncWrite};

use super::completion::Completion;
use super::io::{HeadDeadline, IdleTimeout};
use super::{ProxyConfig, Shared, TunnelHold};
use crate::body::{boxed, text_response, Body, Observed};
use crate::handler::{Decision, Handler, RequestInfo};
use crate::headers::{is_websocket_upgrade, join_cookies, strip_hop_by_hop};
use crate::hello::ClientProfile;

/// [`crate::guard::CONTROL_HEADER`] as a name (removing by `&str` parses it on every request).
const CONTROL: HeaderName = HeaderName::from_static(crate::guard::CONTROL_HEADER);

fn builder(cfg: &ProxyConfig) -> auto::Builder<TokioExecutor> {
    let mut b = auto::Builder::new(TokioExecutor::new());
    b.http1()
        .timer(TokioTimer::new())
        // hyper's header timer also runs while a keep-alive connection waits for its next request, so it
        // stays at the idle bound; the first head's tighter bound is `HeadDeadline`'s.
        .header_read_timeout(cfg.idle_timeout)
        .max_buf_size(cfg.max_header_bytes.max(8192))
        .keep_alive(true);
    // No HTTP/2 keep-alive PINGs: each one (and the client's automatic ACK) counted as traffic for
    // `IdleTimeout`, so a client that stopped sending kept its slot for ever (issue 35). A silent h2
    // connection closes after `idle_timeout` like an HTTP/1 one; a dead peer is found the same way.
    b.http2().timer(TokioTimer::new()).keep_alive_interval(None);
    b
}

/// Where requests on a connection are headed.
#[derive(Clone)]
pub(super) struct ConnCtx {
    pub(super) peer: SocketAddr,
    /// Some for connections inside a CONNECT tunnel: the tunnel's `host:port`.
    pub(super) tunnel: Option<String>,
    pub(super) tls: bool,
    pub(super) alpn: Option<String>,
    /// What the client presented (its ClientHello when it is a browser's, its h2 preface).
    pub(super) profile: Arc<ClientProfile>,
}

/// `host:port` without the scheme's default port.
fn authority_for(scheme: &str, authority: &str) -> String {
    let default = if scheme == "https" { ":443" } else { ":80" };
    authority.strip_suffix(default).unwrap_or(authority).to_string()
}

impl<H: Handler> Shared<H> {
    /// Serve one client connection. `tunnel` is what a CONNECT tunnel takes over from the connection: the
    /// graceful-shutdown watcher and the `max_connections` permit, so a tunnel counts against the limit for
    /// as long as it lives (found by the load benchmark: the permit went back when the CONNECT was
    /// answered, and 10,000 tunnels ran past a limit of 1,024).
    pub(super) async fn serve_outer<S>(
        self: Arc<Self>,
        tcp: S,
        peer: SocketAddr,
        outer: Watcher,
        tunnel: TunnelHold,
    ) where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let tunnel = Arc::new(Mutex::new(Some(tunnel)));
        let conn = ConnCtx { peer, tunnel: None, tls: false, alpn: None, profile: Default::default() };
        let this = self.clone();
        let svc = service_fn(move |req: Request<Incoming>| {
            let this = this.clone();
            let conn = conn.clone();
            let tunnel = tunnel.clone();
            async move {
                if req.method() == Method::CONNECT {
                    return Ok::<_, Infallible>(this.connect(req, conn.peer, tunnel).await);
                }
                if req.uri().scheme().is_some() && req.uri().authority().is_some() {
                    Ok(this.handle(req, &conn).await)
                } else if req.uri().path() == crate::guard::CONTROL_PATH {
                    Ok(this.control(req).await)
                } else {
                    let (parts, body) = req.into_parts();
                    Ok(this.handler.direct(Request::from_parts(parts, boxed(body))).await)
                }
            }
        });
        let b = builder(&self.cfg);
        let io = HeadDeadline::new(IdleTimeout::new(tcp, self.cfg.idle_timeout), self.cfg.header_timeout);
        let c = b.serve_connection_with_upgrades(TokioIo::new(io), svc).into_owned();
        if let Err(e) = outer.watch(c).await {
            tracing::debug!("client connection {peer}: {e}");
        }
    }

    /// `PUT /__webfreeze/control` (the label of the control being clicked, as the body, at most 200 bytes)
    /// and `DELETE` (the click is over).
    async fn control(&self, req: Request<Incoming>) -> Response<Body> {
        use http_body_util::BodyExt as _;
        let method = req.method().clone();
        let answer = |status: StatusCode, text: &str| text_response(status, text);
        match method {
            Method::PUT => match http_body_util::Limited::new(req.into_body(), 200).collect().await {
                Ok(b) => {
                    let label = String::from_utf8_lossy(&b.to_bytes()).into_owned();
                    self.control.set(Some(label));
                    answer(StatusCode::NO_CONTENT, "")
                }
                Err(_) => answer(StatusCode::PAYLOAD_TOO_LARGE, "a control label is at most 200 bytes\n"),
            },
            Method::DELETE => {
                self.control.set(None);
                answer(StatusCode::NO_CONTENT, "")
            }
            _ => answer(StatusCode::METHOD_NOT_ALLOWED, "PUT the clicked control's label, or DELETE it\n"),
        }
    }

    /// The browser's background traffic is answered here (live and record modes) unless forwarding it
    /// was asked for.
    pub(super) fn answers_background_locally(&self, host: &str) -> bool {
        !self.cfg.forward_browser_background && crate::live::is_browser_background(host)
    }

    pub(super) async fn serve_inner<S>(self: Arc<Self>, io: S, conn: ConnCtx, watcher: Option<Watcher>)
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let peer = conn.peer;
        let this = self.clone();
        let h2 = conn.alpn.as_deref() == Some("h2");
        let svc = service_fn(move |req: Request<Incoming>| {
            let this = this.clone();
            let conn = conn.clone();
            async move { Ok::<_, Infallible>(this.handle(req, &conn).await) }
        });
        let mut b = builder(&self.cfg);
        if h2 {
            b = b.http2_only();
        }
        let io = HeadDeadline::new(io, self.cfg.header_timeout);
        let c = b.serve_connection_with_upgrades(TokioIo::new(io), svc).into_owned();
        let r = match watcher {
            Some(w) => w.watch(c).await,
            None => c.await,
        };
        if let Err(e) = r {
            tracing::debug!("tunnel connection {peer}: {e}");
        }
    }

    /// Make the request URI absolute (inside tunnels requests arrive in origin-form).
    fn absolute_uri(req: &Request<Incoming>, conn: &ConnCtx) -> Result<Uri, http::Error> {
        let scheme = if conn.tls { "https" } else { "http" };
        let uri = req.uri();
        let Some(tunnel) = &conn.tunnel else {
            return Ok(uri.clone());
        };
        let authority = uri
            .authority()
            .map(|a| a.as_str())
            .or_else(|| req.headers().get(header::HOST).and_then(|h| h.to_str().ok()))
            .unwrap_or(tunnel);
        // Made from its parts: the path and query are kept as hyper parsed them (not printed and parsed
        // again for every request in a tunnel).
        let mut parts = http::uri::Parts::default();
        parts.scheme = Some(if conn.tls { http::uri::Scheme::HTTPS } else { http::uri::Scheme::HTTP });
        parts.authority = Some(authority_for(scheme, authority).parse().map_err(http::Error::from)?);
        parts.path_and_query =
            Some(uri.path_and_query().cloned().unwrap_or_else(|| http::uri::PathAndQuery::from_static("/")));
        Ok(Uri::from_parts(parts)?)
    }

    pub(super) async fn handle(
        self: &Arc<Self>,
        mut req: Request<Incoming>,
        conn: &ConnCtx,
    ) -> Response<Body> {
        let uri = match Self::absolute_uri(&req, conn) {
            Ok(u) => u,
            Err(e) => return text_response(StatusCode::BAD_REQUEST, &format!("bad request target: {e}\n")),
        };
        *req.uri_mut() = uri;
        let host = req.uri().host().unwrap_or_default().to_string();
        if self.handler.forwards_to_origins() && self.answers_background_locally(&host) {
            let mut r = Response::new(crate::body::empty());
            *r.status_mut() = StatusCode::NO_CONTENT;
            return r;
        }
        let info = RequestInfo {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            client_addr: conn.peer,
            tls: conn.tls,
            client_alpn: conn.alpn.clone(),
            client_version: req.version(),
        };
        let done = Completion::new(self.handler.clone(), Arc::new(self.handler.new_ctx(&info)), &host);
        let ctx = done.ctx.clone();
        let ws = is_websocket_upgrade(req.headers());
        let mut client_upgrade = ws.then(|| hyper::upgrade::on(&mut req));
        let (mut parts, body) = req.into_parts();
        strip_hop_by_hop(&mut parts.headers);
        join_cookies(&mut parts.headers);
        // The agent's label of the control it clicked is for the guards, never for an origin or a record.
        if let Some(label) = parts.headers.remove(CONTROL) {
            if let Ok(l) = label.to_str() {
                parts.extensions.insert(crate::guard::ControlLabel(l.to_string()));
            }
        } else if let Some(l) = self.control.get() {
            parts.extensions.insert(crate::guard::ControlLabel(l));
        }
        if ws {
            parts.headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
            parts.headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
            if self.handler.observes_websocket() {
                // Messages are relayed (and recorded) as payloads: no compression is negotiated.
                parts.headers.remove(header::SEC_WEBSOCKET_EXTENSIONS);
            }
        }
        let req = Request::from_parts(parts, boxed(body));
        match self.handler.request(&ctx, req).await {
            Decision::Respond(mut res) => {
                let scripted = res.extensions_mut().remove::<crate::websocket::Scripted>();
                if let (Some(script), Some(up), StatusCode::SWITCHING_PROTOCOLS) =
                    (scripted, client_upgrade.take(), res.status())
                {
                    self.play_websocket(up, script, done, host);
                    return res;
                }
                let (parts, body) = res.into_parts();
                let body = Observed::new(body, |_| {}, done.at_body_end());
                Response::from_parts(parts, boxed(body))
            }
            Decision::Forward(req) if crate::sink::is_sink(req.uri()) => self.sink(req, done).await,
            Decision::Forward(req) if client_upgrade.is_none() && self.handler.finishes_abandoned() => {
                self.forward_detached(req, done, host, conn.profile.clone()).await
            }
            Decision::Forward(req) => self.forward(req, done, host, client_upgrade, &conn.profile).await,
        }
    }
}
