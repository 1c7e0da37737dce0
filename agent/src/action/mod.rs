//! The action spaces a model can write in, and the one reply type the runner handles whichever it is:
//! [`ActionSpace`] picks the grammar, [`AnyAction`] / [`AnyParsed`] carry the result. Each benchmark's
//! grammar and parser is a module of its own: [`webvoyager`] (WebVoyager's seven actions) and
//! [`webarena`] (WebArena's). A new action space is one more module and one more variant here.

pub mod webarena;
pub mod webvoyager;

pub use webarena::WebArenaAction;
pub use webvoyager::{ScrollTarget, WebVoyagerAction};

use std::sync::OnceLock;

use regex::Regex;

/// Which grammar the model writes actions in (`--action-space`): defined with the other run settings in
/// `trajectory`, which `run.json` and the command line name it by.
pub use trajectory::ActionSpace;

/// An action of either space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnyAction {
    /// WebVoyager's.
    WebVoyager(WebVoyagerAction),
    /// WebArena's.
    WebArena(WebArenaAction),
}

impl AnyAction {
    /// The answer, when the action ends the task.
    pub fn answer(&self) -> Option<&str> {
        match self {
            AnyAction::WebVoyager(WebVoyagerAction::Answer(a))
            | AnyAction::WebArena(WebArenaAction::Stop(a)) => Some(a),
            _ => None,
        }
    }
}

impl std::fmt::Display for AnyAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnyAction::WebVoyager(a) => a.fmt(f),
            AnyAction::WebArena(a) => a.fmt(f),
        }
    }
}

/// A reply read in either space: thought, the action as written, the action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnyParsed {
    /// The reasoning.
    pub thought: String,
    /// The action text as written.
    pub raw_action: String,
    /// The action.
    pub action: AnyAction,
}

/// Parse a reply in action space `space`; the error text goes back to the model.
pub fn parse_reply(space: ActionSpace, reply: &str) -> Result<AnyParsed, ParseError> {
    match space {
        ActionSpace::WebVoyager => webvoyager::parse_reply(reply).map(|p| AnyParsed {
            thought: p.thought,
            raw_action: p.raw_action,
            action: AnyAction::WebVoyager(p.action),
        }),
        ActionSpace::WebArena => webarena::parse_reply(reply).map(|p| AnyParsed {
            thought: p.thought,
            raw_action: p.raw_action,
            action: AnyAction::WebArena(p.action),
        }),
    }
}

/// Why a reply has no usable action (both action spaces). The message goes back to the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// No action found at all; the text says how to write one in the reply's action space.
    #[error("no action found: {0}")]
    NoAction(&'static str),
    /// An action verb with unusable arguments.
    #[error("could not read the action {raw:?}: {detail}")]
    Malformed {
        /// The action text.
        raw: String,
        /// What is missing.
        detail: &'static str,
    },
}

/// A regex compiled once (a pattern that does not compile matches nothing; they are constants here).
pub(super) fn re(cell: &'static OnceLock<Regex>, pat: &str) -> &'static Regex {
    cell.get_or_init(|| {
        Regex::new(pat).unwrap_or_else(|_| Regex::new("$^").unwrap_or_else(|_| std::process::abort()))
    })
}
