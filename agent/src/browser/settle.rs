//! When a page has settled: decided by the browser's own events, not by a fixed wait.
//!
//! A step used to end 300-500 ms after the page's last request (`--settle-ms`), most of the step's cost in
//! replay, where the proxy answers in a millisecond. Now a page is settled when, all three at once:
//! - no request is in flight (the tab's CDP network events: `requestWillBeSent` against `loadingFinished`
//!   and `loadingFailed`), and none has started or ended for the quiet period (`settle_quiet`, default
//!   50 ms: the margin for a page's short timers);
//! - the page has drawn an animation frame since and then been idle (`requestIdleCallback`: no task
//!   queued), checked while the quiet period runs: by then the tasks that handled the last response (or
//!   the action: a click handler, a submit, `history.back()`) have run, and any request they started has
//!   been announced; CDP sends the renderer's `requestWillBeSent` before the answer to an evaluation that
//!   ran after it, so the check cannot miss one. Where the idle check cannot be made (no count, below),
//!   two frames are drawn instead, as before the idle check existed;
//! - `document.readyState` is `complete` (the load event has fired);
//! - the page's fetches and XHRs have been handled: the page script ([`timers_js`]) counts each from its
//!   call until a task after its answer (and the body's read) settles, so a page that renders what a fetch
//!   answered (`r.json().then(render)`) is observed after it rendered, even when the answer's body reaches
//!   the page script well after the network reported the request done (a loaded machine). Held for at
//!   most [`FETCH_CAP`].
//!
//! The quiet period is a margin for what the network events cannot show: a short timer (a debounce) that
//! is about to start a request or change the page. It is waived when the page shows it has none: a page
//! script ([`timers_js`], on every document) keeps count of the page's pending timers of at most the quiet
//! period (`setTimeout`, `setInterval`), and the frame check ends with an idle callback (the main thread
//! has no queued work: a framework rendering in chunks is not idle). A frame drawn, the thread idle, no
//! short timer pending and nothing on the wire since: the page is settled at once, without the rest of the
//! quiet period. A page with a short timer pending, one that is not idle within [`IDLE_CAP`], or one
//! without the count (a document the script did not reach) waits for the whole quiet period as before, and
//! so does one with a WebSocket open or receiving messages (CDP's `webSocketCreated` / `webSocketClosed`):
//! a server pushes without the page asking, so no timer foretells its next message.
//! What the count does not see is a frame's own timers (iframes); their requests are still seen.
//!
//! WebSocket messages the page receives count as network events during the first [`WS_WINDOW`] of a wait:
//! a page that renders a burst of pushed messages (a ticker that fills in, a chat that loads its history)
//! is observed once the burst is over, in recording and in replay alike, while a stream that never stops
//! delays a step by at most that window.
//!
//! After an action the first check runs its frame check before looking at the network at all, so a
//! navigation or request the action is about to start is waited for. A hidden tab draws no frames
//! (exploration's background tabs): there the frame wait gives up after [`FRAMES_CAP`] and the check
//! falls back to the quiet period alone. A page that never settles (a long poll) ends the wait at the page
//! timeout, noted by the caller.
//!
//! The wait reports the page's own work ([`Settled::page_ms`]: from the first network event the action
//! caused, or the wait's start, to the last one), so a step's overhead (the step less that) can be
//! measured (`cargo xtask bench agent`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chromiumoxide::page::Page;

use super::NetState;

/// An animation frame, then an idle callback; answers the document's ready state, after a space the count
/// of the page's pending short timers ([`timers_js`]) or -1 when the thread was not idle within
/// [`IDLE_CAP`], and after another the count of the page's fetches and XHRs whose handling has not run
/// yet (0 without the count). A page without the timers' count (or without idle callbacks) draws a
/// second frame instead and answers -1: it waits for the quiet period.
static FRAME_CHECK_JS: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "new Promise(r => requestAnimationFrame(() => {{ \
         const fetching = () => typeof window.__webfreeze_fetching === 'function' ? window.__webfreeze_fetching() : 0; \
         const answer = n => r(document.readyState + ' ' + n + ' ' + fetching()); \
         const count = window.__webfreeze_timers; \
         if (typeof count !== 'function' || typeof requestIdleCallback !== 'function') {{ \
           requestAnimationFrame(() => answer(-1)); return; }} \
         requestIdleCallback(d => answer(d.didTimeout ? -1 : count()), {{ timeout: {} }}); }}))",
        IDLE_CAP.as_millis()
    )
});

