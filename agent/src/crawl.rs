//! A site crawl in the browser (`webfreeze snapshots crawl`): breadth-first from start URLs, each page
//! loaded as an agent would see it (scripts run, settled as a step is), its links taken in the order an
//! agent meets them ([`crate::explore::rank`]), through a proxy that records everything into the site's
//! crawl layer, by one browser or several at once (at most `per_host` pages of one host at a time, each
//! host's pages started `pace` apart). The page budget, depth and pacing bound it; robots.txt is honoured
//! unless the user owns the site; a host that answers with a wall, a denial or a rate limit is stopped; no
//! form is submitted and no link that would act is followed ([`crate::explore::side_effects`]).
//!
//! The crawl's state ([`CrawlState`]: the queue, the pages done, the page contents seen) is handed to a
//! `save` callback after every page, so a stopped crawl resumes where it was: no page is loaded twice, and
//! a page whose content was already crawled under another URL does not spread its links again.
//!
//! Each page keeps the start URLs it was reached from ([`CrawlState::reached`]): a link inherits the seeds of
//! every page it was found on, and a start URL is its own seed. `webfreeze coverage` reads them to hide the
//! pages a crawl reached only through a held-out task's own recorded documents (`session::crawl::reach`).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::browser::{BrowserError, Session};
use crate::explore::{frontier::Frontier, rank, side_effects, site_of};

/// Crawl settings.
#[derive(Debug, Clone)]
pub struct CrawlOptions {
    /// Pages loaded per site (over every resumption).
    pub pages: usize,
    /// Link depth from the start URLs (0: the start URLs only).
    pub depth: u32,
    /// Pause between two pages.
    pub pace: Duration,
    /// Honour robots.txt (`Disallow` for `*` and for webfreeze); off only for sites the user owns.
    pub robots: bool,
    /// Browsers loading pages at once (each one page at a time).
    pub browsers: usize,
    /// Pages of one host loaded at once, at most (1: one after another, `pace` apart).
    pub per_host: usize,
}

impl Default for CrawlOptions {
    fn default() -> Self {
        Self {
            pages: 200,
            depth: 6,
            pace: Duration::from_millis(200),
            robots: true,
            browsers: 1,
            per_host: 1,
        }
    }
}

/// Where a crawl stands; serialisable so it survives a stop.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CrawlState {
    /// URLs to load, with their depth, in order.
    pub queue: VecDeque<(String, u32)>,
    /// URLs loaded or refused (never loaded again).
    pub done: BTreeSet<String>,
    /// BLAKE3 of each crawled page's visible text: a page seen under another URL spreads no links.
    pub contents: BTreeSet<String>,
    /// Pages loaded.
    pub pages: usize,
    /// Pages that failed to load.
    pub failed: usize,
    /// Links left out: they would act, or sat in a form.
    pub skipped_acting: usize,
    /// URLs robots.txt disallows.
    pub skipped_robots: usize,
    /// Hosts stopped by a wall, with why.
    pub stopped_hosts: BTreeMap<String, String>,
    /// robots.txt per host as fetched (empty: none).
    pub robots: BTreeMap<String, String>,
    /// OpenSearch descriptions the crawled pages link, fetched (so the frozen site search can read them).
    #[serde(default)]
    pub opensearch: BTreeSet<String>,
    /// Milliseconds spent loading pages.
    pub ms: u64,
    /// The start URLs each queued or loaded URL was reached from (a start URL: itself). A URL found again
    /// from another page gains that page's seeds; a page already loaded does not pass later gains on to
    /// the links it spread, so a seed set can be smaller than the true one, never larger: a page is hidden
    /// from a held-out task too often, never too rarely (but for pages an older state loaded before seeds
    /// were kept: `session::crawl::reach`).
    #[serde(default)]
    pub reached: BTreeMap<String, BTreeSet<String>>,
}

