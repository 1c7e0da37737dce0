//! A tab's network as CDP reports it: requests in flight (to know when a page has settled), WebSocket
//! messages received, the latest document responses (for the wall check) and crashes. One watcher task
//! per tab keeps a [`NetState`] current, and answers the tab's JavaScript dialogs (`super::dialogs`).
//!
//! A request is in flight from its `requestWillBeSent` to its `loadingFinished` or `loadingFailed`, or
//! until the main frame commits another document: Chromium does not always end a request of the document
//! it left (MediaWiki's edit stash, started by the text box's `change` as Save takes the focus, was never
//! ended, so every save waited for the whole page timeout). Each request keeps the loader (document) that
//! made it; when the main frame commits a new one, the requests of every other loader are forgotten, and
//! those loaders retired: a late start of theirs is not waited for either.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chromiumoxide::cdp::browser_protocol::inspector::EventTargetCrashed;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, EventResponseReceived,
    EventWebSocketClosed, EventWebSocketCreated, EventWebSocketFrameReceived, ResourceType,
};
use chromiumoxide::cdp::browser_protocol::page::{EventFrameNavigated, EventJavascriptDialogOpening};
use chromiumoxide::page::Page;
use futures_util::StreamExt as _;

use super::{cdp, BrowserError};

#[derive(Default)]
pub(super) struct NetState {
    /// Request id -> the request.
    pub(super) inflight: BTreeMap<String, Inflight>,
    /// Loaders (documents) the main frame has left: their requests are not waited for.
    pub(super) retired: HashSet<String>,
    /// The main frame's document now (its loader), retired when the next one commits.
    pub(super) main_loader: Option<String>,
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
    /// The latest document responses (URL, status, headers, method), newest last, for [`Session::wall`].
    pub(super) documents: Vec<DocumentSeen>,
    /// The methods of document requests awaiting their response, by request id (a wall is told from the
    /// site's answer to the agent's own write by it: `wall`'s docs).
    pub(super) document_methods: HashMap<String, String>,
}

/// A request in flight: its URL, and the loader (document) that made it ("" for a worker's).
pub(super) struct Inflight {
    pub(super) url: String,
    pub(super) loader: String,
}

impl NetState {
    /// The main frame committed the document of `loader`: forget the requests of every other loader (a
    /// worker's excepted), and retire those loaders.
    fn committed(&mut self, loader: &str) {
        // The document left, even with nothing in flight now: a request it starts late is not waited for.
        if let Some(left) =
            self.main_loader.replace(loader.to_string()).filter(|l| l != loader && !l.is_empty())
        {
            self.retired.insert(left);
        }
        let left: Vec<String> = self
            .inflight
            .iter()
            .filter(|(_, r)| !r.loader.is_empty() && r.loader != loader)
            .map(|(id, _)| id.clone())
            .collect();
        for id in left {
            if let Some(r) = self.inflight.remove(&id) {
                self.retired.insert(r.loader);
                // Its end, if it ever comes, is dropped.
                self.ignored.insert(id);
            }
        }
    }
}

/// A document response: URL, status, headers (names lower-case), and its request's method.
pub(super) type DocumentSeen = (String, u16, Vec<(String, String)>, String);

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
    let mut navigated = p.event_listener::<EventFrameNavigated>().await.map_err(cdp)?;
    // The tab's dialogs are answered from here too (`super::dialogs`): one task per tab.
    let mut dialogs = p.event_listener::<EventJavascriptDialogOpening>().await.map_err(cdp)?;
    let page = p.clone();
    let net = Arc::new(Mutex::new(NetState::default()));
    let tab_net = net.clone();
    let watcher = tokio::spawn(async move {
        loop {
            // Starts first: chromiumoxide delivers events in protocol order, so a request's start is
            // in its channel before its end is in another.
            let (id, url) = tokio::select! {
                biased;
                Some(e) = sent.next() => {
                    if e.r#type == Some(ResourceType::Document) {
                        if let Ok(mut n) = net.lock() {
                            // A document whose response never comes (a failed load) is not kept for long.
                            if n.document_methods.len() >= DOCUMENTS_KEPT {
                                n.document_methods.clear();
                            }
                            n.document_methods.insert(e.request_id.inner().clone(), e.request.method.clone());
                        }
                    }
                    let url = (!e.request.url.starts_with("data:"))
                        .then(|| Inflight { url: e.request.url.clone(), loader: e.loader_id.inner().clone() });
                    (e.request_id.inner().clone(), Some(url))
                }
                Some(e) = dialogs.next() => {
                    super::dialogs::answer(&page, &e);
                    continue;
                }
                Some(e) = navigated.next() => {
                    if e.frame.parent_id.is_none() {
                        if let Ok(mut n) = net.lock() {
                            n.committed(e.frame.loader_id.inner());
                        }
                    }
                    continue;
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
                            let method = n.document_methods.remove(e.request_id.inner()).unwrap_or_default();
                            n.documents.push((e.response.url.clone(), status, headers.unwrap_or_default(), method));
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
                    // A request of a document the main frame has left is not waited for.
                    Some(Some(r)) if n.retired.contains(&r.loader) => {
                        if !n.ended_early.remove(&id) {
                            n.ignored.insert(id);
                        }
                    }
                    Some(Some(r)) => {
                        if !n.ended_early.remove(&id) {
                            n.inflight.insert(id, r);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_forgets_the_requests_of_other_documents_and_keeps_workers() {
        let mut n = NetState::default();
        for (id, loader) in [("old", "L1"), ("nav", "L2"), ("worker", ""), ("frame-old", "L1")] {
            n.inflight
                .insert(id.into(), Inflight { url: format!("https://a.test/{id}"), loader: loader.into() });
        }
        n.committed("L2");
        let left: Vec<&str> = n.inflight.keys().map(String::as_str).collect();
        assert_eq!(left, ["nav", "worker"]);
        assert!(n.retired.contains("L1") && !n.retired.contains("L2") && !n.retired.contains(""));
        assert!(n.ignored.contains("old") && n.ignored.contains("frame-old"));
        // The next commit retires the document left, though none of its requests was in flight.
        n.committed("L3");
        assert!(n.retired.contains("L2"));
    }
}
