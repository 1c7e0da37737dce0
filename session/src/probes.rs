//! Per-step proxy counters for the agent, one probe per proxy mode (the agent never sees the store).

use std::sync::{Arc, Mutex};

use proxy::CountingPassThrough;
use proxy_report::{LiveReport, ModeReport, ProxyReport, RecordReport};
use recorder::Recorder;
use replay::Replay;
use trajectory::task_env::ProxyProbe;
use trajectory::ProxyStats;

/// Record mode: exchanges stored; the rendered text of the pages the agent observed, kept for the snapshot.
pub(crate) struct RecordProbe(pub(crate) Arc<Recorder>, pub(crate) Arc<Mutex<snapshots::RenderedPages>>);

impl ProxyProbe for RecordProbe {
    fn counters(&self) -> ProxyStats {
        let s = self.0.stats();
        ProxyStats {
            requests: s.recorded + s.skipped + s.failed,
            recorded: s.recorded,
            writes: s.writes,
            ..Default::default()
        }
    }
    fn report(&self) -> Option<ProxyReport> {
        let s = self.0.stats();
        Some(ProxyReport::new(ModeReport::Record(RecordReport {
            recorded: s.recorded,
            truncated: s.truncated,
            not_recorded: s.skipped,
            no_response: s.failed,
            store_errors: s.store_errors,
        })))
    }
    fn rendered_text(&self, url: &str, text: &str) {
        if let Ok(mut pages) = self.1.lock() {
            pages.insert(url.to_string(), text.to_string());
        }
    }
}

/// Live mode: page requests and the ones that got no response.
pub(crate) struct LiveProbe(pub(crate) Arc<CountingPassThrough>);

impl ProxyProbe for LiveProbe {
    fn counters(&self) -> ProxyStats {
        let failed_urls = self.0.failed();
        ProxyStats {
            requests: self.0.requests(),
            failed: failed_urls.len() as u64,
            failed_urls,
            ..Default::default()
        }
    }
    fn report(&self) -> Option<ProxyReport> {
        let c = self.counters();
        Some(ProxyReport::new(ModeReport::Live(LiveReport {
            requests: c.requests,
            no_response: c.failed,
            failed: c.failed_urls,
        })))
    }
    fn rendered_text(&self, _: &str, _: &str) {}
}

/// Replay mode: how each request was answered.
pub(crate) struct ReplayProbe(pub(crate) Arc<Replay>);

impl ProxyProbe for ReplayProbe {
    fn counters(&self) -> ProxyStats {
        let r = self.0.report();
        ProxyStats {
            requests: r.requests,
            exact: r.exact,
            normalised: r.normalised,
            fuzzy: r.fuzzy,
            site_union: r.site_union,
            site_union_urls: r
                .overlay_answers
                .iter()
                .filter(|a| a.layer == proxy_report::replay::OverlayKind::SiteUnion)
                .map(|a| format!("{} <- {}", a.url, a.snapshot))
                .collect(),
            frozen_search: r.frozen_search,
            assembled_batches: r.assembled_batches,
            explore: r.explore,
            crawl: r.crawl,
            missed: r.missed,
            recorded: 0,
            miss_urls: r.misses.iter().map(|m| format!("{} {}", m.method, m.url)).collect(),
            fuzzy_urls: r.fuzzy_matches.iter().map(|f| format!("{} -> {}", f.url, f.recorded_url)).collect(),
            document_missed: r
                .misses
                .iter()
                .filter(|m| matches!(m.dest.as_deref(), Some("document" | "iframe" | "frame")))
                .count() as u64,
            render_missed: r.misses.iter().filter(|m| m.render).count() as u64,
            websocket_missed: r.websocket_missed,
            websocket_miss_messages: r
                .websocket_misses
                .iter()
                .map(|m| format!("{}: {}", m.url, m.message))
                .collect(),
            ..Default::default()
        }
    }
    fn report(&self) -> Option<ProxyReport> {
        Some(ProxyReport::new(ModeReport::Replay(Box::new(self.0.report()))))
    }
    fn rendered_text(&self, _: &str, _: &str) {}
}

/// Live and record behind the guards: the inner probe's counters and the refusals.
pub(crate) struct GuardedProbe {
    pub(crate) inner: Arc<dyn ProxyProbe>,
    pub(crate) log: Arc<proxy::guard::GuardLog>,
}

impl ProxyProbe for GuardedProbe {
    fn counters(&self) -> ProxyStats {
        use proxy::guard::BlockedKind;
        let blocked = self.log.blocked();
        let count = |k: BlockedKind| blocked.iter().filter(|b| b.kind == k).count() as u64;
        ProxyStats {
            blocked_writes: count(BlockedKind::Write),
            blocked_answers: count(BlockedKind::Answers),
            blocked: blocked.iter().map(|b| b.line()).collect(),
            ..self.inner.counters()
        }
    }
    fn report(&self) -> Option<ProxyReport> {
        let mut r =
            self.inner.report().unwrap_or_else(|| ProxyReport::new(ModeReport::Other(Default::default())));
        r.blocked = self.log.blocked();
        Some(r)
    }
    fn rendered_text(&self, url: &str, text: &str) {
        self.inner.rendered_text(url, text);
    }
}

#[cfg(all(test, feature = "run"))]
mod tests {
    /// The agent names the header the guard reads without depending on the proxy: one name on both sides.
    #[test]
    fn the_agent_and_the_guard_agree_on_the_control_header() {
        assert_eq!(agent::browser::CONTROL_HEADER, proxy::guard::CONTROL_HEADER);
        // And the wall classifier knows the guards' pages for what they are.
        assert_eq!(wall::GUARD_HEADER, proxy::guard::BLOCKED_HEADER);
        // State probes: the mark the agent's background tab sends is the one the recorder strips and flags.
        assert_eq!(agent::runner::PROBE_HEADER, recorder::PROBE_HEADER);
    }
}
