//! The crawl's gate: what the crawl's proxy lets the browser navigate to, whatever `agent::crawl` asked.
//!
//! The browser walk checks a page's URL against the site's hosts and robots.txt before it loads it, but a
//! page that redirects lands where the redirect says, unchecked: another host, or a path robots.txt
//! disallows. The gate stands in front of the crawl's recording proxy and checks every top-level
//! navigation, redirect targets included (`Sec-Fetch-Dest: document`, or, from a browser that sends no
//! Fetch metadata (plain http), a GET that accepts `text/html` first): a navigation off the site's hosts
//! ([`super::site::site_hosts`]), or one robots.txt disallows, is answered 403 by the gate (marked with
//! `wall::GUARD_HEADER`, so the walk does not take it for the site's wall), never forwarded nor recorded.
//!
//! robots.txt as RFC 9309 reads it: the gate sees each host's `/robots.txt` go by. Answered 2xx: its text
//! (an HTML page is no robots file: allow all). 4xx: allow all. 5xx, or unreachable (the exchange
//! failed): disallow all, and the browser is given `Disallow: /` in place of the 5xx, so the walk's own
//! check (which reads any failed fetch as no robots.txt) skips the host too. A host whose robots.txt the
//! gate never saw is not navigated to (the walk fetches it before a host's first page; a resumed crawl
//! hands the gate what it read before).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use proxy::__bytes::Bytes;
use proxy::__http::{header, HeaderValue, Request, Response, StatusCode};
use proxy::{Body, Decision, Handler, ProxyError, RequestInfo, UpstreamInfo};

/// What the browser is given for a robots.txt answered 5xx (RFC 9309 2.3.1.4: disallow all).
pub(crate) const DISALLOW_ALL: &str = "User-agent: *\nDisallow: /\n";

/// The most of a robots.txt read (RFC 9309 2.5: at least 500 KiB).
const ROBOTS_MAX: usize = 512 << 10;

/// How a robots.txt answer reads (RFC 9309 2.3.1): `None` while the status alone does not say (2xx: its
/// text decides; 3xx: the browser follows it).
pub(crate) fn robots_by_status(status: u16) -> Option<&'static str> {
    match status {
        400..=499 => Some(""),
        500..=599 => Some(DISALLOW_ALL),
        _ => None,
    }
}

/// Why the gate refuses a navigation, if it does: `sites` the crawl's hosts, `robots` each host's
/// robots.txt as read (`None`: robots.txt not honoured, `--ignore-robots`).
pub(crate) fn refusal(
    url: &str,
    sites: &BTreeSet<String>,
    robots: Option<&BTreeMap<String, String>>,
) -> Option<&'static str> {
    let Some(host) = agent::explore::site_of(url) else { return Some("not a URL the crawl loads") };
    if is_robots_txt(url) {
        return None;
    }
    if !sites.contains(&host) {
        return Some("off the site's hosts (snapshots crawl --host adds one)");
    }
    match robots.map(|r| r.get(&host)) {
        None => None,
        Some(None) => Some("its host's robots.txt was never read"),
        Some(Some(text)) if !agent::crawl::robots_allow(text, url) => Some("robots.txt disallows it"),
        Some(Some(_)) => None,
    }
}

/// Whether an absolute URL is its origin's `/robots.txt`.
fn is_robots_txt(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = rest.find('/').map_or("", |i| &rest[i..]);
    path.split(['?', '#']).next() == Some("/robots.txt")
}

/// Whether a request is a top-level navigation (see the module docs).
fn is_navigation(req: &Request<Body>) -> bool {
    let h = |n: &str| req.headers().get(n).and_then(|v| v.to_str().ok()).map(str::to_ascii_lowercase);
    match h("sec-fetch-dest") {
        Some(d) => d == "document",
        None => req.method() == "GET" && h("accept").is_some_and(|a| a.starts_with("text/html")),
    }
}

