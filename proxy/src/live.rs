//! Live traffic: the browser's own background hosts, and the counting pass-through handler `webfreeze run`
//! uses in live mode (it forwards everything, and counts the page's requests and the ones that got no
//! response, so a live run's trajectory can show what failed to load).

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use http::Request;

use crate::body::Body;
use crate::error::ProxyError;
use crate::handler::{Decision, Handler, RequestInfo};

/// Hosts a headless Chromium contacts on its own, whatever page it shows (PLATFORM.md lists what
/// Chromium 156 contacts), and hosts a harness driving it draws on the browser's own blank tabs. Not page
/// traffic: never recorded, never counted as a miss.
pub const BROWSER_BACKGROUND: &[&str] = &[
    "start.duckduckgo.com",
    "accounts.google.com",
    "update.googleapis.com",
    "clients2.google.com",
    "clients1.google.com",
    "*.gvt1.com",
    "safebrowsing.googleapis.com",
    "optimizationguide-pa.googleapis.com",
    "content-autofill.googleapis.com",
    "clientservices.googleapis.com",
    "android.clients.google.com",
    // browser-use's loading screen: its about:blank tabs get a bouncing logo from here, fetched or not
    // depending on how soon the first page replaces it.
    "cf.browser-use.com",
];

/// Whether `host` matches `pattern`: a host name, or `*.suffix` for the suffix and every subdomain.
/// Case and a trailing dot are ignored; `pattern` is expected lower-case.
pub fn host_matches(pattern: &str, host: &str) -> bool {
    // Asked for every request: compared in place, case-insensitively, without allocating.
    let host = host.trim_end_matches('.');
    match pattern.strip_prefix("*.") {
        Some(suffix) => {
            let (h, n) = (host.as_bytes(), suffix.len());
            host.eq_ignore_ascii_case(suffix)
                || (h.len() > n
                    && h[h.len() - n - 1] == b'.'
                    && h[h.len() - n..].eq_ignore_ascii_case(suffix.as_bytes()))
        }
        None => host.eq_ignore_ascii_case(pattern),
    }
}

/// Whether the host is browser background traffic.
pub fn is_browser_background(host: &str) -> bool {
    BROWSER_BACKGROUND.iter().any(|p| host_matches(p, host))
}

/// Forwards everything, counting the page's requests (browser background traffic left out) and listing
/// the ones that got no response (`URL: why`).
#[derive(Debug, Default)]
pub struct CountingPassThrough {
    requests: AtomicU64,
    failed: Mutex<Vec<String>>,
}

impl CountingPassThrough {
    /// Page requests seen so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Page requests that got no response, in the order they ended (`URL: why`).
    pub fn failed(&self) -> Vec<String> {
        self.failed.lock().map(|f| f.clone()).unwrap_or_default()
    }
}

impl Handler for CountingPassThrough {
    /// The request's URL, once seen; None for browser background traffic (not counted).
    type Ctx = Mutex<Option<String>>;

    fn new_ctx(&self, _info: &RequestInfo) -> Self::Ctx {
        Mutex::new(None)
    }

    fn request(&self, ctx: &Self::Ctx, req: Request<Body>) -> impl Future<Output = Decision> + Send {
        if !is_browser_background(req.uri().host().unwrap_or("")) {
            self.requests.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut c) = ctx.lock() {
                *c = Some(req.uri().to_string());
            }
        }
        std::future::ready(Decision::Forward(req))
    }

    fn forwards_to_origins(&self) -> bool {
        true
    }

    fn complete(&self, ctx: &Self::Ctx, outcome: Result<(), ProxyError>) {
        let url = ctx.lock().ok().and_then(|mut c| c.take());
        if let (Some(url), Err(e)) = (url, outcome) {
            if let Ok(mut f) = self.failed.lock() {
                f.push(format!("{url}: {e}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn background_hosts() {
        for (host, bg) in [
            ("accounts.google.com", true),
            ("Accounts.Google.com.", true),
            ("redirector.gvt1.com", true),
            ("gvt1.com", true),
            ("shop.test", false),
            ("notgvt1.com", false),
            ("google.com", false),
            ("cf.browser-use.com", true),
            ("browser-use.com", false),
            ("docs.browser-use.com", false),
        ] {
            assert_eq!(is_browser_background(host), bg, "{host}");
        }
    }
}
