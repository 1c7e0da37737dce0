//! A site crawl in the browser (`webfreeze snapshots crawl`): breadth-first from start URLs, each page
//! loaded as an agent would see it (scripts run, settled as a step is), its links taken in the order an
//! agent meets them ([`crate::explore::rank`]), through a proxy that records everything into the site's
//! crawl layer. The page budget, depth and pacing bound it; robots.txt is honoured unless the user owns the
//! site; a host that answers with a wall, a denial or a rate limit is stopped; no form is submitted and no
//! link that would act is followed ([`crate::explore::side_effects`]).
//!
//! The crawl's state ([`CrawlState`]: the queue, the pages done, the page contents seen) is handed to a
//! `save` callback after every page, so a stopped crawl resumes where it was: no page is loaded twice, and
//! a page whose content was already crawled under another URL does not spread its links again.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::browser::{BrowserError, Session};
use crate::explore::{frontier::Frontier, host_of, rank, side_effects};

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
}

impl Default for CrawlOptions {
    fn default() -> Self {
        Self { pages: 200, depth: 6, pace: Duration::from_millis(200), robots: true }
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
}

impl CrawlState {
    /// A crawl from `starts` (each at depth 0), skipping what `frontier` already holds as loaded.
    pub fn new(starts: impl IntoIterator<Item = String>) -> Self {
        let mut s = Self::default();
        for u in starts {
            s.push(u, 0);
        }
        s
    }

    fn push(&mut self, url: String, depth: u32) {
        if !self.done.contains(&url) && !self.queue.iter().any(|(q, _)| *q == url) {
            self.queue.push_back((url, depth));
        }
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

/// Crawl the sites of `state`'s queue with `session` (whose proxy records), within `opts.pages`, saving the
/// state after every page. Only URLs on `sites` (host names, `www.` ignored) are followed.
pub async fn crawl(
    session: &Session,
    state: &mut CrawlState,
    sites: &BTreeSet<String>,
    opts: &CrawlOptions,
    save: &(dyn Fn(&CrawlState) + Send + Sync),
    progress: &(dyn Fn(&CrawlProgress<'_>) + Send + Sync),
) -> Result<(), BrowserError> {
    let t0 = Instant::now();
    let frontier = Frontier::default();
    let mut first = true;
    while let Some((url, depth)) = state.queue.pop_front() {
        if state.pages >= opts.pages {
            state.queue.push_front((url, depth));
            break;
        }
        if state.done.contains(&url) {
            continue;
        }
        let Some(host) = host_of(&url) else { continue };
        if !sites.contains(&host) || state.stopped_hosts.contains_key(&host) {
            state.done.insert(url);
            continue;
        }
        if opts.robots {
            if !state.robots.contains_key(&host) {
                let text = fetch_robots(session, &url).await;
                state.robots.insert(host.clone(), text);
            }
            if !robots_allow(state.robots.get(&host).map(String::as_str).unwrap_or(""), &url) {
                state.skipped_robots += 1;
                state.done.insert(url.clone());
                save(state);
                progress(&CrawlProgress { url: &url, state, elapsed: t0.elapsed() });
                continue;
            }
        }
        if !first && !opts.pace.is_zero() {
            tokio::time::sleep(opts.pace).await;
        }
        first = false;
        state.done.insert(url.clone());
        let t = Instant::now();
        let loaded = session.goto(&url).await;
        state.ms += t.elapsed().as_millis() as u64;
        if let Err(e) = loaded {
            if e.is_fatal() {
                // The browser is gone, not the page: the page is loaded again when the crawl resumes.
                state.done.remove(&url);
                state.queue.push_front((url, depth));
                save(state);
                return Err(e);
            }
            tracing::debug!("crawl: {url}: {e}");
            state.failed += 1;
            save(state);
            continue;
        }
        state.pages += 1;
        // Where the browser ended (a redirect) is crawled too.
        let here = session.url().await.unwrap_or_else(|_| url.clone());
        state.done.insert(here.split('#').next().unwrap_or(&here).to_string());
        if let Ok(Some(b)) = session.wall().await {
            tracing::warn!("crawl stops on {host}: {url} answered with a {:?} ({})", b.kind, b.marker);
            state.stopped_hosts.insert(host, format!("{:?}: {}", b.kind, b.marker));
            save(state);
            progress(&CrawlProgress { url: &url, state, elapsed: t0.elapsed() });
            continue;
        }
        // The site's OpenSearch description, once: browsers do not load it, so no recording would hold it.
        let described = session.evaluate_text(OPENSEARCH_JS).await.unwrap_or_default();
        for link in described.lines().filter(|l| l.starts_with("http")) {
            if state.opensearch.insert(link.to_string()) {
                if let Err(e) = session.fetch_bytes(link).await {
                    tracing::debug!("crawl: OpenSearch description {link}: {e}");
                }
            }
        }
        let text = session.page_text().await.unwrap_or_default();
        let fresh = state.contents.insert(blake3::hash(text.as_bytes()).to_hex().to_string());
        if fresh && depth < opts.depth {
            let links = session.links().await.unwrap_or_default();
            let same: Vec<_> =
                links.into_iter().filter(|l| host_of(&l.url).is_some_and(|h| sites.contains(&h))).collect();
            frontier.count_links(&here, same.iter().map(|l| l.url.as_str()));
            for l in rank::rank(same, |u| frontier.is_chrome(u)) {
                if l.in_form || side_effects::acts(&l.url, &l.text).is_some() {
                    state.skipped_acting += 1;
                    state.done.insert(l.url);
                    continue;
                }
                state.push(l.url, depth + 1);
            }
        }
        save(state);
        progress(&CrawlProgress { url: &url, state, elapsed: t0.elapsed() });
    }
    Ok(())
}

/// [`crawl`] in a browser of its own, launched for `env` (its proxy records the crawl).
pub async fn crawl_with_browser(
    cfg: &crate::runner::AgentConfig,
    env: &crate::runner::TaskEnv,
    state: &mut CrawlState,
    sites: &BTreeSet<String>,
    opts: &CrawlOptions,
    save: &(dyn Fn(&CrawlState) + Send + Sync),
    progress: &(dyn Fn(&CrawlProgress<'_>) + Send + Sync),
) -> Result<(), BrowserError> {
    let (session, profile) = crate::explore::background_session(cfg, env, "webfreeze-profile-crawl-").await?;
    let r = crawl(&session, state, sites, opts, save, progress).await;
    session.close().await;
    drop(profile);
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
}
