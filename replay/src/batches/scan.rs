//! The top-level calls of a ResourceLoader batch response, found by a small scanner.
//!
//! A batch (`load.php?modules=...` without `only=`) is, by construction (`ResourceLoader::makeModuleResponse`
//! in MediaWiki), a run of generated statements: one `mw.loader.implement("name@version", ...);` per module
//! (MediaWiki up to 1.40) or `mw.loader.impl(function(){return["name@version", ...];});` (1.41 on), then
//! perhaps one `mw.loader.state({...});` for modules it could not answer, with an error comment
//! (`/* ... */`) in front when something failed. Cutting it per module needs only where each top-level call
//! ends, not what the JavaScript inside means.
//!
//! Why not a JavaScript parser crate: the ones that parse today's JavaScript (oxc, swc, boa) bring a
//! hundred-odd crates and minutes of build on this project's two-core machines to answer a question a
//! bracket counter answers, and a full parse of every recorded batch would cost more than the miss it
//! repairs. The scanner below counts `()[]{}` and skips what may hold an unbalanced bracket: string
//! literals, template literals (with `${...}` nesting), comments and regular expression literals. The one
//! guess is the classic one: a `/` starts a regular expression after punctuation, an operator or a keyword
//! such as `return`, and is a division after a name, a number, `)` or `]`. Code that fools the guess
//! (`a++ /2/ b`, a regular expression right after `if (x)`) makes brackets unbalance, and an unbalanced
//! response is not used: whatever the scanner does not understand is never cut, so a misreading costs a
//! miss, not wrong code. Anything at the top level other than these calls, `;`, whitespace and comments
//! also makes the response unusable.

use std::ops::Range;

/// Which ResourceLoader function a top-level call calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Callee {
    /// `mw.loader.implement(key, ...)` (MediaWiki up to 1.40).
    Implement,
    /// `mw.loader.impl(function(){return[key, ...]})` (MediaWiki 1.41 on).
    Impl,
    /// `mw.loader.state({...})`: states of modules the batch did not implement.
    State,
}

/// One top-level call of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Call {
    pub(crate) callee: Callee,
    /// From the callee's name to the call's closing parenthesis, included.
    pub(crate) span: Range<usize>,
    /// The first string literal inside the call, decoded: the module's `name@version` for an implement.
    pub(crate) key: Option<String>,
}

const CALLEES: [(&str, Callee); 3] = [
    ("mw.loader.implement(", Callee::Implement),
    ("mw.loader.impl(", Callee::Impl),
    ("mw.loader.state(", Callee::State),
];

/// Words after which a `/` starts a regular expression.
const KEYWORDS: [&[u8]; 14] = [
    b"return",
    b"typeof",
    b"instanceof",
    b"in",
    b"of",
    b"new",
    b"delete",
    b"void",
    b"throw",
    b"case",
    b"do",
    b"else",
    b"yield",
    b"await",
];

/// The marker of a template literal's `${` on the bracket stack.
const TEMPLATE: u8 = b'`';

/// The top-level calls of `js` in order; None when anything else stands at the top level or a call does
/// not close.
pub(crate) fn top_level_calls(js: &str) -> Option<Vec<Call>> {
    let b = js.as_bytes();
    let mut calls = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            c if c.is_ascii_whitespace() || c == b';' => i += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => i = line_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => i = comment_end(b, i)?,
            _ => {
                let (name, callee) = CALLEES.iter().find(|(n, _)| b[i..].starts_with(n.as_bytes()))?;
                let open = i + name.len() - 1;
                let (close, key) = balanced(b, open)?;
                calls.push(Call { callee: *callee, span: i..close + 1, key });
                i = close + 1;
            }
        }
    }
    Some(calls)
}

/// The index of the parenthesis closing the one at `open`, and the first string literal inside.
fn balanced(b: &[u8], open: usize) -> Option<(usize, Option<String>)> {
    let mut stack = vec![b')'];
    let mut key = None;
    let mut regex_ok = true;
    let mut i = open + 1;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'"' | b'\'' => {
                let end = string_end(b, i)?;
                if key.is_none() {
                    key = Some(unescape(&b[i + 1..end]));
                }
                i = end + 1;
                regex_ok = false;
            }
            b'`' => (i, regex_ok) = template(b, i + 1, &mut stack)?,
            b'/' if b.get(i + 1) == Some(&b'/') => i = line_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => i = comment_end(b, i)?,
            b'/' if regex_ok => {
                i = regex_end(b, i)?;
                regex_ok = false;
            }
            b'(' => push(&mut stack, b')', &mut i, &mut regex_ok),
            b'[' => push(&mut stack, b']', &mut i, &mut regex_ok),
            b'{' => push(&mut stack, b'}', &mut i, &mut regex_ok),
            b')' | b']' | b'}' => {
                let top = stack.pop()?;
                if top == TEMPLATE && c == b'}' {
                    (i, regex_ok) = template(b, i + 1, &mut stack)?;
                    continue;
                }
                if top != c {
                    return None;
                }
                if stack.is_empty() {
                    return Some((i, key));
                }
                i += 1;
                // After a block's `}` an expression may start; after `)` or `]` a `/` divides.
                regex_ok = c == b'}';
            }
            c if is_ident(c) => {
                let s = i;
                while i < b.len() && is_ident(b[i]) {
                    i += 1;
                }
                regex_ok = KEYWORDS.contains(&&b[s..i]);
            }
            _ => {
                i += 1;
                regex_ok = true;
            }
        }
    }
    None
}

