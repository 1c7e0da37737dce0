//! Their `extract_jsonpath_value` (`core/utils/jsonpath_utils.py`, over jsonpath-ng's extended parser) for
//! the keys the dataset writes: `$.a.b`, `$['a']`, `[i]`, filters `[?(@.field OP value)]` (OP one of `==`,
//! `!=`, `<`, `<=`, `>`, `>=`; a number, a quoted string, `true`, `false` or `null`), and a regular
//! expression over top-level keys (`$.^re$` or `^re$`). Wildcards and recursive descent are not read:
//! such a key is a [`VerifiedError::Unsupported`] and the task is reported as not scored.
//!
//! What a key gives: its one match; with a filter, or several matches, all of them (an array); none: None.
//! A path that matches nothing is tried again with the top level's JSON-text strings parsed (their
//! `deserialize_nested_json`): a form field that carries JSON is read into.

use super::VerifiedError;
use serde_json::{Map, Value};

use super::py_re;
use super::value;

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
    Filter { field: String, op: String, value: Value },
}

fn parse(path: &str) -> Result<Vec<Step>, VerifiedError> {
    let unsupported = || VerifiedError::Unsupported(format!("JSONPath {path:?}"));
    let bad = || VerifiedError::Spec(format!("bad JSONPath {path:?}"));
    let rest =
        path.strip_prefix('$').ok_or_else(|| VerifiedError::Spec(format!("not a JSONPath: {path:?}")))?;
    if rest.contains('*') || rest.contains("..") {
        return Err(unsupported());
    }
    let mut steps = Vec::new();
    let mut s = rest;
    while !s.is_empty() {
        if let Some(r) = s.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            steps.push(Step::Key(r[..end].to_string()));
            s = &r[end..];
        } else if let Some(r) = s.strip_prefix("['") {
            let end = r.find("']").ok_or_else(bad)?;
            steps.push(Step::Key(r[..end].to_string()));
            s = &r[end + 2..];
        } else if let Some(r) = s.strip_prefix("[?(") {
            let end = r.find(")]").ok_or_else(bad)?;
            steps.push(filter(&r[..end]).ok_or_else(unsupported)?);
            s = &r[end + 2..];
        } else if let Some(r) = s.strip_prefix('[') {
            let end = r.find(']').ok_or_else(bad)?;
            steps.push(Step::Index(r[..end].trim().parse().map_err(|_| unsupported())?));
            s = &r[end + 1..];
        } else {
            return Err(bad());
        }
    }
    Ok(steps)
}

/// `@.field OP value`.
fn filter(expr: &str) -> Option<Step> {
    let expr = expr.trim().strip_prefix("@.")?;
    let op = ["==", "!=", "<=", ">=", "<", ">"].into_iter().find(|op| expr.contains(op))?;
    let (field, value) = expr.split_once(op)?;
    let value = value.trim();
    let value = match value {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "null" => Value::Null,
        v if (v.starts_with('"') && v.ends_with('"') && v.len() >= 2)
            || (v.starts_with('\'') && v.ends_with('\'') && v.len() >= 2) =>
        {
            Value::String(v[1..v.len() - 1].to_string())
        }
        v => serde_json::from_str::<serde_json::Number>(v).ok().map(Value::Number)?,
    };
    Some(Step::Filter { field: field.trim().to_string(), op: op.to_string(), value })
}

fn holds(item: &Value, field: &str, op: &str, want: &Value) -> bool {
    let Some(got) = item.get(field) else { return false };
    match (got.as_f64(), want.as_f64()) {
        (Some(g), Some(w)) => match op {
            "==" => g == w,
            "!=" => g != w,
            "<" => g < w,
            "<=" => g <= w,
            ">" => g > w,
            _ => g >= w,
        },
        _ => match op {
            "==" => got == want,
            "!=" => got != want,
            _ => match (got.as_str(), want.as_str()) {
                (Some(g), Some(w)) => match op {
                    "<" => g < w,
                    "<=" => g <= w,
                    ">" => g > w,
                    _ => g >= w,
                },
                _ => false,
            },
        },
    }
}

