//! One Chromium per task, driven through chromiumoxide, pointed at a webfreeze proxy.
//!
//! Every browser gets a fresh profile, QUIC off, the proxy for every host including loopback, the proxy
//! CA trusted by SPKI pin only (other certificate errors stay errors), service workers bypassed, and a
//! 1024x768 window and viewport. Scripts given in [`BrowserOptions::init_scripts`] (the determinism shim)
//! are installed with `Page.addScriptToEvaluateOnNewDocument` before the first navigation, so they run
//! before any page script.
//!
//! Every CDP call is bounded by the page timeout: a hung renderer or a dead browser becomes an error, not
//! a hung run.

use std::collections::{BTreeMap, HashSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::cdp::browser_protocol::browser::{
    PermissionDescriptor, PermissionSetting, SetPermissionParams,
};
use chromiumoxide::cdp::browser_protocol::emulation::{
    SetGeolocationOverrideParams, SetLocaleOverrideParams, SetTimezoneOverrideParams,
};
use chromiumoxide::cdp::browser_protocol::inspector::EventTargetCrashed;
use chromiumoxide::cdp::browser_protocol::network::{
    CookieParam, CookieSameSite, SetCookiesParams, TimeSinceEpoch,
};
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, EventResponseReceived,
    EventWebSocketFrameReceived, Headers, ResourceType, SetBypassServiceWorkerParams,
    SetExtraHttpHeadersParams,
};
use chromiumoxide::cdp::browser_protocol::page::{AddScriptToEvaluateOnNewDocumentParams, NavigateParams};
use chromiumoxide::handler::viewport::Viewport;
use chromiumoxide::page::{Page, ScreenshotParams};
use futures_util::StreamExt as _;

use crate::action::{Action, ScrollTarget};
use crate::axtree;
use crate::som::{self, Mark};

mod explore;
mod settle;
mod webarena;

pub use explore::{LinkCandidate, Visit};
pub use settle::Settled;

/// Where to look for a browser when none is named.
pub const CANDIDATES: &[&str] = &[
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
    "/snap/bin/chromium",
];

/// Flags every agent browser gets (chromiumoxide takes them without leading dashes): no GPU, no QUIC (so
/// nothing bypasses the proxy), no first-run UI, as little background traffic as Chromium allows.
pub const CHROMIUM_ARGS: &[&str] = &[
    "disable-gpu",
    "disable-quic",
    "no-first-run",
    "disable-background-networking",
    "disable-component-update",
    "disable-sync",
    // Chromium's own calls home: network time, and the password leak check after a login form.
    "disable-features=NetworkTimeServiceQuerying,PasswordLeakDetection",
];

/// The flags that send a Chromium through a webfreeze proxy at `proxy` (HOST:PORT) and trust its CA by
/// SPKI hash (without leading dashes, as chromiumoxide takes them): the proxy for every scheme, loopback
/// included (Chromium bypasses loopback by default), and the pin. `webfreeze env` gives the same to other
/// harnesses.
pub fn proxy_args(proxy: &str, ca_spki: &str) -> [String; 3] {
    [
        format!("proxy-server=http://{proxy}"),
        "proxy-bypass-list=<-loopback>".to_string(),
        format!("ignore-certificate-errors-spki-list={ca_spki}"),
    ]
}

/// chromiumoxide's default switches (puppeteer's), less `enable-automation` and its `lang`: used in
/// their place when the browser does not disclose automation.
const QUIET_DEFAULT_ARGS: &[&str] = &[
    "disable-background-networking",
    "enable-features=NetworkService,NetworkServiceInProcess",
    "disable-background-timer-throttling",
    "disable-backgrounding-occluded-windows",
    "disable-breakpad",
    "disable-client-side-phishing-detection",
    "disable-component-extensions-with-background-pages",
    "disable-default-apps",
    "disable-dev-shm-usage",
    "disable-features=TranslateUI",
    "disable-hang-monitor",
    "disable-ipc-flooding-protection",
    "disable-popup-blocking",
    "disable-prompt-on-repost",
    "disable-renderer-backgrounding",
    "disable-sync",
    "force-color-profile=srgb",
    "metrics-recording-only",
    "no-first-run",
    "password-store=basic",
    "use-mock-keychain",
    "enable-blink-features=IdleDetection",
];

/// The switches that make a headless Chromium present itself as the Chromium it is: no
/// `enable-automation` (chromiumoxide's default, which sets `navigator.webdriver`), the
/// `AutomationControlled` Blink feature off, and the User-Agent a headed Chromium of the same version
/// sends (headless mode says `HeadlessChrome/N`; its `Sec-CH-UA` brands already say `Chromium`, and the
/// `--user-agent` switch keeps them and the header order, unlike a CDP override).
pub fn identity_args(chrome: &Path) -> Vec<String> {
    let mut v: Vec<String> = QUIET_DEFAULT_ARGS.iter().map(|s| s.to_string()).collect();
    v.push("disable-blink-features=AutomationControlled".into());
    if let Some(ua) = user_agent_of(chrome) {
        v.push(format!("user-agent={ua}"));
    }
    v
}

