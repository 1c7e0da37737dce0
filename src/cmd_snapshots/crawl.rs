//! `webfreeze snapshots crawl RUN --site SITE`: the binary's side (arguments, progress on the terminal);
//! the work is `session::crawl_site`.

use std::sync::Arc;
use std::time::Duration;

use agent::crawl::CrawlOptions;
use agent::runner::AgentConfig;
use clock::{Clock, SystemClock};
use snapshots::Store;

use crate::cli::SnapshotsCmd;
use crate::config::{load_ca, upstream_config, Config};
use crate::usage::UsageError;

pub(crate) fn run(cfg: &Config, cmd: SnapshotsCmd) -> anyhow::Result<()> {
    let SnapshotsCmd::Crawl {
        run,
        site,
        starts,
        hosts,
        pages,
        depth,
        pace_ms,
        browsers,
        per_host,
        ignore_robots,
        settle_ms,
        chrome,
        upstream,
    } = cmd
    else {
        unreachable!("dispatched on Crawl")
    };
    if browsers == 0 || per_host == 0 {
        return Err(UsageError("--browsers and --per-host take at least 1".into()).into());
    }
    if pages == 0 {
        return Err(UsageError("--pages 0 would crawl nothing: give at least 1".into()).into());
    }
    for s in &starts {
        match url::Url::parse(s) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => {}
            _ => return Err(UsageError(format!("--start {s:?} is not an http(s) URL")).into()),
        }
    }
    for h in &hosts {
        let ok = !h.is_empty()
            && url::Url::parse(&format!("https://{h}/"))
                .ok()
                .and_then(|u| u.host_str().map(|x| x == h.to_ascii_lowercase()))
                .unwrap_or(false);
        if !ok {
            return Err(
                UsageError(format!("--host {h:?} is not a host name (give `shop.test`, not a URL)")).into()
            );
        }
    }
    let store = Store::open(&cfg.store)?;
    let mut agent = AgentConfig::new(agent::browser::find_chrome(chrome.as_deref())?);
    agent.settle_quiet = Duration::from_millis(settle_ms);
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let opts = session::CrawlSiteOptions {
        agent,
        crawl: CrawlOptions {
            pages,
            depth,
            pace: Duration::from_millis(pace_ms),
            robots: !ignore_robots,
            browsers,
            per_host,
        },
        starts,
        hosts,
        ca: load_ca(cfg)?,
        proxy: upstream_config(&upstream)?,
        clock,
        state_dir: cfg.home.join("crawl"),
    };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let progress = |p: &session::SiteCrawlProgress<'_>| {
        let s = p.crawl.state;
        let now = p.crawl.elapsed.as_secs_f64();
        // The rate of this call (a resumed crawl's earlier pages took their own time).
        let eta = if p.pages_now > 0 && now > 0.0 {
            let rate = p.pages_now as f64 / now;
            format!("{:.0} s", pages.saturating_sub(s.pages) as f64 / rate.max(1e-9))
        } else {
            "-".into()
        };
        eprintln!(
            "[{}/{pages} pages, {} queued, {} exchanges, {:.1} MB, ETA {eta}] {}",
            s.pages,
            s.queue.len(),
            p.exchanges,
            p.bytes as f64 / 1e6,
            p.crawl.url
        );
    };
    let r = rt.block_on(session::crawl_site(&store, &run, &site, opts, &progress))?;
    let s = &r.state;
    eprintln!(
        "crawled {} page(s) in {:.1} s into {:?}: {} exchanges, {} body bytes; over all calls {} page(s), {} queued, \
         {} link(s) left out as acting or in forms, {} disallowed by robots.txt, {} failed, {} navigation(s) \
         refused by the gate (off the site's hosts or disallowed){}",
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
        r.refused,
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
