//! What the listening commands share: binding (loopback unless --allow-remote), the `listening on ADDR`
//! line scripts wait for, and the shutdown signal.

use std::net::SocketAddr;

use anyhow::Context as _;

use crate::cli::ProxyArgs;
use crate::usage::UsageError;

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

/// Resolves on Ctrl-C (SIGINT) or SIGTERM. The handlers are installed when this is called, not when the
/// future is first polled: call it before `announce`, so a client that stops the process as soon as it
/// reads `listening on ADDR` (the Python wrapper, a script) always gets the graceful path that seals a
/// recording. Must be called inside the runtime.
pub(crate) fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{signal, SignalKind};
    let int = signal(SignalKind::interrupt());
    let term = signal(SignalKind::terminate());
    async move {
        let wait = |s: std::io::Result<tokio::signal::unix::Signal>| async move {
            match s {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! { _ = wait(int) => {}, _ = wait(term) => {} }
        eprintln!("shutting down: finishing in-flight requests");
    }
}
