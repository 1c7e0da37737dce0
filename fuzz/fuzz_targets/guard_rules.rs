//! The guards' judges over strangers' requests: the side-effect rule table (method, path, content type,
//! control label and body, one per line, the body the rest) with its field-name reader, and the list of
//! places answers are published (the path's host and path).
#![no_main]
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use proxy::guard::{field_names, AnswerPlaces, WriteFacts, WriteRules};

fuzz_target!(|data: &[u8]| {
    static RULES: OnceLock<(WriteRules, AnswerPlaces)> = OnceLock::new();
    let (writes, answers) = RULES.get_or_init(|| (WriteRules::builtin(), AnswerPlaces::builtin()));
    let mut parts = data.splitn(5, |b| *b == b'\n');
    let mut next = || String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let (method, path, ct, label) = (next(), next(), next(), next());
    let body = data.splitn(5, |b| *b == b'\n').nth(4).unwrap_or_default();
    let ct = Some(ct.as_str()).filter(|c| !c.is_empty());
    let _ = field_names(ct, body);
    let facts = WriteFacts::of(&method, &path, ct, Some(body), Some(label.as_str()).filter(|l| !l.is_empty()));
    let _ = writes.judge(&facts);
    let (host, rest) = path.split_once('/').unwrap_or((&path, ""));
    let _ = answers.judge(host, &format!("/{rest}"));
});
