//! WebArena-Verified's `AgentResponseEvaluator`: the agent's final answer is a JSON object
//! (`task_type` RETRIEVE / MUTATE / NAVIGATE, `status` SUCCESS / NOT_FOUND_ERROR / ... , `retrieved_data`,
//! `error_details`), read tolerantly (in a code fence or not, `performed_operation` for `task_type`, any
//! case) and compared with the task's expected one: `task_type` and `status` as normalized strings, and
//! for retrieve tasks `retrieved_data` by the task's `results_schema` ([`super::value`]), in order when
//! the spec says `ordered`.

use super::VerifiedError;
use serde_json::Value;
use trajectory::task_eval::AgentResponseSpec;

use super::schema::Schema;
use super::value::{self, Norm};

/// The agent's answer as their evaluator reads it: the JSON inside a code fence if there is one, parsed
/// when it is JSON; an object is the response, anything else is kept (and fails the comparison).
pub fn parse(answer: &str) -> Value {
    let t = answer.trim();
    let inner = fence(t).unwrap_or(t);
    match serde_json::from_str::<Value>(inner) {
        Ok(v) => v,
        Err(_) if inner.is_empty() => Value::Null,
        Err(_) => Value::String(inner.to_string()),
    }
}

/// The text of the first ```` ```json ... ``` ```` (or plain ```` ``` ````) block.
fn fence(s: &str) -> Option<&str> {
    let start = s.find("```")?;
    let mut body = &s[start + 3..];
    body = body.strip_prefix("json").unwrap_or(body);
    let end = body.find("```")?;
    Some(body[..end].trim())
}

/// The result of one `AgentResponseEvaluator`: what failed (empty: it passed).
pub fn evaluate(spec: &AgentResponseSpec, answer: &str) -> Result<Vec<String>, VerifiedError> {
    let expected = &spec.expected;
    // The results schema, read once.
    let schema = spec.results_schema.as_ref().map(Schema::read);
    let schema = schema.as_ref();
    let ordered = spec.ordered;
    let exp_type = expected.task_type().map(|t| Value::String(t.to_string()));
    let is_retrieve = expected.task_type().is_some_and(|t| t.eq_ignore_ascii_case("retrieve"));
    let str_norm = |v: &Value, strict| value::scalar(value::Kind::Str, v, strict);
    let mut failures = Vec::new();
    // Expected: the fields the spec sets.
    let exp_status = expected.status.as_ref().map(|s| Value::String(s.clone()));
    let fields: Vec<&str> = [
        ("task_type", exp_type.is_some()),
        ("status", exp_status.is_some()),
        ("retrieved_data", expected.retrieved_data.is_some()),
    ]
    .into_iter()
    .filter_map(|(k, set)| set.then_some(k))
    .collect();
    let exp_data = match &expected.retrieved_data {
        Some(d) => retrieved(d, schema, true)?,
        None => Norm::Null,
    };
    // Their evaluator compares the actual response's keys with all three expected ones, but reads from
    // the answer only the keys the spec sets: a spec without `retrieved_data` can never pass there.
    // Done the same here (and said).
    if expected.retrieved_data.is_none() {
        failures.push("the spec sets no retrieved_data: their evaluator fails every answer to it".into());
    }
    let actual = parse(answer);
    let Some(obj) = actual.as_object() else {
        return Ok(vec![format!("the answer is not a JSON object: {}", short(&actual))]);
    };
    for k in &fields {
        let key =
            if *k == "task_type" && !obj.contains_key("task_type") && obj.contains_key("performed_operation")
            {
                "performed_operation"
            } else {
                k
            };
        let Some(a) = obj.get(key) else {
            if *k != "retrieved_data" {
                failures.push(format!("{k} is missing"));
            }
            continue;
        };
        if *k == "retrieved_data" {
            continue;
        }
        let e = if *k == "task_type" { exp_type.clone() } else { exp_status.clone() }.unwrap_or(Value::Null);
        let Some(text) = a.as_str() else {
            failures.push(format!("{k} is not a string: {a}"));
            continue;
        };
        let text = text.trim();
        let an = if text.is_empty() { Norm::Null } else { str_norm(&Value::String(text.into()), false)? };
        let en = str_norm(&e, true)?;
        if !value::equal(&en, &an, false, false) {
            failures.push(format!("{k}: expected {}, got {text:?}", short(&e)));
        }
    }
    if is_retrieve {
        let act_data = match obj.get("retrieved_data") {
            None => Norm::Null,
            Some(d) => retrieved(d, schema, false)?,
        };
        match (&exp_data, &act_data) {
            (Norm::Null, Norm::Null) => {}
            (Norm::Null, _) => failures.push(format!(
                "retrieved_data: expected none, got {}",
                short(obj.get("retrieved_data").unwrap_or(&Value::Null))
            )),
            (_, Norm::Null) => failures.push("retrieved_data: missing or empty".into()),
            (e, a) => {
                if !value::equal(e, a, ordered, false) {
                    failures.push(format!(
                        "retrieved_data: expected {}, got {}",
                        short(expected.retrieved_data.as_ref().unwrap_or(&Value::Null)),
                        short(obj.get("retrieved_data").unwrap_or(&Value::Null))
                    ));
                }
            }
        }
    }
    Ok(failures)
}