/// How long the frame check waits for the page's main thread to be idle (the `timeout` in
/// [`FRAME_CHECK_JS`]); a page busy for longer waits for the whole quiet period.
pub(super) const IDLE_CAP: Duration = Duration::from_millis(40);

/// The page script that counts the page's pending timers of at most `quiet` (installed on every document
/// before the page's own scripts; read by [`FRAME_CHECK_JS`]). A `setTimeout` counts until it fires or is
/// cleared; a `setInterval` until it is cleared. A timer whose callback is a string is not counted (it
/// cannot be followed), nor are longer timers: the quiet period never waited for them either.
pub(super) fn timers_js(quiet: Duration) -> String {
    format!(
        r#"(() => {{
  if (window.__webfreeze_timers) return;
  const limit = {limit};
  const timeouts = new Set(), intervals = new Set();
  const setT = window.setTimeout, clearT = window.clearTimeout;
  const setI = window.setInterval, clearI = window.clearInterval;
  const short = (fn, delay) => typeof fn === 'function' && (Number(delay) || 0) <= limit;
  window.setTimeout = function (fn, delay, ...rest) {{
    if (!short(fn, delay)) return setT.call(window, fn, delay, ...rest);
    const id = setT.call(window, function () {{ timeouts.delete(id); return fn.apply(this, arguments); }}, delay, ...rest);
    timeouts.add(id);
    return id;
  }};
  window.setInterval = function (fn, delay, ...rest) {{
    const id = setI.call(window, fn, delay, ...rest);
    if (short(fn, delay)) intervals.add(id);
    return id;
  }};
  window.clearTimeout = function (id) {{ timeouts.delete(id); intervals.delete(id); return clearT.call(window, id); }};
  window.clearInterval = function (id) {{ timeouts.delete(id); intervals.delete(id); return clearI.call(window, id); }};
  Object.defineProperty(window, '__webfreeze_timers', {{ value: () => timeouts.size + intervals.size }});
  // Fetches and XHRs whose handling has not run: counted from the call until a task after the answer
  // (or the body's read) settles, so the page's handlers of the answer (`r.json().then(render)`) have run.
  let fetching = 0;
  const later = () => setT.call(window, () => {{ fetching -= 1; }}, 0);
  const follow = p => {{ fetching += 1; p.then(later, later); return p; }};
  if (typeof window.fetch === 'function') {{
    const f = window.fetch;
    window.fetch = function (...args) {{ return follow(f.apply(this, args)); }};
  }}
  if (typeof Response === 'function') {{
    for (const m of ['json', 'text', 'arrayBuffer', 'blob', 'formData']) {{
      const read = Response.prototype[m];
      if (typeof read === 'function') Response.prototype[m] = function (...args) {{ return follow(read.apply(this, args)); }};
    }}
  }}
  if (typeof XMLHttpRequest === 'function') {{
    const send = XMLHttpRequest.prototype.send;
    XMLHttpRequest.prototype.send = function (...args) {{
      fetching += 1;
      this.addEventListener('loadend', later, {{ once: true }});
      try {{ return send.apply(this, args); }} catch (e) {{ later(); throw e; }}
    }};
  }}
  Object.defineProperty(window, '__webfreeze_fetching', {{ value: () => fetching }});
}})();"#,
        limit = quiet.as_millis()
    )
}

/// The longest wait for the frame check: a hidden tab draws none, and an evaluation racing a navigation may
/// never answer.
pub(super) const FRAMES_CAP: Duration = Duration::from_millis(150);

/// The longest a wait holds for the page's fetches and XHRs whose handling has not run (see
/// [`timers_js`]).
pub(super) const FETCH_CAP: Duration = Duration::from_secs(2);

/// How often the network state is looked at.
const POLL: Duration = Duration::from_millis(5);

/// How long into a wait received WebSocket messages still count as the page's work.
pub(super) const WS_WINDOW: Duration = Duration::from_secs(2);

