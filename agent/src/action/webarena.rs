//! WebArena's action grammar (`--action-space webarena`), with VisualWebArena's `clear` and `upload`,
//! and a tolerant reply parser.
//!
//! Grammar: `click [id]`, `hover [id]`, `type [id] [text] [0|1]` (1, the default: press Enter after),
//! `press [key_comb]`, `scroll [up|down]`, `new_tab`, `tab_focus [n]`, `close_tab`, `goto [url]`,
//! `go_back`, `go_forward`, `stop [answer]`, `clear [id]`, `upload [id] [file]`.
//!
//! WebArena's harness takes the first block between triple backticks and fails otherwise; real replies
//! also come as `Action: click [3]`, with the verb in another case, `go back` for `go_back`, or with the
//! brackets left out of one-argument actions. The parser takes the last fenced block that holds an
//! action, else an `Action:` line, else the last line that starts with a verb.

use std::sync::OnceLock;

use regex::Regex;

use super::{re, ParseError};

/// One WebArena action. Element ids are those of the latest observation (accessibility-tree ids, or
/// Set-of-Marks labels when the observation is `som`/`som+axtree`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebArenaAction {
    /// Click the element.
    Click(u32),
    /// Move the mouse over the element.
    Hover(u32),
    /// Click the element, type the text, press Enter when `enter`.
    Type {
        /// Element id.
        id: u32,
        /// Text to type.
        text: String,
        /// Press Enter after.
        enter: bool,
    },
    /// A key combination, `Control+Enter`, `Meta+a`, `PageDown`.
    Press(String),
    /// Scroll the page by one viewport.
    Scroll {
        /// True for down.
        down: bool,
    },
    /// Open an empty tab and focus it.
    NewTab,
    /// Focus tab n (0-based, as the observation's tab list numbers them).
    TabFocus(u32),
    /// Close the current tab.
    CloseTab,
    /// Load a URL in the current tab.
    Goto(String),
    /// History back.
    GoBack,
    /// History forward.
    GoForward,
    /// Finish, with the answer (may be empty, as WebArena allows).
    Stop(String),
    /// Empty a field (VisualWebArena).
    Clear(u32),
    /// Set a file input's file (VisualWebArena).
    Upload {
        /// Element id.
        id: u32,
        /// Path of the file.
        file: String,
    },
}

impl std::fmt::Display for WebArenaAction {
    /// The canonical form, as the grammar writes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WebArenaAction::Click(n) => write!(f, "click [{n}]"),
            WebArenaAction::Hover(n) => write!(f, "hover [{n}]"),
            WebArenaAction::Type { id, text, enter } => {
                write!(f, "type [{id}] [{text}] [{}]", u8::from(*enter))
            }
            WebArenaAction::Press(k) => write!(f, "press [{k}]"),
            WebArenaAction::Scroll { down } => write!(f, "scroll [{}]", if *down { "down" } else { "up" }),
            WebArenaAction::NewTab => f.write_str("new_tab"),
            WebArenaAction::TabFocus(n) => write!(f, "tab_focus [{n}]"),
            WebArenaAction::CloseTab => f.write_str("close_tab"),
            WebArenaAction::Goto(u) => write!(f, "goto [{u}]"),
            WebArenaAction::GoBack => f.write_str("go_back"),
            WebArenaAction::GoForward => f.write_str("go_forward"),
            WebArenaAction::Stop(a) => write!(f, "stop [{a}]"),
            WebArenaAction::Clear(n) => write!(f, "clear [{n}]"),
            WebArenaAction::Upload { id, file } => write!(f, "upload [{id}] [{file}]"),
        }
    }
}

/// A parsed reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The reasoning before the action (may be empty).
    pub thought: String,
    /// The action text as written.
    pub raw_action: String,
    /// The action.
    pub action: WebArenaAction,
}

/// How to write a WebArena action (the model reads it after a reply without one).
const HOW: &str = "end the reply with the action between triple backticks, e.g. ```click [12]```; actions: click [id], hover [id], type [id] [text] [0|1], press [keys], scroll [up|down], new_tab, tab_focus [n], close_tab, goto [url], go_back, go_forward, stop [answer], clear [id], upload [id] [file]";

