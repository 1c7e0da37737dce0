//! A run's own wire: each request a task's browser made and what answered it, in the order they were
//! answered. Written by the proxy side (replay's own notes, and `proxy::wire_tap` in front of the live web,
//! both through a [`WireTap`]), kept beside the task's trajectory by
//! `trajectory::wire`, and read by the evaluator's network checks, so a replayed run is scored on what *it*
//! sent, never on what the recording agent sent.

use serde::{Deserialize, Serialize};

use crate::replay::OverlayKind;

/// Request bodies are kept up to this many bytes (a form, a JSON payload); the rest is cut and the entry
/// says so. Recording keeps whole bodies; a wire log is for scoring, and no network check reads further.
pub const MAX_WIRE_BODY: usize = 1 << 20;

/// What answered a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Answer {
    /// The task's snapshot, same request key.
    Exact,
    /// The task's snapshot, after volatile parameters were normalised.
    Normalised,
    /// The task's snapshot, the closest recorded URL.
    Fuzzy,
    /// Another snapshot of the frozen web (the overlay's kind says which).
    Overlay,
    /// The frozen search engine.
    FrozenSearch,
    /// The site's own search answered from its frozen pages.
    SiteSearch,
    /// Answered by replay itself (an empty icon, a sink).
    Synthetic,
    /// A script batch nobody recorded, assembled from recorded batches that hold its modules
    /// (`replay::batches`); `recorded` names the first of them.
    AssembledBatch,
    /// Nothing recorded matched: the miss policy answered (404, or the live site).
    Miss,
    /// A page that carries state, recorded only after writes the run has not made: replay answered 404,
    /// marked (`replay::epochs`).
    StateUnknown,
    /// A recorded exchange without its body (not a fidelity hit).
    WithoutBody,
    /// Refused by a guard.
    Blocked,
    /// The live site answered (a live run).
    Live,
    /// Replay could not answer (a store error).
    Error,
}

impl Answer {
    /// Its name in logs and reports.
    pub fn name(self) -> &'static str {
        match self {
            Answer::Exact => "exact",
            Answer::Normalised => "normalised",
            Answer::Fuzzy => "fuzzy",
            Answer::Overlay => "overlay",
            Answer::FrozenSearch => "frozen-search",
            Answer::SiteSearch => "site-search",
            Answer::Synthetic => "synthetic",
            Answer::AssembledBatch => "assembled-batch",
            Answer::Miss => "miss",
            Answer::StateUnknown => "state-unknown",
            Answer::WithoutBody => "without-body",
            Answer::Blocked => "blocked",
            Answer::Live => "live",
            Answer::Error => "error",
        }
    }
}

/// The recorded exchange a request was answered from (defined at the crate's root: the replay report names
/// it too).
pub use crate::RecordedRef;

/// One request of the run and what answered it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireEntry {
    /// Its place in the log (0-based, in the order answers were decided).
    pub n: u64,
    /// Method.
    pub method: String,
    /// Absolute URL.
    pub url: String,
    /// Request headers as the browser sent them.
    #[serde(default)]
    pub request_headers: Vec<(String, String)>,
    /// The request body as text (lossy UTF-8), up to [`MAX_WIRE_BODY`] bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_body: Option<String>,
    /// The body was longer than [`MAX_WIRE_BODY`]: this many bytes in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_body_cut: Option<u64>,
    /// Response status (0: the exchange failed before a response).
    pub status: u16,
    /// Response headers as the browser got them.
    #[serde(default)]
    pub response_headers: Vec<(String, String)>,
    /// What answered.
    pub answer: Answer,
    /// For [`Answer::Overlay`]: which layer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlay: Option<OverlayKind>,
    /// The recorded exchange it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded: Option<RecordedRef>,
    /// The response body's BLAKE3 hash in the store, when it came from a recorded exchange.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_body: Option<String>,
    /// The response body as text, when no store holds it (a live run) and it is one the network checks
    /// read ([`readable_body`]), up to [`MAX_WIRE_BODY`] bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_text: Option<String>,
    /// The label of the control the agent was using when the browser sent the request (the button or
    /// link it clicked, as it told the proxy), when it said: what the side-effect guard judged the request
    /// with, exported to HAR as `_webfreeze.control` so `webfreeze guard check` judges it the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<String>,
}

/// Whether a response body of this content type is one the network checks read (JSON and form bodies):
/// the ones a live wire log keeps as text.
pub fn readable_body(content_type: &str) -> bool {
    content_type.contains("json") || content_type.contains("x-www-form-urlencoded")
}

/// Where a proxy sends its wire entries (the task's wire log). Called on the proxy's data path: keep it
/// short and never block on the network.
pub trait WireTap: Send + Sync + std::fmt::Debug {
    /// One request answered.
    fn record(&self, entry: WireEntry);

    /// A new episode began (standalone replay's `POST /__webfreeze/reset`): a tap that keeps one log per
    /// episode starts the next. The default keeps one log.
    fn new_episode(&self, _episode: u64) {}
}