impl CrawlState {
    /// A crawl from `starts` (each at depth 0), skipping what `frontier` already holds as loaded.
    pub fn new(starts: impl IntoIterator<Item = String>) -> Self {
        let mut s = Self::default();
        for u in starts {
            s.start(u);
        }
        s
    }

    /// Queue `url` as a start URL (depth 0, its own seed), unless it is queued or done.
    pub fn start(&mut self, url: String) {
        self.reached.entry(url.clone()).or_default().insert(url.clone());
        self.push(url, 0);
    }

    fn push(&mut self, url: String, depth: u32) {
        if !self.done.contains(&url) && !self.queue.iter().any(|(q, _)| *q == url) {
            self.queue.push_back((url, depth));
        }
    }

    /// `to` was reached from `from` (a link on it, or where it redirected): `to` gains `from`'s seeds.
    fn reach(&mut self, from: &str, to: &str) {
        if from == to {
            return;
        }
        let seeds = self.reached.get(from).cloned().unwrap_or_default();
        self.reached.entry(to.to_string()).or_default().extend(seeds);
    }
}

/// What the crawl tells its caller after each page.
#[derive(Debug, Clone)]
pub struct CrawlProgress<'a> {
    /// The page just loaded (or refused).
    pub url: &'a str,
    /// The crawl's state.
    pub state: &'a CrawlState,
    /// Time since this invocation started.
    pub elapsed: Duration,
}

/// The OpenSearch descriptions the page links, one URL a line.
const OPENSEARCH_JS: &str = "Array.from(document.querySelectorAll('link[rel~=search][type*=opensearch]')).map(l => l.href).join('\\n')";

/// Whether robots.txt `text` lets a crawler named webfreeze load `url` (no robots.txt: yes).
pub fn robots_allow(text: &str, url: &str) -> bool {
    if text.trim().is_empty() {
        return true;
    }
    match texting_robots::Robot::new("webfreeze", text.as_bytes()) {
        Ok(r) => r.allowed(url),
        // An unreadable robots.txt says nothing.
        Err(_) => true,
    }
}

/// The robots.txt of `url`'s origin, loaded in the browser (recorded with the crawl). Empty when there is
/// none (an error page is not a robots file).
async fn fetch_robots(session: &Session, url: &str) -> String {
    let Ok(mut u) = url::Url::parse(url) else { return String::new() };
    u.set_path("/robots.txt");
    u.set_query(None);
    u.set_fragment(None);
    match session.fetch_bytes(u.as_str()).await {
        Ok(b) => {
            let text = String::from_utf8_lossy(&b).into_owned();
            // A site without one often answers its HTML 404 page.
            if text.trim_start().starts_with('<') {
                String::new()
            } else {
                text
            }
        }
        Err(_) => String::new(),
    }
}

/// What a crawl worker does next.
enum Next {
    /// Load this page (its depth and host); the host's slot is taken and its pacing reserved.
    Load(String, u32, String, Option<Instant>),
    /// Every queued page's host is busy: wait for a page to finish.
    Wait,
    /// Nothing left (or the budget is spent, or a worker failed).
    Done,
}

/// The crawl's state shared by its workers.
struct Shared<'a> {
    state: &'a mut CrawlState,
    /// Pages being loaded, per host.
    in_flight: BTreeMap<String, usize>,
    /// When the next page of each host may start (pacing).
    next_start: BTreeMap<String, Instant>,
    /// A worker's browser died: the others stop after their page.
    failed: Option<BrowserError>,
}

