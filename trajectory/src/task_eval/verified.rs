//! WebArena-Verified's `eval`: a list of evaluators, each naming itself in `evaluator`, typed here as their
//! dataset (webarena-verified 1.2.3, 812 tasks) writes them. What stays a JSON value is what is JSON by
//! nature: the expected `retrieved_data`, post data, query parameters and response content (compared by
//! the schemas), and the JSON Schemas themselves (read by `evaluator::verified::value`). Keys this model
//! does not know are kept, so a spec round-trips through a trajectory, and listed by
//! [`VerifiedEval::unknown_parts`], like WebArena's.

use std::collections::BTreeMap;

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::EvalSpecError;

/// A task's list of evaluators; the task passes when every one passes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VerifiedEval(pub Vec<VerifiedEvaluator>);

/// One evaluator of the list.
#[derive(Debug, Clone, PartialEq)]
pub enum VerifiedEvaluator {
    /// `AgentResponseEvaluator`: the agent's final answer, a typed JSON object.
    AgentResponse(AgentResponseSpec),
    /// `NetworkEventEvaluator`: the requests of the run.
    NetworkEvent(Box<NetworkEventSpec>),
    /// An evaluator this build does not score: kept as given, reported as not scorable by name.
    Other {
        /// Its `evaluator` name.
        name: String,
        /// The whole object.
        spec: Value,
    },
}

/// `AgentResponseEvaluator`'s spec.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentResponseSpec {
    /// The expected response.
    pub expected: ExpectedResponse,
    /// The JSON Schema `retrieved_data` is normalised by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results_schema: Option<Value>,
    /// Whether `retrieved_data`'s order matters.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ordered: bool,
    /// Keys not known here.
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

/// The response an `AgentResponseEvaluator` expects.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExpectedResponse {
    /// `RETRIEVE`, `MUTATE`, `NAVIGATE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_type: Option<String>,
    /// An older name of `task_type`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub performed_operation: Option<String>,
    /// `SUCCESS`, `NOT_FOUND_ERROR`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The data a retrieve task returns. `Some(Value::Null)` when the spec gives `null` (expected none),
    /// `None` when it gives nothing (their evaluator then fails every answer).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub retrieved_data: Option<Value>,
    /// Keys not known here.
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

impl ExpectedResponse {
    /// `task_type`, or the older `performed_operation`.
    pub fn task_type(&self) -> Option<&str> {
        self.task_type.as_deref().or(self.performed_operation.as_deref())
    }
}

/// `NetworkEventEvaluator`'s spec.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NetworkEventSpec {
    /// The request expected (or, with `should_not_exist`, not expected).
    pub expected: ExpectedRequest,
    /// Query parameters left out of the comparison.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored_query_params: Vec<String>,
    /// Query parameters left out, by pattern (Python regular expressions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored_query_params_patterns: Vec<String>,
    /// Post data keys left out, by pattern.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored_post_data_params_patterns: Vec<String>,
    /// Query values are base64 and compared decoded.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub decode_base64_query: bool,
    /// The JSON Schema of the query parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_params_schema: Option<Value>,
    /// The JSON Schema of the post data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_data_schema: Option<Value>,
    /// The request must not have been made.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub should_not_exist: bool,
    /// Only the last matching request is compared (their default: yes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_event_only: Option<bool>,
    /// Keys not known here.
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

impl NetworkEventSpec {
    /// `last_event_only`, their default (true) when not given.
    pub fn last_event_only(&self) -> bool {
        self.last_event_only.unwrap_or(true)
    }
}

/// The request a `NetworkEventEvaluator` looks for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExpectedRequest {
    /// The URL, or alternatives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<OneOrMany>,
    /// The method (their default: GET).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_method: Option<String>,
    /// Request headers that must match (a `referer` compared as a URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<Map<String, Value>>,
    /// Query parameters, compared by `query_params_schema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_params: Option<Value>,
    /// Form or JSON body fields (JSONPath keys allowed), compared by `post_data_schema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_data: Option<Map<String, Value>>,
    /// The response status (their default: 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_status: Option<i64>,
    /// Response body fields that must be equal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_content: Option<Map<String, Value>>,
    /// Cookies the response must set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_cookies: Option<Map<String, Value>>,
    /// Keys not known here.
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

impl ExpectedRequest {
    /// The URL alternatives (empty: none given).
    pub fn urls(&self) -> &[String] {
        match &self.url {
            Some(OneOrMany::One(u)) => std::slice::from_ref(u),
            Some(OneOrMany::Many(u)) => u,
            None => &[],
        }
    }

    /// `http_method`, their default (GET) when not given.
    pub fn method(&self) -> &str {
        self.http_method.as_deref().unwrap_or("GET")
    }

