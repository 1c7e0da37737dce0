//! The run's own wire in replay: each request the browser made, what answered it (the layer, the recorded
//! exchange) and the status it got, handed to the [`WireTap`] of [`crate::ReplayConfig::wire`] as soon as
//! the answer is known (a forwarded miss: at its response head, or when it fails). Nothing is kept when no
//! tap is configured.
//!
//! A request is noted in three moves on its context: [`Replay::wire_request`] once its body is read,
//! [`Replay::wire_answer`] where a layer decides, [`Replay::wire_finish`] with the status (exactly once:
//! the pending note is taken).

use std::sync::atomic::Ordering;
use std::sync::Mutex;

use proxy_report::replay::OverlayKind;
use proxy_report::wire::{Answer, RecordedRef, WireEntry, MAX_WIRE_BODY};

use crate::{Replay, ReplayCtx};

/// What is known of a request until its status is.
#[derive(Default)]
pub(crate) struct WireNote(Mutex<Option<Pending>>);

struct Pending {
    method: String,
    url: String,
    headers: Vec<(String, String)>,
    body: Option<String>,
    cut: Option<u64>,
    control: Option<String>,
    answer: Option<Answered>,
}

/// Which layer answered, and from which recorded exchange.
pub(crate) struct Answered {
    pub(crate) answer: Answer,
    pub(crate) overlay: Option<OverlayKind>,
    pub(crate) recorded: Option<RecordedRef>,
    pub(crate) body_hash: Option<String>,
}

impl Answered {
    /// An answer not taken from a recorded exchange.
    pub(crate) fn bare(answer: Answer) -> Self {
        Answered { answer, overlay: None, recorded: None, body_hash: None }
    }

    /// An answer from recorded exchange `x` of `snapshot`.
    pub(crate) fn from_exchange(answer: Answer, snapshot: &str, x: &snapshots::Exchange) -> Self {
        Answered {
            answer,
            overlay: None,
            recorded: Some(RecordedRef { snapshot: snapshot.to_string(), seq: x.seq }),
            body_hash: x.response.body.as_ref().map(|b| b.hash.clone()),
        }
    }
}

/// A header map as (name, value) pairs, values as lossy text.
pub(crate) fn pairs(h: &http::HeaderMap) -> Vec<(String, String)> {
    h.iter()
        .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect()
}

impl Replay {
    /// Note a request (its body read whole) for the wire log.
    pub(crate) fn wire_request(&self, ctx: &ReplayCtx, parts: &http::request::Parts, body: &[u8]) {
        if self.cfg.wire.is_none() {
            return;
        }
        let (body, cut) = match body.len() {
            0 => (None, None),
            n if n > MAX_WIRE_BODY => {
                (Some(String::from_utf8_lossy(&body[..MAX_WIRE_BODY]).into_owned()), Some(n as u64))
            }
            _ => (Some(String::from_utf8_lossy(body).into_owned()), None),
        };
        let p = Pending {
            method: parts.method.as_str().to_string(),
            url: parts.uri.to_string(),
            headers: pairs(&parts.headers),
            body,
            cut,
            control: parts.extensions.get::<proxy::guard::ControlLabel>().map(|l| l.0.clone()),
            answer: None,
        };
        if let Ok(mut n) = ctx.wire.0.lock() {
            *n = Some(p);
        }
    }

    /// Note what answered the request.
    pub(crate) fn wire_answer(&self, ctx: &ReplayCtx, a: Answered) {
        if self.cfg.wire.is_none() {
            return;
        }
        if let Ok(mut n) = ctx.wire.0.lock() {
            if let Some(p) = n.as_mut() {
                p.answer = Some(a);
            }
        }
    }

    /// Note what answered the request, made only when a tap keeps it (an answer from a recorded exchange
    /// copies its snapshot's name and body hash).
    pub(crate) fn wire_answer_with(&self, ctx: &ReplayCtx, a: impl FnOnce() -> Answered) {
        if self.cfg.wire.is_some() {
            self.wire_answer(ctx, a());
        }
    }

    /// The request got its status: hand its entry to the tap (once; later calls find nothing pending).
    pub(crate) fn wire_finish(&self, ctx: &ReplayCtx, status: u16, headers: &http::HeaderMap) {
        let Some(tap) = &self.cfg.wire else { return };
        let Some(p) = ctx.wire.0.lock().ok().and_then(|mut n| n.take()) else { return };
        let mut a = p.answer.unwrap_or_else(|| Answered::bare(Answer::Error));
        // A miss the guards refused to send on (their page answers it).
        if headers.contains_key(proxy::guard::BLOCKED_HEADER) {
            a = Answered::bare(Answer::Blocked);
        }
        tap.record(WireEntry {
            n: self.wire_seq.fetch_add(1, Ordering::Relaxed),
            method: p.method,
            url: p.url,
            request_headers: p.headers,
            request_body: p.body,
            request_body_cut: p.cut,
            status,
            response_headers: pairs(headers),
            answer: a.answer,
            overlay: a.overlay,
            recorded: a.recorded,
            response_body: a.body_hash,
            response_text: None,
            control: p.control,
        });
    }
}
