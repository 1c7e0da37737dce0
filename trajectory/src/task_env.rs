//! The contract between a task's proxy and whatever drives the task's browser: what the driver gets
//! (the proxy's address and CA, the page scripts, the emulation), how it reads the proxy's counters and
//! how it hands back what the browser rendered.
//! Here, below both `agent` and `session`, so a task proxy needs no browser crate to hand it over.

use std::net::SocketAddr;
use std::sync::Arc;

use crate::{ProxyStats, RunMode};

/// How a browser driver reads its proxy's statistics (the driver never sees the store).
pub trait ProxyProbe: Send + Sync {
    /// Counters so far.
    fn counters(&self) -> ProxyStats;
    /// The full report at the end of the task.
    fn report(&self) -> Option<proxy_report::ProxyReport>;
    /// The text the browser rendered at `url` (`document.body.innerText`), told by a driver that observed
    /// it: a recording keeps it with its snapshot for the frozen search engine (what a page built by script
    /// shows is not in its HTML); other modes let it go.
    fn rendered_text(&self, url: &str, text: &str);
}

/// What differs per task: its proxy, the scripts and emulation for the mode.
#[derive(Clone)]
pub struct TaskEnv {
    /// The task's proxy.
    pub proxy: SocketAddr,
    /// The proxy CA's SPKI pin.
    pub ca_spki: String,
    /// The proxy CA's certificate (PEM), for requests made outside the browser (the shop REST helpers).
    pub ca_pem: String,
    /// Scripts installed before page scripts (record / replay: the determinism shim).
    pub init_scripts: Vec<String>,
    /// Time zone to emulate.
    pub time_zone: Option<String>,
    /// Locale to emulate.
    pub locale: Option<String>,
    /// live / record / replay.
    pub mode: RunMode,
    /// Snapshot written or read.
    pub snapshot: Option<String>,
    /// Wall clock at the task's start.
    pub started_ms: i64,
    /// The proxy's statistics.
    pub probe: Option<Arc<dyn ProxyProbe>>,
}
