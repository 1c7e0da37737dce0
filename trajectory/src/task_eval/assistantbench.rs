//! AssistantBench's gold answer, as their task files give it (`answer`, with `gold_url` and `explanation`
//! kept for the reader of a report): one text, where a list is one item per line and a structured answer
//! one JSON object per line. `evaluator::assistantbench` scores an answer against it.

use serde::{Deserialize, Serialize};

/// A task's gold answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssistantBenchEval {
    /// The gold answer's text.
    pub answer: String,
    /// Where the annotators found it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_url: Option<String>,
    /// How they found it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
}

impl AssistantBenchEval {
    /// The answer's non-empty lines (what a page quoting the task must not reveal).
    pub fn answer_texts(&self) -> Vec<String> {
        self.answer.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect()
    }
}
