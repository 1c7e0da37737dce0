//! WebArena-Verified task files (`webarena-verified.json` from the `webarena-verified` package), read as
//! they are: a JSON array of tasks with `task_id`, `sites`, `start_urls` (a list, with `__SITE__`
//! placeholders), `intent`, `eval` (a list of evaluators: `AgentResponseEvaluator`,
//! `NetworkEventEvaluator`), `revision`, and the template fields. Placeholders everywhere are resolved
//! by `--site` like WebArena's; the eval list, typed ([`trajectory::VerifiedEval`]), travels with the task
//! (`TaskSetup::eval`). The benchmark's room in the agent: its reader, and its objective ([`objective`]:
//! the prompt asks for their response format, [`RESPONSE_FORMAT`]); `evaluator::verified` scores it.

use std::path::Path;

use serde_json::Value;
use trajectory::task_eval::OneOrMany;

use super::webarena::{Sites, TaskSetup};
use super::{Task, TaskError};

/// Their task record: what is read of it (the template fields and `revision` are left as they are).
#[derive(serde::Deserialize)]
struct RawTask {
    #[serde(default)]
    intent: Option<String>,
    #[serde(default)]
    start_urls: Option<OneOrMany>,
    /// Typed once its placeholders are resolved.
    #[serde(default)]
    eval: Option<Value>,
    #[serde(default)]
    sites: Vec<String>,
    /// Not in their files; a task file of ours may carry one (the demo's signed-in shop).
    #[serde(default)]
    storage_state: Option<String>,
}

/// What the agent is asked to put in `stop [...]`: their `FinalAgentResponse`, described in our words.
pub const RESPONSE_FORMAT: &str = "When the task is done, or cannot be done, issue stop with a JSON object in the \
brackets: {\"task_type\": \"RETRIEVE\" | \"MUTATE\" | \"NAVIGATE\" (retrieve: the task asks for information; \
mutate: it asks to create, change or delete something; navigate: it asks to show a page), \"status\": \"SUCCESS\" | \
\"NOT_FOUND_ERROR\" | \"ACTION_NOT_ALLOWED_ERROR\" | \"PERMISSION_DENIED_ERROR\" | \"DATA_VALIDATION_ERROR\" | \
\"UNKNOWN_ERROR\", \"retrieved_data\": a list of the values found (numbers as numbers, true/false as booleans) for \
a retrieve task, else null, \"error_details\": null on success, else a short reason}.";

/// The task as the model is given it: the intent, then the response format their evaluator reads.
pub fn objective(task: &Task) -> String {
    format!("{}\n{}", task.question, RESPONSE_FORMAT)
}

/// Whether a task file's JSON is WebArena-Verified's: an array of tasks whose `eval` is a list.
pub(crate) fn looks_like(v: &Value) -> bool {
    v.as_array().and_then(|a| a.first()).is_some_and(|x| x.get("eval").is_some_and(Value::is_array))
}

/// Reads a WebArena-Verified file's JSON; `path` names it in errors.
pub(crate) fn parse(v: &Value, path: &str, base: &Path, sites: &Sites) -> Result<Vec<Task>, TaskError> {
    let items = v.as_array().ok_or_else(|| TaskError::Bad {
        path: path.to_string(),
        line: 1,
        detail: "expected a JSON array of tasks".into(),
    })?;
    let mut out = Vec::with_capacity(items.len());
    let mut seen = std::collections::HashSet::new();
    for (i, item) in items.iter().enumerate() {
        let task_name = super::webarena::task_name(item, i);
        let err = |field: &str, detail: String| super::webarena::field_error(path, &task_name, field, detail);
        if task_name.starts_with('#') {
            return Err(err("task_id", "missing, or not a number or a string".into()));
        }
        // Their task record, typed; the error names the field.
        let raw: RawTask = serde_path_to_error::deserialize(item).map_err(|e| {
            let field = e.path().to_string();
            err(&field, e.into_inner().to_string())
        })?;
        let intent = raw
            .intent
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| err("intent", "missing or empty".into()))?;
        let start: Vec<String> = match raw.start_urls {
            Some(OneOrMany::Many(a)) if !a.is_empty() => a,
            Some(OneOrMany::One(s)) => vec![s],
            _ => return Err(err("start_urls", "expected a non-empty list of URLs".into())),
        };
        let mut start_urls = Vec::new();
        for u in &start {
            let u = sites.resolve(u.trim()).map_err(|e| err("start_urls", e.to_string()))?;
            if !(u.starts_with("http://") || u.starts_with("https://")) {
                return Err(err("start_urls", format!("{u:?} is not an http(s) URL")));
            }
            start_urls.push(u);
        }
        let eval = match &raw.eval {
            Some(list @ Value::Array(_)) => {
                let resolved = resolve(list, sites).map_err(|d| err("eval", d.to_string()))?;
                let eval =
                    trajectory::VerifiedEval::from_value(resolved).map_err(|e| err("eval", e.to_string()))?;
                // A task nobody could score is refused where it is read, not found out after its run.
                if let Some((j, e)) = eval
                    .0
                    .iter()
                    .enumerate()
                    .find(|(_, e)| matches!(e, trajectory::VerifiedEvaluator::Other { .. }))
                {
                    return Err(err("eval", format!("evaluator {j}: unknown evaluator {:?}", e.name())));
                }
                eval
            }
            _ => return Err(err("eval", "expected a list of evaluators".into())),
        };
        let site_names = raw.sites;
        // Not in their files; a task file of ours may carry one (the demo's signed-in shop).
        let storage_state = match raw.storage_state.as_deref().filter(|s| !s.trim().is_empty()) {
            None => None,
            Some(s) => {
                let p = base.join(s);
                if !p.is_file() {
                    return Err(err("storage_state", format!("{} does not exist", p.display())));
                }
                Some(p)
            }
        };
        if !seen.insert(task_name.clone()) {
            return Err(TaskError::Duplicate { path: path.to_string(), line: i + 1, id: task_name });
        }
        let web = start_urls[0].clone();
        let web_name = if site_names.is_empty() { super::site_name_of(&web) } else { site_names.join("+") };
        out.push(Task {
            web_name,
            id: task_name,
            question: intent.to_string(),
            start_url: web,
            benchmark: trajectory::Benchmark::WebArenaVerified,
            setup: TaskSetup {
                start_urls,
                storage_state,
                reference_answers: eval.answer_texts(),
                eval: Some(trajectory::TaskEvalSpec::Verified(eval)),
                sites: site_names,
                ..Default::default()
            },
        });
    }
    Ok(out)
}

