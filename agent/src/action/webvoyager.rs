//! WebVoyager's action grammar and a parser for model replies that survives real output: extra spaces,
//! missing brackets, markdown fences and emphasis, any letter case, a label written `Action -` or
//! `**Action:**`, and trailing explanation after the action.
//!
//! Grammar: `Click [n]`, `Type [n]; text`, `Scroll [n|WINDOW]; up|down`, `Wait`, `GoBack`, `Google`,
//! `ANSWER; text`.

use std::sync::OnceLock;

use regex::Regex;

use super::{re, ParseError};

/// Where a scroll applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScrollTarget {
    /// The whole window.
    Window,
    /// Inside the labelled element.
    Element(u32),
}

/// One action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebVoyagerAction {
    /// Click the labelled element.
    Click(u32),
    /// Clear the labelled field, type the text, press Enter.
    Type {
        /// Element label.
        label: u32,
        /// Text to type.
        text: String,
    },
    /// Scroll up or down.
    Scroll {
        /// Window or element.
        target: ScrollTarget,
        /// True for down.
        down: bool,
    },
    /// Wait a few seconds.
    Wait,
    /// Browser back.
    GoBack,
    /// Jump to the search engine.
    Google,
    /// Finish with an answer.
    Answer(String),
}

impl std::fmt::Display for WebVoyagerAction {
    /// The canonical form, as the grammar writes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WebVoyagerAction::Click(n) => write!(f, "Click [{n}]"),
            WebVoyagerAction::Type { label, text } => write!(f, "Type [{label}]; {text}"),
            WebVoyagerAction::Scroll { target: ScrollTarget::Window, down } => {
                write!(f, "Scroll [WINDOW]; {}", if *down { "down" } else { "up" })
            }
            WebVoyagerAction::Scroll { target: ScrollTarget::Element(n), down } => {
                write!(f, "Scroll [{n}]; {}", if *down { "down" } else { "up" })
            }
            WebVoyagerAction::Wait => f.write_str("Wait"),
            WebVoyagerAction::GoBack => f.write_str("GoBack"),
            WebVoyagerAction::Google => f.write_str("Google"),
            WebVoyagerAction::Answer(t) => write!(f, "ANSWER; {t}"),
        }
    }
}

/// A parsed reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The model's reasoning (may be empty).
    pub thought: String,
    /// The action line as written.
    pub raw_action: String,
    /// The action.
    pub action: WebVoyagerAction,
}

/// How to write a WebVoyager action (the model reads it after a reply without one).
const HOW: &str = "reply with `Thought: ...` then `Action: ...` using one of Click [n], Type [n]; text, Scroll [n|WINDOW]; up|down, Wait, GoBack, Google, ANSWER; text";

fn verb_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"(?i)^\s*(click|type|scroll|wait|go\s*back|google|answer)\b\s*(.*)$")
}

fn label_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^\s*[\[(]?\s*(\d+)\s*[\])]?\s*(.*)$")
}

fn scroll_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"(?i)^\s*[\[(]?\s*(window|\d+)\s*[\])]?\s*[;:,]?\s*[\[(]?\s*(up|down)\b")
}

/// Strip a leading separator, then surrounding quotes or brackets.
fn clean_text(s: &str) -> String {
    let s = s.trim().trim_start_matches([';', ':', ',', '-']).trim();
    let pairs = [('"', '"'), ('\'', '\''), ('[', ']'), ('`', '`'), ('“', '”')];
    for (a, b) in pairs {
        if let Some(inner) = s.strip_prefix(a).and_then(|x| x.strip_suffix(b)) {
            return inner.trim().to_string();
        }
    }
    s.to_string()
}

fn parse_action(raw: &str) -> Result<WebVoyagerAction, ParseError> {
    let caps = verb_re().captures(raw).ok_or(ParseError::NoAction(HOW))?;
    let verb = caps
        .get(1)
        .map(|m| m.as_str().to_ascii_lowercase().replace(char::is_whitespace, ""))
        .unwrap_or_default();
    let rest = caps.get(2).map(|m| m.as_str()).unwrap_or("");
    let malformed = |detail| ParseError::Malformed { raw: raw.trim().to_string(), detail };
    match verb.as_str() {
        "click" => {
            let c = label_re()
                .captures(rest)
                .ok_or_else(|| malformed("Click needs a label number, e.g. Click [5]"))?;
            Ok(WebVoyagerAction::Click(c[1].parse().map_err(|_| malformed("label number too large"))?))
        }
        "type" => {
            let c = label_re()
                .captures(rest)
                .ok_or_else(|| malformed("Type needs a label and text, e.g. Type [3]; socks"))?;
            let label = c[1].parse().map_err(|_| malformed("label number too large"))?;
            let text = clean_text(&c[2]);
            if text.is_empty() {
                return Err(malformed("Type needs text after the label, e.g. Type [3]; socks"));
            }
            Ok(WebVoyagerAction::Type { label, text })
        }
        "scroll" => {
            let c = scroll_re().captures(rest).ok_or_else(|| {
                malformed("Scroll needs a target and a direction, e.g. Scroll [WINDOW]; down")
            })?;
            let target = if c[1].eq_ignore_ascii_case("window") {
                ScrollTarget::Window
            } else {
                ScrollTarget::Element(c[1].parse().map_err(|_| malformed("label number too large"))?)
            };
            Ok(WebVoyagerAction::Scroll { target, down: c[2].eq_ignore_ascii_case("down") })
        }
        "wait" => Ok(WebVoyagerAction::Wait),
        "goback" => Ok(WebVoyagerAction::GoBack),
        "google" => Ok(WebVoyagerAction::Google),
        "answer" => {
            let text = clean_text(rest);
            if text.is_empty() {
                return Err(malformed("ANSWER needs the answer text, e.g. ANSWER; 42"));
            }
            Ok(WebVoyagerAction::Answer(text))
        }
        _ => Err(ParseError::NoAction(HOW)),
    }
}

