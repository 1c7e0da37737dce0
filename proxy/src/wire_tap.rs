//! A live run's own wire: [`WireTapped`] wraps the handler that forwards to the live web and hands each
//! request it saw, and what answered it, to a [`WireTap`] (the task's wire log), so a live task's network
//! checks are scored on what its browser sent, as a replayed task's are on replay's own notes.
//!
//! Placed inside the guards (`Guard<WireTapped<H>>`), it sees a refused request too: the guard shows its
//! wrapped handler the request and the refusal page as the exchange, and the page's
//! [`crate::guard::BLOCKED_HEADER`] marks the entry [`Answer::Blocked`]. A WebSocket message the guards
//! refused gets an entry of its own (method `WS`, the socket's URL, the message as the body, blocked).
//!
//! No store holds a live response, so the bodies the network checks read (JSON and form bodies,
//! [`proxy_report::wire::readable_body`]) are kept in the entry as text, bounded like request bodies.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::Request;
use proxy_report::wire::{readable_body, Answer, WireEntry, WireTap, MAX_WIRE_BODY};

use crate::body::Body;
use crate::error::ProxyError;
use crate::handler::{Decision, Handler, RequestInfo, UpstreamInfo};
use crate::websocket::WsMessage;

/// A handler whose exchanges also go to a wire log. See the module docs.
#[derive(Debug)]
pub struct WireTapped<H> {
    inner: Arc<H>,
    tap: Arc<dyn WireTap>,
    seq: AtomicU64,
}

impl<H> WireTapped<H> {
    /// Wrap `inner`; every request it is shown goes to `tap` when its exchange is over.
    pub fn new(inner: Arc<H>, tap: Arc<dyn WireTap>) -> Self {
        WireTapped { inner, tap, seq: AtomicU64::new(0) }
    }
}

/// One request's entry as it is being filled in.
#[derive(Debug, Default)]
struct Pending {
    entry: Option<WireEntry>,
    request_body: Vec<u8>,
    request_len: u64,
    /// The response body is kept (a readable content type).
    keep_response: bool,
    response_body: Vec<u8>,
    response_cut: bool,
}

/// The wrapped handler's context and the entry being filled in.
#[derive(Debug)]
pub struct TapCtx<C> {
    inner: C,
    pending: Mutex<Pending>,
}

