//! Reference answers: our task files carry an `eval` spec per task; WebVoyager's `reference_answer.json`
//! maps each site to answers by the number after `--` in the task id, typed `golden` (scored) or
//! `possible` (shown beside the agent's answer, scored only on request).

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use trajectory::WebVoyagerEval;

/// A WebVoyager reference answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WvAnswer {
    /// golden / possible.
    pub kind: String,
    /// The text.
    pub ans: String,
}

/// Reference failures.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    /// Unreadable file.
    #[error("cannot read {path}: {source}")]
    Io {
        /// File.
        path: String,
        /// Error.
        #[source]
        source: std::io::Error,
    },
    /// Not the expected shape.
    #[error("{path}: {detail}")]
    Bad {
        /// File.
        path: String,
        /// What is wrong.
        detail: String,
    },
}

#[derive(Deserialize)]
struct WvSite {
    #[serde(default)]
    answers: Vec<WvRaw>,
}

#[derive(Deserialize)]
struct WvRaw {
    id: serde_json::Value,
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    ans: String,
}

/// Read WebVoyager's `reference_answer.json` into `task id -> answer` (`Allrecipes--3`).
pub fn load_webvoyager(path: &Path) -> Result<HashMap<String, WvAnswer>, ReferenceError> {
    let p = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|source| ReferenceError::Io { path: p.clone(), source })?;
    let sites: HashMap<String, WvSite> =
        serde_json::from_str(text.trim_start_matches('\u{feff}')).map_err(|e| ReferenceError::Bad {
            path: p.clone(),
            detail: format!("not a reference_answer.json: {e}"),
        })?;
    let mut out = HashMap::new();
    for (site, s) in sites {
        for a in s.answers {
            let id = match &a.id {
                serde_json::Value::Number(n) => n.to_string(),
                serde_json::Value::String(s) => s.clone(),
                _ => continue,
            };
            out.insert(format!("{site}--{id}"), WvAnswer { kind: a.kind.to_lowercase(), ans: a.ans });
        }
    }
    Ok(out)
}

#[derive(Deserialize)]
struct TaskLine {
    id: serde_json::Value,
    #[serde(default)]
    eval: Option<WebVoyagerEval>,
}

/// Read the `eval` specs of a WebVoyager-format task file (tasks without one are absent). WebArena-format
/// files give none here: their specs travel in each trajectory (`task_eval`).
pub fn load_specs(path: &Path) -> Result<HashMap<String, WebVoyagerEval>, ReferenceError> {
    let p = path.display().to_string();
    let mut out = HashMap::new();
    if path.is_dir() {
        // WebArena config directory: each trajectory carries its task's own spec.
        return Ok(out);
    }
    let text =
        std::fs::read_to_string(path).map_err(|source| ReferenceError::Io { path: p.clone(), source })?;
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with('[')
        || (t.starts_with('{')
            && serde_json::from_str::<serde_json::Value>(t).is_ok_and(|v| v.get("intent").is_some()))
    {
        // WebArena-format file: each trajectory carries its task's own spec (placeholders resolved).
        return Ok(out);
    }
    for (i, line) in text.lines().enumerate() {
        let line = line.trim().trim_start_matches('\u{feff}');
        if line.is_empty() {
            continue;
        }
        let t: TaskLine = serde_json::from_str(line)
            .map_err(|e| ReferenceError::Bad { path: p.clone(), detail: format!("line {}: {e}", i + 1) })?;
        let id = match t.id {
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        };
        if let Some(spec) = t.eval.filter(|s| !s.is_empty()) {
            out.insert(id, spec);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webvoyager_reference_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("ref.json");
        std::fs::write(
            &p,
            r#"{"Allrecipes": {"notice": "x", "answers": [{"id": 0, "type": "possible", "ans": "a"}, {"id": 3, "type": "golden", "ans": "b"}]}}"#,
        )
        .unwrap();
        let m = load_webvoyager(&p).unwrap();
        assert_eq!(m["Allrecipes--3"], WvAnswer { kind: "golden".into(), ans: "b".into() });
        assert_eq!(m["Allrecipes--0"].kind, "possible");
        std::fs::write(&p, "[1,2]").unwrap();
        assert!(load_webvoyager(&p).unwrap_err().to_string().contains("not a reference_answer.json"));
    }
}
