//! Fork a recorded trajectory at step N: the first N recorded replies are re-executed (on the frozen or the
//! live web), then the model takes over the same browser with the message history it would have seen had it
//! taken those steps itself (each re-executed step's observation as the user turn, the recorded reply as its
//! own), and the rest of the step budget. Uses: counterfactuals on a failed trajectory ("what if step 5 had
//! been different"), RL from intermediate states, two models compared from the same state.

use serde::{Deserialize, Serialize};

use super::{Decision, LlmPolicy, PolicyError, Prompt, TrajectoryPolicy};

/// Where a trajectory forked (kept in the forked trajectory).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkPoint {
    /// The run whose replies were re-executed.
    pub run: String,
    /// Recorded steps re-executed; the model decided from step `at + 1` on.
    pub at: u32,
}

/// The recorded run's replies up to the fork, the model after it.
pub struct ForkPolicy {
    prefix: TrajectoryPolicy,
    at: u32,
    model: LlmPolicy,
}

impl ForkPolicy {
    /// Fork `prefix` after its first `at` steps. The recorded trajectory must have them (a fork past its
    /// end would hand the model a state nobody recorded); `at` 0 is the model from the start page.
    pub fn new(prefix: TrajectoryPolicy, at: u32, model: LlmPolicy) -> Result<Self, PolicyError> {
        let had = prefix.original().steps.len();
        if at as usize > had {
            return Err(PolicyError::ForkBeyond {
                task: prefix.original().task_id.clone(),
                run: prefix.run().display().to_string(),
                at,
                had,
            });
        }
        Ok(Self { prefix, at, model })
    }

    /// Where it forks.
    pub fn point(&self) -> ForkPoint {
        ForkPoint { run: self.prefix.run().display().to_string(), at: self.at }
    }

    /// The recorded run (its steps up to the fork are compared with the re-execution).
    pub fn prefix(&self) -> &TrajectoryPolicy {
        &self.prefix
    }

    /// The model policy after the fork.
    pub(crate) fn model_mut(&mut self) -> &mut LlmPolicy {
        &mut self.model
    }

    /// Whether step `step` (1-based) is one of the re-executed ones.
    pub fn replays(&self, step: u32) -> bool {
        step <= self.at
    }

    pub(super) async fn decide(&mut self, p: &Prompt<'_>) -> Result<Decision, PolicyError> {
        if self.replays(p.step) {
            let d = self.prefix.decide(p)?;
            // The model's history: this step's observation and the reply "it" gave.
            self.model.remember(p, &d.raw_reply);
            Ok(d)
        } else {
            self.model.decide(p).await
        }
    }

    /// `fork:RUN@N+llm:MODEL`.
    pub fn describe(&self) -> String {
        format!("fork:{}@{}+llm:{}", self.prefix.run().display(), self.at, self.model.model())
    }
}
