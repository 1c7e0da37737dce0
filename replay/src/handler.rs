//! The proxy phases for replay: match the request (layer by layer), serve or miss (404, live, record),
//! and the proxy-direct endpoints (`/__webfreeze/reset`, `/__webfreeze/report`).

use bytes::Bytes;
use http::{header, HeaderValue, Request, Response, StatusCode};
use proxy::{text_response, Body, Decision, Handler, ProxyError, RequestInfo, UpstreamInfo};
use proxy_report::wire::Answer;
use recorder::Recorder;

use crate::lookup::Found;
use crate::wire::Answered;
use crate::{OnMiss, Replay, ReplayCtx, REPORT_PATH, RESET_PATH};

impl Handler for Replay {
    type Ctx = ReplayCtx;

    fn new_ctx(&self, _info: &RequestInfo) -> ReplayCtx {
        ReplayCtx { rec: Recorder::ctx(), wire: crate::wire::WireNote::default() }
    }

    // The explicit `impl Future + Send` form keeps the trait's Send bound visible at the impl.
    #[allow(clippy::manual_async_fn)]
    fn request(
        &self,
        ctx: &ReplayCtx,
        req: Request<Body>,
    ) -> impl std::future::Future<Output = Decision> + Send {
        async move {
            let d = self.decide(ctx, req).await;
            if let Decision::Respond(r) = &d {
                self.wire_finish(ctx, r.status().as_u16(), r.headers());
            }
            d
        }
    }

    fn request_chunk(&self, ctx: &ReplayCtx, chunk: &Bytes) {
        if matches!(self.cfg.on_miss, OnMiss::Record(_)) {
            recorder::on_request_chunk(&ctx.rec, chunk);
        }
    }

    fn response_head(&self, ctx: &ReplayCtx, up: &UpstreamInfo, res: &mut http::response::Parts) {
        // A forwarded miss: the origin's status is the one the browser gets.
        self.wire_finish(ctx, res.status.as_u16(), &res.headers);
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
        // A forwarded miss that failed before its response head.
        self.wire_finish(ctx, 0, &http::HeaderMap::new());
        if let OnMiss::Record(rec) = &self.cfg.on_miss {
            recorder::on_complete(rec, &ctx.rec, outcome);
        }
    }

    fn observes_websocket(&self) -> bool {
        matches!(self.cfg.on_miss, OnMiss::Record(_))
    }

    fn finishes_abandoned(&self) -> bool {
        // A recorded miss is recorded whole, as in `record`.
        matches!(self.cfg.on_miss, OnMiss::Record(_))
    }

    fn websocket_message(&self, ctx: &ReplayCtx, msg: &proxy::websocket::WsMessage) {
        if let OnMiss::Record(rec) = &self.cfg.on_miss {
            recorder::on_websocket_message(rec, &ctx.rec, msg);
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

impl Replay {
    /// The request phase proper, in three steps each in its own room: classify the request
    /// ([`crate::classify`]), consult the layers ([`crate::lookup`]), answer or miss ([`crate::answer`];
    /// a script batch nothing recorded may be assembled from recorded ones first: [`crate::batches`]);
    /// each answer is noted for the wire log.
    async fn decide(&self, ctx: &ReplayCtx, req: Request<Body>) -> Decision {
        let req = match self.classify(req).await {
            Ok(r) => r,
            Err(d) => return d,
        };
        if req.background {
            return self.answer_background(&req);
        }
        self.wire_request(ctx, &req.parts, &req.body);
        if let Some(sr) = self.always_searched(&req) {
            self.wire_answer(ctx, Answered::bare(Answer::FrozenSearch));
            return self.answer_from_search(&req.url, sr);
        }
        let found = match self.consult_layers(&req).await {
            Ok(Found::Own(found)) => found,
            Ok(Found::Overlay(om)) => {
                let dest = req.dest.clone();
                return self.answer_from_overlay(ctx, om, &req.parts.headers, &req.method, &req.url, dest);
            }
            Err(d) => return d,
        };
        if let Some(d) = self.answer_search(ctx, &req, found.as_ref()) {
            return d;
        }
        match found {
            Some(m) => self.answer_match(ctx, req, m).await,
            None => match self.answer_batch(ctx, &req).await {
                Some(d) => d,
                None => self.answer_miss(ctx, req),
            },
        }
    }
}