/// `retrieved_data` normalized by the results schema: empty is None; a single value is a list of one.
fn retrieved(v: &Value, schema: Option<&Schema>, strict: bool) -> Result<Norm, VerifiedError> {
    let empty = match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    };
    if empty {
        return Ok(Norm::Null);
    }
    let list = match v {
        Value::Array(_) => v.clone(),
        other => Value::Array(vec![other.clone()]),
    };
    Ok(value::array(&list, schema, strict)?.unwrap_or(Norm::Null))
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 200 {
        format!("{}...", s.chars().take(200).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parse_table() {
        // (answer, parsed)
        for (a, want) in [
            ("{\"status\": \"SUCCESS\"}", json!({"status": "SUCCESS"})),
            ("Here:\n```json\n{\"status\": \"SUCCESS\"}\n```", json!({"status": "SUCCESS"})),
            ("```{\"a\": 1}```", json!({"a": 1})),
            ("N/A", json!("N/A")),
            ("", json!(null)),
        ] {
            assert_eq!(parse(a), want, "{a:?}");
        }
    }

    #[test]
    fn evaluate_table() {
        let retrieve = json!({"evaluator": "AgentResponseEvaluator",
            "results_schema": {"type": "array", "items": {"type": "string"}},
            "expected": {"task_type": "retrieve", "status": "SUCCESS", "retrieved_data": ["Quest Lumaflex\u{2122} Band"]}});
        let mutate = json!({"evaluator": "AgentResponseEvaluator", "results_schema": {"type": "null"},
            "expected": {"task_type": "mutate", "status": "SUCCESS", "retrieved_data": null}});
        // (spec, answer, passes)
        let cases = [
            (
                &retrieve,
                r#"{"task_type": "RETRIEVE", "status": "SUCCESS", "retrieved_data": ["quest lumaflex band"]}"#,
                true,
            ),
            (
                &retrieve,
                r#"{"performed_operation": "retrieve", "status": "success", "retrieved_data": "Quest Lumaflex Band"}"#,
                true,
            ),
            (
                &retrieve,
                r#"{"task_type": "RETRIEVE", "status": "SUCCESS", "retrieved_data": ["Other"]}"#,
                false,
            ),
            (
                &retrieve,
                r#"{"task_type": "RETRIEVE", "status": "NOT_FOUND_ERROR", "retrieved_data": ["Quest Lumaflex Band"]}"#,
                false,
            ),
            (&retrieve, r#"{"task_type": "RETRIEVE", "status": "SUCCESS"}"#, false),
            (&retrieve, "Quest Lumaflex Band", false),
            (&mutate, r#"{"task_type": "MUTATE", "status": "SUCCESS", "retrieved_data": null}"#, true),
            (&mutate, r#"{"task_type": "MUTATE", "status": "SUCCESS", "retrieved_data": ["ignored"]}"#, true),
            (&mutate, r#"{"task_type": "NAVIGATE", "status": "SUCCESS"}"#, false),
            (&mutate, r#"{"status": "SUCCESS"}"#, false),
        ];
        for (i, (spec, answer, pass)) in cases.iter().enumerate() {
            let spec: AgentResponseSpec = serde_json::from_value((*spec).clone()).unwrap();
            let f = evaluate(&spec, answer).unwrap();
            assert_eq!(f.is_empty(), *pass, "case {i}: {f:?}");
        }
    }
}
