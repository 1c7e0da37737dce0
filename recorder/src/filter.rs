//! Which hosts are recorded. Browser background traffic (PLATFORM.md lists what Chromium 156 contacts on
//! its own) is excluded by default; users add `--exclude` and `--include` patterns.
//!
//! A pattern is a host name, or `*.suffix` for the suffix and every subdomain of it.

use proxy::live::{host_matches as matches, is_browser_background, BROWSER_BACKGROUND};

/// Include/exclude host patterns.
#[derive(Debug, Clone, Default)]
pub struct HostFilter {
    include: Vec<String>,
    exclude: Vec<String>,
}

impl HostFilter {
    /// Excludes browser background hosts, plus `exclude`; if `include` is not empty, only those hosts.
    pub fn new(include: &[String], exclude: &[String]) -> Self {
        let norm = |v: &[String]| {
            v.iter().map(|p| p.trim().to_ascii_lowercase()).filter(|p| !p.is_empty()).collect()
        };
        let mut ex: Vec<String> = BROWSER_BACKGROUND.iter().map(|s| s.to_string()).collect();
        ex.extend(norm(exclude));
        Self { include: norm(include), exclude: ex }
    }

    /// Whether exchanges with this host are recorded.
    pub fn records(&self, host: &str) -> bool {
        if self.exclude.iter().any(|p| matches(p, host)) {
            return false;
        }
        self.include.is_empty() || self.include.iter().any(|p| matches(p, host))
    }

    /// Whether the host is browser background traffic (replay answers it without counting a miss).
    pub fn is_background(host: &str) -> bool {
        is_browser_background(host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_table() {
        let f = HostFilter::new(&[], &["*.ads.test".into(), "tracker.test".into()]);
        for (host, recorded) in [
            ("shop.test", true),
            ("accounts.google.com", false),
            ("redirector.gvt1.com", false),
            ("x.ads.test", false),
            ("ads.test", false),
            ("tracker.test", false),
            ("nottracker.test", true),
            // Case and a trailing dot are ignored; a suffix must follow a dot.
            ("X.Ads.TEST.", false),
            ("Tracker.Test", false),
            ("xads.test", true),
            ("ads.test.example", true),
            ("ünï.ads.test", false),
            ("ünïads.test", true),
        ] {
            assert_eq!(f.records(host), recorded, "{host}");
        }
        let only = HostFilter::new(&["*.shop.test".into()], &[]);
        assert!(only.records("www.shop.test"));
        assert!(!only.records("news.test"));
    }
}
