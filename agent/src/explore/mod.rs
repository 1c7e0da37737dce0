//! Exploration while recording (`webfreeze run --mode record --explore`): after each observation, the links
//! an agent could have followed from the page are opened in background tabs of the same browser (same
//! cookies), each settled as a step is and closed, their traffic filed by the recording proxy into the
//! task's exploration layer (`<run>/<task>/explore`), which replay consults after the task's own recording.
//!
//! - Which links first: as an agent would meet them ([`rank`]: the main content before the site's chrome,
//!   tool and account pages last).
//! - Never twice: one [`frontier::Frontier`] per site, shared by every task of the run (and seeded with what
//!   the site's snapshots already hold), so each task's budget goes to pages no one recorded.
//! - Never an act: GET navigations only (links, never forms), never a link that would act
//!   ([`side_effects`]: `?add-to-cart=`, `action=delete`, log-out links in several languages, ...).
//! - Within a budget per page and per host, and never again on a host that answered with a wall or a rate
//!   limit.

pub mod frontier;
pub mod rank;
pub mod side_effects;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

use crate::browser::{LinkCandidate, Session};

/// The request header that marks exploration traffic for the recording proxy (`recorder::explore`).
pub const EXPLORE_HEADER: &str = "x-webfreeze-explore";

/// Exploration settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ExploreOptions {
    /// What the run's explorers share (clones of the options share it).
    pub frontier: frontier::Frontier,
    /// Links opened per explored page.
    pub links_per_page: usize,
    /// Pages opened per host over the whole task.
    pub host_budget: usize,
    /// 1: the links of the pages the agent observed; 2: also the links of those pages; ...
    pub depth: u32,
    /// Pause between two background loads.
    pub pace: Duration,
}

impl Default for ExploreOptions {
    fn default() -> Self {
        Self {
            frontier: frontier::Frontier::default(),
            links_per_page: 8,
            host_budget: 40,
            depth: 1,
            pace: Duration::ZERO,
        }
    }
}

/// Whether following the link would act (log out, delete, add to cart, unsubscribe, buy, ...), judged by
/// its URL and its text ([`side_effects::acts`]).
pub fn looks_destructive(url: &str, text: &str) -> bool {
    side_effects::acts(url, text).is_some()
}

/// The site a URL is on, as exploration, the frontier and the crawl count sites: its host, lower case,
/// without a leading `www.`.
pub fn site_of(url: &str) -> Option<String> {
    url::Url::parse(url).ok()?.host_str().map(|h| h.trim_start_matches("www.").to_ascii_lowercase())
}

fn without_fragment(url: &str) -> &str {
    url.split('#').next().unwrap_or(url)
}

/// What exploration did over one task (kept in its trajectory).
pub use trajectory::Exploration;

/// One task's explorer.
pub struct Explorer {
    opts: ExploreOptions,
    /// What this task saw (its own pages too): the frontier holds what the run saw.
    seen: BTreeSet<String>,
    per_host: BTreeMap<String, usize>,
    pub(crate) stats: Exploration,
    /// The text each opened page rendered, until [`Explorer::take_rendered`].
    rendered: Vec<(String, String)>,
}

impl Explorer {
    /// A fresh explorer.
    pub fn new(opts: ExploreOptions) -> Self {
        Self {
            opts,
            seen: BTreeSet::new(),
            per_host: BTreeMap::new(),
            stats: Exploration::default(),
            rendered: Vec::new(),
        }
    }

