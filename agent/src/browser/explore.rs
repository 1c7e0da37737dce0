//! What exploration needs of a session: the links of a page, and a visit to a URL in a background tab
//! (prepared like every tab: emulation, the page scripts, the request watcher) whose every request carries
//! a marking header, so the recording proxy files it apart. The agent's own tabs are untouched.
//!
//! The marker is added where the page cannot see it: each of the tab's requests is paused by CDP's Fetch
//! domain after the browser's own checks and continued with the header added. A header set for the page
//! (`Network.setExtraHTTPHeaders`) would make Chromium preflight every cross-origin request the explored
//! page makes (a custom header is not CORS-safelisted), so explored pages would record failed API calls.

use std::time::Instant;

use chromiumoxide::cdp::browser_protocol::fetch::{
    ContinueRequestParams, EnableParams as FetchEnableParams, EventRequestPaused, HeaderEntry, RequestPattern,
};
use chromiumoxide::cdp::browser_protocol::network::{CookieParam, SetCacheDisabledParams, SetCookiesParams};
use chromiumoxide::cdp::browser_protocol::page::NavigateParams;
use chromiumoxide::page::Page;
use futures_util::StreamExt as _;

use super::{bounded, cdp, BrowserError, Session, PAGE_TEXT_JS};

/// Where a link sits on its page (`LINKS_JS`), which exploration ranks by (`explore::rank`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Region {
    /// The main content.
    Main,
    /// Navigation, a header, a sidebar or a footer.
    Chrome,
    /// Anywhere else.
    #[default]
    Other,
}

/// A link on a page.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct LinkCandidate {
    /// Absolute URL (fragment removed).
    pub url: String,
    /// Its text (or label).
    pub text: String,
    /// Its Set-of-Marks label, when the observation labelled it.
    pub mark: Option<u32>,
    /// Whether it sits inside a form.
    pub in_form: bool,
    /// Where it sits: the main content, the page's chrome (navigation, header, sidebar, footer), other.
    #[serde(default)]
    pub region: Region,
    /// Whether it is rendered (has a box, not hidden).
    #[serde(default = "yes")]
    pub visible: bool,
    /// Whether it is in the first screenful.
    #[serde(default)]
    pub above_fold: bool,
}

fn yes() -> bool {
    true
}

/// What a background visit saw.
#[derive(Debug, Clone, Default)]
pub struct Visit {
    /// The page settled within the page timeout.
    pub settled: bool,
    /// The page was a bot wall, a denial or a rate limit.
    pub wall: Option<wall::Blocked>,
    /// Its links (for deeper exploration).
    pub links: Vec<LinkCandidate>,
    /// The text it rendered (`innerText` of its body, at most 1 MiB), when it could be read.
    pub text: Option<String>,
    /// Time taken.
    pub ms: u64,
}

/// Every `<a href>` of the page: labelled ones (the observation's `data-wf-mark`) first by label, then the
/// others in document order; http(s) only, fragments removed, each URL once; with where each sits (the
/// main content: a `main` landmark or `article`, else the block with the most paragraph text; the chrome:
/// navigation, header, sidebar, footer landmarks), whether it is rendered and in the first screenful, for
/// `explore::rank`.
const LINKS_JS: &str = r#"(() => {
  const seen = new Set(); const out = [];
  let main = document.querySelector('main, [role=main], article, #content, #mw-content-text, .mw-parser-output, .page');
  if (!main) {
    let best = null, most = 0;
    for (const p of document.querySelectorAll('p, li, td')) {
      const b = p.parentElement; if (!b) continue;
      const n = (b.innerText || '').length;
      if (n > most) { most = n; best = b; }
    }
    main = best;
  }
  const chrome = 'nav, header, footer, aside, [role=navigation], [role=banner], [role=contentinfo], [role=complementary], #sidebar, .sidebar, #navigation, .navbar, .menu';
  const fold = window.innerHeight || 800;
  for (const a of document.querySelectorAll('a[href]')) {
    let u; try { u = new URL(a.href, location.href); } catch (e) { continue; }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') continue;
    u.hash = '';
    const url = u.href;
    if (seen.has(url)) continue;
    seen.add(url);
    const m = a.getAttribute('data-wf-mark');
    const text = (a.innerText || a.getAttribute('aria-label') || a.title || '').trim().slice(0, 200);
    const box = a.getBoundingClientRect();
    const st = getComputedStyle(a);
    const visible = a.getClientRects().length > 0 && st.visibility !== 'hidden' && st.display !== 'none';
    const inMain = !!(main && main.contains(a));
    const region = inMain && !a.closest('nav, [role=navigation]') ? 'main' : (a.closest(chrome) ? 'chrome' : 'other');
    out.push({url, text, mark: m === null || m === '' || isNaN(+m) ? null : +m, in_form: !!a.closest('form'),
              region, visible, above_fold: visible && box.top + window.scrollY < fold});
  }
  const marked = out.filter(l => l.mark !== null).sort((x, y) => x.mark - y.mark);
  return marked.concat(out.filter(l => l.mark === null));
})()"#;