/// The gate in front of the crawl's proxy (see the module docs).
pub(crate) struct CrawlGate<H> {
    inner: Arc<H>,
    sites: BTreeSet<String>,
    /// Each host's robots.txt as read (`None`: robots.txt not honoured).
    robots: Option<Mutex<BTreeMap<String, String>>>,
    /// Navigations refused.
    refused: AtomicU64,
}

impl<H> CrawlGate<H> {
    /// A gate over `inner` for `sites`; `robots` the robots.txt texts already read (a resumed crawl's),
    /// `None` when robots.txt is not honoured.
    pub(crate) fn new(
        inner: Arc<H>,
        sites: BTreeSet<String>,
        robots: Option<BTreeMap<String, String>>,
    ) -> Self {
        Self { inner, sites, robots: robots.map(Mutex::new), refused: AtomicU64::new(0) }
    }

    /// Navigations refused so far.
    pub(crate) fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    fn learn(&self, host: &str, text: String) {
        if let Some(Ok(mut r)) = self.robots.as_ref().map(|m| m.lock()) {
            r.insert(host.to_string(), text);
        }
    }
}

/// Per-request state: the inner handler's, and the host whose robots.txt this is, if it is one.
pub(crate) struct GateCtx<C> {
    inner: C,
    robots_of: Mutex<Option<String>>,
    /// The robots.txt read so far, once answered 2xx (the body of another answer is not a robots file).
    text: Mutex<Option<Vec<u8>>>,
}

impl<H: Handler> Handler for CrawlGate<H> {
    type Ctx = GateCtx<H::Ctx>;

    fn new_ctx(&self, info: &RequestInfo) -> Self::Ctx {
        GateCtx { inner: self.inner.new_ctx(info), robots_of: Mutex::new(None), text: Mutex::new(None) }
    }

    async fn request(&self, ctx: &Self::Ctx, req: Request<Body>) -> Decision {
        let url = req.uri().to_string();
        if self.robots.is_some() && req.method() == "GET" && is_robots_txt(&url) {
            if let Ok(mut r) = ctx.robots_of.lock() {
                *r = agent::explore::site_of(&url);
            }
        }
        if is_navigation(&req) {
            let why = match self.robots.as_ref().map(|m| m.lock()) {
                Some(Ok(r)) => refusal(&url, &self.sites, Some(&r)),
                _ => refusal(&url, &self.sites, None),
            };
            if let Some(why) = why {
                self.refused.fetch_add(1, Ordering::Relaxed);
                tracing::info!("crawl: not loading {url}: {why}");
                let mut r = proxy::text_response(
                    StatusCode::FORBIDDEN,
                    &format!("webfreeze crawl: not loading {url}: {why}\n"),
                );
                r.headers_mut().insert(wall::GUARD_HEADER, HeaderValue::from_static("crawl"));
                return Decision::Respond(r);
            }
        }
        self.inner.request(&ctx.inner, req).await
    }

    fn request_chunk(&self, ctx: &Self::Ctx, chunk: &Bytes) {
        self.inner.request_chunk(&ctx.inner, chunk)
    }

    fn response_head(&self, ctx: &Self::Ctx, up: &UpstreamInfo, res: &mut proxy::__http::response::Parts) {
        self.inner.response_head(&ctx.inner, up, res)
    }

    fn response_chunk(&self, ctx: &Self::Ctx, chunk: &Bytes) {
        self.inner.response_chunk(&ctx.inner, chunk);
        let host = ctx.robots_of.lock().ok().and_then(|h| h.clone());
        let Ok(mut text) = ctx.text.lock() else { return };
        if let (Some(host), Some(text)) = (host, text.as_mut()) {
            let room = ROBOTS_MAX.saturating_sub(text.len());
            text.extend_from_slice(&chunk[..chunk.len().min(room)]);
            // Known as it arrives: the browser's next navigation may come before the exchange completes.
            let t = String::from_utf8_lossy(text).into_owned();
            self.learn(&host, if t.trim_start().starts_with('<') { String::new() } else { t });
        }
    }

