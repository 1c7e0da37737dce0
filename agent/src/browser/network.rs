//! A tab's network as CDP reports it: requests in flight (to know when a page has settled), WebSocket
//! messages received, the latest document responses (for the wall check) and crashes. One watcher task
//! per tab keeps a [`NetState`] current.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chromiumoxide::cdp::browser_protocol::inspector::EventTargetCrashed;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, EventResponseReceived,
    EventWebSocketClosed, EventWebSocketCreated, EventWebSocketFrameReceived, ResourceType,
};
use chromiumoxide::page::Page;
use futures_util::StreamExt as _;

use super::{cdp, BrowserError};

#[derive(Default)]
pub(super) struct NetState {
    /// Request id -> URL.
    pub(super) inflight: BTreeMap<String, String>,
    /// Ids whose end was seen before their start (the streams are separate channels).
    pub(super) ended_early: HashSet<String>,
    /// data: requests (not tracked).
    pub(super) ignored: HashSet<String>,
    pub(super) last_change: Option<Instant>,
    /// When the page last received a WebSocket message (see [`settle`]: a burst of them counts as the
    /// page's work for a while).
    pub(super) ws_frame: Option<Instant>,
    /// The page's WebSockets open now (request ids): a server may push on them at any time, so the
    /// quiet period is never waived while one is open (see [`settle`]).
    pub(super) ws_open: HashSet<String>,
    /// When the latest action began ([`super::Session::begin_action`]), and the first network event at or
    /// after it: where the page's own work for that action starts (it may start before the action's own
    /// calls return: a submit on Enter, a navigation on the mouse release).
    pub(super) action: Option<(Instant, Option<Instant>)>,
    /// The `last_change` at which the tab was last found settled (see [`settle`]).
    pub(super) settled_at: Option<Option<Instant>>,
    pub(super) crashed: bool,
    /// The latest document responses (URL, status, headers), newest last, for [`Session::wall`].
    pub(super) documents: Vec<DocumentSeen>,
}

/// A document response: URL, status, headers (names lower-case).
pub(super) type DocumentSeen = (String, u16, Vec<(String, String)>);

/// Document responses kept per tab.
const DOCUMENTS_KEPT: usize = 32;

/// Start watching `p`'s network: its state, and the watcher task (aborted when the tab closes).
pub(super) async fn watch(
    p: &Page,
) -> Result<(Arc<Mutex<NetState>>, tokio::task::JoinHandle<()>), BrowserError> {
    // Track the tab's requests, to know when a page has settled, and its crashes.
    let mut sent = p.event_listener::<EventRequestWillBeSent>().await.map_err(cdp)?;
    let mut done = p.event_listener::<EventLoadingFinished>().await.map_err(cdp)?;
    let mut failed = p.event_listener::<EventLoadingFailed>().await.map_err(cdp)?;
    let mut crashed = p.event_listener::<EventTargetCrashed>().await.map_err(cdp)?;
    let mut responses = p.event_listener::<EventResponseReceived>().await.map_err(cdp)?;
    let mut ws_frames = p.event_listener::<EventWebSocketFrameReceived>().await.map_err(cdp)?;
    let mut ws_created = p.event_listener::<EventWebSocketCreated>().await.map_err(cdp)?;
    let mut ws_closed = p.event_listener::<EventWebSocketClosed>().await.map_err(cdp)?;
    let net = Arc::new(Mutex::new(NetState::default()));
    let tab_net = net.clone();
    let watcher = tokio::spawn(async move {
        loop {
            // Starts first: chromiumoxide delivers events in protocol order, so a request's start is
            // in its channel before its end is in another.
            let (id, url) = tokio::select! {
                biased;
                Some(e) = sent.next() => {
                    let url = (!e.request.url.starts_with("data:")).then(|| e.request.url.clone());
                    (e.request_id.inner().clone(), Some(url))
                }
                Some(e) = done.next() => (e.request_id.inner().clone(), None),
                Some(e) = failed.next() => (e.request_id.inner().clone(), None),
                Some(_) = crashed.next() => {
                    if let Ok(mut n) = net.lock() { n.crashed = true; }
                    continue;
                }
                Some(_) = ws_frames.next() => {
                    if let Ok(mut n) = net.lock() { n.ws_frame = Some(Instant::now()); }
                    continue;
                }
                Some(e) = ws_created.next() => {
                    if let Ok(mut n) = net.lock() { n.ws_open.insert(e.request_id.inner().clone()); }
                    continue;
                }
                Some(e) = ws_closed.next() => {
                    if let Ok(mut n) = net.lock() { n.ws_open.remove(e.request_id.inner()); }
                    continue;
                }
                Some(e) = responses.next() => {
                    if e.r#type == ResourceType::Document {
                        let headers = e.response.headers.inner().as_object().map(|o| {
                            o.iter()
                                .map(|(k, v)| (k.to_ascii_lowercase(), v.as_str().unwrap_or_default().to_string()))
                                .collect()
                        });
                        let status = u16::try_from(e.response.status).unwrap_or(0);
                        if let Ok(mut n) = net.lock() {
                            if n.documents.len() >= DOCUMENTS_KEPT {
                                n.documents.remove(0);
                            }
                            n.documents.push((e.response.url.clone(), status, headers.unwrap_or_default()));
                        }
                    }
                    continue;
                }
                else => break,
            };
            if let Ok(mut n) = net.lock() {
                match url {
                    // data: URLs are not waited for; their ends are dropped.
                    Some(None) => {
                        n.ignored.insert(id);
                    }
                    Some(Some(url)) => {
                        if !n.ended_early.remove(&id) {
                            n.inflight.insert(id, url);
                        }
                    }
                    None => {
                        if n.inflight.remove(&id).is_none() && !n.ignored.remove(&id) {
                            n.ended_early.insert(id);
                        }
                    }
                }
                let now = Instant::now();
                n.last_change = Some(now);
                if let Some((began, first @ None)) = &mut n.action {
                    if now >= *began {
                        *first = Some(now);
                    }
                }
            }
        }
    });
    Ok((tab_net, watcher))
}
