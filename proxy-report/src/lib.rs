//! What a task's proxy reports at the end of the task, as data: written by the proxy side (replay,
//! recording, a live pass-through, the guards), kept in the task's trajectory
//! (`trajectory::Trajectory::proxy_report`) and read back without depending on any of them. A leaf crate
//! (serde, form_urlencoded and `wall` only), so `trajectory` can name the type and `replay` need not know trajectories.
//!
//! In JSON the mode's fields are at the top level (a replay report's `walls`, a recording's `recorded`),
//! with the guards' refusals beside them under `blocked`: the shape trajectories have always had. A
//! report this version cannot read (written by another one) is kept as it is ([`ModeReport::Other`]).

pub mod guard;
pub mod replay;
pub mod wire;
pub mod writes;

use serde::{Deserialize, Serialize};

pub use guard::{Blocked, BlockedKind};
pub use replay::ReplayReport;

/// A recorded exchange: the snapshot it is in and its sequence number there (what answered a request in a
/// run's wire, what a batch was assembled from).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedRef {
    /// The snapshot it is in.
    pub snapshot: String,
    /// Its sequence number there.
    pub seq: u64,
}

/// A task's proxy report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProxyReport {
    /// What the proxy's mode counted.
    #[serde(flatten)]
    pub mode: ModeReport,
    /// Requests the guards refused (live and record behind the guards).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<Blocked>,
}

impl ProxyReport {
    /// A report with no refusals.
    pub fn new(mode: ModeReport) -> ProxyReport {
        ProxyReport { mode, blocked: Vec::new() }
    }

    /// The replay report, when the task was replayed.
    pub fn replay(&self) -> Option<&ReplayReport> {
        match &self.mode {
            ModeReport::Replay(r) => Some(r),
            _ => None,
        }
    }
}

/// What one mode counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ModeReport {
    /// Replay: how each request was answered.
    Replay(Box<ReplayReport>),
    /// Record: what was stored.
    Record(RecordReport),
    /// Live: what passed through.
    Live(LiveReport),
    /// A report this version cannot read (another version's), kept as it is.
    Other(serde_json::Map<String, serde_json::Value>),
}

/// What a recording stored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordReport {
    /// Exchanges stored.
    pub recorded: u64,
    /// Of those, exchanges stored flagged truncated (the body was cut short).
    pub truncated: u64,
    /// Requests forwarded but not recorded (filtered hosts).
    pub not_recorded: u64,
    /// Requests that got no response.
    pub no_response: u64,
    /// Store errors while recording (each an exchange lost).
    pub store_errors: u64,
}

/// What a live pass-through saw.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveReport {
    /// Page requests.
    pub requests: u64,
    /// Of those, the ones that got no response.
    pub no_response: u64,
    /// Their URLs.
    pub failed: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_mode_reads_back_as_itself_and_an_unknown_report_is_kept() {
        let record = ProxyReport {
            mode: ModeReport::Record(RecordReport { recorded: 3, truncated: 1, ..Default::default() }),
            blocked: vec![Blocked {
                kind: BlockedKind::Write,
                method: "POST".into(),
                url: "https://shop.test/checkout".into(),
                rule: "checkout".into(),
                why: "places an order".into(),
                evidence: "path".into(),
            }],
        };
        let live = ProxyReport::new(ModeReport::Live(LiveReport {
            requests: 5,
            no_response: 1,
            failed: vec!["https://x.test/a".into()],
        }));
        let replay = ProxyReport::new(ModeReport::Replay(Box::new(ReplayReport {
            snapshot: "run/t1".into(),
            requests: 4,
            exact: 3,
            missed: 1,
            misses: vec![replay::MissEntry {
                episode: 0,
                method: "GET".into(),
                url: "https://x.test/b".into(),
                action: "404".into(),
                dest: Some("document".into()),
                render: true,
            }],
            coverage: 0.75,
            fuzzy_min_score: 0.5,
            ..Default::default()
        })));
        for r in [record, live, replay] {
            let v = serde_json::to_value(&r).unwrap();
            assert!(v.get("mode").is_none(), "the mode's fields are at the top level: {v}");
            assert_eq!(serde_json::from_value::<ProxyReport>(v).unwrap(), r);
        }
        // The record report's JSON, as trajectories have it.
        let v = json!({"recorded": 3, "truncated": 0, "not_recorded": 2, "no_response": 0, "store_errors": 0,
                       "blocked": []});
        let r: ProxyReport = serde_json::from_value(v).unwrap();
        assert!(
            matches!(r.mode, ModeReport::Record(RecordReport { recorded: 3, not_recorded: 2, .. })),
            "{r:?}"
        );
        // Another version's report stays as it was.
        let v = json!({"answered_by_magic": 7});
        let r: ProxyReport = serde_json::from_value(v.clone()).unwrap();
        assert!(matches!(&r.mode, ModeReport::Other(_)), "{r:?}");
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
    }
}