/// The User-Agent a headed Chromium at `chrome` sends (Chromium's reduced form, Linux), from its
/// `--version`; cached per binary.
pub fn user_agent_of(chrome: &Path) -> Option<String> {
    static CACHE: Mutex<BTreeMap<PathBuf, Option<String>>> = Mutex::new(BTreeMap::new());
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    cache
        .entry(chrome.to_path_buf())
        .or_insert_with(|| {
            let out = std::process::Command::new(chrome).arg("--version").output().ok()?;
            let major = major_version(&String::from_utf8_lossy(&out.stdout))?;
            Some(format!(
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{major}.0.0.0 Safari/537.36"
            ))
        })
        .clone()
}

/// The major version in `chromium --version` output (`Chromium 156.0.8078.79 built on Debian ...`).
fn major_version(version: &str) -> Option<u32> {
    version
        .split_whitespace()
        .find_map(|w| w.split('.').next()?.parse::<u32>().ok().filter(|_| w.contains('.')))
}

/// The command that installs the browser on Debian/Ubuntu.
pub const INSTALL_HINT: &str = "apt-get install -y chromium";

/// Browser failures.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// No browser binary.
    #[error("no Chromium found (looked for {looked}); install it with `{INSTALL_HINT}` or name one with --chrome PATH / WEBFREEZE_CHROME")]
    NotFound {
        /// Where we looked.
        looked: String,
    },
    /// The browser did not start.
    #[error("cannot start Chromium {path}: {detail}")]
    Launch {
        /// Binary.
        path: String,
        /// Why.
        detail: String,
    },
    /// A CDP call failed; the browser is still reachable (a node gone, a script that threw, a bad
    /// parameter).
    #[error("browser: {0}")]
    Cdp(String),
    /// The DevTools connection to the browser is gone (it exited, or closed the socket): nothing more can
    /// be done in this browser.
    #[error("browser connection lost: {0}")]
    Disconnected(String),
    /// The action cannot apply to this page (goes back to the model).
    #[error("{0}")]
    Action(String),
    /// A call took longer than the page timeout.
    #[error("{what} did not finish within {secs:.0}s")]
    Timeout {
        /// What was waited for.
        what: &'static str,
        /// The limit.
        secs: f64,
    },
    /// The page's renderer crashed.
    #[error("the page crashed (renderer gone)")]
    Crashed,
    /// The task's set-up (storage state, geolocation) could not be applied.
    #[error("task set-up: {0}")]
    Setup(String),
}

impl BrowserError {
    /// True when the browser or the page is gone and the task cannot go on.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            BrowserError::Crashed
                | BrowserError::Disconnected(_)
                | BrowserError::Launch { .. }
                | BrowserError::NotFound { .. }
        )
    }
}

/// Whether chromiumoxide's error says the DevTools link itself is gone (its socket, its channel, or no
/// answer at all), rather than that one call failed.
fn link_lost(e: &chromiumoxide::error::CdpError) -> bool {
    use chromiumoxide::error::CdpError;
    matches!(e, CdpError::Ws(_) | CdpError::Io(_) | CdpError::ChannelSendError(_) | CdpError::NoResponse)
}

/// A failed browser call as a [`BrowserError`]: [`BrowserError::Disconnected`] when it is chromiumoxide's
/// error for a lost link, else [`BrowserError::Cdp`] (also for the other errors of a call: JSON that does
/// not decode, a builder's missing field).
fn cdp<E: std::fmt::Display + 'static>(e: E) -> BrowserError {
    let any: &dyn std::any::Any = &e;
    match any.downcast_ref::<chromiumoxide::error::CdpError>() {
        Some(c) if link_lost(c) => BrowserError::Disconnected(e.to_string()),
        _ => BrowserError::Cdp(e.to_string()),
    }
}

/// Find the browser: an explicit path, else the first of [`CANDIDATES`] that exists.
pub fn find_chrome(explicit: Option<&Path>) -> Result<PathBuf, BrowserError> {
    if let Some(p) = explicit {
        return if p.exists() {
            Ok(p.to_path_buf())
        } else {
            Err(BrowserError::NotFound { looked: p.display().to_string() })
        };
    }
    CANDIDATES
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .ok_or_else(|| BrowserError::NotFound { looked: CANDIDATES.join(", ") })
}

/// What `<chrome> --version` prints (run.json records it), or "" when it says nothing.
pub fn browser_version(chrome: &Path) -> String {
    std::process::Command::new(chrome)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

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

/// What the agent observes at a step (`--observation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ObservationKind {
    /// The screenshot with Set-of-Marks labels and the list of labelled elements (WebVoyager, VWA).
    #[default]
    Som,
    /// The accessibility tree as text (WebArena); the screenshot is kept for the record, unlabelled.
    AxTree,
    /// The labelled screenshot and the accessibility tree, whose lines carry the labels (VWA's SoM agent).
    SomAxTree,
}

