//! `webfreeze proxy`: the live pass-through proxy.

use std::sync::Arc;

use proxy::PassThrough;

use crate::cli::ProxyArgs;
use crate::config::{load_ca, proxy_config, Config};
use crate::serve::{announce, bind, shutdown_signal};

pub(crate) fn run(cfg: &Config, args: ProxyArgs) -> anyhow::Result<()> {
    let pcfg = proxy_config(&args)?;
    let ca = load_ca(cfg)?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(async move {
        let listener = bind(&args).await?;
        let shutdown = shutdown_signal();
        announce(&listener)?;
        eprintln!(
            "pass-through proxy; clients must trust the CA (Chromium: --ignore-certificate-errors-spki-list={})",
            ca.info().spki_sha256
        );
        crate::guarded::serve(Arc::new(PassThrough), &args, &[], ca, pcfg, listener, shutdown).await
    })
}
