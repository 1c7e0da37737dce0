//! The WebVoyager-style browser agent. **In progress**: this crate holds, so far, the two pieces the rest
//! builds on: WebVoyager task files ([`tasks`]) and the action grammar with its tolerant parser
//! ([`action`]).
//!
//! Still to come (the open agent issue): driving the system Chromium through chromiumoxide via a webfreeze
//! proxy address (never the store), Set-of-Marks observation (labelled screenshot plus element list),
//! policies (an LLM over the OpenAI-compatible API, or a recorded trajectory), and the run directory
//! writer (our trajectory.json plus WebVoyager's interact_messages.json / screenshotN.png). In replay it
//! installs `replay::shim::script` through `Page.addScriptToEvaluateOnNewDocument`.

pub mod action;
pub mod tasks;