/// A verb at the start of the text, its spellings folded (`go back`, `go-back`, `tabfocus`).
fn verb_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r"(?i)^\s*(click|hover|type|press|scroll|new[\s_-]?tab|tab[\s_-]?focus|close[\s_-]?tab|goto|go[\s_-]?to|go[\s_-]?back|go[\s_-]?forward|stop|clear|upload)(?:\b|\[|$)\s*(.*)$",
    )
}

fn fence_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"(?s)```(?:[a-zA-Z]*\n)?(.*?)```")
}

/// Bracketed arguments, WebArena style: `[a] [b]`. The last argument may hold brackets itself
/// (`type [3] [a [b]] [1]`): a group ends at the `]` followed by ` [` or by the end.
fn args(rest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut s = rest.trim();
    while let Some(inner) = s.strip_prefix('[') {
        // The closing bracket of this group: the first `]` followed by optional space then `[`, or the
        // last `]` of the text.
        let mut end = None;
        for (i, c) in inner.char_indices() {
            if c == ']' && inner[i + 1..].trim_start().starts_with('[') {
                end = Some(i);
                break;
            }
        }
        let end = end.or_else(|| inner.rfind(']'));
        let Some(end) = end else {
            out.push(inner.trim().to_string());
            return out;
        };
        out.push(inner[..end].to_string());
        s = inner[end + 1..].trim_start();
    }
    if out.is_empty() && !s.is_empty() {
        // No brackets: `click 12`, `scroll down`, `goto https://...`.
        out.push(s.to_string());
    }
    out
}

fn number(s: &str) -> Option<u32> {
    s.trim().trim_start_matches('#').parse().ok()
}

fn parse_action(raw: &str) -> Result<WebArenaAction, ParseError> {
    let caps = verb_re().captures(raw).ok_or(ParseError::NoAction(HOW))?;
    let verb: String = caps
        .get(1)
        .map(|m| m.as_str().to_ascii_lowercase().chars().filter(|c| c.is_ascii_alphabetic()).collect())
        .unwrap_or_default();
    let rest = caps.get(2).map(|m| m.as_str()).unwrap_or("").trim();
    let a = args(rest);
    let malformed = |detail| ParseError::Malformed { raw: raw.trim().to_string(), detail };
    let id = |detail| a.first().and_then(|s| number(s)).ok_or_else(|| malformed(detail));
    Ok(match verb.as_str() {
        "click" => WebArenaAction::Click(id("click needs an element id, e.g. click [12]")?),
        "hover" => WebArenaAction::Hover(id("hover needs an element id, e.g. hover [12]")?),
        "clear" => WebArenaAction::Clear(id("clear needs an element id, e.g. clear [12]")?),
        "type" => {
            let id = id("type needs an id and text, e.g. type [12] [socks] [1]")?;
            let (text, enter) = match a.len() {
                2 => (a[1].clone(), true),
                n if n >= 3 => {
                    let last = a[n - 1].trim();
                    match last {
                        "0" | "1" => (a[1..n - 1].join("] ["), last == "1"),
                        _ => (a[1..].join("] ["), true),
                    }
                }
                _ => return Err(malformed("type needs text after the id, e.g. type [12] [socks] [1]")),
            };
            WebArenaAction::Type { id, text, enter }
        }
        "press" => {
            let k = a.first().map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
            WebArenaAction::Press(k.ok_or_else(|| malformed("press needs keys, e.g. press [Control+Enter]"))?)
        }
        "scroll" => match a.first().map(|s| s.trim().to_ascii_lowercase()).as_deref() {
            Some("down") => WebArenaAction::Scroll { down: true },
            Some("up") => WebArenaAction::Scroll { down: false },
            _ => return Err(malformed("scroll needs a direction: scroll [up] or scroll [down]")),
        },
        "newtab" => WebArenaAction::NewTab,
        "tabfocus" => WebArenaAction::TabFocus(id("tab_focus needs a tab number, e.g. tab_focus [1]")?),
        "closetab" => WebArenaAction::CloseTab,
        "goto" => {
            let u = a.first().map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
            WebArenaAction::Goto(
                u.ok_or_else(|| malformed("goto needs a URL, e.g. goto [http://example.com]"))?,
            )
        }
        "goback" => WebArenaAction::GoBack,
        "goforward" => WebArenaAction::GoForward,
        "stop" => WebArenaAction::Stop(a.first().map(|s| s.trim().to_string()).unwrap_or_default()),
        "upload" => {
            let id = id("upload needs an id and a file, e.g. upload [12] [/path/photo.png]")?;
            let file = a.get(1).map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
            WebArenaAction::Upload {
                id,
                file: file.ok_or_else(|| {
                    malformed("upload needs a file after the id, e.g. upload [12] [photo.png]")
                })?,
            }
        }
        _ => return Err(ParseError::NoAction(HOW)),
    })
}

