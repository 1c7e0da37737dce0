//! `webfreeze replay`: the proxy with the replay handler.

use std::sync::Arc;

use anyhow::Context as _;
use clock::{Clock, SystemClock};
use replay::overlay::Overlays;
use replay::rules::Rules;
use snapshots::Store;

use crate::cli::{GuardKind, ReplayArgs};
use crate::config::{load_ca, proxy_config, Config};
use crate::serve::{announce, bind, shutdown_signal};
use crate::usage::UsageError;

pub(crate) fn run(cfg: &Config, args: ReplayArgs) -> anyhow::Result<()> {
    let pcfg = proxy_config(&args.proxy)?;
    let ca = load_ca(cfg)?;
    let rules = match &args.rules {
        Some(f) => Rules::with_file(f)?,
        None => Rules::builtin(),
    };
    let on_miss = args.on_miss;
    let store = session::replay_store(&cfg.store, on_miss)?;
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let target = session::replay_target(&store, store.manifest(&args.snapshot)?)?;
    // The layers first: a replay refused for them leaves no misses snapshot behind.
    let overlays = union_of(&store, target.manifest(), &args)?;
    let opened = target.open(session::MissesOpening {
        on_miss,
        misses: args.miss_snapshot.clone(),
        replace_misses: false,
        clock: clock.clone(),
    })?;
    let manifest = opened.manifest.clone();
    let wire = match &args.wire_dir {
        Some(dir) => Some(Arc::new(
            session::EpisodeWire::create(dir, &manifest.name, clock.clone())
                .with_context(|| format!("--wire-dir {}", dir.display()))?,
        )),
        None => None,
    };
    let served = opened.assemble(
        &store,
        session::ReplayServing {
            rules,
            inject_shim: !args.no_inject_shim,
            fuzzy_min_score: args.fuzzy_min_score,
            not_captured: args.not_captured,
            refresh: (!args.no_refresh).then(|| clock.clone()),
            overlays,
            search: replay::search::SearchConfig { mode: args.search, urls: args.search_urls.clone() },
            ws_pacing: args.ws_pacing,
            wire: wire.clone().map(|w| w as Arc<dyn trajectory::proxy_report::wire::WireTap>),
            hide_own: false,
        },
    );
    let (replay, miss_writer, guard_misses) = (served.replay, served.miss_writer, served.guard_misses);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let served = rt.block_on(async {
        let listener = bind(&args.proxy).await?;
        let shutdown = shutdown_signal();
        announce(&listener)?;
        eprintln!(
            "replaying snapshot {:?} ({} exchanges, {}); misses: {:?}; Ctrl-C to stop",
            manifest.name, manifest.counts.exchanges, manifest.state, args.on_miss
        );
        let union = &replay.report().overlays;
        if !union.is_empty() {
            eprintln!("then, for what it lacks: {}", union.join(", "));
        }
        // Misses sent out go through the guards (both by default): what replay answers never leaves.
        let default: &[GuardKind] = if guard_misses { &[GuardKind::Writes, GuardKind::Answers] } else { &[] };
        crate::guarded::serve(replay.clone(), &args.proxy, default, ca, pcfg, listener, shutdown).await?;
        anyhow::Ok(())
    });
    if let (Some(w), Some(dir)) = (&wire, &args.wire_dir) {
        let n = w.finish()?;
        eprintln!("wire logs of {n} episode(s) in {}", dir.display());
    }
    if let Some(w) = miss_writer {
        let m = session::seal::finalize(&w, clock.now_ms())?;
        eprintln!("recorded {} missed exchanges into snapshot {:?}", m.counts.exchanges, m.name);
    }
    let report = replay.report();
    if let Some(path) = &args.report {
        let json = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, json)
            .with_context(|| format!("cannot write the report to {}", path.display()))?;
    }
    eprintln!(
        "replay of {:?}: {} requests: {} exact, {} normalised, {} fuzzy, {} site-union, {} frozen-search, {} assembled-batch, {} missed ({} background); coverage {:.1}% of {} recorded exchanges",
        report.snapshot,
        report.requests,
        report.exact,
        report.normalised,
        report.fuzzy,
        report.site_union,
        report.frozen_search,
        report.assembled_batches,
        report.missed,
        report.background,
        report.coverage * 100.0,
        report.recorded_exchanges
    );
    for m in report.misses.iter().take(20) {
        eprintln!("  miss: {} {}", m.method, m.url);
    }
    if report.websocket_missed > 0 {
        eprintln!("{} WebSocket messages matched nothing recorded:", report.websocket_missed);
        for m in report.websocket_misses.iter().take(20) {
            eprintln!("  websocket miss: {} sent {}", m.url, m.message);
        }
    }
    served
}

/// The site union `--frozen-web site` and `--union` ask for, in order.
fn union_of(store: &Store, own: &snapshots::Manifest, args: &ReplayArgs) -> anyhow::Result<Overlays> {
    let mut run = None;
    if args.frozen_web == trajectory::FrozenWebUnit::Site {
        let session::SnapshotName::Task { run: r, .. } = session::SnapshotName::parse(&own.name) else {
            return Err(UsageError(format!(
                "--frozen-web site: {:?} is not a RUN/<task> snapshot, so it has no recording to share a site \
                 with; name the snapshots with --union instead",
                own.name
            ))
            .into());
        };
        run = Some(r);
    }
    let mut extra = Vec::new();
    for name in &args.union {
        let m = store.manifest(name).with_context(|| format!("--union {name}"))?;
        store.check_snapshot(&m).with_context(|| format!("--union {name}"))?;
        extra.push(m);
    }
    let layers = session::UnionLayers {
        run,
        web_name: "",
        explore: !args.no_explore_layer,
        leave_out_own: false,
        extra,
    };
    let mut o = session::union_layers(store, own, layers)?;
    if let Some(r) = run {
        // The site's other recordings are the union's layers named RUN/<task>.
        let site = o.layers.iter().any(|l| {
            l.kind == replay::overlay::OverlayKind::SiteUnion
                && session::task_of(r, &l.manifest.name).is_some()
        });
        if !site {
            eprintln!(
                "--frozen-web site: no other snapshot of {r:?} is labelled with {:?}'s site; replaying it alone",
                own.name
            );
        }
    }
    o.writes = args.union_writes;
    Ok(o)
}