/// Parse a model reply.
pub fn parse_reply(reply: &str) -> Result<Parsed, ParseError> {
    // Drop markdown fences and emphasis.
    let text: String = reply
        .lines()
        .filter(|l| !l.trim_start().starts_with("```"))
        .collect::<Vec<_>>()
        .join("\n")
        .replace("**", "")
        .replace("__", "");
    let lines: Vec<&str> = text.lines().collect();
    let label = |l: &str, name: &str| -> Option<String> {
        let t = l.trim_start();
        let lower = t.to_ascii_lowercase();
        lower
            .starts_with(name)
            .then(|| t[name.len()..].trim_start().trim_start_matches([':', '-', '：']).trim().to_string())
    };
    let mut thought = Vec::new();
    let mut action_line: Option<String> = None;
    let mut in_thought = false;
    for (i, l) in lines.iter().enumerate() {
        if let Some(rest) = label(l, "action") {
            // The action may sit on the next non-empty line.
            let rest = if rest.is_empty() {
                lines[i + 1..]
                    .iter()
                    .find(|x| !x.trim().is_empty())
                    .map(|x| x.trim().to_string())
                    .unwrap_or_default()
            } else {
                rest
            };
            action_line = Some(rest);
            break;
        }
        if let Some(rest) = label(l, "thought") {
            in_thought = true;
            thought.push(rest);
        } else if in_thought {
            thought.push(l.trim().to_string());
        }
    }
    // No "Action:" label: take the last line that starts with a verb.
    let action_line = match action_line {
        Some(a) => a,
        None => lines
            .iter()
            .rev()
            .find(|l| verb_re().is_match(l))
            .map(|l| l.trim().to_string())
            .ok_or(ParseError::NoAction(HOW))?,
    };
    let action = parse_action(&action_line)?;
    Ok(Parsed { thought: thought.join(" ").trim().to_string(), raw_action: action_line, action })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(reply: &str, expected: Result<WebVoyagerAction, &str>) {
        match (parse_reply(reply), expected) {
            (Ok(p), Ok(a)) => assert_eq!(p.action, a, "{reply:?}"),
            (Err(e), Err(needle)) => assert!(e.to_string().contains(needle), "{reply:?}: {e}"),
            (got, want) => panic!("{reply:?}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn replies_table() {
        use WebVoyagerAction::*;
        check("Thought: the search box is 5.\nAction: Click [5]", Ok(Click(5)));
        check("Thought: x\nAction:   click   [ 12 ]  ", Ok(Click(12)));
        check("Thought: x\nAction: Click 7", Ok(Click(7)));
        check("Thought: x\nAction: Click [3] to open the menu", Ok(Click(3)));
        check(
            "```\nThought: x\nAction: Type [3]; vegetarian lasagna\n```",
            Ok(Type { label: 3, text: "vegetarian lasagna".into() }),
        );
        check(
            "Thought: x\nAction: type [3] \"wool socks\"",
            Ok(Type { label: 3, text: "wool socks".into() }),
        );
        check(
            "**Thought:** x\n**Action:** Scroll [WINDOW]; down",
            Ok(Scroll { target: ScrollTarget::Window, down: true }),
        );
        check(
            "Thought: x\nAction: scroll [14]; UP",
            Ok(Scroll { target: ScrollTarget::Element(14), down: false }),
        );
        check(
            "Thought: x\nAction: Scroll window down",
            Ok(Scroll { target: ScrollTarget::Window, down: true }),
        );
        check("Thought: loading\nAction: Wait", Ok(Wait));
        check("Thought: wrong page\nAction: GoBack", Ok(GoBack));
        check("Thought: wrong page\nAction: go back", Ok(GoBack));
        check("Thought: search\nAction: Google", Ok(Google));
        check(
            "Thought: found it\nAction: ANSWER; 4.5 stars, 230 reviews",
            Ok(Answer("4.5 stars, 230 reviews".into())),
        );
        check("Thought: found it\nAction: answer: [Yes]", Ok(Answer("Yes".into())));
        check("Thought: multi\nline thought\nAction:\nClick [2]", Ok(Click(2)));
        check("I will click the button.\nClick [9]", Ok(Click(9)));
        check("Action - Click [4]", Ok(Click(4)));
        check("Thought: x\nAction: Type [3];", Err("Type needs text"));
        check("Thought: x\nAction: Click the button", Err("Click needs a label"));
        check("Thought: x\nAction: Scroll [WINDOW]", Err("Scroll needs"));
        check("Thought: x\nAction: ANSWER;", Err("ANSWER needs"));
        check("I am not sure what to do.", Err("no action found"));
        check("", Err("no action found"));
    }

    #[test]
    fn thought_is_kept() {
        let p =
            parse_reply("Thought: The results are listed.\nI should scroll.\nAction: Scroll [WINDOW]; down")
                .unwrap();
        assert_eq!(p.thought, "The results are listed. I should scroll.");
        assert_eq!(p.raw_action, "Scroll [WINDOW]; down");
    }
}