    async fn to_client(&self, ctx: &Self::Ctx, res: Response<Body>) -> Response<Body> {
        let res = self.inner.to_client(&ctx.inner, res).await;
        let host = ctx.robots_of.lock().ok().and_then(|h| h.clone());
        let Some(host) = host else { return res };
        let status = res.status().as_u16();
        match robots_by_status(status) {
            Some(text) => {
                self.learn(&host, text.to_string());
                if text == DISALLOW_ALL {
                    tracing::info!("crawl: robots.txt of {host} answered {status}: read as disallow all");
                    let mut r = Response::new(proxy::body::full(Bytes::from_static(DISALLOW_ALL.as_bytes())));
                    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
                    r.headers_mut().insert(wall::GUARD_HEADER, HeaderValue::from_static("crawl"));
                    return r;
                }
                res
            }
            None => {
                if (200..300).contains(&status) {
                    // An empty robots.txt allows all; its chunks, if any, say more.
                    self.learn(&host, String::new());
                    if let Ok(mut t) = ctx.text.lock() {
                        *t = Some(Vec::new());
                    }
                }
                res
            }
        }
    }

    fn complete(&self, ctx: &Self::Ctx, outcome: Result<(), ProxyError>) {
        if outcome.is_err() {
            let host = ctx.robots_of.lock().ok().and_then(|h| h.clone());
            let known = host.as_ref().is_some_and(|h| {
                self.robots.as_ref().and_then(|m| m.lock().ok()).is_some_and(|r| r.contains_key(h))
            });
            if let (Some(host), false) = (host, known) {
                // Unreachable (RFC 9309 2.3.1.4): disallow all.
                self.learn(&host, DISALLOW_ALL.to_string());
            }
        }
        self.inner.complete(&ctx.inner, outcome)
    }

    proxy::forward_to_inner!(forwards_to_origins, finishes_abandoned, direct, observes_websocket);

    fn websocket_message(&self, ctx: &Self::Ctx, msg: &proxy::websocket::WsMessage) {
        self.inner.websocket_message(&ctx.inner, msg)
    }