fn pairs(h: &http::HeaderMap) -> Vec<(String, String)> {
    h.iter()
        .map(|(n, v)| (n.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect()
}

/// Append `chunk` to `buf` up to [`MAX_WIRE_BODY`] bytes; true when something was cut.
fn keep(buf: &mut Vec<u8>, chunk: &[u8]) -> bool {
    let room = MAX_WIRE_BODY.saturating_sub(buf.len());
    buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
    chunk.len() > room
}

impl<H: Handler> Handler for WireTapped<H> {
    type Ctx = TapCtx<H::Ctx>;

    fn new_ctx(&self, info: &RequestInfo) -> Self::Ctx {
        TapCtx { inner: self.inner.new_ctx(info), pending: Mutex::default() }
    }

    fn request(&self, ctx: &Self::Ctx, req: Request<Body>) -> impl Future<Output = Decision> + Send {
        if let Ok(mut p) = ctx.pending.lock() {
            p.entry = Some(WireEntry {
                n: 0,
                method: req.method().to_string(),
                url: req.uri().to_string(),
                request_headers: pairs(req.headers()),
                request_body: None,
                request_body_cut: None,
                status: 0,
                response_headers: Vec::new(),
                answer: Answer::Live,
                overlay: None,
                recorded: None,
                response_body: None,
                response_text: None,
                control: req.extensions().get::<crate::guard::ControlLabel>().map(|l| l.0.clone()),
            });
        }
        self.inner.request(&ctx.inner, req)
    }

    fn request_chunk(&self, ctx: &Self::Ctx, chunk: &Bytes) {
        if let Ok(mut p) = ctx.pending.lock() {
            p.request_len += chunk.len() as u64;
            keep(&mut p.request_body, chunk);
        }
        self.inner.request_chunk(&ctx.inner, chunk)
    }

    fn response_head(&self, ctx: &Self::Ctx, up: &UpstreamInfo, res: &mut http::response::Parts) {
        self.inner.response_head(&ctx.inner, up, res);
        if let Ok(mut p) = ctx.pending.lock() {
            let ctype = res.headers.get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
            p.keep_response = ctype.is_some_and(readable_body);
            let blocked = res.headers.contains_key(crate::guard::BLOCKED_HEADER);
            if let Some(e) = p.entry.as_mut() {
                e.status = res.status.as_u16();
                e.response_headers = pairs(&res.headers);
                if blocked {
                    e.answer = Answer::Blocked;
                }
            }
        }
    }

    fn response_chunk(&self, ctx: &Self::Ctx, chunk: &Bytes) {
        if let Ok(mut p) = ctx.pending.lock() {
            if p.keep_response && keep(&mut p.response_body, chunk) {
                p.response_cut = true;
            }
        }
        self.inner.response_chunk(&ctx.inner, chunk)
    }

    fn to_client(
        &self,
        ctx: &Self::Ctx,
        res: http::Response<Body>,
    ) -> impl Future<Output = http::Response<Body>> + Send {
        self.inner.to_client(&ctx.inner, res)
    }

    fn complete(&self, ctx: &Self::Ctx, outcome: Result<(), ProxyError>) {
        self.inner.complete(&ctx.inner, outcome);
        let Some(mut p) = ctx.pending.lock().ok().map(|mut p| std::mem::take(&mut *p)) else { return };
        let Some(mut e) = p.entry.take() else { return };
        e.n = self.seq.fetch_add(1, Ordering::Relaxed);
        if p.request_len > 0 {
            e.request_body = Some(String::from_utf8_lossy(&p.request_body).into_owned());
            if p.request_len > p.request_body.len() as u64 {
                e.request_body_cut = Some(p.request_len);
            }
        }
        // A body cut short is not JSON a check could read: only whole ones are kept.
        if p.keep_response && !p.response_cut {
            e.response_text = Some(String::from_utf8_lossy(&p.response_body).into_owned());
        }
        self.tap.record(e);
    }

    fn observes_websocket(&self) -> bool {
        self.inner.observes_websocket()
    }

    fn websocket_message(&self, ctx: &Self::Ctx, msg: &WsMessage) {
        self.inner.websocket_message(&ctx.inner, msg)
    }

    /// A socket message a guard refused: an entry of its own, method `WS`, the socket's URL, the message
    /// as its body, answered [`Answer::Blocked`] with no status (nothing answered it).
    fn websocket_refused(&self, ctx: &Self::Ctx, msg: &WsMessage, why: &crate::guard::Blocked) {
        self.inner.websocket_refused(&ctx.inner, msg, why);
        let headers =
            ctx.pending.lock().ok().and_then(|p| p.entry.as_ref().map(|e| e.request_headers.clone()));
        let body = &msg.payload[..msg.payload.len().min(MAX_WIRE_BODY)];
        self.tap.record(WireEntry {
            n: self.seq.fetch_add(1, Ordering::Relaxed),
            method: why.method.clone(),
            url: why.url.clone(),
            request_headers: headers.unwrap_or_default(),
            request_body: Some(String::from_utf8_lossy(body).into_owned()),
            request_body_cut: (msg.payload.len() > MAX_WIRE_BODY).then_some(msg.payload.len() as u64),
            status: 0,
            response_headers: Vec::new(),
            answer: Answer::Blocked,
            overlay: None,
            recorded: None,
            response_body: None,
            response_text: None,
            control: None,
        });
    }

    fn forwards_to_origins(&self) -> bool {
        self.inner.forwards_to_origins()
    }

    fn finishes_abandoned(&self) -> bool {
        self.inner.finishes_abandoned()
    }

    fn direct(&self, req: Request<Body>) -> impl Future<Output = http::Response<Body>> + Send {
        self.inner.direct(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_bounded() {
        for (have, chunk, cut, len) in [
            (0, 10, false, 10),
            (MAX_WIRE_BODY - 4, 10, true, MAX_WIRE_BODY),
            (MAX_WIRE_BODY, 1, true, MAX_WIRE_BODY),
            (0, MAX_WIRE_BODY, false, MAX_WIRE_BODY),
        ] {
            let mut buf = vec![b'a'; have];
            assert_eq!(keep(&mut buf, &vec![b'b'; chunk]), cut, "{have}+{chunk}");
            assert_eq!(buf.len(), len);
        }
    }
}
