//! What the handler forwards: to its origin (with the origin's errors classified), a WebSocket relayed
//! or played by the handler, or a sink answered here.

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode, Version};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;

use super::abandoned;
use super::completion::Completion;
use super::Shared;
use crate::body::{boxed, text_response, Body, Observed};
use crate::error::{ErrorKind, ProxyError, Side};
use crate::handler::{Handler, UpstreamInfo};
use crate::headers::clean_response;
use crate::hello::ClientProfile;
use crate::upstream::ConnectError;

fn classify(host: &str, e: &hyper_util::client::legacy::Error) -> ProxyError {
    let mut src: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = src {
        if let Some(ce) = s.downcast_ref::<ConnectError>() {
            let kind = match ce {
                ConnectError::Resolve { .. } => ErrorKind::Resolve,
                ConnectError::Connect { .. } => ErrorKind::Connect,
                ConnectError::Tls { .. } => ErrorKind::Tls,
                ConnectError::NoHost(_) => ErrorKind::BadRequest,
            };
            return ProxyError::new(Side::Origin, kind, host, ce.to_string());
        }
        src = s.source();
    }
    let mut msg = e.to_string();
    if let Some(s) = std::error::Error::source(e) {
        msg = format!("{msg}: {s}");
    }
    ProxyError::new(Side::Origin, ErrorKind::Closed, host, msg)
}

impl<H: Handler> Shared<H> {
    pub(super) async fn forward(
        self: &Arc<Self>,
        req: Request<Body>,
        done: Completion<H>,
        host: String,
        client_upgrade: Option<hyper::upgrade::OnUpgrade>,
        profile: &Arc<ClientProfile>,
    ) -> Response<Body> {
        let ctx = done.ctx.clone();
        let (mut parts, body) = req.into_parts();
        // The upstream client picks h2 or HTTP/1.1 per origin; the client's version does not constrain it.
        parts.version = Version::HTTP_11;
        let body = if declared_small(&body) {
            // Read whole first: the handler sees all of it even when the origin answers without reading it
            // (an h2 origin that answers at once resets the stream, and the rest is never sent or teed).
            let read = tokio::time::timeout(self.cfg.upstream_timeout, read_whole(body)).await;
            match read.unwrap_or_else(|_| Err("it did not arrive in time".into())) {
                Ok((bytes, trailers)) => {
                    if !bytes.is_empty() {
                        self.handler.request_chunk(&ctx, &bytes);
                    }
                    whole_body(bytes, trailers)
                }
                Err(e) => {
                    let pe =
                        ProxyError::new(Side::Client, ErrorKind::Closed, &host, format!("request body: {e}"));
                    done.fire(Err(pe));
                    return text_response(
                        StatusCode::BAD_REQUEST,
                        &format!("webfreeze: the request body for {host} broke off: {e}\n"),
                    );
                }
            }
        } else {
            let (h, c) = (self.handler.clone(), ctx.clone());
            boxed(Observed::new(body, move |chunk| h.request_chunk(&c, chunk), |_| {}))
        };
        let req = Request::from_parts(parts, body);
        let clients = self.upstream.clients(profile);
        let client = if client_upgrade.is_some() { &clients.client_h1 } else { &clients.client };
        let res = match tokio::time::timeout(self.cfg.upstream_timeout, client.request(req)).await {
            Err(_) => {
                let e = ProxyError::new(
                    Side::Origin,
                    ErrorKind::Timeout,
                    &host,
                    format!("no response within {:?}", self.cfg.upstream_timeout),
                );
                done.fire(Err(e));
                return text_response(
                    StatusCode::GATEWAY_TIMEOUT,
                    &format!("webfreeze: {host} did not answer within {:?}\n", self.cfg.upstream_timeout),
                );
            }
            Ok(Err(e)) => {
                let pe = classify(&host, &e);
                let text = format!("webfreeze: cannot reach {host}: {}\n", pe.message);
                tracing::info!("{}", text.trim_end());
                done.fire(Err(pe));
                return text_response(StatusCode::BAD_GATEWAY, &text);
            }
            Ok(Ok(r)) => r,
        };
        let mut up = res.extensions().get::<UpstreamInfo>().cloned().unwrap_or_default();
        up.version = Some(res.version());
        if let (Some(client_up), StatusCode::SWITCHING_PROTOCOLS) = (client_upgrade, res.status()) {
            return self.websocket(res, client_up, done, host, up);
        }
        let (mut parts, body) = res.into_parts();
        clean_response(&mut parts.headers);
        parts.version = Version::HTTP_11;
        self.handler.response_head(&ctx, &up, &mut parts);
        let (h1, c1) = (self.handler.clone(), ctx.clone());
        let mut body =
            Observed::new(boxed(body), move |chunk| h1.response_chunk(&c1, chunk), done.at_body_end());
        if self.handler.finishes_abandoned()
            && abandoned::worth_reading_on(&parts, self.cfg.abandoned_body_limit)
        {
            body = body.on_abandon(self.read_on_abandoned());
        }
        self.handler.to_client(&ctx, Response::from_parts(parts, boxed(body))).await
    }

