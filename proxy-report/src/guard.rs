//! What the live guards refused: writes that act in the world, places a benchmark's answers are published.

use serde::{Deserialize, Serialize};

/// Which guard refused a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BlockedKind {
    /// A write that acts in the world.
    Write,
    /// A place a benchmark's answers are published.
    Answers,
}

/// One refused request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blocked {
    /// Which guard.
    pub kind: BlockedKind,
    /// Method.
    pub method: String,
    /// URL.
    pub url: String,
    /// The rule (writes) or benchmark family (answers).
    pub rule: String,
    /// Why, in words.
    pub why: String,
    /// What matched: `path`, `field NAME`, `label "TEXT"`, or the listed place.
    pub evidence: String,
}

impl Blocked {
    /// One line: `write: METHOD URL: why (rule; evidence)` (or `answers: ...`).
    pub fn line(&self) -> String {
        let kind = match self.kind {
            BlockedKind::Write => "write",
            BlockedKind::Answers => "answers",
        };
        format!("{kind}: {} {}: {} ({}; {})", self.method, self.url, self.why, self.rule, self.evidence)
    }
}