/// Their SSH host template (`git@__SSH_HOST__:group/repo.git`): not a site, compared as written.
const SSH_HOST: &str = "__SSH_HOST__";

/// Placeholders resolved in every string value of the eval list (keys are field names, left as they are).
fn resolve(v: &Value, sites: &Sites) -> Result<Value, super::webarena::SitesError> {
    Ok(match v {
        Value::String(s) if s.contains(SSH_HOST) => {
            let parts: Vec<String> = s.split(SSH_HOST).map(|p| sites.resolve(p)).collect::<Result<_, _>>()?;
            Value::String(parts.join(SSH_HOST))
        }
        Value::String(s) => Value::String(sites.resolve(s)?),
        Value::Array(a) => Value::Array(a.iter().map(|x| resolve(x, sites)).collect::<Result<_, _>>()?),
        Value::Object(o) => Value::Object(
            o.iter().map(|(k, x)| Ok((k.clone(), resolve(x, sites)?))).collect::<Result<_, _>>()?,
        ),
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_their_shape() {
        let text = r#"[{"sites": ["shopping_admin"], "task_id": 0, "intent_template_id": 279,
            "start_urls": ["__SHOPPING_ADMIN__"], "intent": "Get the top-1 best-selling product name(s) in 2022",
            "intent_template": "x", "instantiation_dict": {}, "revision": 2,
            "eval": [{"evaluator": "AgentResponseEvaluator", "results_schema": {"type": "array", "items": {"type": "string"}},
                      "expected": {"task_type": "retrieve", "status": "SUCCESS", "retrieved_data": ["Quest Lumaflex\u2122 Band"]}},
                     {"evaluator": "NetworkEventEvaluator", "expected": {"url": "__SHOPPING_ADMIN__/reports", "http_method": "GET"}}]}]"#;
        let json = |t: &str| serde_json::from_str::<Value>(t).unwrap();
        assert!(looks_like(&json(text)));
        assert!(!looks_like(&json(r#"[{"task_id": 1, "eval": {"eval_types": []}}]"#)));
        let sites = Sites::from_pairs(&["SHOPPING_ADMIN=http://admin:7780/admin"]).unwrap();
        let t = parse(&json(text), "v.json", Path::new("."), &sites).unwrap();
        assert_eq!(t[0].id, "0");
        assert_eq!(t[0].start_url, "http://admin:7780/admin");
        assert_eq!(t[0].benchmark, trajectory::Benchmark::WebArenaVerified);
        assert_eq!(t[0].setup.reference_answers, ["Quest Lumaflex\u{2122} Band"]);
        let Some(trajectory::TaskEvalSpec::Verified(list)) = &t[0].setup.eval else {
            panic!("{:?}", t[0].setup.eval)
        };
        let trajectory::VerifiedEvaluator::NetworkEvent(n) = &list.0[1] else { panic!("{:?}", list.0[1]) };
        assert_eq!(n.expected.urls(), ["http://admin:7780/admin/reports"]);
        // (file, error contains)
        for (bad, want) in [
            (text.replace("__SHOPPING_ADMIN__\"]", "__NOPE__\"]"), "--site NOPE=URL"),
            (text.replace("\"NetworkEventEvaluator\"", "\"Mystery\""), "unknown evaluator \"Mystery\""),
            (text.replace("\"intent\": \"Get", "\"intentx\": \"Get"), "intent: missing"),
            (text.replace("\"sites\": [\"shopping_admin\"]", "\"sites\": [7]"), "sites[0]: invalid type"),
            (text.replace("\"http_method\": \"GET\"", "\"http_method\": 7"), "eval[1].expected.http_method"),
        ] {
            let e = parse(&json(&bad), "v.json", Path::new("."), &sites).unwrap_err().to_string();
            assert!(e.contains(want) && e.contains("task 0"), "{e}");
        }
    }
}