impl Shared<'_> {
    fn busy(&self) -> usize {
        self.in_flight.values().sum()
    }

    /// The first queued page a worker may load now, skipping (and dropping) what is done or off the sites.
    fn next(&mut self, sites: &BTreeSet<String>, opts: &CrawlOptions) -> Next {
        if self.failed.is_some() || self.state.pages + self.busy() >= opts.pages {
            return Next::Done;
        }
        let mut i = 0;
        while i < self.state.queue.len() {
            let (url, _) = &self.state.queue[i];
            let host = site_of(url);
            let gone = self.state.done.contains(url)
                || host
                    .as_ref()
                    .is_none_or(|h| !sites.contains(h) || self.state.stopped_hosts.contains_key(h));
            if gone {
                if let Some((url, _)) = self.state.queue.remove(i) {
                    self.state.done.insert(url);
                }
                continue;
            }
            let host = host.unwrap_or_default();
            if self.in_flight.get(&host).copied().unwrap_or(0) >= opts.per_host.max(1) {
                i += 1;
                continue;
            }
            let Some((url, depth)) = self.state.queue.remove(i) else { break };
            *self.in_flight.entry(host.clone()).or_default() += 1;
            // The host's pages start `pace` apart, whichever worker loads them.
            let now = Instant::now();
            let at = self.next_start.get(&host).copied().filter(|t| *t > now);
            self.next_start.insert(host.clone(), at.unwrap_or(now) + opts.pace);
            self.state.done.insert(url.clone());
            return Next::Load(url, depth, host, at);
        }
        if self.busy() == 0 {
            Next::Done
        } else {
            Next::Wait
        }
    }
}