/// Parse a model reply.
pub fn parse_reply(reply: &str) -> Result<Parsed, ParseError> {
    let text = reply.replace("**", "");
    // The last fenced block that starts with a verb, WebArena's convention.
    let fenced: Vec<(usize, &str)> = fence_re()
        .captures_iter(&text)
        .filter_map(|c| c.get(1).map(|m| (c.get(0).map_or(0, |x| x.start()), m.as_str().trim())))
        .filter(|(_, a)| verb_re().is_match(a))
        .collect();
    if let Some((start, a)) = fenced.last() {
        let thought = text[..*start]
            .trim()
            .trim_end_matches(|c: char| c.is_whitespace())
            .trim_start_matches(|c: char| c.is_whitespace());
        let thought = thought
            .strip_suffix("In summary, the next action I will perform is")
            .unwrap_or(thought)
            .trim()
            .to_string();
        // A single-line action; anything after its first line is noise.
        let line = a.lines().next().unwrap_or("").trim().trim_matches('`').trim().to_string();
        let action = parse_action(&line)?;
        return Ok(Parsed { thought: strip_label(&thought, "thought"), raw_action: line, action });
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut thought = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim().trim_matches('`');
        let lower = t.to_ascii_lowercase();
        if let Some(rest) = lower.strip_prefix("action").map(|_| t["action".len()..].trim_start()) {
            if rest.starts_with([':', '-']) || rest.is_empty() {
                let rest = rest.trim_start_matches([':', '-']).trim().trim_matches('`').trim();
                let a = if rest.is_empty() {
                    lines[i + 1..].iter().map(|x| x.trim().trim_matches('`').trim()).find(|x| !x.is_empty())
                } else {
                    Some(rest)
                };
                if let Some(a) = a {
                    let action = parse_action(a)?;
                    return Ok(Parsed {
                        thought: strip_label(&thought.join(" "), "thought"),
                        raw_action: a.to_string(),
                        action,
                    });
                }
            }
        }
        thought.push(t.to_string());
    }
    let line = lines
        .iter()
        .rev()
        .map(|l| l.trim().trim_matches('`').trim())
        .find(|l| verb_re().is_match(l))
        .ok_or(ParseError::NoAction(HOW))?;
    let action = parse_action(line)?;
    let thought: Vec<&str> =
        lines.iter().map(|l| l.trim()).filter(|l| !l.is_empty() && !l.ends_with(line)).collect();
    Ok(Parsed { thought: strip_label(&thought.join(" "), "thought"), raw_action: line.to_string(), action })
}

