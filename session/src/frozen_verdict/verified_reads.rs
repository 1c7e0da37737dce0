//! A WebArena-Verified run whose network check hangs on a read the frozen web could not answer.
//!
//! Verified's network checks read the run's own requests, and most of them ask for a status (200 unless
//! the spec says otherwise). When replay misses a page the agent asked for, the run's wire holds replay's
//! own miss, not the site's answer (`crate::network_events` gives it no response). Whether that changes
//! the verdict is decided by scoring the checks twice: once as the wire is, once with the missed reads
//! answered (status 200). When the two verdicts differ, the run's verdict depends on an answer the frozen
//! web does not know, and the run is counted apart with that read named; when they agree (the agent read
//! the wrong page anyway, or the check does not look at it), the run is scored as it is. Missed writes are
//! judged before this (`super::judge`): they put a Verified run apart whatever its checks say.

use evaluator::verified::network::{self, Event};
use proxy_report::wire::{Answer, WireEntry};
use proxy_report::writes::is_write;
use trajectory::{VerifiedEval, VerifiedEvaluator};

/// Why a Verified run is counted apart for a missed read its network checks depend on, or None. `entries`
/// is the run's wire log and `events` the network events read from it, one per entry, in order (anything
/// else is not this run's own wire and is left alone).
pub(super) fn hangs_on_a_missed_read(
    eval: &VerifiedEval,
    entries: &[WireEntry],
    events: &[Event],
) -> Option<String> {
    if entries.len() != events.len() {
        return None;
    }
    let missed: Vec<usize> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e.answer, Answer::Miss | Answer::StateUnknown))
        .filter(|(_, e)| {
            let ct = super::wire_header(&e.request_headers, "content-type").unwrap_or("");
            !is_write(&e.method, &e.url, ct, e.request_body.as_deref().unwrap_or(""))
        })
        .map(|(i, _)| i)
        .collect();
    if missed.is_empty() {
        return None;
    }
    let navigate = eval.task_type().as_deref() == Some("navigate");
    // Each network check's verdict (None: it cannot be scored here; the evaluator says so itself).
    let verdicts = |ev: &[Event]| -> Vec<Option<bool>> {
        eval.0
            .iter()
            .filter_map(|s| match s {
                VerifiedEvaluator::NetworkEvent(n) => {
                    Some(network::evaluate(n, ev, navigate).ok().map(|f| f.is_empty()))
                }
                _ => None,
            })
            .collect()
    };
    let answered = |which: &[usize]| -> Vec<Event> {
        let mut ev = events.to_vec();
        for &i in which {
            ev[i].status = 200;
        }
        ev
    };
    let as_is = verdicts(events);
    if verdicts(&answered(&missed)) == as_is {
        return None;
    }
    // Name the read that decides alone, when one does; otherwise the first of them.
    let named = missed.iter().copied().find(|&i| verdicts(&answered(&[i])) != as_is).unwrap_or(missed[0]);
    let e = &entries[named];
    let others = match missed.len() {
        1 => String::new(),
        n => format!(" ({n} reads missed in all)"),
    };
    Some(format!(
        "read {} {}, which the frozen web could not answer{others}: its network check's verdict depends on the \
         site's answer to it",
        e.method, e.url
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(method: &str, url: &str, answer: Answer, status: u16) -> WireEntry {
        super::super::tests::entry(method, url, "", answer, status)
    }

    /// The network events `crate::network_events` reads from these entries: a miss has no response.
    fn events(entries: &[WireEntry]) -> Vec<Event> {
        entries
            .iter()
            .map(|e| Event {
                method: e.method.clone(),
                url: e.url.clone(),
                request_headers: e.request_headers.clone(),
                status: if matches!(e.answer, Answer::Miss | Answer::StateUnknown) {
                    -1
                } else {
                    e.status.into()
                },
                ..Default::default()
            })
            .collect()
    }

    /// Issue 59: a Verified run is counted apart for a missed read only when its network check's verdict
    /// turns on the site's answer to it.
    #[test]
    fn a_missed_read_puts_a_verified_run_apart_only_when_its_check_turns_on_it() {
        let navigate = VerifiedEval::from_value(json!([
            {"evaluator": "AgentResponseEvaluator", "expected": {"task_type": "navigate", "status": "SUCCESS"}},
            {"evaluator": "NetworkEventEvaluator", "expected": {"url": "https://shop.test/orders", "query_params": {"status": ["pending"]}}}
        ]))
        .unwrap();
        let retrieve = VerifiedEval::from_value(json!([
            {"evaluator": "AgentResponseEvaluator", "expected": {"task_type": "retrieve", "status": "SUCCESS", "retrieved_data": ["3"]}}
        ]))
        .unwrap();
        let home = entry("GET", "https://shop.test/", Answer::Exact, 200);
        let right = "https://shop.test/orders?status=pending";
        let wrong = "https://shop.test/orders?status=done";
        type Row = (&'static str, &'static VerifiedEval, Vec<WireEntry>, Option<&'static str>);
        let (navigate, retrieve): (&'static VerifiedEval, &'static VerifiedEval) =
            (Box::leak(Box::new(navigate)), Box::leak(Box::new(retrieve)));
        let rows: Vec<Row> = vec![
            (
                "the check's page, answered",
                navigate,
                vec![home.clone(), entry("GET", right, Answer::Exact, 200)],
                None,
            ),
            (
                "the check's page, missed",
                navigate,
                vec![home.clone(), entry("GET", right, Answer::Miss, 404)],
                Some("read GET https://shop.test/orders?status=pending"),
            ),
            (
                "the check's page recorded only after a write",
                navigate,
                vec![home.clone(), entry("GET", right, Answer::StateUnknown, 404)],
                Some("which the frozen web could not answer"),
            ),
            (
                "another page, missed: fails either way",
                navigate,
                vec![home.clone(), entry("GET", wrong, Answer::Miss, 404)],
                None,
            ),
            ("nothing missed", navigate, vec![home.clone()], None),
            ("no network check", retrieve, vec![home.clone(), entry("GET", right, Answer::Miss, 404)], None),
        ];
        for (name, eval, wire, want) in rows {
            let got = hangs_on_a_missed_read(eval, &wire, &events(&wire));
            match want {
                None => assert_eq!(got, None, "{name}"),
                Some(w) => assert!(got.as_deref().is_some_and(|g| g.contains(w)), "{name}: {got:?}"),
            }
        }
        // Events that are not one per wire entry are not this run's own wire: left alone.
        let wire = vec![home, entry("GET", right, Answer::Miss, 404)];
        assert_eq!(hangs_on_a_missed_read(navigate, &wire, &events(&wire)[..1]), None);
    }
}