/// Crawl the sites of `state`'s queue with `sessions` (browsers whose proxy records; one page at a time
/// each, at most [`CrawlOptions::per_host`] of them on one host), within `opts.pages`, saving the state
/// after every page. Only URLs on `sites` (host names, `www.` ignored) are followed.
pub async fn crawl(
    sessions: &[Session],
    state: &mut CrawlState,
    sites: &BTreeSet<String>,
    opts: &CrawlOptions,
    save: &(dyn Fn(&CrawlState) + Send + Sync),
    progress: &(dyn Fn(&CrawlProgress<'_>) + Send + Sync),
) -> Result<(), BrowserError> {
    let t0 = Instant::now();
    let shared = std::sync::Mutex::new(Shared {
        state,
        in_flight: BTreeMap::new(),
        next_start: BTreeMap::new(),
        failed: None,
    });
    let crew = Crew {
        shared: &shared,
        frontier: Frontier::default(),
        wake: tokio::sync::Notify::new(),
        sites,
        opts,
        save,
        progress,
        t0,
    };
    futures_util::future::join_all(sessions.iter().map(|s| worker(s, &crew))).await;
    let sh = shared.into_inner().map_err(|_| BrowserError::Crashed)?;
    match sh.failed {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// What the crawl's workers share.
struct Crew<'s, 'a> {
    shared: &'s std::sync::Mutex<Shared<'a>>,
    frontier: Frontier,
    /// Told whenever a page is done (a worker waiting for a busy host looks again).
    wake: tokio::sync::Notify,
    sites: &'s BTreeSet<String>,
    opts: &'s CrawlOptions,
    save: &'s (dyn Fn(&CrawlState) + Send + Sync),
    progress: &'s (dyn Fn(&CrawlProgress<'_>) + Send + Sync),
    t0: Instant,
}

/// One browser's share of the crawl: the next page it may load, until none is left.
async fn worker(session: &Session, c: &Crew<'_, '_>) {
    let (shared, frontier, wake, sites, opts, save, progress, t0) =
        (c.shared, &c.frontier, &c.wake, c.sites, c.opts, c.save, c.progress, c.t0);
    loop {
        // Registered before looking, so a page finishing in between still wakes this worker.
        let woken = wake.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        let next = match shared.lock() {
            Ok(mut sh) => sh.next(sites, opts),
            Err(_) => Next::Done,
        };
        let (url, depth, host, at) = match next {
            Next::Done => return,
            Next::Wait => {
                woken.await;
                continue;
            }
            Next::Load(url, depth, host, at) => (url, depth, host, at),
        };
        if let Some(at) = at {
            tokio::time::sleep_until(at.into()).await;
        }
        let page = crawl_page(session, &url, depth, &host, sites, opts, frontier, shared).await;
        if let Ok(mut sh) = shared.lock() {
            if let Some(n) = sh.in_flight.get_mut(&host) {
                *n = n.saturating_sub(1);
            }
            if let Err(e) = page {
                // The browser is gone, not the page: the page is loaded again when the crawl resumes.
                sh.state.done.remove(&url);
                sh.state.queue.push_front((url.clone(), depth));
                sh.failed.get_or_insert(e);
            }
            save(&*sh.state);
            progress(&CrawlProgress { url: &url, state: &*sh.state, elapsed: t0.elapsed() });
        }
        wake.notify_waiters();
    }
}

/// What a page's load found, applied to the state under its lock.
#[allow(clippy::too_many_arguments)]
async fn crawl_page(
    session: &Session,
    url: &str,
    depth: u32,
    host: &str,
    sites: &BTreeSet<String>,
    opts: &CrawlOptions,
    frontier: &Frontier,
    shared: &std::sync::Mutex<Shared<'_>>,
) -> Result<(), BrowserError> {
    let with = |f: &mut dyn FnMut(&mut CrawlState)| {
        if let Ok(mut sh) = shared.lock() {
            f(&mut *sh.state);
        }
    };
    if opts.robots {
        let known = shared.lock().map(|sh| sh.state.robots.get(host).cloned()).unwrap_or_default();
        let text = match known {
            Some(t) => t,
            None => {
                let t = fetch_robots(session, url).await;
                with(&mut |s| {
                    s.robots.insert(host.to_string(), t.clone());
                });
                t
            }
        };
        if !robots_allow(&text, url) {
            with(&mut |s| s.skipped_robots += 1);
            return Ok(());
        }
    }
    let t = Instant::now();
    let loaded = session.goto(url).await;
    let ms = t.elapsed().as_millis() as u64;
    with(&mut |s| s.ms += ms);
    if let Err(e) = loaded {
        if e.is_fatal() {
            return Err(e);
        }
        tracing::debug!("crawl: {url}: {e}");
        with(&mut |s| s.failed += 1);
        return Ok(());
    }
    // Where the browser ended (a redirect) is crawled too.
    let here = session.url().await.unwrap_or_else(|_| url.to_string());
    let here = here.split('#').next().unwrap_or(&here).to_string();
    with(&mut |s| {
        s.pages += 1;
        s.done.insert(here.clone());
        s.reach(url, &here);
    });
    if let Ok(Some(b)) = session.wall().await {
        tracing::warn!("crawl stops on {host}: {url} answered with a {:?} ({})", b.kind, b.marker);
        with(&mut |s| {
            s.stopped_hosts.insert(host.to_string(), format!("{:?}: {}", b.kind, b.marker));
        });
        return Ok(());
    }
    // The site's OpenSearch description, once: browsers do not load it, so no recording would hold it.
    let described = session.evaluate_text(OPENSEARCH_JS).await.unwrap_or_default();
    for link in described.lines().filter(|l| l.starts_with("http")) {
        let mut fresh = false;
        with(&mut |s| fresh = s.opensearch.insert(link.to_string()));
        if fresh {
            if let Err(e) = session.fetch_bytes(link).await {
                tracing::debug!("crawl: OpenSearch description {link}: {e}");
            }
        }
    }
    let text = session.page_text().await.unwrap_or_default();
    let digest = blake3::hash(text.as_bytes()).to_hex().to_string();
    let mut fresh = false;
    with(&mut |s| fresh = s.contents.insert(digest.clone()));
    if fresh && depth < opts.depth {
        let links = session.links().await.unwrap_or_default();
        let same: Vec<_> =
            links.into_iter().filter(|l| site_of(&l.url).is_some_and(|h| sites.contains(&h))).collect();
        frontier.count_links(&here, same.iter().map(|l| l.url.as_str()));
        let ranked = rank::rank(same, |u| frontier.is_chrome(u));
        with(&mut |s| {
            for l in &ranked {
                if l.in_form || side_effects::acts(&l.url, &l.text).is_some() {
                    s.skipped_acting += 1;
                    s.done.insert(l.url.clone());
                    continue;
                }
                s.reach(&here, &l.url);
                s.push(l.url.clone(), depth + 1);
            }
        });
    }
    Ok(())
}

/// [`crawl`] in browsers of its own ([`CrawlOptions::browsers`]), launched for `env` (its proxy records the
/// crawl).
pub async fn crawl_with_browser(
    cfg: &crate::runner::AgentConfig,
    env: &crate::runner::TaskEnv,
    state: &mut CrawlState,
    sites: &BTreeSet<String>,
    opts: &CrawlOptions,
    save: &(dyn Fn(&CrawlState) + Send + Sync),
    progress: &(dyn Fn(&CrawlProgress<'_>) + Send + Sync),
) -> Result<(), BrowserError> {
    let mut sessions = Vec::new();
    let mut profiles = Vec::new();
    for _ in 0..opts.browsers.max(1) {
        match crate::background::background_session(cfg, env, "webfreeze-profile-crawl-").await {
            Ok((s, p)) => {
                sessions.push(s);
                profiles.push(p);
            }
            Err(e) => {
                for s in sessions {
                    s.close().await;
                }
                return Err(e);
            }
        }
    }
    let r = crawl(&sessions, state, sites, opts, save, progress).await;
    for s in sessions {
        s.close().await;
    }
    drop(profiles);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn robots_rules() {
        let robots = "User-agent: *\nDisallow: /private/\nDisallow: /doku.php?do=\n\nUser-agent: webfreeze\nDisallow: /nofreeze\n";
        for (url, ok) in [
            ("https://w.test/doku.php?id=start", true),
            ("https://w.test/private/x", true),
            ("https://w.test/nofreeze/x", false),
            ("https://w.test/other", true),
        ] {
            assert_eq!(robots_allow(robots, url), ok, "{url}");
        }
        let star_only = "User-agent: *\nDisallow: /private/\n";
        assert!(!robots_allow(star_only, "https://w.test/private/x"));
        assert!(robots_allow(star_only, "https://w.test/public"));
        assert!(robots_allow("", "https://w.test/anything"));
    }

    #[test]
    fn a_url_is_queued_once() {
        let mut s = CrawlState::new(["https://a.test/".to_string(), "https://a.test/".to_string()]);
        assert_eq!(s.queue.len(), 1);
        s.done.insert("https://a.test/x".into());
        s.push("https://a.test/x".into(), 1);
        assert_eq!(s.queue.len(), 1);
    }

    /// Each URL keeps the start URLs it was reached from, through links and redirects.
    #[test]
    fn pages_keep_the_seeds_that_reached_them() {
        let mut s = CrawlState::new(["https://a.test/".to_string(), "https://a.test/deep".to_string()]);
        s.reach("https://a.test/", "https://a.test/shared");
        s.reach("https://a.test/deep", "https://a.test/shared");
        s.reach("https://a.test/deep", "https://a.test/private");
        s.reach("https://a.test/private", "https://a.test/private2");
        s.reach("https://a.test/private2", "https://a.test/private2");
        let seeds =
            |u: &str| s.reached.get(u).map(|x| x.iter().cloned().collect::<Vec<_>>()).unwrap_or_default();
        for (url, want) in [
            ("https://a.test/", vec!["https://a.test/"]),
            ("https://a.test/shared", vec!["https://a.test/", "https://a.test/deep"]),
            ("https://a.test/private", vec!["https://a.test/deep"]),
            ("https://a.test/private2", vec!["https://a.test/deep"]),
            ("https://a.test/never", vec![]),
        ] {
            assert_eq!(seeds(url), want, "{url}");
        }
        // An older state file without seeds still reads.
        let old: CrawlState = serde_json::from_str(r#"{"queue":[],"done":[],"contents":[],"pages":0,"failed":0,"skipped_acting":0,"skipped_robots":0,"stopped_hosts":{},"robots":{},"ms":0}"#).unwrap();
        assert!(old.reached.is_empty());
    }
}