fn strip_label(s: &str, label: &str) -> String {
    let t = s.trim();
    if t.to_ascii_lowercase().starts_with(label) {
        t[label.len()..].trim_start_matches([':', '-', ' ']).trim().to_string()
    } else {
        t.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(reply: &str, expected: Result<WebArenaAction, &str>) {
        match (parse_reply(reply), expected) {
            (Ok(p), Ok(a)) => {
                assert_eq!(p.action, a, "{reply:?}");
                // The canonical form parses back to the same action.
                assert_eq!(parse_reply(&format!("```{}```", p.action)).unwrap().action, a, "{reply:?}");
            }
            (Err(e), Err(needle)) => assert!(e.to_string().contains(needle), "{reply:?}: {e}"),
            (got, want) => panic!("{reply:?}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn replies_table() {
        use WebArenaAction::*;
        let ty = |id, text: &str, enter| Type { id, text: text.into(), enter };
        let cases: &[(&str, Result<WebArenaAction, &str>)] = &[
            (
                "Let's think step-by-step. The search box has id 1752. In summary, the next action I will perform is ```click [1752]```",
                Ok(Click(1752)),
            ),
            ("```hover [12]```", Ok(Hover(12))),
            ("```type [164] [restaurants near CMU] [1]```", Ok(ty(164, "restaurants near CMU", true))),
            ("```type [164] [restaurants near CMU] [0]```", Ok(ty(164, "restaurants near CMU", false))),
            ("```type [164] [no flag]```", Ok(ty(164, "no flag", true))),
            ("```type [5] [array[0] + b] [0]```", Ok(ty(5, "array[0] + b", false))),
            ("```press [Control+Enter]```", Ok(Press("Control+Enter".into()))),
            ("```press [Meta+a]```", Ok(Press("Meta+a".into()))),
            ("```scroll [down]```", Ok(Scroll { down: true })),
            ("```scroll [UP]```", Ok(Scroll { down: false })),
            ("```scroll down```", Ok(Scroll { down: true })),
            ("```new_tab```", Ok(NewTab)),
            ("```tab_focus [1]```", Ok(TabFocus(1))),
            ("```close_tab```", Ok(CloseTab)),
            ("```goto [http://localhost:7770/cart?x=[1]]```", Ok(Goto("http://localhost:7770/cart?x=[1]".into()))),
            ("```go_back```", Ok(GoBack)),
            ("```go_forward```", Ok(GoForward)),
            ("```stop [$25.99]```", Ok(Stop("$25.99".into()))),
            ("```stop [N/A]```", Ok(Stop("N/A".into()))),
            ("```stop```", Ok(Stop(String::new()))),
            ("```clear [7]```", Ok(Clear(7))),
            ("```upload [9] [/tmp/photo.png]```", Ok(Upload { id: 9, file: "/tmp/photo.png".into() })),
            // Tolerance.
            ("Thought: x\nAction: click [3]", Ok(Click(3))),
            ("**Action:** Go back", Ok(GoBack)),
            ("Action:\n```\ngo-forward\n```", Ok(GoForward)),
            ("I will click it.\nCLICK [ 42 ]", Ok(Click(42))),
            ("Action: click 8", Ok(Click(8))),
            ("```python\nclick [5]\n```", Ok(Click(5))),
            ("Example: ```click [1]``` ... so ```click [2]```", Ok(Click(2))),
            ("Action: tab focus [0]", Ok(TabFocus(0))),
            // Errors.
            ("```click [search box]```", Err("click needs an element id")),
            ("```type [3]```", Err("type needs text")),
            ("```scroll [left]```", Err("scroll needs a direction")),
            ("```goto []```", Err("goto needs a URL")),
            ("```upload [3]```", Err("upload needs a file")),
            ("```tab_focus [x]```", Err("tab_focus needs a tab number")),
            ("I am not sure.", Err("no action found")),
            ("", Err("no action found")),
        ];
        for (reply, want) in cases {
            check(reply, want.clone());
        }
    }

    #[test]
    fn thought_and_raw_action() {
        let p = parse_reply(
            "Let's think step-by-step. The cart is open. In summary, the next action I will perform is ```stop [3]```",
        )
        .unwrap();
        assert_eq!(p.thought, "Let's think step-by-step. The cart is open.");
        assert_eq!(p.raw_action, "stop [3]");
        let p = parse_reply("Thought: the form\nAction: type [2] [hi] [0]").unwrap();
        assert_eq!(p.thought, "the form");
        assert_eq!(p.raw_action, "type [2] [hi] [0]");
    }
}
