//! A task's proxy counters as its trajectory keeps them: each step's share (the difference of two
//! readings), the guards' refusals by step, and a replayed task's coverage.

use trajectory::{ProxyStats, Trajectory};

pub(super) fn delta(before: &ProxyStats, after: &ProxyStats) -> ProxyStats {
    ProxyStats {
        requests: after.requests.saturating_sub(before.requests),
        writes: after.writes.saturating_sub(before.writes),
        exact: after.exact.saturating_sub(before.exact),
        normalised: after.normalised.saturating_sub(before.normalised),
        fuzzy: after.fuzzy.saturating_sub(before.fuzzy),
        site_union: after.site_union.saturating_sub(before.site_union),
        frozen_search: after.frozen_search.saturating_sub(before.frozen_search),
        assembled_batches: after.assembled_batches.saturating_sub(before.assembled_batches),
        explore: after.explore.saturating_sub(before.explore),
        crawl: after.crawl.saturating_sub(before.crawl),
        site_union_urls: after.site_union_urls.iter().skip(before.site_union_urls.len()).cloned().collect(),
        missed: after.missed.saturating_sub(before.missed),
        recorded: after.recorded.saturating_sub(before.recorded),
        failed: after.failed.saturating_sub(before.failed),
        failed_urls: after.failed_urls.iter().skip(before.failed_urls.len()).cloned().collect(),
        miss_urls: after.miss_urls.iter().skip(before.miss_urls.len()).cloned().collect(),
        fuzzy_urls: after.fuzzy_urls.iter().skip(before.fuzzy_urls.len()).cloned().collect(),
        document_missed: after.document_missed.saturating_sub(before.document_missed),
        render_missed: after.render_missed.saturating_sub(before.render_missed),
        websocket_missed: after.websocket_missed.saturating_sub(before.websocket_missed),
        websocket_miss_messages: after
            .websocket_miss_messages
            .iter()
            .skip(before.websocket_miss_messages.len())
            .cloned()
            .collect(),
        blocked_writes: after.blocked_writes.saturating_sub(before.blocked_writes),
        blocked_answers: after.blocked_answers.saturating_sub(before.blocked_answers),
        blocked: after.blocked.iter().skip(before.blocked.len()).cloned().collect(),
    }
}

/// The guards' refusals by step (`write: ...` and `answers: ...` lines of the per-step counters); those no
/// step saw happened while the start page loaded (step 0).
pub(super) fn guard_flags(t: &mut Trajectory, total: &ProxyStats) {
    if total.blocked.is_empty() {
        return;
    }
    let mut seen: Vec<(u32, &String)> =
        t.steps.iter().flat_map(|s| s.proxy.blocked.iter().map(move |b| (s.n, b))).collect();
    let mut start: Vec<&String> = total.blocked.iter().collect();
    for (_, b) in &seen {
        if let Some(i) = start.iter().position(|x| x == b) {
            start.remove(i);
        }
    }
    seen.splice(0..0, start.into_iter().map(|b| (0, b)));
    let mut g = t.guard.take().unwrap_or_default();
    for (step, line) in seen {
        let flag = |what: &str| trajectory::StepFlag { step, what: what.to_string() };
        if let Some(rest) = line.strip_prefix("write: ") {
            g.writes.push(flag(rest));
        } else if let Some(rest) = line.strip_prefix("answers: ") {
            g.answer_places.push(flag(rest));
        }
    }
    t.guard = Some(g);
}

/// A replayed task's coverage: which steps missed pages or what pages needed, from the per-step counters
/// and the proxy's totals (`total`, start page included).
pub fn coverage(steps: &[trajectory::Step], total: &ProxyStats) -> trajectory::Coverage {
    let of =
        |f: fn(&ProxyStats) -> u64| steps.iter().filter(|s| f(&s.proxy) > 0).map(|s| s.n).collect::<Vec<_>>();
    let steps_document_missed = of(|p| p.document_missed);
    let steps_render_missed = of(|p| p.render_missed);
    let steps_site_union = of(|p| p.site_union);
    let steps_websocket_missed = of(|p| p.websocket_missed);
    let covered =
        if steps.is_empty() { 1.0 } else { 1.0 - steps_render_missed.len() as f64 / steps.len() as f64 };
    trajectory::Coverage {
        off_snapshot: total.document_missed > 0,
        steps_document_missed,
        steps_render_missed,
        documents_missed: total.document_missed,
        render_missed: total.render_missed,
        steps_site_union,
        site_union: total.site_union,
        frozen_search: total.frozen_search,
        assembled_batches: total.assembled_batches,
        explore: total.explore,
        crawl: total.crawl,
        steps_websocket_missed,
        websocket_missed: total.websocket_missed,
        covered,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step's counters are the difference of two readings, every layer's; the task's coverage takes the
    /// totals.
    #[test]
    fn a_steps_share_is_the_difference_of_two_readings() {
        let before = ProxyStats {
            requests: 3,
            exact: 2,
            frozen_search: 1,
            assembled_batches: 1,
            ..Default::default()
        };
        let after = ProxyStats {
            requests: 9,
            exact: 5,
            frozen_search: 1,
            assembled_batches: 3,
            miss_urls: vec!["GET https://a.test/x".into()],
            document_missed: 1,
            ..Default::default()
        };
        let d = delta(&before, &after);
        assert_eq!((d.requests, d.exact, d.frozen_search, d.assembled_batches), (6, 3, 0, 2));
        assert_eq!(d.miss_urls, vec!["GET https://a.test/x".to_string()]);
        let c = coverage(&[], &after);
        assert!(c.off_snapshot);
        assert_eq!((c.assembled_batches, c.frozen_search, c.documents_missed), (3, 1, 1));
    }
}