/// The outcome of one wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settled {
    /// The page settled within the page timeout.
    pub settled: bool,
    /// From the first network event the action caused (or the start of the wait, if earlier) to the last
    /// one (0 when there was none): the page's own work for an action.
    pub page_ms: u64,
}

/// What the page answered to the frame check.
enum Frames {
    /// The frames drew; the ready state, and whether the page then showed it needs no quiet period (its
    /// thread idle, no short timer pending).
    Drew { state: String, calm: bool, fetching: bool },
    /// No frames within [`FRAMES_CAP`] (hidden tab), or the evaluation failed (a navigation replaced the
    /// document): the network state alone decides, with the ready state read directly.
    Unknown,
}

async fn frame_check(page: &Page) -> Frames {
    match tokio::time::timeout(FRAMES_CAP, page.evaluate(FRAME_CHECK_JS.as_str())).await {
        Ok(Ok(r)) => match r.into_value::<String>() {
            Ok(s) => {
                let mut parts = s.split(' ');
                let state = parts.next().unwrap_or_default().to_string();
                let timers = parts.next().unwrap_or("-1");
                let fetching = parts.next().is_some_and(|f| f != "0");
                Frames::Drew { state, calm: timers == "0" && !fetching, fetching }
            }
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

/// The tab's network as a wait that began at `start` sees it, read under one lock.
struct Wire {
    /// Nothing in flight.
    idle: bool,
    /// The last event's time ([`last_event`]).
    last: Option<Instant>,
    crashed: bool,
    /// A WebSocket is open, or a message arrived within `quiet` before the wait or during it: a server
    /// pushes without the page asking, so no timer foretells its next message and the quiet period is
    /// never waived.
    pushed: bool,
}

fn network(net: &Mutex<NetState>, start: Instant, quiet: Duration) -> Option<Wire> {
    net.lock().ok().map(|n| Wire {
        idle: n.inflight.is_empty(),
        last: last_event(&n, start),
        crashed: n.crashed,
        pushed: !n.ws_open.is_empty() || n.ws_frame.is_some_and(|t| t + quiet > start),
    })
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
    // The page's work after an action starts at the first network event it caused, which may come before
    // this wait does (a submit on Enter, a navigation on the mouse release).
    let origin = match net.lock() {
        Ok(n) if after_action => n.action.and_then(|(_, first)| first).map_or(start, |f| f.min(start)),
        _ => start,
    };
    let page_ms = |last: Option<Instant>| {
        last.filter(|t| *t > origin).map(|t| t.duration_since(origin).as_millis() as u64).unwrap_or(0)
    };
    let unsettled = |last| Settled { settled: false, page_ms: page_ms(last) };
    let Some(Wire { last: first, .. }) = network(net, start, quiet) else { return unsettled(None) };
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
        after_action.then(|| (first, Box::pin(frame_check(page)) as FramesFuture<'_>));
    loop {
        let Some(Wire { idle, last, crashed, pushed }) = network(net, start, quiet) else {
            return unsettled(None);
        };
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
            drawing = Some((last, Box::pin(frame_check(page))));
        }
        if let Some((from, frames)) = drawing.as_mut() {
            if let Ok(f) = tokio::time::timeout(POLL, frames).await {
                drawn = Some((*from, f));
                drawing = None;
            }
            continue;
        }
        let quiet_for = last.map_or(Duration::MAX, |t| t.elapsed());
        let calm = !pushed && matches!(drawn, Some((_, Frames::Drew { calm: true, .. })));
        if quiet_for < quiet && !calm {
            tokio::time::sleep(POLL.min(quiet - quiet_for)).await;
            continue;
        }
        let Some((_, frames)) = drawn.take() else { continue };
        // The page's handlers of an answer have not run yet (its body still on its way to the page): look
        // again, for at most [`FETCH_CAP`] (a body read that never ends, a stream, does not hold a step).
        if matches!(frames, Frames::Drew { fetching: true, .. }) && start.elapsed() < FETCH_CAP {
            tokio::time::sleep(POLL).await;
            continue;
        }
        let state = match frames {
            Frames::Drew { state, .. } => Some(state),
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
