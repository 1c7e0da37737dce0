//! Recording exploration apart from the path: the agent's exploring tabs mark their requests with
//! [`EXPLORE_HEADER`] (set per tab through CDP, so every request of the tab carries it, subresources too);
//! [`ExploreSplit`] records those into the exploration snapshot (`<run>/<task>/explore`), strips the mark
//! before the origin sees it, and everything else into the task's own snapshot, so replaying the recorded
//! path is unchanged by exploration.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use http::Request;
use proxy::{Body, Decision, Handler, ProxyError, RequestInfo, UpstreamInfo};

use crate::{on_complete, on_request_chunk, on_response_chunk, on_response_head, RecCtx, Recorder};

/// The request header an exploring tab sends (never forwarded).
pub const EXPLORE_HEADER: &str = "x-webfreeze-explore";

/// Two recorders behind one proxy: the path's and the exploration's, chosen per request by
/// [`EXPLORE_HEADER`].
pub struct ExploreSplit {
    path: Arc<Recorder>,
    explore: Arc<Recorder>,
}

/// Per-request state: the recording and which recorder it goes to.
pub struct SplitCtx {
    rec: RecCtx,
    explore: AtomicBool,
}

impl ExploreSplit {
    /// Requests marked [`EXPLORE_HEADER`] go to `explore`, the rest to `path`.
    pub fn new(path: Arc<Recorder>, explore: Arc<Recorder>) -> Self {
        Self { path, explore }
    }

    fn of(&self, ctx: &SplitCtx) -> &Recorder {
        if ctx.explore.load(Ordering::Relaxed) {
            &self.explore
        } else {
            &self.path
        }
    }
}

impl Handler for ExploreSplit {
    type Ctx = SplitCtx;

    fn new_ctx(&self, _info: &RequestInfo) -> SplitCtx {
        SplitCtx { rec: Recorder::ctx(), explore: AtomicBool::new(false) }
    }

    #[allow(clippy::manual_async_fn)]
    fn request(
        &self,
        ctx: &SplitCtx,
        mut req: Request<Body>,
    ) -> impl std::future::Future<Output = Decision> + Send {
        let marked = req.headers_mut().remove(EXPLORE_HEADER).is_some();
        ctx.explore.store(marked, Ordering::Relaxed);
        self.of(ctx).begin(&ctx.rec, &req);
        req.headers_mut().remove(crate::PROBE_HEADER);
        std::future::ready(Decision::Forward(req))
    }

    fn request_chunk(&self, ctx: &SplitCtx, chunk: &Bytes) {
        on_request_chunk(&ctx.rec, chunk);
    }

    fn response_head(&self, ctx: &SplitCtx, up: &UpstreamInfo, res: &mut http::response::Parts) {
        on_response_head(self.of(ctx), &ctx.rec, up, res);
    }

    fn response_chunk(&self, ctx: &SplitCtx, chunk: &Bytes) {
        on_response_chunk(&ctx.rec, chunk);
    }

    fn complete(&self, ctx: &SplitCtx, outcome: Result<(), ProxyError>) {
        on_complete(self.of(ctx), &ctx.rec, outcome);
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

    fn websocket_message(&self, ctx: &SplitCtx, msg: &proxy::websocket::WsMessage) {
        crate::on_websocket_message(self.of(ctx), &ctx.rec, msg);
    }
}
