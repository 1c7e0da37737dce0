//! The WebVoyager-style browser agent (not built yet; see the open agent issue).
//!
//! It will drive the system Chromium through chromiumoxide via a webfreeze proxy address (never the store):
//! Set-of-Marks observation (labelled screenshot plus element list), the WebVoyager action grammar and its
//! parser, policies (an LLM over the OpenAI-compatible API, or a recorded trajectory), and the run
//! directory writer (our trajectory.json plus WebVoyager's interact_messages.json / screenshotN.png). In
//! replay it installs `replay::shim::script` through `Page.addScriptToEvaluateOnNewDocument`.
