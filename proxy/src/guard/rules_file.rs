//! A user's guard rules file: read, parsed, and its errors ([`GuardRulesError`]); the write rules
//! ([`super::writes`]) and the answer places ([`super::answers`]) each read one.

use serde::Deserialize;

/// A rules file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum GuardRulesError {
    /// Reading the file failed.
    #[error("cannot read guard rules file {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid.
    #[error("guard rules file {path}: {detail}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        detail: String,
    },
}

/// A guard rules file as `T`: read from `path`, parsed as JSON; `shape` (the JSON expected) follows a
/// parse error. Returns the file's name for later errors too.
pub(super) fn read_rules<T: serde::de::DeserializeOwned>(
    path: &std::path::Path,
    shape: &str,
) -> Result<(T, String), GuardRulesError> {
    let p = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| GuardRulesError::Io { path: p.clone(), source: e })?;
    Ok((parse_rules(&text, &p, shape)?, p))
}

/// [`read_rules`] on text already read.
pub(super) fn parse_rules<T: serde::de::DeserializeOwned>(
    text: &str,
    path: &str,
    shape: &str,
) -> Result<T, GuardRulesError> {
    serde_json::from_str(text).map_err(|e| GuardRulesError::Invalid {
        path: path.to_string(),
        detail: format!("{e} (expected JSON: {shape})"),
    })
}

/// The JSON a write rules file holds, for errors.
pub(super) const RULES_SHAPE: &str =
    r#"{"rules": [{"id", "why", "methods", "path", "fields", "label"}], "safe_paths": [...]}"#;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RulesFile {
    #[serde(default)]
    pub(super) rules: Vec<RuleFile>,
    #[serde(default)]
    pub(super) safe_paths: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RuleFile {
    pub(super) id: String,
    pub(super) why: String,
    #[serde(default = "default_methods")]
    pub(super) methods: Vec<String>,
    #[serde(default)]
    pub(super) path: String,
    #[serde(default)]
    pub(super) fields: String,
    #[serde(default)]
    pub(super) label: String,
}

fn default_methods() -> Vec<String> {
    ["POST", "PUT", "PATCH", "DELETE"].map(String::from).to_vec()
}
