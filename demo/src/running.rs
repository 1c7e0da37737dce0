//! The demo sites served from a thread of their own (their own runtime), so a caller on any runtime, or
//! none, can run agents against them and stop them mid-way (the demo replays with the sites stopped).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use proxy::{ProxyConfig, UpstreamConfig};

use crate::{DemoError, Sites, HOSTS};

/// The demo sites on a loopback port. Dropping it stops them.
pub struct RunningSites {
    sites: Arc<Sites>,
    addr: SocketAddr,
    ca_file: PathBuf,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RunningSites {
    /// Make the sites' CA under `dir/sites-ca` (its certificate at `dir/sites-ca.pem`) and serve them on
    /// `127.0.0.1:0`. `now` is the CA's validity start.
    pub fn start(dir: &Path, now: time::OffsetDateTime) -> Result<Self, DemoError> {
        let sites = Arc::new(Sites::new(&dir.join("sites-ca"), now)?);
        let ca_file = dir.join("sites-ca.pem");
        std::fs::write(&ca_file, sites.ca_pem())?;
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let s = sites.clone();
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
        let thread = std::thread::spawn(move || {
            rt.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else { return };
                s.serve(listener, async move {
                    let _ = rx.await;
                })
                .await;
            });
        });
        Ok(Self { sites, addr, ca_file, stop: Some(tx), thread: Some(thread) })
    }

    /// The sites (their clock).
    pub fn sites(&self) -> &Arc<Sites> {
        &self.sites
    }

    /// Where they listen.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The sites' CA certificate (PEM file), for `--upstream-ca`.
    pub fn ca_file(&self) -> &Path {
        &self.ca_file
    }

    /// `--upstream-ca FILE --resolve HOST:443:ADDR ...`: how a `webfreeze` command line reaches them.
    pub fn reach_args(&self) -> Vec<String> {
        let mut v = vec!["--upstream-ca".to_string(), self.ca_file.display().to_string()];
        for r in crate::resolve_args(self.addr) {
            v.push("--resolve".into());
            v.push(r);
        }
        v
    }

    /// A proxy configuration that reaches them (trusting their CA, every demo host resolved to them).
    pub fn proxy_config(&self) -> ProxyConfig {
        let resolve: HashMap<(String, u16), SocketAddr> =
            HOSTS.iter().map(|h| ((h.to_string(), 443), self.addr)).collect();
        ProxyConfig {
            upstream: UpstreamConfig {
                extra_ca_files: vec![self.ca_file.clone()],
                resolve,
                ..UpstreamConfig::default()
            },
            upstream_timeout: std::time::Duration::from_secs(10),
            ..ProxyConfig::default()
        }
    }

    /// Stop serving: later connections are refused.
    pub fn stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for RunningSites {
    fn drop(&mut self) {
        self.stop();
    }
}
