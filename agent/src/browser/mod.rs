//! A browser session per task, driven through chromiumoxide, pointed at a webfreeze proxy: a Chromium of its
//! own ([`Session::launch`]), or a fresh browser context in a warm Chromium kept by a [`BrowserPool`]
//! ([`Session::start`]; the context has its own cookies, storage, cache, permissions and proxy).
//!
//! Every session gets a fresh profile or context, QUIC off, the proxy for every host including loopback,
//! the proxy CA trusted by SPKI pin only (other certificate errors stay errors), service workers bypassed,
//! and a 1024x768 window and viewport. Scripts given in [`BrowserOptions::init_scripts`] (the determinism
//! shim) are installed with `Page.addScriptToEvaluateOnNewDocument` before the first navigation, so they
//! run before any page script.
//!
//! Every CDP call is bounded by the page timeout, and a browser process that exits fails the calls in
//! flight at once: a hung renderer or a dead browser becomes an error, not a hung run.
//!
//! This file holds the options and a session's life: launch or lease, navigation, reading the page, close.
//! The rest has a room each: `pool.rs` (warm browsers), `profile.rs` (a profile directory and its process
//! tree), `chrome.rs` (finding Chromium, its flags), `error.rs` (the errors, the per-call bound), `tabs.rs`
//! (each tab's set-up, the active tab, opening and closing tabs), `network.rs` (the per-tab watcher of CDP
//! network events), `settle.rs` (when a page has settled), `observe.rs` (labels, screenshot, element list
//! or accessibility tree), `webvoyager.rs` (WebVoyager's actions), `webarena.rs` (WebArena's),
//! `explore.rs` (exploration's background tabs), `raw.rs` (CDP commands by name) and `storage_state.rs`
//! (Playwright's storage state).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::cdp::browser_protocol::browser::{
    BrowserContextId, PermissionDescriptor, PermissionSetting, SetPermissionParams,
};
use chromiumoxide::cdp::browser_protocol::network::SetCookiesParams;
use chromiumoxide::cdp::browser_protocol::page::NavigateParams;
use chromiumoxide::cdp::browser_protocol::target::CreateTargetParams;
use chromiumoxide::handler::viewport::Viewport;
use chromiumoxide::page::Page;
use futures_util::StreamExt as _;

use crate::som;

mod chrome;
mod dialogs;
mod error;
mod explore;
mod network;
mod observe;
mod pool;
mod profile;
mod raw;
mod settle;
mod storage_state;
mod tabs;
mod webarena;
mod webvoyager;

pub use chrome::{
    browser_version, find_chrome, identity_args, proxy_args, user_agent_of, CANDIDATES, CHROMIUM_ARGS,
};
use error::{bounded, cdp};
pub use error::{BrowserError, INSTALL_HINT};
use network::NetState;
pub use observe::Observation;
use observe::Targets;
use storage_state::read_storage_state;
use tabs::Tabs;
pub use webvoyager::{CONTROL_HEADER, CONTROL_PATH};

pub use explore::{LinkCandidate, Region, Visit};
pub use pool::{BrowserPool, PoolOptions, PoolStats};
pub(crate) use profile::ProfileGuard;
pub use settle::Settled;

/// The page's rendered text: `innerText` of its body, at most 1 MiB of it.
const PAGE_TEXT_JS: &str = "document.body ? document.body.innerText.slice(0, 1048576) : ''";

