//! The bundled demo (not built yet; see the open demo issue).
//!
//! It will serve two or three small HTTPS demo sites on loopback whose content drifts over time (prices,
//! headlines, a random promotion, cache-busted assets, an XHR search API), with a WebVoyager-format task
//! file and scripted trajectories, for `webfreeze demo`: record live, drift, replay, evaluate, compare.
