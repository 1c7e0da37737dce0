//! One frontier per site, shared by every task of a recording (and seeded, for `snapshots explore` and the
//! crawl, with what the site's snapshots already hold): a URL explored or recorded anywhere on the site is
//! never explored again, so each task's budget goes to new pages; and it counts on how many of the site's
//! pages each link appears, so a link on most of them (the site's chrome) is ranked after the content
//! ([`super::rank`]) and, once opened by one task, never again.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

/// Pages a site must have shown before a link is judged to be its chrome.
const CHROME_MIN_PAGES: u32 = 3;

#[derive(Debug, Default)]
struct Site {
    /// URLs explored, recorded or claimed by an explorer.
    seen: BTreeSet<String>,
    /// Pages whose links were counted.
    pages: u32,
    /// URL -> pages it was linked from.
    linked_from: BTreeMap<String, u32>,
}

/// The frontiers of the sites a run explores; clones share them.
#[derive(Debug, Clone, Default)]
pub struct Frontier(Arc<Mutex<BTreeMap<String, Site>>>);

impl PartialEq for Frontier {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Frontier {
    fn with<T>(&self, url: &str, f: impl FnOnce(&mut Site) -> T) -> Option<T> {
        let site = super::site_of(url)?;
        let mut g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        Some(f(g.entry(site).or_default()))
    }

    /// Mark `url` as already on the frozen web (recorded or explored).
    pub fn mark_seen(&self, url: &str) {
        self.with(url, |s| s.seen.insert(url.to_string()));
    }

    /// Whether `url` is already on the frozen web.
    pub fn is_seen(&self, url: &str) -> bool {
        self.with(url, |s| s.seen.contains(url)).unwrap_or(false)
    }

    /// Claim `url` for exploring: true the first time anyone asks, false after.
    pub fn claim(&self, url: &str) -> bool {
        self.with(url, |s| s.seen.insert(url.to_string())).unwrap_or(false)
    }

    /// Count the links of one page of the site (each URL once per page).
    pub fn count_links<'a>(&self, page_url: &str, links: impl IntoIterator<Item = &'a str>) {
        let links: BTreeSet<&str> = links.into_iter().collect();
        self.with(page_url, |s| {
            s.pages += 1;
            for l in links {
                *s.linked_from.entry(l.to_string()).or_insert(0) += 1;
            }
        });
    }

    /// Whether `url` is the site's chrome: linked from more than half of the site's counted pages (once
    /// at least [`CHROME_MIN_PAGES`] were counted).
    pub fn is_chrome(&self, url: &str) -> bool {
        self.with(url, |s| {
            s.pages >= CHROME_MIN_PAGES && s.linked_from.get(url).is_some_and(|n| 2 * n > s.pages)
        })
        .unwrap_or(false)
    }

    /// URLs known on the frontier, all sites.
    pub fn seen_count(&self) -> usize {
        self.0.lock().map(|g| g.values().map(|s| s.seen.len()).sum()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chrome_is_what_most_pages_link_to() {
        let f = Frontier::default();
        for p in ["a", "b", "c", "d"] {
            let page = format!("https://w.test/{p}");
            let own = format!("https://w.test/{p}/child");
            f.count_links(&page, ["https://w.test/login", "https://w.test/recent", own.as_str()]);
        }
        assert!(f.is_chrome("https://w.test/login"));
        assert!(!f.is_chrome("https://w.test/a/child"));
        // Another site counts apart.
        assert!(!f.is_chrome("https://other.test/login"));
    }

    #[test]
    fn a_url_is_claimed_once_across_clones() {
        let f = Frontier::default();
        let g = f.clone();
        assert!(f.claim("https://w.test/x"));
        assert!(!g.claim("https://w.test/x"));
        g.mark_seen("https://w.test/y");
        assert!(f.is_seen("https://w.test/y") && !f.claim("https://w.test/y"));
        assert_eq!(f, g);
    }
}