/// How to start a browser for one task.
#[derive(Debug, Clone)]
pub struct BrowserOptions {
    /// Browser binary.
    pub chrome: PathBuf,
    /// The webfreeze proxy every request goes through.
    pub proxy: SocketAddr,
    /// base64 SHA-256 of the proxy CA's SubjectPublicKeyInfo (Chromium's SPKI pin list).
    pub ca_spki: String,
    /// Window and viewport.
    pub width: u32,
    /// Window and viewport.
    pub height: u32,
    /// Scripts run on every new document before page scripts (the determinism shim).
    pub init_scripts: Vec<String>,
    /// IANA time zone to emulate (replay: the snapshot's).
    pub time_zone: Option<String>,
    /// ICU locale to emulate ("en_US").
    pub locale: Option<String>,
    /// Bound on navigation and on every CDP call.
    pub page_timeout: Duration,
    /// A page is settled once no request has been in flight for this long.
    pub settle_quiet: Duration,
    /// How long `Wait` waits.
    pub wait: Duration,
    /// Where `Google` goes.
    pub search_url: String,
    /// Fresh profile directory (deleted by the caller).
    pub profile: PathBuf,
    /// Cap on each renderer's JavaScript heap, MiB (V8's `--max-old-space-size`): the part of a
    /// browser's memory Chromium itself lets one bound; a page past it crashes its tab, which the task
    /// reports as an error.
    pub js_heap_mb: Option<u32>,
    /// Present the browser as automated, as chromiumoxide does by default: `--enable-automation`
    /// (`navigator.webdriver` true, the automation infobar) and the `HeadlessChrome` User-Agent. Off by
    /// default: the browser presents itself as the Chromium it is ([`identity_args`]).
    pub disclose_automation: bool,
    /// Cookies and localStorage to load before the first navigation (Playwright's storage-state JSON,
    /// which WebArena's task configs name).
    pub storage_state: Option<PathBuf>,
    /// Geolocation to report (latitude, longitude, accuracy in metres), granted to every page.
    pub geolocation: Option<(f64, f64, f64)>,
    /// Real tabs (WebArena's action space): links that open a tab open one, and the agent can open,
    /// focus and close tabs. Otherwise every link stays in the one tab (WebVoyager).
    pub real_tabs: bool,
    /// What an observation shows.
    pub observation: ObservationKind,
}

/// What the agent observes at a step (`--observation`): defined with the other run settings in `trajectory`.
pub use trajectory::ObservationKind;

/// Where a session's browser comes from.
enum Owner {
    /// Launched for this session, closed with it.
    Own { browser: Box<Browser>, handler: tokio::task::JoinHandle<()> },
    /// A context in a warm process of a [`BrowserPool`].
    Pooled(pool::Lease),
}

/// A running browser and its tabs (one, unless [`BrowserOptions::real_tabs`]).
pub struct Session {
    owner: Owner,
    tabs: Mutex<Tabs>,
    targets: Mutex<Targets>,
    /// Page scripts every tab gets before its first document.
    scripts: Vec<String>,
    opts: BrowserOptions,
    /// The page's own work in the latest wait after an action ([`Settled::page_ms`]).
    last_page_ms: std::sync::atomic::AtomicU64,
    /// How long the launch took.
    pub launch_ms: u64,
    /// Tells the task's proxy the label of the control being clicked (straight to it, no proxy of its own).
    control_client: reqwest::Client,
}

impl Session {
    /// Start the browser and prepare its tab (nothing is loaded yet).
    pub async fn launch(opts: BrowserOptions) -> Result<Session, BrowserError> {
        Self::start(opts, None).await
    }

    /// [`Session::launch`], or with a pool, a fresh context in one of its warm processes (the
    /// [`BrowserOptions::profile`] is then unused: the process has its own).
    pub async fn start(
        opts: BrowserOptions,
        pool: Option<&Arc<BrowserPool>>,
    ) -> Result<Session, BrowserError> {
        let t0 = Instant::now();
        let owner = match pool {
            Some(pool) => Owner::Pooled(pool.lease(&opts).await?),
            None => {
                let (browser, handler) = start_process(&opts, &opts.profile, &opts.proxy.to_string()).await?;
                Owner::Own { browser: Box::new(browser), handler }
            }
        };
        let mut s = Session {
            owner,
            tabs: Mutex::new(Tabs::default()),
            targets: Mutex::new(Targets::default()),
            scripts: Vec::new(),
            opts,
            last_page_ms: Default::default(),
            launch_ms: 0,
            control_client: reqwest::Client::builder().no_proxy().build().unwrap_or_default(),
        };
        let page = match bounded(s.opts.page_timeout, "opening a tab", s.new_page("about:blank")).await {
            Ok(p) => p,
            Err(e) => {
                s.close().await;
                return Err(e);
            }
        };
        if let Err(e) = s.prepare(page).await {
            s.close().await;
            return Err(e);
        }
        s.launch_ms = t0.elapsed().as_millis() as u64;
        Ok(s)
    }

    fn browser(&self) -> &Browser {
        match &self.owner {
            Owner::Own { browser, .. } => browser,
            Owner::Pooled(lease) => &lease.warm.browser,
        }
    }

    /// The session's browser context (None: the launched browser's default one).
    fn context(&self) -> Option<BrowserContextId> {
        match &self.owner {
            Owner::Own { .. } => None,
            Owner::Pooled(lease) => Some(lease.context.clone()),
        }
    }

