//! The evaluator (not built yet; see the open evaluator issue).
//!
//! It will hold the LLM judge after the WebVoyager protocol (task, final answer and the last k screenshots
//! to a vision model at temperature 0), the reference matchers (exact_match, must_include, must_exclude,
//! fuzzy_match, url_match), eval reports, and the live-vs-snapshot comparison (per-site success rates,
//! Cohen's kappa, exact McNemar test, evidence for each flipped task).
