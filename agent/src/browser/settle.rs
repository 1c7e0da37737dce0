//! When a page has settled: decided by the browser's own events, not by a fixed wait.
//!
//! A step used to end 300-500 ms after the page's last request (`--settle-ms`), most of the step's cost in
//! replay, where the proxy answers in a millisecond. Now a page is settled when, all three at once:
//! - no request is in flight (the tab's CDP network events: `requestWillBeSent` against `loadingFinished`
//!   and `loadingFailed`), and none has started or ended for the quiet period (`settle_quiet`, default
//!   50 ms: the margin for a page's short timers);
//! - the page has drawn two animation frames since (drawn while the quiet period runs): by the second frame, the tasks that handled the last
//!   response (or the action: a click handler, a submit, `history.back()`) have run and rendered, and any
//!   request they started has been announced; CDP sends the renderer's `requestWillBeSent` before the
//!   answer to an evaluation that ran after it, so the check cannot miss one;
//! - `document.readyState` is `complete` (the load event has fired).
//!
//! WebSocket messages the page receives count as network events during the first [`WS_WINDOW`] of a wait:
//! a page that renders a burst of pushed messages (a ticker that fills in, a chat that loads its history)
//! is observed once the burst is over, in recording and in replay alike, while a stream that never stops
//! delays a step by at most that window.
//!
//! After an action the first check waits for the two frames before looking at the network at all, so a
//! navigation or request the action is about to start is waited for. A hidden tab draws no frames
//! (exploration's background tabs): there the frame wait gives up after [`FRAMES_CAP`] and the check
//! falls back to the quiet period alone. A page that never settles (a long poll) ends the wait at the page
//! timeout, noted by the caller.
//!
//! The wait reports the page's own work ([`Settled::page_ms`]: from the action to the last network event
//! it caused), so a step's overhead (the step less that) can be measured (`cargo xtask bench agent`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chromiumoxide::page::Page;

use super::NetState;

/// Two animation frames, then the document's ready state.
const TWO_FRAMES_JS: &str =
    "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(document.readyState))))";

/// The longest wait for two frames: a hidden tab draws none, and an evaluation racing a navigation may
/// never answer.
pub(super) const FRAMES_CAP: Duration = Duration::from_millis(150);

/// How often the network state is looked at.
const POLL: Duration = Duration::from_millis(5);

/// How long into a wait received WebSocket messages still count as the page's work.
pub(super) const WS_WINDOW: Duration = Duration::from_secs(2);

/// The outcome of one wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settled {
    /// The page settled within the page timeout.
    pub settled: bool,
    /// From the start of the wait to the last network event after it (0 when there was none): the page's
    /// own work for an action.
    pub page_ms: u64,
}

/// What the page answered to the frame check.
enum Frames {
    /// Two frames drew; the ready state.
    Drew(String),
    /// No frames within [`FRAMES_CAP`] (hidden tab), or the evaluation failed (a navigation replaced the
    /// document): the network state alone decides, with the ready state read directly.
    Unknown,
}

async fn two_frames(page: &Page) -> Frames {
    match tokio::time::timeout(FRAMES_CAP, page.evaluate(TWO_FRAMES_JS)).await {
        Ok(Ok(r)) => match r.into_value::<String>() {
            Ok(s) => Frames::Drew(s),
            Err(_) => Frames::Unknown,
        },
        _ => Frames::Unknown,
    }
}

async fn ready_state(page: &Page, limit: Duration) -> Option<String> {
    match tokio::time::timeout(limit, page.evaluate("document.readyState")).await {
        Ok(Ok(r)) => r.into_value::<String>().ok(),
        _ => None,
    }
}

/// The last network event a wait that began at `start` counts: requests' starts and ends, and WebSocket
/// messages received up to [`WS_WINDOW`] into the wait.
fn last_event(n: &NetState, start: Instant) -> Option<Instant> {
    let ws = n.ws_frame.filter(|t| *t <= start + WS_WINDOW);
    n.last_change.max(ws)
}

/// The tab's network as the wait sees it: nothing in flight, and the last event's time.
fn network(net: &Mutex<NetState>, start: Instant) -> Option<(bool, Option<Instant>, bool)> {
    net.lock().ok().map(|n| (n.inflight.is_empty(), last_event(&n, start), n.crashed))
}

/// Wait for `page` (whose requests `net` tracks) to settle; see the module documentation.
/// `after_action`: the wait starts right after an action, whose consequences are waited for.
pub(super) async fn settle(
    page: &Page,
    net: &Arc<Mutex<NetState>>,
    after_action: bool,
    quiet: Duration,
    timeout: Duration,
) -> Settled {
    let start = Instant::now();
    let page_ms = |last: Option<Instant>| {
        last.filter(|t| *t > start).map(|t| t.duration_since(start).as_millis() as u64).unwrap_or(0)
    };
    let unsettled = |last| Settled { settled: false, page_ms: page_ms(last) };
    let Some((_, first, _)) = network(net, start) else { return unsettled(None) };
    // A tab found settled at this network state needs no new check (the observation after an action).
    if !after_action && net.lock().ok().is_some_and(|n| n.inflight.is_empty() && n.settled_at == Some(first))
    {
        return Settled { settled: true, page_ms: 0 };
    }
    // Frames count only while the network state they started from holds: `drawn` is a finished check,
    // `drawing` one under way, each with that state. After an action, the first check starts at once and
    // the page is not found settled before it ends, so what the action starts is seen; a request it
    // starts meanwhile drops it, and the wait goes on from that request.
    let mut drawn: Option<(Option<Instant>, Frames)> = None;
    let mut drawing: Option<(Option<Instant>, FramesFuture<'_>)> =
        after_action.then(|| (first, Box::pin(two_frames(page)) as FramesFuture<'_>));
    loop {
        let Some((idle, last, crashed)) = network(net, start) else { return unsettled(None) };
        if crashed || start.elapsed() >= timeout {
            return unsettled(last);
        }
        if !idle {
            (drawn, drawing) = (None, None);
            tokio::time::sleep(POLL).await;
            continue;
        }
        if drawn.as_ref().is_some_and(|(from, _)| *from != last) {
            drawn = None;
        }
        if drawing.as_ref().is_some_and(|(from, _)| *from != last) {
            drawing = None;
        }
        // Quiet on the wire: the frames are drawn while the quiet period runs, not after it.
        if drawn.is_none() && drawing.is_none() {
            drawing = Some((last, Box::pin(two_frames(page))));
        }
        if let Some((from, frames)) = drawing.as_mut() {
            if let Ok(f) = tokio::time::timeout(POLL, frames).await {
                drawn = Some((*from, f));
                drawing = None;
            }
            continue;
        }
        let quiet_for = last.map_or(Duration::MAX, |t| t.elapsed());
        if quiet_for < quiet {
            tokio::time::sleep(POLL.min(quiet - quiet_for)).await;
            continue;
        }
        let Some((_, frames)) = drawn.take() else { continue };
        let state = match frames {
            Frames::Drew(s) => Some(s),
            Frames::Unknown => ready_state(page, timeout.saturating_sub(start.elapsed())).await,
        };
        if state.as_deref() == Some("complete") {
            if let Ok(mut n) = net.lock() {
                if last_event(&n, start) == last && n.inflight.is_empty() {
                    n.settled_at = Some(last);
                    return Settled { settled: true, page_ms: page_ms(last) };
                }
            }
            continue;
        }
        // Still loading (frames drawn before the load event): look again.
        tokio::time::sleep(POLL).await;
    }
}

/// A frame check under way.
type FramesFuture<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = Frames> + Send + 'a>>;
