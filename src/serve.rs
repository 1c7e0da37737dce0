//! What the listening commands share: binding (loopback unless --allow-remote), the `listening on ADDR`
//! line scripts wait for, and the shutdown signal.

use std::net::SocketAddr;

use anyhow::Context as _;

use crate::cli::ProxyArgs;
use crate::UsageError;

/// Bind the listen address, refusing non-loopback without `--allow-remote`.
pub(crate) async fn bind(args: &ProxyArgs) -> anyhow::Result<tokio::net::TcpListener> {
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
pub(crate) fn announce(listener: &tokio::net::TcpListener) -> anyhow::Result<()> {
    use std::io::Write;
    let addr = listener.local_addr()?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "listening on {addr}")?;
    out.flush()?;
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM.
pub(crate) async fn shutdown_signal() {
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
