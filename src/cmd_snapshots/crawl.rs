//! `webfreeze snapshots crawl RUN --site SITE`: the binary's side (arguments, progress on the terminal);
//! the work is `session::crawl_site`.

use std::sync::Arc;
use std::time::Duration;

use agent::crawl::{CrawlOptions, CrawlProgress};
use agent::runner::AgentConfig;
use clock::{Clock, SystemClock};
use snapshots::Store;

use crate::cli::SnapshotsCmd;
use crate::config::{load_ca, upstream_config, Config};
use crate::UsageError;

pub(crate) fn run(cfg: &Config, cmd: SnapshotsCmd) -> anyhow::Result<()> {
    let SnapshotsCmd::Crawl {
        run,
        site,
        starts,
        pages,
        depth,
        pace_ms,
        ignore_robots,
        settle_ms,
        chrome,
        upstream,
    } = cmd
    else {
        unreachable!("dispatched on Crawl")
    };
    if pages == 0 {
        return Err(UsageError("--pages 0 would crawl nothing: give at least 1".into()).into());
    }
    for s in &starts {
        match url::Url::parse(s) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => {}
            _ => return Err(UsageError(format!("--start {s:?} is not an http(s) URL")).into()),
        }
    }
    let store = Store::open(&cfg.store)?;
    let mut agent = AgentConfig::new(agent::browser::find_chrome(chrome.as_deref())?);
    agent.settle_quiet = Duration::from_millis(settle_ms);
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let opts = session::CrawlSiteOptions {
        agent,
        crawl: CrawlOptions { pages, depth, pace: Duration::from_millis(pace_ms), robots: !ignore_robots },
        starts,
        ca: load_ca(cfg)?,
        proxy: upstream_config(&upstream)?,
        clock,
        state_dir: cfg.home.join("crawl"),
    };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let progress = |p: &CrawlProgress<'_>| {
        let s = p.state;
        let now = p.elapsed.as_secs_f64();
        let eta = if s.pages > 0 && now > 0.0 {
            let rate = s.pages as f64 / now.max(0.001);
            format!("{:.0} s", pages.saturating_sub(s.pages) as f64 / rate.max(1e-9))
        } else {
            "-".into()
        };
        eprintln!("[{}/{pages} pages, {} queued, ETA {eta}] {}", s.pages, s.queue.len(), p.url);
    };
    let r = rt.block_on(session::crawl_site(&store, &run, &site, opts, &progress))?;
    let s = &r.state;
    eprintln!(
        "crawled {} page(s) in {:.1} s into {:?}: {} exchanges, {} body bytes; over all calls {} page(s), {} queued, \
         {} link(s) left out as acting or in forms, {} disallowed by robots.txt, {} failed{}",
        r.pages_now,
        r.secs,
        r.part.name,
        r.part.counts.exchanges,
        r.part.counts.body_bytes,
        s.pages,
        s.queue.len(),
        s.skipped_acting,
        s.skipped_robots,
        s.failed,
        if s.stopped_hosts.is_empty() {
            String::new()
        } else {
            format!("; stopped on {}", s.stopped_hosts.keys().cloned().collect::<Vec<_>>().join(", "))
        }
    );
    if !s.queue.is_empty() {
        eprintln!("the budget (--pages {pages}) is spent with pages still queued: raise --pages and run it again to go on");
    }
    Ok(())
}