    // The guards inside judge the page's socket messages.
    fn websocket_verdict(
        &self,
        ctx: &Self::Ctx,
        msg: &proxy::websocket::WsMessage,
    ) -> proxy::websocket::WsVerdict {
        self.inner.websocket_verdict(&ctx.inner, msg)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn info() -> RequestInfo {
        RequestInfo {
            id: 0,
            client_addr: "127.0.0.1:1".parse().unwrap(),
            tls: true,
            client_alpn: None,
            client_version: proxy::__http::Version::HTTP_11,
        }
    }

    fn get(url: &str, dest: Option<&str>) -> Request<Body> {
        let mut b = Request::builder().method("GET").uri(url).header("accept", "text/html,*/*");
        if let Some(d) = dest {
            b = b.header("sec-fetch-dest", d);
        }
        b.body(proxy::body::empty()).unwrap()
    }

    /// `Some(status)` when the gate answers, `None` when it forwards.
    async fn ask(g: &CrawlGate<proxy::PassThrough>, url: &str, dest: Option<&str>) -> Option<u16> {
        let ctx = g.new_ctx(&info());
        match g.request(&ctx, get(url, dest)).await {
            Decision::Respond(r) => {
                assert!(r.headers().contains_key(wall::GUARD_HEADER), "{url}: marked as webfreeze's");
                Some(r.status().as_u16())
            }
            Decision::Forward(_) => None,
        }
    }

    /// The origin's answer to `/robots.txt` of `host` passed through the gate: the status the browser is
    /// given, and the text the gate then holds for the host.
    async fn robots(g: &CrawlGate<proxy::PassThrough>, host: &str, status: u16, body: &str) -> (u16, String) {
        let ctx = g.new_ctx(&info());
        let url = format!("https://{host}/robots.txt");
        assert!(matches!(g.request(&ctx, get(&url, Some("document"))).await, Decision::Forward(_)));
        let mut res = Response::new(proxy::body::empty());
        *res.status_mut() = StatusCode::from_u16(status).unwrap();
        let given = g.to_client(&ctx, res).await.status().as_u16();
        g.response_chunk(&ctx, &Bytes::from(body.to_string()));
        g.complete(&ctx, Ok(()));
        (given, known(g, host))
    }

    fn known(g: &CrawlGate<proxy::PassThrough>, host: &str) -> String {
        g.robots.as_ref().unwrap().lock().unwrap().get(host).cloned().unwrap_or_else(|| "(none)".into())
    }

    #[test]
    fn robots_statuses() {
        for (status, want) in [
            (200, None),
            (301, None),
            (404, Some("")),
            (410, Some("")),
            (500, Some(DISALLOW_ALL)),
            (503, Some(DISALLOW_ALL)),
        ] {
            assert_eq!(robots_by_status(status), want, "{status}");
        }
    }

    /// Issue 61, part 3: robots.txt answered 5xx was read as allow all (RFC 9309: disallow all), and a
    /// crawled page's redirect target was loaded unchecked (another host, a disallowed path). The gate
    /// checks every navigation, a redirect's target too.
    #[tokio::test]
    async fn issue_61_the_gate_checks_every_navigation_and_reads_robots_as_rfc_9309() {
        let sites: BTreeSet<String> = ["shop.test", "down.test", "gone.test"].map(String::from).into();
        let g = CrawlGate::new(Arc::new(proxy::PassThrough), sites.clone(), Some(BTreeMap::new()));
        // Before any robots.txt is read, no page of the host is loaded.
        assert_eq!(ask(&g, "https://shop.test/", Some("document")).await, Some(403));
        let shop = "User-agent: *\nDisallow: /private/\n";
        assert_eq!(robots(&g, "shop.test", 200, shop).await, (200, shop.to_string()));
        // 5xx: the browser is given `Disallow: /` (so the walk's own check skips the host too).
        assert_eq!(robots(&g, "down.test", 503, "<html>down</html>").await, (200, DISALLOW_ALL.to_string()));
        assert_eq!(robots(&g, "gone.test", 404, "<html>no</html>").await, (404, String::new()));
        for (url, dest, want) in [
            ("https://shop.test/kettle", Some("document"), None),
            ("https://www.shop.test/kettle", Some("document"), None),
            // A redirect's target: disallowed, or on another host.
            ("https://shop.test/private/orders", Some("document"), Some(403)),
            ("https://ads.example/landing", Some("document"), Some(403)),
            // A page's frames and subresources are the page's, not the crawl's: never refused.
            ("https://ads.example/frame", Some("iframe"), None),
            ("https://cdn.example/app.js", Some("script"), None),
            // No Fetch metadata (plain http): a GET that accepts HTML first is a navigation.
            ("http://ads.example/landing", None, Some(403)),
            // 5xx: disallow all; 4xx: allow all.
            ("https://down.test/", Some("document"), Some(403)),
            ("https://gone.test/anything", Some("document"), None),
        ] {
            assert_eq!(ask(&g, url, dest).await, want, "{url} ({dest:?})");
        }
        assert_eq!(g.refused(), 5);
        // Unreachable (the exchange failed before any answer): disallow all.
        let ctx = g.new_ctx(&info());
        let _ = g.request(&ctx, get("https://late.test/robots.txt", Some("document"))).await;
        g.complete(
            &ctx,
            Err(ProxyError::new(proxy::Side::Origin, proxy::ErrorKind::Connect, "late.test", "refused")),
        );
        assert_eq!(known(&g, "late.test"), DISALLOW_ALL);
        // `--ignore-robots`: hosts only.
        let free = CrawlGate::new(Arc::new(proxy::PassThrough), sites, None);
        assert_eq!(ask(&free, "https://shop.test/private/x", Some("document")).await, None);
        assert_eq!(ask(&free, "https://ads.example/", Some("document")).await, Some(403));
    }
}
