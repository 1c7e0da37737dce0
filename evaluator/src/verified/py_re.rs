//! Python's `re` semantics over a pattern from a spec (their patterns use lookahead, so fancy-regex): a
//! pattern that does not compile matches nothing, as their `except re.error: pass` does. Its own room:
//! URLs, values, JSONPath keys and the network rules all match their patterns so.

use fancy_regex::Regex;

fn build(pattern: &str, ignore_case: bool) -> Option<Regex> {
    Regex::new(&if ignore_case { format!("(?i){pattern}") } else { pattern.to_string() }).ok()
}

/// `re.fullmatch`.
pub fn full_match(pattern: &str, text: &str, ignore_case: bool) -> bool {
    build(&format!("^(?:{pattern})\\z"), ignore_case).is_some_and(|r| r.is_match(text).unwrap_or(false))
}

/// `re.match`: a match starting at the beginning.
pub fn match_start(pattern: &str, text: &str, ignore_case: bool) -> bool {
    build(&format!("^(?:{pattern})"), ignore_case).is_some_and(|r| r.is_match(text).unwrap_or(false))
}

/// `re.search`.
pub fn search(pattern: &str, text: &str, ignore_case: bool) -> bool {
    build(pattern, ignore_case).is_some_and(|r| r.is_match(text).unwrap_or(false))
}
