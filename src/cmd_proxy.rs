//! `webfreeze proxy`: the live pass-through proxy.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use proxy::{parse_resolve, CertificateAuthority, PassThrough, Proxy, ProxyConfig, UpstreamConfig};

use crate::cli::{ProxyArgs, UpstreamArgs};
use crate::config::Config;
use crate::UsageError;

/// Resolve the proxy options into a configuration (the one place CLI values become settings).
pub fn proxy_config(args: &ProxyArgs) -> anyhow::Result<ProxyConfig> {
    Ok(ProxyConfig {
        idle_timeout: Duration::from_secs_f64(args.idle_timeout),
        max_connections: args.max_connections,
        ..upstream_config(&args.upstream)?
    })
}

/// The proxy settings for reaching origins, with defaults for the rest.
pub fn upstream_config(args: &UpstreamArgs) -> anyhow::Result<ProxyConfig> {
    let mut resolve = std::collections::HashMap::new();
    for r in &args.resolve {
        let (k, v) = parse_resolve(r).map_err(|e| UsageError(e.to_string()))?;
        resolve.insert(k, v);
    }
    Ok(ProxyConfig {
        upstream: UpstreamConfig {
            extra_ca_files: args.upstream_ca.clone(),
            resolve,
            insecure: args.insecure_upstream,
            ..UpstreamConfig::default()
        },
        upstream_timeout: Duration::from_secs_f64(args.upstream_timeout),
        ..ProxyConfig::default()
    })
}

/// Bind the listen address, refusing non-loopback without `--allow-remote`.
pub async fn bind(args: &ProxyArgs) -> anyhow::Result<tokio::net::TcpListener> {
    let addr: SocketAddr = args
        .listen
        .parse()
        .map_err(|_| UsageError(format!("--listen {:?} is not an IP:PORT address", args.listen)))?;
    if !addr.ip().is_loopback() {
        if !args.allow_remote {
            return Err(UsageError(format!(
                "refusing to listen on {addr}: it is not a loopback address, so other machines could use this proxy; pass --allow-remote if you mean it"
            ))
            .into());
        }
        tracing::warn!("listening on non-loopback {addr}: anyone who can reach it can use this proxy");
    }
    tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr}"))
}

/// Print the `listening on ADDR` line scripts wait for.
pub fn announce(listener: &tokio::net::TcpListener) -> anyhow::Result<()> {
    use std::io::Write;
    let addr = listener.local_addr()?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "listening on {addr}")?;
    out.flush()?;
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
    eprintln!("shutting down: finishing in-flight requests");
}

pub fn load_ca(cfg: &Config) -> anyhow::Result<Arc<CertificateAuthority>> {
    #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
    let now = time::OffsetDateTime::now_utc();
    Ok(Arc::new(CertificateAuthority::load_or_init(&cfg.ca_dir(), now)?))
}

pub fn run(cfg: &Config, args: ProxyArgs) -> anyhow::Result<()> {
    let pcfg = proxy_config(&args)?;
    let ca = load_ca(cfg)?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(async move {
        let listener = bind(&args).await?;
        announce(&listener)?;
        eprintln!(
            "pass-through proxy; clients must trust the CA (Chromium: --ignore-certificate-errors-spki-list={})",
            ca.info().spki_sha256
        );
        let proxy = Proxy::new(Arc::new(PassThrough), ca, pcfg)?;
        proxy.serve(listener, shutdown_signal()).await?;
        Ok(())
    })
}