impl std::str::FromStr for ObservationKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "som" => Ok(Self::Som),
            "axtree" => Ok(Self::AxTree),
            "som+axtree" | "axtree+som" => Ok(Self::SomAxTree),
            _ => Err(format!("unknown observation {s:?}: som, axtree or som+axtree")),
        }
    }
}

impl std::fmt::Display for ObservationKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Som => "som",
            Self::AxTree => "axtree",
            Self::SomAxTree => "som+axtree",
        })
    }
}

#[derive(Default)]
struct NetState {
    /// Request id -> URL.
    inflight: BTreeMap<String, String>,
    /// Ids whose end was seen before their start (the streams are separate channels).
    ended_early: HashSet<String>,
    /// data: requests (not tracked).
    ignored: HashSet<String>,
    last_change: Option<Instant>,
    /// When the page last received a WebSocket message (see [`settle`]: a burst of them counts as the
    /// page's work for a while).
    ws_frame: Option<Instant>,
    /// The `last_change` at which the tab was last found settled (see [`settle`]).
    settled_at: Option<Option<Instant>>,
    crashed: bool,
    /// The latest document responses (URL, status, headers), newest last, for [`Session::wall`].
    documents: Vec<DocumentSeen>,
}

/// A document response: URL, status, headers (names lower-case).
type DocumentSeen = (String, u16, Vec<(String, String)>);

/// The request header that carries the label of the control a click used, while its requests go out:
/// the proxy's side-effect guard (`proxy::guard`) reads it and removes it before anything is forwarded or
/// recorded.
pub const CONTROL_HEADER: &str = "x-webfreeze-control";

/// The visible label of a clicked element's control (its text, value or aria-label), printable ASCII
/// (a header value), at most 100 characters.
const CONTROL_LABEL_JS: &str =
    "function() { const c = this.closest('button,a,input,[role=button],summary') || this; \
     const l = (c.getAttribute('aria-label') || c.value || c.innerText || '').replace(/\\s+/g, ' ').trim(); \
     return l.replace(/[^\\x20-\\x7e]/g, '').slice(0, 100); }";

/// Document responses kept per tab.
const DOCUMENTS_KEPT: usize = 32;

/// One tab: its page and what is known of its requests.
struct Tab {
    page: Page,
    net: Arc<Mutex<NetState>>,
    watcher: tokio::task::JoinHandle<()>,
}

/// The tabs, in the order they were opened, and the one the agent drives.
#[derive(Default)]
struct Tabs {
    list: Vec<Tab>,
    active: usize,
}

/// What the element ids of the latest observation point at.
#[derive(Debug, Clone, Default)]
enum Targets {
    /// Set-of-Marks labels (`data-wf-mark`).
    #[default]
    Marks,
    /// Accessibility-tree ids: id -> backend DOM node id.
    Nodes(BTreeMap<u32, i64>),
}

/// A running browser and its tabs (one, unless [`BrowserOptions::real_tabs`]).
pub struct Session {
    browser: Browser,
    tabs: Mutex<Tabs>,
    targets: Mutex<Targets>,
    /// Page scripts every tab gets before its first document.
    scripts: Vec<String>,
    handler: tokio::task::JoinHandle<()>,
    opts: BrowserOptions,
    /// The page's own work in the latest wait after an action ([`Settled::page_ms`]).
    last_page_ms: std::sync::atomic::AtomicU64,
    /// How long the launch took.
    pub launch_ms: u64,
}

/// What the agent sees at one step.
#[derive(Debug, Clone)]
pub struct Observation {
    /// Current URL.
    pub url: String,
    /// PNG with the labels drawn.
    pub screenshot: Vec<u8>,
    /// Labelled elements (empty for an `axtree` observation).
    pub marks: Vec<Mark>,
    /// The text observation: the element list (`som`) or the accessibility tree.
    pub text: String,
    /// Every tab's title, in order, when the session has real tabs (the active one is
    /// [`Observation::active_tab`]).
    pub tabs: Vec<String>,
    /// Index of the tab observed.
    pub active_tab: usize,
    /// Time to label, screenshot and unlabel.
    pub ms: u64,
    /// Set when the page had not settled within the page timeout (the observation is of what was there):
    /// the requests still in flight.
    pub unsettled: Option<Vec<String>>,
}

