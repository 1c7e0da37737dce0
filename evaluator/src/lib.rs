//! Judging runs and comparing them.
//!
//! - [`matchers`]: reference matchers with normalisation; [`judge`]: the model judge and fuzzy_match;
//! - [`reference`]: where reference answers come from (our task files' `eval` specs, WebVoyager's
//!   `reference_answer.json`);
//! - [`evaluate`]: a run directory in, `eval.json` out;
//! - [`compare`]: two evaluated runs side by side, with agreement, Cohen's kappa, exact McNemar, and the
//!   evidence for every flipped task (Markdown, JSON, one self-contained HTML page);
//! - [`stats`]: kappa and McNemar;
//! - [`webarena`]: WebArena / VisualWebArena `eval` specs (string_match, url_match, program_html,
//!   page_image_query); [`image_match`]: VWA's SSIM;
//! - [`verified`]: WebArena-Verified's evaluators; [`assistantbench`]: AssistantBench's accuracy.
//!
//! Each benchmark's scorer is chosen in `evaluate::score` by the trajectory's [`trajectory::Benchmark`].

pub mod assistantbench;
pub mod compare;
pub mod curve;
pub mod evaluate;
pub mod image_match;
pub mod judge;
pub mod matchers;
pub mod reference;
pub mod stats;
pub mod verified;
pub mod webarena;