    /// `response_status`, their default (200) when not given.
    pub fn status(&self) -> i64 {
        self.response_status.unwrap_or(200)
    }
}

/// One text, or a list of them (kept as given, so it round-trips).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One.
    One(String),
    /// Several.
    Many(Vec<String>),
}

/// A key that is present: `null` is `Some(Value::Null)`, not `None`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

const AGENT_RESPONSE: &str = "AgentResponseEvaluator";
const NETWORK_EVENT: &str = "NetworkEventEvaluator";

impl VerifiedEvaluator {
    /// Its `evaluator` name.
    pub fn name(&self) -> &str {
        match self {
            VerifiedEvaluator::AgentResponse(_) => AGENT_RESPONSE,
            VerifiedEvaluator::NetworkEvent(_) => NETWORK_EVENT,
            VerifiedEvaluator::Other { name, .. } => name,
        }
    }

    /// The object as their dataset writes it.
    pub fn to_value(&self) -> Value {
        let with_name = |v: Value, name: &str| match v {
            Value::Object(mut m) => {
                m.insert("evaluator".into(), Value::String(name.into()));
                Value::Object(m)
            }
            other => other,
        };
        match self {
            // Serialising these plain structs into a Value cannot fail.
            VerifiedEvaluator::AgentResponse(s) => {
                with_name(serde_json::to_value(s).unwrap_or_default(), AGENT_RESPONSE)
            }
            VerifiedEvaluator::NetworkEvent(s) => {
                with_name(serde_json::to_value(s).unwrap_or_default(), NETWORK_EVENT)
            }
            VerifiedEvaluator::Other { spec, .. } => spec.clone(),
        }
    }
}

impl VerifiedEval {
    /// Reads a task's `eval` list; the error names the evaluator and the part that is wrong.
    pub fn from_value(v: Value) -> Result<VerifiedEval, EvalSpecError> {
        let Value::Array(list) = v else {
            return Err(EvalSpecError { path: "eval".into(), detail: format!("expected a list, found {v}") });
        };
        let mut out = Vec::with_capacity(list.len());
        for (i, mut e) in list.into_iter().enumerate() {
            let at = |p: &str| format!("eval[{i}]{p}");
            let Some(obj) = e.as_object_mut() else {
                return Err(EvalSpecError { path: at(""), detail: format!("expected an object, found {e}") });
            };
            let name = match obj.remove("evaluator") {
                Some(Value::String(s)) => s,
                other => {
                    return Err(EvalSpecError {
                        path: at(".evaluator"),
                        detail: format!("expected the evaluator's name, found {}", other.unwrap_or_default()),
                    })
                }
            };
            out.push(match name.as_str() {
                AGENT_RESPONSE => VerifiedEvaluator::AgentResponse(typed(e, i)?),
                NETWORK_EVENT => VerifiedEvaluator::NetworkEvent(Box::new(typed(e, i)?)),
                _ => {
                    if let Value::Object(m) = &mut e {
                        m.insert("evaluator".into(), Value::String(name.clone()));
                    }
                    VerifiedEvaluator::Other { name, spec: e }
                }
            });
        }
        Ok(VerifiedEval(out))
    }

    /// The expected `task_type`, lower case (`retrieve`, `mutate`, `navigate`).
    pub fn task_type(&self) -> Option<String> {
        self.0.iter().find_map(|e| match e {
            VerifiedEvaluator::AgentResponse(a) => a.expected.task_type().map(str::to_ascii_lowercase),
            _ => None,
        })
    }

    /// Whether any evaluator reads the run's requests.
    pub fn needs_network(&self) -> bool {
        self.0.iter().any(|e| matches!(e, VerifiedEvaluator::NetworkEvent(_)))
    }

    /// The spec's parts this version does not score, as paths (`eval[1].foo`, `eval[0].expected.bar`,
    /// `eval[2]: evaluator X`).
    pub fn unknown_parts(&self) -> Vec<String> {
        let mut out = Vec::new();
        let keys = |out: &mut Vec<String>, at: String, m: &BTreeMap<String, Value>| {
            out.extend(m.keys().map(|k| format!("{at}.{k}")));
        };
        for (i, e) in self.0.iter().enumerate() {
            match e {
                VerifiedEvaluator::AgentResponse(a) => {
                    keys(&mut out, format!("eval[{i}]"), &a.unknown);
                    keys(&mut out, format!("eval[{i}].expected"), &a.expected.unknown);
                }
                VerifiedEvaluator::NetworkEvent(n) => {
                    keys(&mut out, format!("eval[{i}]"), &n.unknown);
                    keys(&mut out, format!("eval[{i}].expected"), &n.expected.unknown);
                }
                VerifiedEvaluator::Other { name, .. } => out.push(format!("eval[{i}]: evaluator {name}")),
            }
        }
        out
    }