fn find(root: &Value, steps: &[Step]) -> Vec<Value> {
    let mut cur = vec![root.clone()];
    for step in steps {
        cur = cur
            .iter()
            .flat_map(|node| -> Vec<Value> {
                match step {
                    Step::Key(k) => node.get(k).cloned().into_iter().collect(),
                    Step::Index(i) => node.get(*i).cloned().into_iter().collect(),
                    Step::Filter { field, op, value } => match node {
                        Value::Array(a) => a.iter().filter(|x| holds(x, field, op, value)).cloned().collect(),
                        other if holds(other, field, op, value) => vec![other.clone()],
                        _ => Vec::new(),
                    },
                }
            })
            .collect();
    }
    cur
}

/// Their `deserialize_nested_json`: a dict's string values that are JSON text, parsed (recursively in
/// dicts and lists; strings in lists stay strings).
fn deserialize_nested(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| {
                    let x = match x {
                        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| x.clone()),
                        other => deserialize_nested(other),
                    };
                    (k.clone(), x)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(deserialize_nested).collect()),
        other => other.clone(),
    }
}

/// The value at a JSONPath key in `data` (see the module docs); None when nothing matches.
pub fn value_at(data: &Map<String, Value>, path: &str) -> Result<Option<Value>, VerifiedError> {
    let regex_key =
        path.strip_prefix("$.").filter(|p| value::is_regexp(p)).or(value::is_regexp(path).then_some(path));
    if let Some(p) = regex_key {
        let hits: Vec<Value> =
            data.iter().filter(|(k, _)| py_re::match_start(p, k, false)).map(|(_, v)| v.clone()).collect();
        return Ok(match hits.len() {
            0 => None,
            1 => hits.into_iter().next(),
            _ => Some(Value::Array(hits)),
        });
    }
    let steps = parse(path)?;
    let root = Value::Object(data.clone());
    let mut matches = find(&root, &steps);
    if matches.is_empty() {
        matches = find(&deserialize_nested(&root), &steps);
    }
    let filtered = steps.iter().any(|s| matches!(s, Step::Filter { .. }));
    Ok(match matches.len() {
        0 => None,
        1 if !filtered => matches.into_iter().next(),
        _ => Some(Value::Array(matches)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn jsonpath_table() {
        let data = json!({
            "note": {"text": "Hi"},
            "list": [10, 20],
            "reply_to_submission_2[comment]": "good book!",
            "configurable-matrix-serialized": "[{\"newProduct\": 1, \"attributes\": \"size: s, color: brown\"}, {\"newProduct\": 0, \"attributes\": \"old\"}, {\"newProduct\": 1, \"attributes\": \"size: m, color: blue\"}]"
        });
        let data = data.as_object().unwrap();
        for (path, want) in [
            ("$.note.text", Some(json!("Hi"))),
            ("$['note']['text']", Some(json!("Hi"))),
            ("$.list[1]", Some(json!(20))),
            ("$.nothing", None),
            ("$.^reply_to_submission_\\d+\\[comment\\]$", Some(json!("good book!"))),
            ("^reply_to_submission_\\d+\\[comment\\]$", Some(json!("good book!"))),
            (
                "$['configurable-matrix-serialized'][?(@.newProduct == 1)].attributes",
                Some(json!(["size: s, color: brown", "size: m, color: blue"])),
            ),
            ("$['configurable-matrix-serialized'][?(@.newProduct == 0)].attributes", Some(json!(["old"]))),
            ("$['configurable-matrix-serialized'][?(@.newProduct == 7)].attributes", None),
        ] {
            assert_eq!(value_at(data, path).unwrap(), want, "{path}");
        }
        assert!(matches!(value_at(data, "$..text"), Err(VerifiedError::Unsupported(_))));
        assert!(matches!(value_at(data, "$.list[*]"), Err(VerifiedError::Unsupported(_))));
    }
}
