//! `--guard` of the standalone `proxy`, `record` and `replay`: serve a handler behind the guards the
//! options ask for, and list what they refused when the proxy stops.

use std::sync::Arc;

use proxy::guard::{AnswerPlaces, Guard, GuardConfig, GuardLog, WriteRules};
use proxy::{CertificateAuthority, Handler, Proxy, ProxyConfig};

use crate::cli::{GuardKind, ProxyArgs};

/// The guards `--guard` asks for (`default` when it names none); None without any.
pub(crate) fn config(args: &ProxyArgs, default: &[GuardKind]) -> Option<Arc<GuardConfig>> {
    let asked: &[GuardKind] = if args.guard.is_empty() { default } else { &args.guard };
    if asked.is_empty() || asked.contains(&GuardKind::None) {
        return None;
    }
    let on = |k: GuardKind| asked.contains(&k);
    Some(Arc::new(GuardConfig {
        writes: on(GuardKind::Writes).then(WriteRules::builtin),
        answers: on(GuardKind::Answers).then(AnswerPlaces::builtin),
        own_hosts: args.allow_writes.clone(),
    }))
}

/// Serve `handler` on `listener` until `shutdown`, behind the guards of `args` (or `default` when it names
/// none); what they refused is printed at the end.
pub(crate) async fn serve<H: Handler>(
    handler: Arc<H>,
    args: &ProxyArgs,
    default: &[GuardKind],
    ca: Arc<CertificateAuthority>,
    pcfg: ProxyConfig,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let Some(cfg) = config(args, default) else {
        Proxy::new(handler, ca, pcfg)?.serve(listener, shutdown).await?;
        return Ok(());
    };
    eprintln!("guards on: {}", cfg.summary());
    let log = Arc::new(GuardLog::default());
    let guarded = Arc::new(Guard::new(handler, cfg, log.clone()));
    let served = Proxy::new(guarded, ca, pcfg)?.serve(listener, shutdown).await;
    let blocked = log.blocked();
    eprintln!("the guards refused {} requests", blocked.len());
    for b in blocked.iter().take(50) {
        eprintln!("  refused {} {} ({}: {}; {})", b.method, b.url, b.rule, b.why, b.evidence);
    }
    served?;
    Ok(())
}