impl Session {
    /// Start the browser and prepare its tab (nothing is loaded yet).
    pub async fn launch(opts: BrowserOptions) -> Result<Session, BrowserError> {
        let t0 = Instant::now();
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
            .user_data_dir(&opts.profile)
            .window_size(opts.width, opts.height)
            .viewport(Viewport { width: opts.width, height: opts.height, ..Default::default() })
            .request_timeout(opts.page_timeout)
            .launch_timeout(Duration::from_secs(30))
            .args(CHROMIUM_ARGS.iter().copied())
            .arg("lang=en-US")
            .args(proxy_args(&opts.proxy.to_string(), &opts.ca_spki))
            .args(opts.js_heap_mb.map(|mb| format!("js-flags=--max-old-space-size={mb}")))
            .build()
            .map_err(launch_err)?;
        let (browser, mut handler) = Browser::launch(config).await.map_err(|e| launch_err(e.to_string()))?;
        let handler = tokio::spawn(async move { while handler.next().await.is_some() {} });
        let page = match bounded(opts.page_timeout, "opening a tab", browser.new_page("about:blank")).await {
            Ok(p) => p,
            Err(e) => {
                let mut browser = browser;
                let _ = browser.kill().await;
                handler.abort();
                return Err(e);
            }
        };
        let mut s = Session {
            browser,
            tabs: Mutex::new(Tabs::default()),
            targets: Mutex::new(Targets::default()),
            scripts: Vec::new(),
            handler,
            opts,
            last_page_ms: Default::default(),
            launch_ms: 0,
        };
        if let Err(e) = s.prepare(page).await {
            s.close().await;
            return Err(e);
        }
        s.launch_ms = t0.elapsed().as_millis() as u64;
        Ok(s)
    }

    /// Browser-wide set-up (permissions, cookies, the page scripts), then the first tab's.
    async fn prepare(&mut self, page: Page) -> Result<(), BrowserError> {
        let t = self.opts.page_timeout;
        if self.opts.geolocation.is_some() {
            let grant = SetPermissionParams::new(
                PermissionDescriptor::new("geolocation"),
                PermissionSetting::Granted,
            );
            bounded(t, "granting geolocation", self.browser.execute(grant)).await?;
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
        self.scripts = scripts;
        let tab = self.setup_tab(page).await?;
        if let Ok(mut tabs) = self.tabs.lock() {
            tabs.list.push(tab);
        }
        Ok(())
    }

    /// One tab's set-up: emulation, page scripts, the request and crash watcher.
    async fn setup_tab(&self, page: Page) -> Result<Tab, BrowserError> {
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
        // Track the tab's requests, to know when a page has settled, and its crashes.
        let mut sent = p.event_listener::<EventRequestWillBeSent>().await.map_err(cdp)?;
        let mut done = p.event_listener::<EventLoadingFinished>().await.map_err(cdp)?;
        let mut failed = p.event_listener::<EventLoadingFailed>().await.map_err(cdp)?;
        let mut crashed = p.event_listener::<EventTargetCrashed>().await.map_err(cdp)?;
        let mut responses = p.event_listener::<EventResponseReceived>().await.map_err(cdp)?;
        let mut ws_frames = p.event_listener::<EventWebSocketFrameReceived>().await.map_err(cdp)?;
        let net = Arc::new(Mutex::new(NetState::default()));
        let tab_net = net.clone();
        let watcher = tokio::spawn(async move {
            loop {
                // Starts first: chromiumoxide delivers events in protocol order, so a request's start is
                // in its channel before its end is in another.
                let (id, url) = tokio::select! {
                    biased;
                    Some(e) = sent.next() => {
                        let url = (!e.request.url.starts_with("data:")).then(|| e.request.url.clone());
                        (e.request_id.inner().clone(), Some(url))
                    }
                    Some(e) = done.next() => (e.request_id.inner().clone(), None),
                    Some(e) = failed.next() => (e.request_id.inner().clone(), None),
                    Some(_) = crashed.next() => {
                        if let Ok(mut n) = net.lock() { n.crashed = true; }
                        continue;
                    }
                    Some(_) = ws_frames.next() => {
                        if let Ok(mut n) = net.lock() { n.ws_frame = Some(Instant::now()); }
                        continue;
                    }
                    Some(e) = responses.next() => {
                        if e.r#type == ResourceType::Document {
                            let headers = e.response.headers.inner().as_object().map(|o| {
                                o.iter()
                                    .map(|(k, v)| (k.to_ascii_lowercase(), v.as_str().unwrap_or_default().to_string()))
                                    .collect()
                            });
                            let status = u16::try_from(e.response.status).unwrap_or(0);
                            if let Ok(mut n) = net.lock() {
                                if n.documents.len() >= DOCUMENTS_KEPT {
                                    n.documents.remove(0);
                                }
                                n.documents.push((e.response.url.clone(), status, headers.unwrap_or_default()));
                            }
                        }
                        continue;
                    }
                    else => break,
                };
                if let Ok(mut n) = net.lock() {
                    match url {
                        // data: URLs are not waited for; their ends are dropped.
                        Some(None) => {
                            n.ignored.insert(id);
                        }
                        Some(Some(url)) => {
                            if !n.ended_early.remove(&id) {
                                n.inflight.insert(id, url);
                            }
                        }
                        None => {
                            if n.inflight.remove(&id).is_none() && !n.ignored.remove(&id) {
                                n.ended_early.insert(id);
                            }
                        }
                    }
                    n.last_change = Some(Instant::now());
                }
            }
        });
        Ok(Tab { page, net: tab_net, watcher })
    }