async fn links_of(session: &Session, page: &Page) -> Result<Vec<LinkCandidate>, BrowserError> {
    let v = bounded(session.opts.page_timeout, "listing the page's links", page.evaluate(LINKS_JS)).await?;
    v.into_value().map_err(cdp)
}

impl Session {
    /// The active tab's links (see [`LinkCandidate`]).
    pub async fn links(&self) -> Result<Vec<LinkCandidate>, BrowserError> {
        let page = self.page()?;
        links_of(self, &page).await
    }

    /// Set the cookies of a recorded `Cookie` header (`a=1; b=2`) for `url`, as the browser had them when it
    /// asked for it.
    pub async fn set_cookies(&self, url: &str, header: &str) -> Result<(), BrowserError> {
        let cookies: Vec<CookieParam> = header
            .split(';')
            .filter_map(|c| c.trim().split_once('='))
            .filter(|(n, _)| !n.is_empty())
            .filter_map(|(n, v)| CookieParam::builder().name(n).value(v).url(url).build().ok())
            .collect();
        if cookies.is_empty() {
            return Ok(());
        }
        let page = self.page()?;
        bounded(
            self.opts.page_timeout,
            "setting the recorded cookies",
            page.execute(SetCookiesParams::new(cookies)),
        )
        .await?;
        Ok(())
    }

    /// Open `url` in a background tab whose requests all carry `header: value`, let it settle as a step
    /// does, check it for a wall, list its links, and close it. The agent's tabs are not touched.
    pub async fn visit_in_background(
        &self,
        url: &str,
        header: &str,
        value: &str,
    ) -> Result<Visit, BrowserError> {
        let t0 = Instant::now();
        let t = self.opts.page_timeout;
        let page = bounded(t, "opening a background tab", self.new_background_page("about:blank")).await?;
        let tab = match self.setup_tab(page.clone()).await {
            Ok(tab) => tab,
            Err(e) => {
                let _ = bounded(t, "closing the tab", page.close()).await;
                return Err(e);
            }
        };
        // Every request of the tab, paused after the browser's own checks and continued with the marker.
        let mut paused = match bounded(t, "watching the tab's requests", async {
            tab.page.event_listener::<EventRequestPaused>().await.map_err(cdp)
        })
        .await
        {
            Ok(p) => p,
            Err(e) => {
                tab.watcher.abort();
                let _ = bounded(t, "closing the tab", tab.page.close()).await;
                return Err(e);
            }
        };
        let marking = {
            let page = tab.page.clone();
            let (header, value) = (header.to_string(), value.to_string());
            tokio::spawn(async move {
                while let Some(ev) = paused.next().await {
                    let mut headers: Vec<HeaderEntry> = ev
                        .request
                        .headers
                        .inner()
                        .as_object()
                        .map(|o| {
                            o.iter()
                                .map(|(k, v)| HeaderEntry::new(k.clone(), v.as_str().unwrap_or_default()))
                                .collect()
                        })
                        .unwrap_or_default();
                    headers.push(HeaderEntry::new(header.clone(), value.clone()));
                    let mut go = ContinueRequestParams::new(ev.request_id.clone());
                    go.headers = Some(headers);
                    if let Err(e) = page.execute(go).await {
                        tracing::debug!("exploration: continuing {}: {e}", ev.request.url);
                    }
                }
            })
        };
        let visit = async {
            let all = RequestPattern::builder().url_pattern("*").build();
            bounded(
                t,
                "marking the tab's requests",
                tab.page.execute(FetchEnableParams::builder().patterns(vec![all]).build()),
            )
            .await?;
            // Neither read nor write the HTTP cache: a page exploration loaded must not be answered from the
            // cache when the agent opens it later, or the path's own recording would lack it.
            bounded(t, "bypassing the cache", tab.page.execute(SetCacheDisabledParams::new(true))).await?;
            bounded(t, "loading the page", tab.page.goto(NavigateParams::new(url))).await?;
            let settled = self.settle_on(&tab.page, &tab.net, true).await.settled;
            let wall = self.wall_on(&tab.page, &tab.net).await?;
            let links = links_of(self, &tab.page).await.unwrap_or_default();
            let text = bounded(t, "reading the page's text", tab.page.evaluate(PAGE_TEXT_JS))
                .await
                .ok()
                .and_then(|r| r.into_value::<String>().ok());
            Ok::<_, BrowserError>(Visit { settled, wall, links, text, ms: 0 })
        }
        .await;
        tab.watcher.abort();
        marking.abort();
        let _ = bounded(t, "closing the tab", tab.page.close()).await;
        visit.map(|v| Visit { ms: t0.elapsed().as_millis() as u64, ..v })
    }
}