    /// The expected `retrieved_data`'s texts and numbers (what a page quoting the task must not reveal).
    pub fn answer_texts(&self) -> Vec<String> {
        let mut out = Vec::new();
        for e in &self.0 {
            if let VerifiedEvaluator::AgentResponse(a) = e {
                if let Some(Value::Array(items)) = &a.expected.retrieved_data {
                    out.extend(items.iter().filter_map(|v| match v {
                        Value::String(s) => Some(s.clone()),
                        Value::Number(n) => Some(n.to_string()),
                        _ => None,
                    }));
                }
            }
        }
        out
    }
}

/// One evaluator's object read into its model; the error names the part (`eval[1].expected.url`).
fn typed<T: serde::de::DeserializeOwned>(e: Value, i: usize) -> Result<T, EvalSpecError> {
    serde_path_to_error::deserialize(e).map_err(|err| {
        let p = err.path().to_string();
        EvalSpecError {
            path: if p == "." { format!("eval[{i}]") } else { format!("eval[{i}].{p}") },
            detail: err.into_inner().to_string(),
        }
    })
}

impl Serialize for VerifiedEval {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(VerifiedEvaluator::to_value))
    }
}

impl<'de> Deserialize<'de> for VerifiedEval {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        VerifiedEval::from_value(Value::deserialize(d)?).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn their_evaluators_read_typed_and_round_trip() {
        let given = json!([
            {"evaluator": "AgentResponseEvaluator", "ordered": true,
             "results_schema": {"type": "array", "items": {"type": "string"}},
             "expected": {"task_type": "RETRIEVE", "status": "SUCCESS", "retrieved_data": ["a"]}},
            {"evaluator": "AgentResponseEvaluator", "results_schema": {"type": "null"},
             "expected": {"task_type": "MUTATE", "status": "SUCCESS", "retrieved_data": null}},
            {"evaluator": "NetworkEventEvaluator", "ignored_query_params_patterns": ["^utm"],
             "last_event_only": false, "decode_base64_query": true,
             "expected": {"url": ["http://a/x", "http://a/y"], "http_method": "POST",
                          "post_data": {"q": "1"}, "response_status": 302, "headers": {"referer": "http://a/"}}},
            {"evaluator": "FutureEvaluator", "x": 1}
        ]);
        let v = VerifiedEval::from_value(given.clone()).unwrap();
        assert_eq!(serde_json::to_value(&v).unwrap(), given);
        let VerifiedEvaluator::AgentResponse(a) = &v.0[0] else { panic!("{:?}", v.0[0]) };
        assert!(a.ordered);
        assert_eq!(a.expected.task_type(), Some("RETRIEVE"));
        let VerifiedEvaluator::AgentResponse(m) = &v.0[1] else { panic!() };
        assert_eq!(m.expected.retrieved_data, Some(Value::Null), "null is given, not absent");
        let VerifiedEvaluator::NetworkEvent(n) = &v.0[2] else { panic!() };
        assert_eq!(n.expected.urls(), ["http://a/x", "http://a/y"]);
        assert_eq!((n.expected.method(), n.expected.status(), n.last_event_only()), ("POST", 302, false));
        assert_eq!(v.task_type().as_deref(), Some("retrieve"));
        assert!(v.needs_network());
        assert_eq!(v.unknown_parts(), ["eval[3]: evaluator FutureEvaluator"]);
        assert_eq!(v.answer_texts(), ["a"]);
    }

    #[test]
    fn defaults_and_unknown_keys_are_theirs() {
        let v = VerifiedEval::from_value(json!([
            {"evaluator": "NetworkEventEvaluator", "new_rule": 1, "expected": {"url": "http://a/", "extra": 2}}
        ]))
        .unwrap();
        let VerifiedEvaluator::NetworkEvent(n) = &v.0[0] else { panic!() };
        assert_eq!((n.expected.method(), n.expected.status(), n.last_event_only()), ("GET", 200, true));
        assert_eq!(v.unknown_parts(), ["eval[0].new_rule", "eval[0].expected.extra"]);
    }

    #[test]
    fn bad_specs_name_the_evaluator_and_part() {
        for (spec, path) in [
            (json!({"evaluator": "AgentResponseEvaluator"}), "eval"),
            (json!([1]), "eval[0]"),
            (json!([{"expected": {}}]), "eval[0].evaluator"),
            (
                json!([{"evaluator": "AgentResponseEvaluator", "expected": {"status": 5}}]),
                "eval[0].expected.status",
            ),
            (json!([{"evaluator": "NetworkEventEvaluator", "expected": {"url": 5}}]), "eval[0].expected.url"),
        ] {
            let e = VerifiedEval::from_value(spec.clone()).unwrap_err();
            assert_eq!(e.path, path, "{spec}: {e}");
        }
    }
}
