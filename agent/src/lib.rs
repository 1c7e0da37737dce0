//! The WebVoyager-style browser agent: Chromium driven through chromiumoxide via a webfreeze proxy
//! address (the agent never sees the store).
//!
//! - [`tasks`]: WebVoyager task files;
//! - [`browser`]: a Chromium per task, or a fresh context per task in a warm one (proxy, SPKI pin, QUIC
//!   off, service workers bypassed, init scripts before page scripts), observation and actions;
//! - [`explore`]: exploration while recording; [`background`]: browsers for work outside a task
//!   (revisits, the crawl);
//! - [`som`]: the Set-of-Marks labelling script;
//! - [`action`]: the action grammar and a tolerant reply parser;
//! - [`policy`]: the model policy and the recorded-trajectory policy;
//! - [`runner`]: one task from start to end, written through `trajectory::RunDir`;
//! - [`contamination`]: the page side of the contamination guard (a page quoting the task and its answer).
//!
//! The trajectory types and the model client live in the `trajectory` crate (the evaluator needs them
//! without a browser).

pub mod action;
pub mod axtree;
pub mod background;
pub mod browser;
pub mod contamination;
pub mod crawl;
pub mod explore;
pub mod policy;
pub mod runner;
pub mod settings;
pub mod som;
pub mod tasks;
