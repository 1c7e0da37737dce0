//! The run directory that `webfreeze run` writes and everything downstream reads (the evaluator, compare,
//! the `trajectory:` policy, the demo and the benchmarks), and the OpenAI-compatible model client the agent
//! and the judge share. Small on purpose: no browser, no proxy, no store, so the evaluator can depend on it
//! without pulling chromiumoxide.
//!
//! - [`types`]: `trajectory.json` per task ([`Trajectory`], [`Step`], [`Outcome`], [`ProxyStats`]);
//! - [`run_dir`]: [`RunDir`] and [`TaskDir`], the only code that reads or writes a run's files, and
//!   `run.json` ([`RunFile`], [`TaskStatus`], [`TaskState`]);
//! - [`RunSettings`]: a run's settings as `run.json` keeps them, in an agent half and a proxy half, and
//!   each setting's enum (clap's `ValueEnum` derived for them with the `clap` feature);
//! - [`benchmark`]: which benchmark a task comes from ([`Benchmark`]), carried by the task and its trajectory;
//! - [`task_eval`]: a task's own evaluation spec ([`TaskEvalSpec`], one typed variant per benchmark), read
//!   once where the task file is loaded and carried in its trajectory;
//! - [`wire`]: a task's wire log (`wire.jsonl.zst`), the requests its browser made and what answered them;
//! - [`llm`]: the OpenAI-compatible chat-completions client.

/// The proxy report a trajectory keeps ([`Trajectory::proxy_report`]), re-exported so readers of a run need
/// no other crate.
pub use proxy_report;

pub mod benchmark;
pub mod llm;
pub mod run_dir;
mod settings;
pub mod task_env;
pub mod task_eval;
pub mod types;
pub mod wire;

pub use benchmark::{Benchmark, UnknownBenchmark};
pub use run_dir::{write_atomic, RunDir, RunDirError, RunFile, ShardInfo, TaskDir, TaskState, TaskStatus};
pub use settings::{
    ActionSpace, AgentSettings, ExploreSetting, FrozenWebUnit, GuardsSetting, MaxTokensField,
    MaxTokensSetting, MissPolicy, ObservationKind, ProxySettings, RunSettings, SearchMode, UnknownSettings,
    WarmBrowsersSetting, WsPacing,
};
pub use task_eval::{
    AssistantBenchEval, EvalSpecError, EvalType, Fuzzy, HtmlCheckSpec, ImageQuerySpec, Required,
    TaskEvalSpec, UrlRule, VerifiedEval, VerifiedEvaluator, VqaSpec, WebArenaEval, WebVoyagerEval,
};
pub use types::{
    CheckEvidence, Coverage, Exploration, Fork, GuardFlags, HtmlCheck, ImageCheck, ImageFile, Outcome,
    ProbeStats, ProxyStats, Reproduction, RescoreError, RunMode, Step, StepFlag, TextFlag, Timings,
    Trajectory, TRAJECTORY_VERSION,
};