    /// A new tab on `url`, in the session's context.
    fn new_page(&self, url: &str) -> impl std::future::Future<Output = chromiumoxide::Result<Page>> + '_ {
        let mut params = CreateTargetParams::new(url);
        params.browser_context_id = self.context();
        self.browser().new_page(params)
    }

    /// A new tab on `url` opened in the background (a state probe's, an exploration's): the agent's tab
    /// stays the active one, visible and painting, so its next screenshot is not left waiting on a frame
    /// of a page hidden behind the new tab.
    fn new_background_page(
        &self,
        url: &str,
    ) -> impl std::future::Future<Output = chromiumoxide::Result<Page>> + '_ {
        let mut params = CreateTargetParams::new(url);
        params.browser_context_id = self.context();
        params.background = Some(true);
        self.browser().new_page(params)
    }

    /// Browser-wide set-up (permissions, cookies, the page scripts), then the first tab's.
    async fn prepare(&mut self, page: Page) -> Result<(), BrowserError> {
        let t = self.opts.page_timeout;
        if self.opts.geolocation.is_some() {
            let mut grant = SetPermissionParams::new(
                PermissionDescriptor::new("geolocation"),
                PermissionSetting::Granted,
            );
            grant.browser_context_id = self.context();
            bounded(t, "granting geolocation", self.browser().execute(grant)).await?;
        }
        let mut scripts = self.opts.init_scripts.clone();
        if let Some(path) = self.opts.storage_state.clone() {
            let (cookies, local_storage) = read_storage_state(&path)?;
            if !cookies.is_empty() {
                bounded(
                    t,
                    "loading the storage state's cookies",
                    page.execute(SetCookiesParams::new(cookies)),
                )
                .await?;
            }
            scripts.extend(local_storage);
        }
        scripts.push(if self.opts.real_tabs { som::NEW_TAB_JS } else { som::SAME_TAB_JS }.to_string());
        scripts.push(settle::timers_js(self.opts.settle_quiet));
        self.scripts = scripts;
        let tab = self.setup_tab(page).await?;
        if let Ok(mut tabs) = self.tabs.lock() {
            tabs.list.push(tab);
        }
        Ok(())
    }

    async fn eval<T: serde::de::DeserializeOwned>(&self, js: &str) -> Result<T, BrowserError> {
        if self.crashed() {
            return Err(BrowserError::Crashed);
        }
        let page = self.page()?;
        let r = bounded(self.opts.page_timeout, "a page script", page.evaluate(js)).await?;
        r.into_value().map_err(cdp)
    }

    /// Evaluates a JavaScript expression in the page; a string result as is, null as "", anything else
    /// as JSON text (WebArena's `str(page.evaluate(...))`).
    pub async fn evaluate_text(&self, js: &str) -> Result<String, BrowserError> {
        Ok(self.evaluate_value(js).await?.1)
    }

    /// Whether the active tab shows a bot wall, an access denial or a rate limit instead of the site
    /// ([`wall::classify`] on its document's status, headers, title and HTML).
    pub async fn wall(&self) -> Result<Option<wall::Blocked>, BrowserError> {
        let (page, net) = self.active()?;
        self.wall_on(&page, &net).await
    }

    /// [`Session::wall`] for a given tab.
    async fn wall_on(
        &self,
        page: &Page,
        net: &Arc<Mutex<NetState>>,
    ) -> Result<Option<wall::Blocked>, BrowserError> {
        if net.lock().map(|n| n.crashed).unwrap_or(true) {
            return Err(BrowserError::Crashed);
        }
        let js = "({u: location.href, t: document.title, \
                  h: document.documentElement ? document.documentElement.outerHTML.slice(0, 65536) : '', \
                  n: document.body ? document.body.innerText.length : 0})";
        let v: serde_json::Value = bounded(self.opts.page_timeout, "reading the page", page.evaluate(js))
            .await?
            .into_value()
            .map_err(cdp)?;
        let url = v["u"].as_str().unwrap_or_default();
        let base = url.split('#').next().unwrap_or(url);
        let (status, headers, method) = net
            .lock()
            .ok()
            .and_then(|n| {
                n.documents.iter().rev().find(|d| d.0 == base).map(|d| (d.1, d.2.clone(), d.3.clone()))
            })
            .unwrap_or_default();
        let r = wall::DocumentResponse {
            url: base,
            method: &method,
            status,
            headers: &headers,
            title: v["t"].as_str().unwrap_or_default(),
            html: v["h"].as_str().unwrap_or_default(),
            text_len: v["n"].as_u64().unwrap_or(0) as usize,
        };
        Ok(wall::classify(&r))
    }

    /// As [`Session::evaluate_text`], and whether the value was a number.
    pub async fn evaluate_value(&self, js: &str) -> Result<(bool, String), BrowserError> {
        let v: serde_json::Value = self.eval(js).await?;
        Ok(match v {
            serde_json::Value::String(s) => (false, s),
            serde_json::Value::Null => (false, String::new()),
            n @ serde_json::Value::Number(_) => (true, n.to_string()),
            other => (false, other.to_string()),
        })
    }

    /// Fetches a URL through the browser (so through the task's proxy: recorded in record mode, served
    /// from the snapshot in replay) in a throwaway tab, and returns its bytes.
    pub async fn fetch_bytes(&self, url: &str) -> Result<Vec<u8>, BrowserError> {
        let t = self.opts.page_timeout;
        let page = bounded(t, "opening a tab", self.new_page(url)).await?;
        let js = "(async () => { const r = await fetch(location.href); if (!r.ok) throw new Error('HTTP ' + r.status); \
                  const b = new Uint8Array(await r.arrayBuffer()); let s = ''; \
                  for (let i = 0; i < b.length; i += 32768) s += String.fromCharCode.apply(null, b.subarray(i, i + 32768)); \
                  return btoa(s); })()";
        let r = bounded(t, "fetching the image", page.evaluate(js)).await;
        let _ = bounded(t, "closing the tab", page.close()).await;
        let b64: String = r?.into_value().map_err(cdp)?;
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.decode(b64).map_err(cdp)
    }

    /// The page's HTML (Playwright's `page.content()`).
    pub async fn html(&self) -> Result<String, BrowserError> {
        self.evaluate_text(
            "(document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '') + document.documentElement.outerHTML",
        )
        .await
    }

    /// Navigate and wait for the page to settle.
    pub async fn goto(&self, url: &str) -> Result<(), BrowserError> {
        let page = self.page()?;
        self.begin_action();
        let nav = async {
            page.goto(NavigateParams::new(url)).await.map_err(cdp)?;
            Ok::<_, BrowserError>(())
        };
        match tokio::time::timeout(self.opts.page_timeout, nav).await {
            Ok(r) => r?,
            Err(_) => {
                return Err(BrowserError::Timeout {
                    what: "loading the page",
                    secs: self.opts.page_timeout.as_secs_f64(),
                })
            }
        }
        self.settle(true).await;
        Ok(())
    }

    /// Wait for the active tab to settle (see [`settle`]: no request in flight or started for the quiet
    /// period, two frames drawn since, the document complete). `after_action`: the action's consequences
    /// are waited for; otherwise a page already found settled is settled at once. Returns false when the
    /// page timeout passed first (the caller notes it; this is not an error: some pages poll forever).
    pub async fn settle(&self, after_action: bool) -> bool {
        let Ok((page, net)) = self.active() else { return false };
        let s = self.settle_on(&page, &net, after_action).await;
        if after_action {
            self.last_page_ms.store(s.page_ms, std::sync::atomic::Ordering::Relaxed);
        }
        s.settled
    }

    /// The page's own work in the latest action's wait: from the action to the last network event it
    /// caused, in milliseconds (the rest of the action's time is the agent's overhead).
    /// Taken once: 0 after an action that failed before its wait.
    pub fn take_page_ms(&self) -> u64 {
        self.last_page_ms.swap(0, std::sync::atomic::Ordering::Relaxed)
    }

    /// Note that an action begins on the active tab, so the wait after it counts the page's work from the
    /// first network event the action caused, even one before the wait began.
    pub(super) fn begin_action(&self) {
        if let Ok((_, net)) = self.active() {
            if let Ok(mut n) = net.lock() {
                n.action = Some((Instant::now(), None));
            }
        }
    }

    /// [`Session::settle`] for a given tab (the active one, or a background tab of exploration).
    async fn settle_on(&self, page: &Page, net: &Arc<Mutex<NetState>>, after_action: bool) -> Settled {
        settle::settle(page, net, after_action, self.opts.settle_quiet, self.opts.page_timeout).await
    }

    /// The tab's current URL.
    /// The active page's visible text (`innerText` of its body, at most 1 MiB of it).
    pub async fn page_text(&self) -> Result<String, BrowserError> {
        self.eval(PAGE_TEXT_JS).await
    }

    /// The active page's URL.
    pub async fn url(&self) -> Result<String, BrowserError> {
        if self.crashed() {
            return Err(BrowserError::Crashed);
        }
        let page = self.page()?;
        let u = bounded(self.opts.page_timeout, "reading the URL", page.url()).await?;
        Ok(u.unwrap_or_default())
    }

    /// Close the browser (kill it if it does not close), or give a pooled one back with this session's
    /// context disposed; stop the watchers.
    pub async fn close(self) {
        let crashed = self.tabs.lock().map_or(true, |tabs| {
            for t in &tabs.list {
                t.watcher.abort();
            }
            tabs.list.iter().any(|t| t.net.lock().map_or(true, |n| n.crashed))
        });
        match self.owner {
            Owner::Own { mut browser, handler } => {
                let closed = tokio::time::timeout(Duration::from_secs(5), browser.close()).await;
                if !matches!(closed, Ok(Ok(_))) {
                    let _ = browser.kill().await;
                }
                let _ = tokio::time::timeout(Duration::from_secs(5), browser.wait()).await;
                handler.abort();
            }
            Owner::Pooled(lease) => lease.release(!crashed).await,
        }
    }
}