    /// The (URL, rendered text) of the pages opened since the last call.
    pub fn take_rendered(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.rendered)
    }

    /// What it did so far.
    pub fn stats(&self) -> &Exploration {
        &self.stats
    }

    /// The links of `page_url` worth opening, in the order an agent would meet them ([`rank`]): same site,
    /// not in a form, not acting, on no one's frontier yet, within the page's share. Counts what it leaves
    /// out, and counts the page's links on the site's frontier (what its chrome is).
    fn pick(&mut self, page_url: &str, links: Vec<LinkCandidate>) -> Vec<String> {
        let Some(site) = site_of(page_url) else { return Vec::new() };
        let f = self.opts.frontier.clone();
        let same_site: Vec<LinkCandidate> = links
            .into_iter()
            .map(|mut l| {
                l.url = without_fragment(&l.url).to_string();
                l
            })
            .filter(|l| site_of(&l.url).as_deref() == Some(site.as_str()))
            .collect();
        f.count_links(page_url, same_site.iter().map(|l| l.url.as_str()));
        let mut out = Vec::new();
        for l in rank::rank(same_site, |u| f.is_chrome(u)) {
            if out.len() >= self.opts.links_per_page {
                break;
            }
            let url = l.url;
            if self.seen.contains(&url) || out.contains(&url) {
                continue;
            }
            if l.in_form || looks_destructive(&url, &l.text) {
                self.stats.skipped_destructive += 1;
                self.seen.insert(url);
                continue;
            }
            if f.is_seen(&url) {
                // Explored or recorded elsewhere on the site: not again.
                self.seen.insert(url);
                continue;
            }
            out.push(url);
        }
        out
    }

    /// Explore from the page the agent observed (`page_url`, its links from the active tab). Returns the
    /// URLs opened.
    pub async fn after_observation(&mut self, session: &Session, page_url: &str) -> Vec<String> {
        self.seen.insert(without_fragment(page_url).to_string());
        self.opts.frontier.mark_seen(without_fragment(page_url));
        let links = match session.links().await {
            Ok(l) => l,
            Err(e) => {
                tracing::debug!("exploration: cannot list the links of {page_url}: {e}");
                return Vec::new();
            }
        };
        let mut frontier: VecDeque<(String, u32)> =
            self.pick(page_url, links).into_iter().map(|u| (u, 1)).collect();
        let mut opened = Vec::new();
        while let Some((url, depth)) = frontier.pop_front() {
            if self.seen.contains(&url) {
                continue;
            }
            self.seen.insert(url.clone());
            // Another task of the run may have opened it since it was picked.
            if !self.opts.frontier.claim(&url) {
                continue;
            }
            let Some(host) = site_of(&url) else { continue };
            if self.stats.stopped_hosts.contains(&host) {
                self.stats.skipped_budget += 1;
                continue;
            }
            let used = self.per_host.entry(host.clone()).or_insert(0);
            if *used >= self.opts.host_budget {
                self.stats.skipped_budget += 1;
                continue;
            }
            *used += 1;
            if !opened.is_empty() && !self.opts.pace.is_zero() {
                tokio::time::sleep(self.opts.pace).await;
            }
            match session.visit_in_background(&url, EXPLORE_HEADER, "1").await {
                Ok(v) => {
                    self.stats.pages += 1;
                    self.stats.ms += v.ms;
                    opened.push(url.clone());
                    if let Some(text) = v.text.filter(|_| v.wall.is_none()) {
                        self.rendered.push((url.clone(), text));
                    }
                    if let Some(b) = v.wall {
                        tracing::warn!(
                            "exploration stops on {host}: it answered {url} with a {:?} ({})",
                            b.kind,
                            b.marker
                        );
                        self.stats.stopped_hosts.push(host);
                        continue;
                    }
                    if depth < self.opts.depth {
                        let next = self.pick(&url, v.links);
                        frontier.extend(next.into_iter().map(|u| (u, depth + 1)));
                    }
                }
                Err(e) => {
                    self.stats.failed += 1;
                    tracing::debug!("exploration: {url}: {e}");
                }
            }
        }
        opened
    }
}

/// A recorded document to revisit: its URL and the `Cookie` header it was asked for with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revisit {
    /// The document's URL.
    pub url: String,
    /// Its recorded `Cookie` header.
    pub cookies: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destructive_links_table() {
        for (url, text, destructive) in [
            ("https://s.test/logout", "", true),
            ("https://s.test/account", "Sign out", true),
            ("https://s.test/cart/remove?id=3", "x", true),
            ("https://s.test/list/unsubscribe", "", true),
            ("https://s.test/booking/42", "Cancel booking", true),
            ("https://s.test/admin/users/3/delete", "", true),
            ("https://s.test/checkout", "Proceed", true),
            ("https://s.test/product/blue-kettle", "Blue Kettle", false),
            ("https://s.test/search?q=mug", "Next page", false),
            ("https://s.test/login", "Log in", false),
            ("https://s.test/cart", "Cart", false),
        ] {
            assert_eq!(looks_destructive(url, text), destructive, "{url} {text:?}");
        }
    }

    fn link(url: &str, text: &str, in_form: bool) -> LinkCandidate {
        LinkCandidate {
            url: url.into(),
            text: text.into(),
            mark: None,
            in_form,
            region: rank::Region::Other,
            visible: true,
            above_fold: true,
        }
    }

    #[test]
    fn links_picked_per_page() {
        let mut ex = Explorer::new(ExploreOptions { links_per_page: 3, ..Default::default() });
        let picked = ex.pick(
            "https://www.s.test/",
            vec![
                link("https://s.test/a#top", "A", false),
                link("https://other.test/b", "elsewhere", false),
                link("https://s.test/logout", "Log out", false),
                link("https://s.test/form-link", "in a form", true),
                link("https://s.test/c", "C", false),
                link("https://s.test/d", "D", false),
                link("https://s.test/e", "E: past the page's share", false),
            ],
        );
        assert_eq!(picked, ["https://s.test/a", "https://s.test/c", "https://s.test/d"]);
        assert_eq!(ex.stats().skipped_destructive, 2);
    }
}
