//! `Handler::complete` exactly once per request, whatever path the request takes.

use std::sync::Arc;

use crate::body::BodyEnd;
use crate::error::{ErrorKind, ProxyError, Side};
use crate::handler::Handler;

/// The duty to call [`Handler::complete`] exactly once for a request: fired on the paths that end without
/// a body (origin unreachable, timeout), handed to the response body's observer, or, when the request's
/// future is dropped first (the client left before the response head), fired by `Drop` with a client error.
pub(super) struct Completion<H: Handler> {
    handler: Arc<H>,
    pub(super) ctx: Arc<H::Ctx>,
    host: String,
    pending: bool,
}

impl<H: Handler> Completion<H> {
    pub(super) fn new(handler: Arc<H>, ctx: Arc<H::Ctx>, host: &str) -> Self {
        Self { handler, ctx, host: host.to_string(), pending: true }
    }

    /// Complete now.
    pub(super) fn fire(mut self, outcome: Result<(), ProxyError>) {
        self.pending = false;
        self.handler.complete(&self.ctx, outcome);
    }

    /// Complete when the response body ends (the observer's end hook).
    pub(super) fn at_body_end(mut self) -> impl FnOnce(BodyEnd) + Send + Sync + 'static {
        self.pending = false;
        let (h, c, host) = (self.handler.clone(), self.ctx.clone(), std::mem::take(&mut self.host));
        move |end| h.complete(&c, end_to_outcome(end, &host))
    }
}

impl<H: Handler> Drop for Completion<H> {
    fn drop(&mut self) {
        if self.pending {
            self.handler.complete(
                &self.ctx,
                Err(ProxyError::new(
                    Side::Client,
                    ErrorKind::Closed,
                    &self.host,
                    "the client went away before the response head",
                )),
            );
        }
    }
}

fn end_to_outcome(end: BodyEnd, host: &str) -> Result<(), ProxyError> {
    match end {
        BodyEnd::Complete => Ok(()),
        BodyEnd::Failed(m) => Err(ProxyError::new(Side::Origin, ErrorKind::BodyCut, host, m)),
        BodyEnd::Dropped => Err(ProxyError::new(
            Side::Client,
            ErrorKind::Closed,
            host,
            "the client went away before the end of the response",
        )),
    }
}