/// Start a Chromium process with the session's launch settings, its profile in `profile`, every request
/// through `proxy` (HOST:PORT), and drive its DevTools connection.
async fn start_process(
    opts: &BrowserOptions,
    profile: &std::path::Path,
    proxy: &str,
) -> Result<(Browser, tokio::task::JoinHandle<()>), BrowserError> {
    let path = opts.chrome.display().to_string();
    let launch_err = |detail: String| BrowserError::Launch { path: path.clone(), detail };
    let mut config = BrowserConfig::builder();
    if !opts.disclose_automation {
        config = config.disable_default_args().args(identity_args(&opts.chrome));
    }
    let config = config
        .chrome_executable(&opts.chrome)
        .new_headless_mode()
        .no_sandbox()
        .respect_https_errors()
        .user_data_dir(profile)
        .window_size(opts.width, opts.height)
        .viewport(Viewport { width: opts.width, height: opts.height, ..Default::default() })
        .request_timeout(opts.page_timeout)
        .launch_timeout(Duration::from_secs(30))
        .args(CHROMIUM_ARGS.iter().copied())
        .arg("lang=en-US")
        .args(proxy_args(proxy, &opts.ca_spki))
        .args(opts.js_heap_mb.map(|mb| format!("js-flags=--max-old-space-size={mb}")))
        .build()
        .map_err(launch_err)?;
    let (mut browser, mut handler) = Browser::launch(config).await.map_err(|e| launch_err(e.to_string()))?;
    let pid = browser.get_mut_child().and_then(|c| c.as_mut_inner().id());
    let handler = tokio::spawn(async move { while handler.next().await.is_some() {} });
    if let Some(pid) = pid {
        stop_on_exit(pid, handler.abort_handle());
    }
    Ok((browser, handler))
}

/// Stop driving the DevTools connection as soon as the browser process exits (it died, or was killed).
/// chromiumoxide's handler, once the socket closes, waits for more (its stream stays pending), so every call
/// in flight would wait out its timeout; dropped, it fails them at once as a lost link
/// ([`BrowserError::Disconnected`], fatal). The exit is seen through a pidfd, readable when the process ends.
fn stop_on_exit(pid: u32, handler: tokio::task::AbortHandle) {
    use rustix::process::{pidfd_open, Pid, PidfdFlags};
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else { return };
    let Ok(fd) = pidfd_open(pid, PidfdFlags::NONBLOCK) else { return };
    // `AsyncFd::new` is deprecated for an fd closed while registered; here the AsyncFd owns the OwnedFd, so
    // that cannot happen, and its replacement (`register`) is `unsafe`, which this crate does not use.
    #[allow(deprecated)]
    let Ok(fd) = tokio::io::unix::AsyncFd::new(fd) else {
        return;
    };
    tokio::spawn(async move {
        let _ = fd.readable().await;
        handler.abort();
    });
}
