//! `webfreeze record`: the proxy with the recording handler.

use std::collections::BTreeMap;
use std::sync::Arc;

use clock::{Clock, SystemClock};
use recorder::HostFilter;
use snapshots::Store;

use crate::cli::RecordArgs;
use crate::config::{load_ca, proxy_config, Config};
use crate::serve::{announce, bind, shutdown_signal};

pub(crate) fn run(cfg: &Config, args: RecordArgs) -> anyhow::Result<()> {
    let pcfg = proxy_config(&args.proxy)?;
    let ca = load_ca(cfg)?;
    let store = Store::open(&cfg.store)?;
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let mut labels = BTreeMap::new();
    for l in &args.label {
        let (k, v) = l
            .split_once('=')
            .ok_or_else(|| crate::usage::UsageError(format!("--label {l:?}: expected KEY=VALUE")))?;
        labels.insert(k.to_string(), v.to_string());
    }
    let opened = session::open_record(session::RecordOpening {
        store: &store,
        name: &args.snapshot,
        time_zone: cfg.time_zone(args.time_zone.as_deref()),
        labels,
        hosts: HostFilter::new(&args.include, &args.exclude),
        shim_step_ms: 1,
        clock: clock.clone(),
    })?;
    let writer = opened.writer;
    // The first error writing the store (a full disk) stops the recording: what was stored before it stays.
    let store_failed = Arc::new((std::sync::OnceLock::<String>::new(), tokio::sync::Notify::new()));
    let hook = store_failed.clone();
    let recorder = Arc::new(opened.recorder.on_store_error(move |e| {
        if hook.0.set(e.to_string()).is_ok() {
            hook.1.notify_one();
        }
    }));
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let served = rt.block_on(async {
        let listener = bind(&args.proxy).await?;
        let signal = shutdown_signal();
        let failed = store_failed.clone();
        let shutdown = async move {
            tokio::select! {
                () = signal => {}
                () = failed.1.notified() => {}
            }
        };
        announce(&listener)?;
        eprintln!(
            "recording into snapshot {:?} (store {}); Ctrl-C to finish",
            args.snapshot,
            cfg.store.display()
        );
        if args.no_inject_shim {
            crate::guarded::serve(recorder.clone(), &args.proxy, &[], ca, pcfg, listener, shutdown).await?;
        } else {
            // The script replay will inject, seeded as replay seeds it (this snapshot's name and start).
            let shimmed = Arc::new(replay::inject::RecordShim::new(recorder.clone(), opened.shim_js));
            crate::guarded::serve(shimmed, &args.proxy, &[], ca, pcfg, listener, shutdown).await?;
        }
        anyhow::Ok(())
    });
    let s = recorder.stats();
    if let Some(why) = store_failed.0.get() {
        // The store may refuse this write too (still full): then the snapshot stays `recording` and the next
        // writable open of the store marks it `interrupted`, as for any writer that died.
        let state = match writer.interrupt(clock.now_ms()) {
            Ok(m) => m.state.to_string(),
            Err(_) => "interrupted (marked when the store is next opened for writing)".to_string(),
        };
        anyhow::bail!(
            "recording stopped: the store at {} cannot be written: {why}. The {} exchange(s) stored before it are \
             kept; snapshot {:?} is {state}. Free space (or use --store on a larger disk) and record again.",
            cfg.store.display(),
            s.recorded,
            args.snapshot
        );
    }
    let ending = match &served {
        Ok(()) => session::seal::Ending::Complete,
        Err(_) => session::seal::Ending::Interrupted,
    };
    let m = session::seal::finish(&writer, clock.now_ms(), ending, Default::default())?;
    eprintln!(
        "snapshot {:?} {}: {} exchanges recorded ({} truncated), {} background/excluded not recorded, {} without a response, {} store errors",
        m.name, m.state, s.recorded, s.truncated, s.skipped, s.failed, s.store_errors
    );
    served
}
