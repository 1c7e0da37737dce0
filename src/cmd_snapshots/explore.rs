//! `webfreeze snapshots explore NAME`: the binary's side (arguments, progress); the work is
//! `session::explore_snapshot`.

use std::sync::Arc;
use std::time::Duration;

use agent::explore::ExploreOptions;
use agent::runner::AgentConfig;
use clock::{Clock, SystemClock};
use snapshots::Store;

use crate::cli::SnapshotsCmd;
use crate::config::{load_ca, upstream_config, Config};
use crate::usage::UsageError;

pub(crate) fn run(cfg: &Config, cmd: SnapshotsCmd) -> anyhow::Result<()> {
    let SnapshotsCmd::Explore {
        name,
        explore_links,
        explore_host_budget,
        explore_depth,
        explore_pace_ms,
        settle_ms,
        chrome,
        upstream,
    } = cmd
    else {
        unreachable!("dispatched on Explore")
    };
    for (flag, n) in [
        ("--explore-links", explore_links),
        ("--explore-host-budget", explore_host_budget),
        ("--explore-depth", explore_depth as usize),
    ] {
        if n == 0 {
            return Err(UsageError(format!("{flag} 0 would explore nothing: give at least 1")).into());
        }
    }
    let store = Store::open(&cfg.store)?;
    let mut agent = AgentConfig::new(agent::browser::find_chrome(chrome.as_deref())?);
    agent.settle_quiet = Duration::from_millis(settle_ms);
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let opts = session::ExploreSnapshotOptions {
        agent,
        explore: ExploreOptions {
            links_per_page: explore_links,
            host_budget: explore_host_budget,
            depth: explore_depth,
            pace: Duration::from_millis(explore_pace_ms),
            frontier: Default::default(),
        },
        ca: load_ca(cfg)?,
        proxy: upstream_config(&upstream)?,
        clock,
    };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let progress = |i: usize, n: usize, url: &str| eprintln!("[{}/{n}] revisiting {url}", i + 1);
    let (m, stats) = rt.block_on(session::explore_snapshot(&store, &name, opts, &progress))?;
    eprintln!(
        "explored {} page(s) in {:.1} s into {:?}: {} exchanges, {} body bytes ({} link(s) left out as forms or \
         destructive, {} for the budget, {} failed{})",
        stats.pages,
        stats.ms as f64 / 1000.0,
        m.name,
        m.counts.exchanges,
        m.counts.body_bytes,
        stats.skipped_destructive,
        stats.skipped_budget,
        stats.failed,
        if stats.stopped_hosts.is_empty() {
            String::new()
        } else {
            format!("; stopped on {}", stats.stopped_hosts.join(", "))
        }
    );
    Ok(())
}