fn push(stack: &mut Vec<u8>, closer: u8, i: &mut usize, regex_ok: &mut bool) {
    stack.push(closer);
    *i += 1;
    *regex_ok = true;
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// The index of the quote closing the string literal opening at `i`.
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let q = b[i];
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'\n' => return None,
            c if c == q => return Some(j),
            _ => j += 1,
        }
    }
    None
}

/// Scan template literal text from `i`: the index after its closing backquote (false: a `/` then
/// divides), or after a `${` whose expression now follows (true; its `}` is on the stack).
fn template(b: &[u8], mut i: usize, stack: &mut Vec<u8>) -> Option<(usize, bool)> {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'`' => return Some((i + 1, false)),
            b'$' if b.get(i + 1) == Some(&b'{') => {
                stack.push(TEMPLATE);
                return Some((i + 2, true));
            }
            _ => i += 1,
        }
    }
    None
}

/// The index after the regular expression literal (and its flags) opening at `i`.
fn regex_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    let mut class = false;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'\n' => return None,
            b'[' => {
                class = true;
                j += 1;
            }
            b']' => {
                class = false;
                j += 1;
            }
            b'/' if !class => {
                j += 1;
                while j < b.len() && is_ident(b[j]) {
                    j += 1;
                }
                return Some(j);
            }
            _ => j += 1,
        }
    }
    None
}

fn line_end(b: &[u8], i: usize) -> usize {
    b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p)
}

fn comment_end(b: &[u8], i: usize) -> Option<usize> {
    b[i + 2..].windows(2).position(|w| w == b"*/").map(|p| i + 2 + p + 2)
}

/// A string literal's text with JavaScript's escapes undone (module keys are plain ASCII; this is enough
/// for them and harmless for anything else).
fn unescape(raw: &[u8]) -> String {
    let s = String::from_utf8_lossy(raw);
    if !s.contains('\\') {
        return s.into_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                out.extend(u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32));
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each case: a response, and its top-level calls as (callee, text, key); None: unusable.
    #[test]
    fn top_level_calls_table() {
        type Want = Option<Vec<(Callee, &'static str, Option<&'static str>)>>;
        let cases: Vec<(&str, Want)> = vec![
            (
                r#"mw.loader.implement("a@1",function(){x("(")});mw.loader.implement("b@2",function(){});"#,
                Some(vec![
                    (Callee::Implement, r#"mw.loader.implement("a@1",function(){x("(")})"#, Some("a@1")),
                    (Callee::Implement, r#"mw.loader.implement("b@2",function(){})"#, Some("b@2")),
                ]),
            ),
            // 1.41's form; the key is the first string inside.
            (
                r#"mw.loader.impl(function(){return["c@3",function(){var r=/[)]\//g;return`${")"}`}];});"#,
                Some(vec![(
                    Callee::Impl,
                    r#"mw.loader.impl(function(){return["c@3",function(){var r=/[)]\//g;return`${")"}`}];})"#,
                    Some("c@3"),
                )]),
            ),
            // An error comment in front, a state call at the end; comments and divisions inside.
            (
                "/*\nProblematic modules: {\"z\":\"error\"}\n*/\nmw.loader.implement(\"d@4\",function(){var x=a/b/c;/* ) */ // )\n});\nmw.loader.state({\"z\":\"error\"});",
                Some(vec![
                    (
                        Callee::Implement,
                        "mw.loader.implement(\"d@4\",function(){var x=a/b/c;/* ) */ // )\n})",
                        Some("d@4"),
                    ),
                    (Callee::State, "mw.loader.state({\"z\":\"error\"})", Some("z")),
                ]),
            ),
            // An escaped key.
            (r#"mw.loader.implement("e\u0040x@5",null);"#, Some(vec![(Callee::Implement, r#"mw.loader.implement("e\u0040x@5",null)"#, Some("e@x@5"))])),
            // Not a batch: other code at the top level, an unclosed call, unbalanced brackets.
            ("var a=1;mw.loader.implement(\"a@1\",function(){});", None),
            ("mw.loader.implement(\"a@1\",function(){", None),
            ("mw.loader.implement(\"a@1\",function(){]);", None),
            ("mw.loader.implement(\"a@1\",\"unterminated);", None),
            ("", Some(vec![])),
        ];
        for (js, want) in cases {
            let got = top_level_calls(js)
                .map(|calls| calls.into_iter().map(|c| (c.callee, &js[c.span], c.key)).collect::<Vec<_>>());
            let want = want
                .map(|w| w.into_iter().map(|(c, t, k)| (c, t, k.map(str::to_string))).collect::<Vec<_>>());
            assert_eq!(got, want, "{js}");
        }
    }
}
