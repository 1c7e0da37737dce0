//! Exchanges read on after their client went away, for a handler that
//! [finishes abandoned exchanges](crate::Handler::finishes_abandoned) (the recorder).
//!
//! Two ways a client leaves, both covered:
//! - before the response head: hyper drops the request's future. The forward therefore runs as a task of
//!   its own ([`Shared::forward_detached`]); the request's future only waits for its response, and when
//!   nobody waits any more the response is dropped unread, which is the second case;
//! - before the body's end: the observed body hands the rest over ([`crate::body::Observed::on_abandon`])
//!   to a task that reads it through the handler's hooks ([`Shared::read_on_abandoned`]).
//!
//! Both run on the `abandoned` tracker. Shutdown waits for them, [`SHUTDOWN_WAIT`] at most after the
//! connections are done and never past `shutdown_grace`, so an exchange read on is in the recording that
//! shutdown seals; past that they are cut and end as their client left them (a long poll a closed browser
//! left does not hold a run up).
//! Reading is bounded: the upstream timeout for the head and between chunks, `abandoned_body_limit` bytes
//! of body; and a body is read on only when it has an end worth waiting for ([`worth_reading_on`]): not an
//! event stream, a media stream or a declared length past the limit.

use std::sync::Arc;
use std::time::Duration;

use http::{header, Request, Response, StatusCode};

use super::completion::Completion;
use super::Shared;
use crate::body::{text_response, Abandoned, Body};
use crate::handler::Handler;
use crate::hello::ClientProfile;

/// Whether a response whose client left is worth reading to its end: a page's document or subresource,
/// not a stream that ends when its reader does (server-sent events, a multipart replace stream, audio and
/// video, which browsers fetch in ranges they abandon as they seek) nor a body declared longer than
/// `limit`.
pub(super) fn worth_reading_on(res: &http::response::Parts, limit: u64) -> bool {
    let ctype = res.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let ctype = ctype.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let streaming = ctype == "text/event-stream"
        || ctype.starts_with("multipart/x-mixed-replace")
        || ctype.starts_with("video/")
        || ctype.starts_with("audio/")
        || res.status == StatusCode::PARTIAL_CONTENT;
    let length = res.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    !streaming && length.is_none_or(|n| n <= limit)
}

/// How long shutdown waits for exchanges read on, once the connections are done.
pub(super) const SHUTDOWN_WAIT: Duration = Duration::from_secs(2);

impl<H: Handler> Shared<H> {
    /// Forward `req` on a task of its own, which outlives the client: the response goes to the client if
    /// it still waits, else it is dropped and its body read on.
    pub(super) async fn forward_detached(
        self: &Arc<Self>,
        req: Request<Body>,
        done: Completion<H>,
        host: String,
        profile: Arc<ClientProfile>,
    ) -> Response<Body> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let shared = self.clone();
        let cut = self.abandoned_cut.clone();
        self.abandoned.spawn(cut.run_until_cancelled_owned(async move {
            let res = shared.forward(req, done, host, None, &profile).await;
            // Err: the client left; dropping the response hands its body to `read_on_abandoned`.
            drop(tx.send(res));
        }));
        rx.await.unwrap_or_else(|_| {
            text_response(
                StatusCode::BAD_GATEWAY,
                "webfreeze: the forwarding task ended without a response\n",
            )
        })
    }

    /// What an origin's body does when its client drops it before the end: read on, on the tracker.
    pub(super) fn read_on_abandoned(&self) -> impl FnOnce(Abandoned) + Send + Sync + 'static {
        let (tracker, cut) = (self.abandoned.clone(), self.abandoned_cut.clone());
        let (idle, limit) = (self.cfg.upstream_timeout, self.cfg.abandoned_body_limit);
        move |rest| match tokio::runtime::Handle::try_current() {
            Ok(_) => drop(tracker.spawn(cut.run_until_cancelled_owned(rest.finish(idle, limit)))),
            // No runtime to read on (dropped while the proxy shuts down): it ends as the client left it.
            Err(_) => drop(rest),
        }
    }

    /// At shutdown: wait for the exchanges read on, [`SHUTDOWN_WAIT`] at most and not past `deadline` (the
    /// end of `shutdown_grace`, which callers bound their own waits by), then cut the rest.
    pub(super) async fn finish_abandoned(&self, deadline: tokio::time::Instant) {
        self.abandoned.close();
        let wait = SHUTDOWN_WAIT.min(deadline.saturating_duration_since(tokio::time::Instant::now()));
        if tokio::time::timeout(wait, self.abandoned.wait()).await.is_err() {
            tracing::info!(
                "shutdown: {} exchange(s) whose client had left were still being read after {wait:?}; cut",
                self.abandoned.len()
            );
            self.abandoned_cut.cancel();
            self.abandoned.wait().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_read_on_after_its_client_left() {
        // Rows: status, content type, declared length, read on.
        let rows: &[(u16, &str, Option<u64>, bool)] = &[
            (200, "text/html; charset=utf-8", Some(1_000), true),
            (200, "image/png", None, true),
            (404, "text/html", Some(10), true),
            (200, "application/javascript", Some(100 << 20), false),
            (200, "text/event-stream", None, false),
            (200, "Text/Event-Stream; charset=utf-8", None, false),
            (200, "multipart/x-mixed-replace; boundary=frame", None, false),
            (200, "video/mp4", Some(1_000), false),
            (206, "application/octet-stream", Some(1_000), false),
            (200, "audio/mpeg", None, false),
        ];
        for (status, ctype, length, want) in rows {
            let mut r = http::Response::builder().status(*status).header(header::CONTENT_TYPE, *ctype);
            if let Some(n) = length {
                r = r.header(header::CONTENT_LENGTH, *n);
            }
            let (parts, ()) = r.body(()).unwrap().into_parts();
            assert_eq!(worth_reading_on(&parts, 64 << 20), *want, "{status} {ctype} {length:?}");
        }
    }
}
