//! The WebVoyager-style browser agent: Chromium driven through chromiumoxide via a webfreeze proxy
//! address (the agent never sees the store).
//!
//! - [`tasks`]: WebVoyager task files;
//! - [`browser`]: one Chromium per task (fresh profile, proxy, SPKI pin, QUIC off, service workers
//!   bypassed, init scripts before page scripts), observation and actions;
//! - [`som`]: the Set-of-Marks labelling script;
//! - [`action`]: the action grammar and a tolerant reply parser;
//! - [`llm`]: the OpenAI-compatible client (also used by the evaluator's judge);
//! - [`policy`]: the model policy and the recorded-trajectory policy;
//! - [`runner`]: one task from start to end;
//! - [`trajectory`]: the run directory's per-task files.

pub mod action;
pub mod browser;
pub mod llm;
pub mod policy;
pub mod runner;
pub mod som;
pub mod tasks;
pub mod trajectory;