    fn websocket(
        self: &Arc<Self>,
        mut res: Response<Incoming>,
        client_up: hyper::upgrade::OnUpgrade,
        done: Completion<H>,
        host: String,
        up: UpstreamInfo,
    ) -> Response<Body> {
        let origin_up = hyper::upgrade::on(&mut res);
        let (mut parts, _) = res.into_parts();
        self.handler.response_head(&done.ctx, &up, &mut parts);
        let observe = self.handler.observes_websocket();
        let (handler, closing) = (self.handler.clone(), self.closing.subscribe());
        self.websockets.spawn(async move {
            let outcome = match tokio::try_join!(client_up, origin_up) {
                Ok((c, o)) if observe => {
                    let ctx = done.ctx.clone();
                    crate::websocket::relay(c, o, |m| handler.websocket_verdict(&ctx, m), closing)
                        .await
                        .map_err(|e| {
                            let side = if e.side == "client" { Side::Client } else { Side::Origin };
                            ProxyError::new(side, ErrorKind::Closed, &host, e.to_string())
                        })
                }
                Ok((c, o)) => {
                    let mut c = TokioIo::new(c);
                    let mut o = TokioIo::new(o);
                    let mut closing = closing;
                    let copied = tokio::select! {
                        r = tokio::io::copy_bidirectional(&mut c, &mut o) => r.map(|_| ()),
                        _ = crate::websocket::closing(&mut closing) => Ok(()),
                    };
                    copied.map_err(|e| {
                        ProxyError::new(Side::Origin, ErrorKind::Closed, &host, format!("websocket: {e}"))
                    })
                }
                Err(e) => Err(upgrade_failed(&host, e)),
            };
            done.fire(outcome);
        });
        Response::from_parts(parts, crate::body::empty())
    }

    /// Answer a request to a sink ([`crate::sink`]) here, never forwarding it; the handler sees the
    /// exchange as if an origin had answered (its request body, the sink's head and body).
    pub(super) async fn sink(self: &Arc<Self>, req: Request<Body>, done: Completion<H>) -> Response<Body> {
        use http_body_util::BodyExt as _;
        let ctx = done.ctx.clone();
        // The form's fields, up to 16 MiB (a sink takes no uploads beyond that).
        let mut body = req.into_body();
        let mut got = Vec::new();
        while let Some(Ok(frame)) = body.frame().await {
            if let Ok(d) = frame.into_data() {
                got.extend_from_slice(&d);
            }
            if got.len() > 16 << 20 {
                break;
            }
        }
        if !got.is_empty() {
            self.handler.request_chunk(&ctx, &Bytes::from(got));
        }
        let (mut parts, body) = crate::sink::answer().into_parts();
        self.handler.response_head(&ctx, &UpstreamInfo::default(), &mut parts);
        let bytes = body.collect().await.map(|c| c.to_bytes()).unwrap_or_default();
        self.handler.response_chunk(&ctx, &bytes);
        let body = Observed::new(crate::body::full(bytes), |_| {}, done.at_body_end());
        Response::from_parts(parts, boxed(body))
    }

    /// Serve a WebSocket the handler plays itself (its 101 carried a [`crate::websocket::Scripted`]).
    pub(super) fn play_websocket(
        self: &Arc<Self>,
        client_up: hyper::upgrade::OnUpgrade,
        script: crate::websocket::Scripted,
        done: Completion<H>,
        host: String,
    ) {
        let closing = self.closing.subscribe();
        self.websockets.spawn(async move {
            let outcome = match client_up.await {
                Ok(c) => crate::websocket::play(c, &script, closing)
                    .await
                    .map_err(|e| ProxyError::new(Side::Client, ErrorKind::Closed, &host, e.to_string())),
                Err(e) => Err(upgrade_failed(&host, e)),
            };
            done.fire(outcome);
        });
    }
}

/// Request bodies of a declared length up to this are read whole before they are forwarded (a form, an
/// API call); longer or undeclared ones (uploads, chunked streams) stream through, teed as they pass.
pub(crate) const WHOLE_REQUEST_BODY: u64 = 1 << 20;

/// Whether `body` has a declared length (`Content-Length`, or a body already held) of at most
/// [`WHOLE_REQUEST_BODY`] bytes, and is not empty.
fn declared_small(body: &Body) -> bool {
    use http_body::Body as _;
    let hint = body.size_hint();
    !body.is_end_stream() && hint.upper().is_some_and(|n| n == hint.lower() && n <= WHOLE_REQUEST_BODY)
}

/// All of `body`: its data and its trailers, if any.
async fn read_whole(mut body: Body) -> Result<(Bytes, Option<http::HeaderMap>), crate::BoxError> {
    use http_body_util::BodyExt as _;
    let mut data = Vec::new();
    let mut trailers = None;
    while let Some(frame) = body.frame().await {
        match frame?.into_data() {
            Ok(d) => data.extend_from_slice(&d),
            Err(f) => trailers = f.into_trailers().ok(),
        }
    }
    Ok((Bytes::from(data), trailers))
}

/// A body of `bytes` and then `trailers`.
fn whole_body(bytes: Bytes, trailers: Option<http::HeaderMap>) -> Body {
    let Some(t) = trailers else { return crate::body::full(bytes) };
    let frames = [http_body::Frame::data(bytes), http_body::Frame::trailers(t)].map(Ok::<_, crate::BoxError>);
    boxed(http_body_util::StreamBody::new(futures_util::stream::iter(frames)))
}

/// The client's side of a WebSocket upgrade failed (it went away before switching protocols).
fn upgrade_failed(host: &str, e: hyper::Error) -> ProxyError {
    ProxyError::new(Side::Client, ErrorKind::Closed, host, format!("websocket upgrade: {e}"))
}
