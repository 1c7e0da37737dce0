//! The session's tabs: each one's set-up (emulation, page scripts, its network watcher), which one the
//! agent drives, and opening, focusing and closing them (WebArena's tab actions).

use std::sync::{Arc, Mutex};

use chromiumoxide::cdp::browser_protocol::emulation::{
    SetGeolocationOverrideParams, SetLocaleOverrideParams, SetTimezoneOverrideParams,
};
use chromiumoxide::cdp::browser_protocol::network::SetBypassServiceWorkerParams;
use chromiumoxide::cdp::browser_protocol::page::AddScriptToEvaluateOnNewDocumentParams;
use chromiumoxide::page::Page;

use super::network::{self, NetState};
use super::{bounded, BrowserError, Session};

/// One tab: its page and what is known of its requests.
pub(super) struct Tab {
    pub(super) page: Page,
    pub(super) net: Arc<Mutex<NetState>>,
    pub(super) watcher: tokio::task::JoinHandle<()>,
}

/// The tabs, in the order they were opened, and the one the agent drives.
#[derive(Default)]
pub(super) struct Tabs {
    pub(super) list: Vec<Tab>,
    pub(super) active: usize,
}

impl Session {
    /// One tab's set-up: emulation, page scripts, the request and crash watcher.
    pub(super) async fn setup_tab(&self, page: Page) -> Result<Tab, BrowserError> {
        let t = self.opts.page_timeout;
        let p = &page;
        bounded(t, "bypassing service workers", p.execute(SetBypassServiceWorkerParams::new(true))).await?;
        if let Some(tz) = &self.opts.time_zone {
            bounded(t, "setting the time zone", p.execute(SetTimezoneOverrideParams::new(tz.clone())))
                .await?;
        }
        if let Some(locale) = &self.opts.locale {
            let params = SetLocaleOverrideParams { locale: Some(locale.clone()) };
            bounded(t, "setting the locale", p.execute(params)).await?;
        }
        if let Some((latitude, longitude, accuracy)) = self.opts.geolocation {
            let geo = SetGeolocationOverrideParams::builder()
                .latitude(latitude)
                .longitude(longitude)
                .accuracy(accuracy)
                .build();
            bounded(t, "setting the geolocation", p.execute(geo)).await?;
        }
        for js in &self.scripts {
            let params = AddScriptToEvaluateOnNewDocumentParams::new(js.clone());
            bounded(t, "installing a page script", p.execute(params)).await?;
        }
        let (net, watcher) = network::watch(p).await?;
        Ok(Tab { page, net, watcher })
    }

    /// The active tab's page and request state.
    pub(super) fn active(&self) -> Result<(Page, Arc<Mutex<NetState>>), BrowserError> {
        let tabs = self.tabs.lock().map_err(|_| BrowserError::Cdp("tab list poisoned".into()))?;
        let tab = tabs.list.get(tabs.active).ok_or_else(|| BrowserError::Cdp("no tab open".into()))?;
        Ok((tab.page.clone(), tab.net.clone()))
    }

    pub(super) fn page(&self) -> Result<Page, BrowserError> {
        self.active().map(|(p, _)| p)
    }

    /// URLs of requests still in flight (for the note on a page that did not settle).
    pub fn pending(&self) -> Vec<String> {
        self.active()
            .ok()
            .and_then(|(_, net)| {
                net.lock().ok().map(|n| n.inflight.values().take(5).map(|r| r.url.clone()).collect())
            })
            .unwrap_or_default()
    }

    pub(super) fn crashed(&self) -> bool {
        self.active().map(|(_, net)| net.lock().map(|n| n.crashed).unwrap_or(true)).unwrap_or(true)
    }

    /// Open a tab on `url`, make it the active one and let it settle; returns its index.
    pub async fn open_tab(&self, url: &str) -> Result<usize, BrowserError> {
        let t = self.opts.page_timeout;
        let page = bounded(t, "opening a tab", self.new_page("about:blank")).await?;
        let tab = self.setup_tab(page).await?;
        let n = {
            let mut tabs = self.tabs.lock().map_err(|_| BrowserError::Cdp("tab list poisoned".into()))?;
            tabs.list.push(tab);
            tabs.active = tabs.list.len() - 1;
            tabs.active
        };
        self.front().await?;
        if url != "about:blank" {
            self.goto(url).await?;
        }
        Ok(n)
    }

    /// Make tab `n` the active one.
    pub async fn focus_tab(&self, n: usize) -> Result<(), BrowserError> {
        {
            let mut tabs = self.tabs.lock().map_err(|_| BrowserError::Cdp("tab list poisoned".into()))?;
            if n >= tabs.list.len() {
                return Err(BrowserError::Action(format!(
                    "there is no tab {n}: the open tabs are 0 to {}",
                    tabs.list.len().saturating_sub(1)
                )));
            }
            tabs.active = n;
        }
        self.front().await
    }

    /// Close the active tab; the last one left becomes active (an empty tab opens when none is).
    pub async fn close_tab(&self) -> Result<(), BrowserError> {
        let (closed, left) = {
            let mut tabs = self.tabs.lock().map_err(|_| BrowserError::Cdp("tab list poisoned".into()))?;
            let i = tabs.active;
            let tab = tabs.list.remove(i);
            tabs.active = tabs.list.len().saturating_sub(1);
            (tab, tabs.list.len())
        };
        closed.watcher.abort();
        let _ = bounded(self.opts.page_timeout, "closing the tab", closed.page.close()).await;
        if left == 0 {
            self.open_tab("about:blank").await?;
        } else {
            self.front().await?;
        }
        Ok(())
    }

    pub(super) async fn front(&self) -> Result<(), BrowserError> {
        let page = self.page()?;
        bounded(self.opts.page_timeout, "bringing the tab to the front", page.bring_to_front()).await?;
        Ok(())
    }

    /// Every tab's title and the active tab's index.
    pub(super) async fn tab_titles(&self) -> (Vec<String>, usize) {
        let (pages, active): (Vec<Page>, usize) = match self.tabs.lock() {
            Ok(t) => (t.list.iter().map(|x| x.page.clone()).collect(), t.active),
            Err(_) => return (Vec::new(), 0),
        };
        let mut titles = Vec::with_capacity(pages.len());
        for p in pages {
            let title = bounded(self.opts.page_timeout, "reading a tab's title", p.get_title()).await;
            titles.push(title.ok().flatten().unwrap_or_default());
        }
        (titles, active)
    }
}