    /// The active tab's page and request state.
    fn active(&self) -> Result<(Page, Arc<Mutex<NetState>>), BrowserError> {
        let tabs = self.tabs.lock().map_err(|_| BrowserError::Cdp("tab list poisoned".into()))?;
        let tab = tabs.list.get(tabs.active).ok_or_else(|| BrowserError::Cdp("no tab open".into()))?;
        Ok((tab.page.clone(), tab.net.clone()))
    }

    fn page(&self) -> Result<Page, BrowserError> {
        self.active().map(|(p, _)| p)
    }

    /// URLs of requests still in flight (for the note on a page that did not settle).
    pub fn pending(&self) -> Vec<String> {
        self.active()
            .ok()
            .and_then(|(_, net)| net.lock().ok().map(|n| n.inflight.values().take(5).cloned().collect()))
            .unwrap_or_default()
    }

    fn crashed(&self) -> bool {
        self.active().map(|(_, net)| net.lock().map(|n| n.crashed).unwrap_or(true)).unwrap_or(true)
    }

    /// Open a tab on `url`, make it the active one and let it settle; returns its index.
    pub async fn open_tab(&self, url: &str) -> Result<usize, BrowserError> {
        let t = self.opts.page_timeout;
        let page = bounded(t, "opening a tab", self.browser.new_page("about:blank")).await?;
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

    async fn front(&self) -> Result<(), BrowserError> {
        let page = self.page()?;
        bounded(self.opts.page_timeout, "bringing the tab to the front", page.bring_to_front()).await?;
        Ok(())
    }

    /// Every tab's title and the active tab's index.
    async fn tab_titles(&self) -> (Vec<String>, usize) {
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
        let (status, headers) = net
            .lock()
            .ok()
            .and_then(|n| n.documents.iter().rev().find(|d| d.0 == base).map(|d| (d.1, d.2.clone())))
            .unwrap_or_default();
        let r = wall::DocumentResponse {
            url: base,
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
        let page = bounded(t, "opening a tab", self.browser.new_page(url)).await?;
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

    /// [`Session::settle`] for a given tab (the active one, or a background tab of exploration).
    async fn settle_on(&self, page: &Page, net: &Arc<Mutex<NetState>>, after_action: bool) -> Settled {
        settle::settle(page, net, after_action, self.opts.settle_quiet, self.opts.page_timeout).await
    }

    /// The tab's current URL.
    /// The active page's visible text (`innerText` of its body, at most 1 MiB of it).
    pub async fn page_text(&self) -> Result<String, BrowserError> {
        self.eval("document.body ? document.body.innerText.slice(0, 1048576) : ''").await
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

    /// Observe the active tab: with labels, label, screenshot, list, unlabel (the `data-wf-mark` tags
    /// stay for the actions); with the accessibility tree, read it and keep its ids for the actions.
    pub async fn observe(&self) -> Result<Observation, BrowserError> {
        let unsettled = (!self.settle(false).await).then(|| self.pending());
        let t0 = Instant::now();
        let url = self.url().await?;
        let page = self.page()?;
        let kind = self.opts.observation;
        let marks: Vec<Mark> = if kind == ObservationKind::AxTree {
            // No labels, but the caret is hidden all the same (its blink would reach the screenshot).
            let _: bool = self.eval(som::CARET_OFF_JS).await?;
            Vec::new()
        } else {
            let json: String = self.eval(som::MARK_JS).await?;
            serde_json::from_str(&json).map_err(cdp)?
        };
        let shot = bounded(
            self.opts.page_timeout,
            "the screenshot",
            page.screenshot(ScreenshotParams::builder().build()),
        )
        .await;
        let _: Result<bool, _> = self.eval(som::UNMARK_JS).await;
        let screenshot = shot?;
        let (text, targets) = match kind {
            ObservationKind::Som => (som::element_text(&marks), Targets::Marks),
            ObservationKind::AxTree => {
                let tree = self.accessibility_tree(false).await?;
                (tree.text, Targets::Nodes(tree.nodes))
            }
            ObservationKind::SomAxTree => (self.accessibility_tree(true).await?.text, Targets::Marks),
        };
        if let Ok(mut t) = self.targets.lock() {
            *t = targets;
        }
        let (tabs, active_tab) = if self.opts.real_tabs { self.tab_titles().await } else { (Vec::new(), 0) };
        Ok(Observation {
            url,
            screenshot,
            marks,
            text,
            tabs,
            active_tab,
            ms: t0.elapsed().as_millis() as u64,
            unsettled,
        })
    }

    /// The active tab's accessibility tree in WebArena's text form, the viewport's part of it; `marks`:
    /// ids are the Set-of-Marks labels of the latest labelling.
    pub async fn accessibility_tree(&self, marks: bool) -> Result<axtree::AxTree, BrowserError> {
        let page = self.page()?;
        let tree = self
            .raw(
                &page,
                "reading the accessibility tree",
                "Accessibility.getFullAXTree",
                serde_json::json!({}),
            )
            .await?;
        let snap = self
            .raw(
                &page,
                "reading the layout",
                "DOMSnapshot.captureSnapshot",
                serde_json::json!({"computedStyles": []}),
            )
            .await?;
        let viewport: Vec<f64> =
            self.eval("[window.scrollX, window.scrollY, window.innerWidth, window.innerHeight]").await?;
        let (mut boxes, attrs) = axtree::snapshot_tables(&snap, "data-wf-mark");
        let labels: std::collections::HashMap<i64, u32> =
            attrs.into_iter().filter_map(|(b, v)| Some((b, v.parse().ok()?))).collect();
        let nodes = tree.get("nodes").and_then(|n| n.as_array()).cloned().unwrap_or_default();
        // A node the layout snapshot has no box for (a textarea's text, ...): its box the way WebArena
        // measures every node, one call each, only for the nodes that would be printed.
        let (sx, sy) = (viewport.first().copied().unwrap_or(0.0), viewport.get(1).copied().unwrap_or(0.0));
        for b in axtree::unmeasured(&nodes, &boxes) {
            if let Some([x, y, w, h]) = self.client_rect(&page, b).await {
                boxes.insert(b, [x + sx, y + sy, w, h]);
            }
        }
        let ids = if marks { axtree::Ids::Marks(&labels) } else { axtree::Ids::Sequential };
        let vp = match viewport[..] {
            [x, y, w, h] => Some([x, y, w, h]),
            _ => None,
        };
        Ok(axtree::render(&nodes, &boxes, vp, ids))
    }

    /// A DOM node's `getBoundingClientRect` (a range's for a text node), by backend id; None when it
    /// cannot be resolved (pseudo-elements) or measured.
    async fn client_rect(&self, page: &Page, backend: i64) -> Option<[f64; 4]> {
        let obj = self
            .raw(page, "finding a node", "DOM.resolveNode", serde_json::json!({"backendNodeId": backend}))
            .await
            .ok()?;
        let id = obj.pointer("/object/objectId")?.as_str()?.to_string();
        let f = "function() { let b; if (this.nodeType === 3) { const r = document.createRange(); r.selectNode(this); b = r.getBoundingClientRect(); } else { b = this.getBoundingClientRect(); } return [b.x, b.y, b.width, b.height]; }";
        let params = serde_json::json!({"objectId": id, "functionDeclaration": f, "returnByValue": true});
        let r = self.raw(page, "measuring a node", "Runtime.callFunctionOn", params).await.ok()?;
        let v: Vec<f64> = r.pointer("/result/value")?.as_array()?.iter().filter_map(|x| x.as_f64()).collect();
        match v[..] {
            [x, y, w, h] => Some([x, y, w, h]),
            _ => None,
        }
    }

    /// A CDP call by name on the active tab (for tools that need what the session does not wrap).
    pub async fn cdp(
        &self,
        method: &'static str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, BrowserError> {
        let page = self.page()?;
        self.raw(&page, "a CDP call", method, params).await
    }

    /// A CDP call by name, for what chromiumoxide's typed protocol reads too strictly (the
    /// accessibility tree's enums grow with every Chromium).
    async fn raw(
        &self,
        page: &Page,
        what: &'static str,
        method: &'static str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, BrowserError> {
        let r = bounded(self.opts.page_timeout, what, page.execute(RawCommand { method, params })).await?;
        Ok(r.result)
    }

    async fn marked(&self, n: u32) -> Result<chromiumoxide::Element, BrowserError> {
        if self.crashed() {
            return Err(BrowserError::Crashed);
        }
        let sel = format!("[data-wf-mark=\"{n}\"]");
        let page = self.page()?;
        match bounded(self.opts.page_timeout, "finding the element", page.find_element(sel)).await {
            Ok(e) => Ok(e),
            Err(BrowserError::Cdp(_)) => Err(BrowserError::Action(format!(
                "there is no element labelled [{n}] on this page; use a label from the latest screenshot"
            ))),
            Err(e) => Err(e),
        }
    }

    /// Carry out an action (not `ANSWER`, which ends the task) and let the page settle.
    pub async fn perform(&self, action: &Action) -> Result<(), BrowserError> {
        let t = self.opts.page_timeout;
        // A click sends its control's label with the requests it causes, until the page settles.
        let mut labelled = false;
        match action {
            Action::Click(n) => {
                let el = self.marked(*n).await?;
                // Links that would open a new tab open in this one.
                let _ = bounded(
                    t,
                    "retargeting the link",
                    el.call_js_fn(
                        "function() { const a = this.closest('a,form'); if (a) a.setAttribute('target', '_self'); }",
                        false,
                    ),
                )
                .await;
                // The side-effect guard judges a write also by the control that sent it.
                let control =
                    bounded(t, "reading the control's label", el.call_js_fn(CONTROL_LABEL_JS, false))
                        .await
                        .ok()
                        .and_then(|r| r.result.value.and_then(|v| v.as_str().map(str::to_string)))
                        .filter(|l| !l.is_empty());
                if let Some(l) = &control {
                    self.set_control_label(Some(l)).await;
                    labelled = true;
                }
                let clicked = bounded(t, "the click", el.click()).await;
                if clicked.is_err() && labelled {
                    self.set_control_label(None).await;
                }
                clicked?;
            }
            Action::Type { label, text } => {
                let el = self.marked(*label).await?;
                // Returns "" when the field was focused and cleared, else the tag of what it is instead.
                let cleared = bounded(
                    t,
                    "clearing the field",
                    el.call_js_fn(
                        "function() { const tag = this.tagName.toLowerCase(); \
                         const text = (tag === 'textarea') || (tag === 'input' && !/^(button|submit|reset|checkbox|radio|file|image|hidden|range|color)$/i.test(this.type)); \
                         if (!text && !this.isContentEditable) { return tag; } \
                         this.focus(); if (text) { this.value = ''; } else { this.textContent = ''; } return ''; }",
                        false,
                    ),
                )
                .await?;
                let not_text =
                    cleared.result.value.as_ref().and_then(|v| v.as_str()).unwrap_or("").to_string();
                if !not_text.is_empty() {
                    return Err(BrowserError::Action(format!(
                        "element [{label}] is a <{not_text}>, not a text field: Type needs an input, a textarea or an editable element"
                    )));
                }
                bounded(t, "typing", el.type_str(text)).await?;
                bounded(t, "pressing Enter", el.press_key("Enter")).await?;
            }
            Action::Scroll { target, down } => {
                let sign = if *down { 1 } else { -1 };
                match target {
                    ScrollTarget::Window => {
                        let js = format!(
                            "window.scrollBy(0, {sign} * Math.round(window.innerHeight * 2 / 3)); true"
                        );
                        let _: bool = self.eval(&js).await?;
                    }
                    ScrollTarget::Element(n) => {
                        let el = self.marked(*n).await?;
                        let js = format!(
                            "function() {{ this.scrollBy(0, {sign} * Math.max(50, Math.round(this.clientHeight * 2 / 3))); }}"
                        );
                        bounded(t, "scrolling the element", el.call_js_fn(js, false)).await?;
                    }
                }
            }
            Action::Wait => tokio::time::sleep(self.opts.wait).await,
            Action::GoBack => {
                let _: bool = self.eval("history.back(); true").await?;
            }
            Action::Google => {
                let url = self.opts.search_url.clone();
                return self.goto(&url).await;
            }
            Action::Answer(_) => {}
        }
        self.settle(true).await;
        if labelled {
            self.set_control_label(None).await;
        }
        Ok(())
    }

    /// Send `label` as [`CONTROL_HEADER`] with the active tab's requests (None: stop sending it).
    async fn set_control_label(&self, label: Option<&str>) {
        let Ok(page) = self.page() else { return };
        let headers = match label {
            Some(l) => serde_json::json!({ CONTROL_HEADER: l }),
            None => serde_json::json!({}),
        };
        let set = page.execute(SetExtraHttpHeadersParams::new(Headers::new(headers)));
        if let Err(e) = bounded(self.opts.page_timeout, "labelling the click's requests", set).await {
            tracing::debug!("control label: {e}");
        }
    }

    /// Close the browser (kill it if it does not close) and stop the watchers.
    pub async fn close(mut self) {
        if let Ok(tabs) = self.tabs.lock() {
            for t in &tabs.list {
                t.watcher.abort();
            }
        }
        let closed = tokio::time::timeout(Duration::from_secs(5), self.browser.close()).await;
        if !matches!(closed, Ok(Ok(_))) {
            let _ = self.browser.kill().await;
        }
        let _ = tokio::time::timeout(Duration::from_secs(5), self.browser.wait()).await;
        self.handler.abort();
    }
}

/// A CDP command by name with JSON parameters and result.
#[derive(Debug)]
struct RawCommand {
    method: &'static str,
    params: serde_json::Value,
}

impl serde::Serialize for RawCommand {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.params.serialize(s)
    }
}

impl chromiumoxide::types::Method for RawCommand {
    fn identifier(&self) -> chromiumoxide::types::MethodId {
        self.method.into()
    }
}

impl chromiumoxide::types::Command for RawCommand {
    type Response = serde_json::Value;
}

async fn bounded<T, E: std::fmt::Display + 'static>(
    limit: Duration,
    what: &'static str,
    fut: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, BrowserError> {
    match tokio::time::timeout(limit, fut).await {
        Ok(r) => r.map_err(cdp),
        Err(_) => Err(BrowserError::Timeout { what, secs: limit.as_secs_f64() }),
    }
}

/// Reads Playwright's storage-state JSON: the cookies, and one page script per origin that fills its
/// localStorage the first time a document of that origin loads in the tab (later documents keep what the
/// pages changed).
fn read_storage_state(path: &Path) -> Result<(Vec<CookieParam>, Option<String>), BrowserError> {
    let bad = |d: String| BrowserError::Setup(format!("storage_state {}: {d}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
    let mut cookies = Vec::new();
    for (i, c) in v.get("cookies").and_then(|c| c.as_array()).into_iter().flatten().enumerate() {
        let s = |k: &str| c.get(k).and_then(|x| x.as_str()).map(str::to_string);
        let (Some(name), Some(value)) = (s("name"), s("value")) else {
            return Err(bad(format!("cookie {i} has no name or value")));
        };
        let mut p = CookieParam::new(name, value);
        p.domain = s("domain");
        p.path = s("path");
        p.secure = c.get("secure").and_then(|x| x.as_bool());
        p.http_only = c.get("httpOnly").and_then(|x| x.as_bool());
        p.same_site = match s("sameSite").as_deref() {
            Some("Strict") => Some(CookieSameSite::Strict),
            Some("Lax") => Some(CookieSameSite::Lax),
            Some("None") => Some(CookieSameSite::None),
            _ => None,
        };
        // Playwright writes -1 for a session cookie.
        p.expires = c.get("expires").and_then(|x| x.as_f64()).filter(|e| *e > 0.0).map(TimeSinceEpoch::new);
        if p.domain.is_none() {
            return Err(bad(format!("cookie {i} ({}) has no domain", p.name)));
        }
        cookies.push(p);
    }
    let mut by_origin = serde_json::Map::new();
    for o in v.get("origins").and_then(|o| o.as_array()).into_iter().flatten() {
        let Some(origin) = o.get("origin").and_then(|x| x.as_str()) else { continue };
        let items: Vec<serde_json::Value> = o
            .get("localStorage")
            .and_then(|x| x.as_array())
            .into_iter()
            .flatten()
            .filter_map(|kv| Some(serde_json::json!([kv.get("name")?.as_str()?, kv.get("value")?.as_str()?])))
            .collect();
        by_origin.insert(origin.trim_end_matches('/').to_string(), serde_json::Value::Array(items));
    }
    let script = (!by_origin.is_empty()).then(|| {
        format!(
            "(() => {{ const m = {}; const items = m[location.origin]; \
             try {{ if (items && !sessionStorage.getItem('__webfreeze_storage_state')) {{ \
             for (const [k, v] of items) localStorage.setItem(k, v); \
             sessionStorage.setItem('__webfreeze_storage_state', '1'); }} }} catch (e) {{}} }})();",
            serde_json::Value::Object(by_origin)
        )
    });
    Ok((cookies, script))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_devtools_link_is_fatal_and_a_failed_call_is_not() {
        use chromiumoxide::error::CdpError;
        let reset = || std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset by peer");
        let cases: Vec<(BrowserError, bool)> = vec![
            (cdp(CdpError::NoResponse), true),
            (cdp(CdpError::Io(reset())), true),
            (cdp(CdpError::Timeout), false),
            (cdp(CdpError::NotFound), false),
            (cdp(CdpError::msg("No node with given id found")), false),
            // A message that merely mentions a connection is not a lost link (the old substring rule
            // called this fatal).
            (cdp(CdpError::msg("net::ERR_CONNECTION_REFUSED")), false),
            // Not chromiumoxide's error at all.
            (cdp("connection closed"), false),
            (cdp(reset()), false),
            (BrowserError::Crashed, true),
            (BrowserError::Action("no element".into()), false),
        ];
        for (i, (e, fatal)) in cases.into_iter().enumerate() {
            assert_eq!(e.is_fatal(), fatal, "case {i}: {e}");
        }
    }

    #[test]
    fn chromium_major_version_table() {
        for (out, want) in [
            ("Chromium 156.0.8078.79 built on Debian GNU/Linux 12 (bookworm)\n", Some(156)),
            ("Google Chrome 131.0.6778.85 \n", Some(131)),
            ("Chromium\n", None),
            ("", None),
        ] {
            assert_eq!(major_version(out), want, "{out:?}");
        }
    }

    #[test]
    fn identity_args_leave_out_automation() {
        let args = identity_args(Path::new("/nonexistent/chromium"));
        assert!(!args.iter().any(|a| a.contains("enable-automation")));
        assert!(args.iter().any(|a| a == "disable-blink-features=AutomationControlled"));
        // No binary, no version: no User-Agent switch rather than a wrong one.
        assert!(!args.iter().any(|a| a.starts_with("user-agent=")));
    }
}
