//! A task's own evaluation spec, typed once where the task file is read and carried in its trajectory
//! ([`crate::Trajectory::task_eval`]): one variant of [`TaskEvalSpec`] per benchmark.
//! - WebArena / VisualWebArena's `eval` object ([`WebArenaEval`], here);
//! - WebArena-Verified's list of evaluators ([`VerifiedEval`], [`verified`]);
//! - a WebVoyager-format line's `eval` ([`WebVoyagerEval`], here: this project's own matchers);
//! - AssistantBench's gold answer ([`AssistantBenchEval`], [`assistantbench`]).
//!
//! In a trajectory, WebArena's spec is its object and WebArena-Verified's its list (as trajectories have
//! always had them); the others are objects tagged with their `benchmark`.
//!
//! The WebArena model follows their task files as published (`test.raw.json`, VWA's `test_raw.json`):
//! lists may be given as one text (`"must_include": "x"`), numbers are read as their text, `null` is
//! absent. Keys this model does not know are kept (so a spec round-trips through a trajectory) and
//! listed by [`TaskEvalSpec::unknown_parts`]: the task loader reports them, and `eval.json` names them per
//! task, so a spec part nobody scores is seen rather than silently passed over.
//!
//! Size: the spec models of the WebArena and WebVoyager formats (~570 lines of types and their lenient
//! readers), then their table tests: one room, because every format's spec travels in the same trajectory
//! field; the newer benchmarks' models are rooms of their own.

use std::collections::BTreeMap;

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Benchmark;

pub mod assistantbench;
pub mod verified;

pub use assistantbench::AssistantBenchEval;
pub use verified::{
    AgentResponseSpec, ExpectedRequest, ExpectedResponse, NetworkEventSpec, OneOrMany, VerifiedEval,
    VerifiedEvaluator,
};

/// A task's evaluation spec: one variant per benchmark.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskEvalSpec {
    /// A WebVoyager-format line's `eval` (this project's matchers).
    WebVoyager(WebVoyagerEval),
    /// WebArena / VisualWebArena's `eval` object.
    WebArena(Box<WebArenaEval>),
    /// WebArena-Verified's `eval`: a list of evaluators.
    Verified(VerifiedEval),
    /// AssistantBench's gold answer.
    AssistantBench(AssistantBenchEval),
    /// A spec a trajectory carries that this version cannot read (written by another version, or by
    /// hand): kept as it is and reported as not scorable, with why.
    Unreadable {
        /// The spec as the trajectory has it.
        spec: Value,
        /// Why it could not be read.
        error: String,
    },
}

/// Why a task file's `eval` could not be read: which part, and what was wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {detail}")]
pub struct EvalSpecError {
    /// Where in the spec (`eval.program_html[2].required_contents.must_include`).
    pub path: String,
    /// What was wrong.
    pub detail: String,
}

/// The key a tagged spec names its benchmark by.
const TAG: &str = "benchmark";

/// A tagged spec's object read into its model; the error names the part.
fn typed<T: serde::de::DeserializeOwned>(o: serde_json::Map<String, Value>) -> Result<T, EvalSpecError> {
    serde_path_to_error::deserialize(Value::Object(o))
        .map_err(|e| EvalSpecError { path: format!("eval.{}", e.path()), detail: e.into_inner().to_string() })
}

impl TaskEvalSpec {
    /// Reads a spec as a trajectory carries it: a list is WebArena-Verified's, an object tagged with its
    /// `benchmark` that benchmark's, any other object WebArena's. Task readers know their benchmark and
    /// call its model's reader instead.
    pub fn from_value(v: Value) -> Result<TaskEvalSpec, EvalSpecError> {
        let tag = v.get(TAG).and_then(Value::as_str).map(str::parse::<Benchmark>);
        match (v, tag) {
            (a @ Value::Array(_), _) => VerifiedEval::from_value(a).map(TaskEvalSpec::Verified),
            (Value::Object(mut o), Some(tag)) => {
                o.remove(TAG);
                let tag =
                    tag.map_err(|e| EvalSpecError { path: format!("eval.{TAG}"), detail: e.to_string() })?;
                match tag {
                    Benchmark::WebVoyager => typed(o).map(TaskEvalSpec::WebVoyager),
                    Benchmark::AssistantBench => typed(o).map(TaskEvalSpec::AssistantBench),
                    Benchmark::WebArena => WebArenaEval::from_value(Value::Object(o))
                        .map(|w| TaskEvalSpec::WebArena(Box::new(w))),
                    Benchmark::WebArenaVerified => Err(EvalSpecError {
                        path: "eval".into(),
                        detail: "WebArena-Verified's spec is a list of evaluators, not an object".into(),
                    }),
                }
            }
            (o @ Value::Object(_), None) => {
                WebArenaEval::from_value(o).map(|w| TaskEvalSpec::WebArena(Box::new(w)))
            }
            (other, _) => Err(EvalSpecError {
                path: "eval".into(),
                detail: format!("expected an object (WebArena) or a list (WebArena-Verified), found {other}"),
            }),
        }
    }

    /// The benchmark whose spec this is (None: unreadable).
    pub fn benchmark(&self) -> Option<Benchmark> {
        match self {
            TaskEvalSpec::WebVoyager(_) => Some(Benchmark::WebVoyager),
            TaskEvalSpec::WebArena(_) => Some(Benchmark::WebArena),
            TaskEvalSpec::Verified(_) => Some(Benchmark::WebArenaVerified),
            TaskEvalSpec::AssistantBench(_) => Some(Benchmark::AssistantBench),
            TaskEvalSpec::Unreadable { .. } => None,
        }
    }

    /// The WebArena spec, when this is one.
    pub fn webarena(&self) -> Option<&WebArenaEval> {
        match self {
            TaskEvalSpec::WebArena(w) => Some(w),
            _ => None,
        }
    }

    /// The spec's parts this version does not score (see [`WebArenaEval::unknown_parts`],
    /// [`VerifiedEval::unknown_parts`]).
    pub fn unknown_parts(&self) -> Vec<String> {
        match self {
            TaskEvalSpec::WebArena(w) => w.unknown_parts(),
            TaskEvalSpec::Verified(v) => v.unknown_parts(),
            TaskEvalSpec::WebVoyager(_)
            | TaskEvalSpec::AssistantBench(_)
            | TaskEvalSpec::Unreadable { .. } => Vec::new(),
        }
    }
}

/// A spec's object with its benchmark's tag.
fn tagged<T: Serialize, S: Serializer>(b: Benchmark, spec: &T, s: S) -> Result<S::Ok, S::Error> {
    let mut v = serde_json::to_value(spec).map_err(serde::ser::Error::custom)?;
    if let Value::Object(o) = &mut v {
        o.insert(TAG.into(), Value::String(b.as_str().into()));
    }
    v.serialize(s)
}

impl Serialize for TaskEvalSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            TaskEvalSpec::WebArena(w) => w.serialize(s),
            TaskEvalSpec::Verified(list) => list.serialize(s),
            TaskEvalSpec::WebVoyager(w) => tagged(Benchmark::WebVoyager, w, s),
            TaskEvalSpec::AssistantBench(a) => tagged(Benchmark::AssistantBench, a, s),
            TaskEvalSpec::Unreadable { spec, .. } => spec.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for TaskEvalSpec {
    /// Never fails on a spec's content: a trajectory stays readable, and a spec it cannot read becomes
    /// [`TaskEvalSpec::Unreadable`].
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(TaskEvalSpec::from_value(v.clone())
            .unwrap_or_else(|e| TaskEvalSpec::Unreadable { spec: v, error: e.to_string() }))
    }
}

/// WebArena / VisualWebArena's `eval`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WebArenaEval {
    /// What is scored; the task's score is the product of the types' scores.
    #[serde(default, deserialize_with = "texts")]
    pub eval_types: Vec<EvalType>,
    /// `string_match`'s references for the agent's answer (`null` in tasks without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_answers: Option<Required>,
    /// `url_match`'s gold URL (` |OR| ` alternatives).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_url: Option<String>,
    /// `url_match`'s rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_note: Option<UrlRule>,
    /// Why the task cannot be done, for `string_match`'s `fuzzy_match: "N/A"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub string_note: Option<String>,
    /// `program_html`'s checks, run at the end of the task.
    #[serde(default, deserialize_with = "null_as_empty", skip_serializing_if = "Vec::is_empty")]
    pub program_html: Vec<HtmlCheckSpec>,
    /// VisualWebArena's `page_image_query` queries.
    #[serde(default, deserialize_with = "null_as_empty", skip_serializing_if = "Vec::is_empty")]
    pub page_image_query: Vec<ImageQuerySpec>,
    /// The annotators' raw answer: kept, not scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_answer_raw_annotation: Option<String>,
    /// An annotator's note: kept, not scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotation_note: Option<String>,
    /// Keys not known here: kept, and reported by [`WebArenaEval::unknown_parts`].
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

impl WebArenaEval {
    /// Reads a WebArena `eval` object; the error names the part that is wrong.
    pub fn from_value(v: Value) -> Result<WebArenaEval, EvalSpecError> {
        serde_path_to_error::deserialize(v).map_err(|e| {
            let path = e.path().to_string();
            EvalSpecError {
                path: if path == "." { "eval".into() } else { format!("eval.{path}") },
                detail: e.into_inner().to_string(),
            }
        })
    }

    /// The spec's parts this version does not score, as paths (`eval.program_html[0].foo`, `eval_types:
    /// bar`, `url_note: ...`): unknown keys, eval types and URL rules.
    pub fn unknown_parts(&self) -> Vec<String> {
        let mut out = Vec::new();
        let keys = |out: &mut Vec<String>, at: &str, m: &BTreeMap<String, Value>| {
            out.extend(m.keys().map(|k| format!("{at}.{k}")));
        };
        keys(&mut out, "eval", &self.unknown);
        out.extend(self.eval_types.iter().filter_map(|t| match t {
            EvalType::Other(name) => Some(format!("eval.eval_types: {name}")),
            _ => None,
        }));
        if let Some(UrlRule::Other(rule)) = &self.url_note {
            out.push(format!("eval.url_note: {rule}"));
        }
        if let Some(r) = &self.reference_answers {
            keys(&mut out, "eval.reference_answers", &r.unknown);
        }
        for (i, c) in self.program_html.iter().enumerate() {
            keys(&mut out, &format!("eval.program_html[{i}]"), &c.unknown);
            keys(
                &mut out,
                &format!("eval.program_html[{i}].required_contents"),
                &c.required_contents.unknown,
            );
        }
        for (i, q) in self.page_image_query.iter().enumerate() {
            keys(&mut out, &format!("eval.page_image_query[{i}]"), &q.unknown);
            for (j, v) in q.eval_vqa.iter().enumerate() {
                keys(&mut out, &format!("eval.page_image_query[{i}].eval_vqa[{j}]"), &v.unknown);
            }
        }
        out
    }

    /// The texts that may call a `func:` helper at the end of the task: each check's URL and locator,
    /// each image query's URL.
    pub fn helper_texts(&self) -> impl Iterator<Item = &str> {
        let html = self.program_html.iter().flat_map(|c| [c.url.as_str(), c.locator.as_str()]);
        html.chain(self.page_image_query.iter().map(|q| q.eval_image_url.as_str()))
    }

    /// The reference answers' texts (`exact_match`, `must_include`, `fuzzy_match` unless unachievable):
    /// what a page quoting the task must not reveal.
    pub fn answer_texts(&self) -> Vec<String> {
        self.reference_answers.as_ref().map(Required::answer_texts).unwrap_or_default()
    }

    /// Whether the end of the task runs checks in the browser (`program_html` or `page_image_query`
    /// with something to check).
    pub fn has_browser_checks(&self) -> bool {
        !self.program_html.is_empty() || !self.page_image_query.is_empty()
    }
}

/// An eval type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum EvalType {
    /// The agent's answer against `reference_answers`.
    StringMatch,
    /// The final URL against `reference_url`.
    UrlMatch,
    /// Checks on pages at the end of the task.
    ProgramHtml,
    /// Images on a page at the end of the task (VisualWebArena).
    PageImageQuery,
    /// A type this version does not know (not scorable, by name).
    Other(String),
}

impl EvalType {
    /// The name task files use.
    pub fn as_str(&self) -> &str {
        match self {
            EvalType::StringMatch => "string_match",
            EvalType::UrlMatch => "url_match",
            EvalType::ProgramHtml => "program_html",
            EvalType::PageImageQuery => "page_image_query",
            EvalType::Other(s) => s,
        }
    }
}

impl From<String> for EvalType {
    fn from(s: String) -> Self {
        match s.as_str() {
            "string_match" => EvalType::StringMatch,
            "url_match" => EvalType::UrlMatch,
            "program_html" => EvalType::ProgramHtml,
            "page_image_query" => EvalType::PageImageQuery,
            _ => EvalType::Other(s),
        }
    }
}

impl From<EvalType> for String {
    fn from(t: EvalType) -> Self {
        t.as_str().to_string()
    }
}

/// `url_match`'s rule (`url_note`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum UrlRule {
    /// WebArena's `GOLD in PRED` (the default): some gold URL's host and path is contained in the final
    /// URL's, and every gold query parameter has one of its values there.
    GoldInPred,
    /// VisualWebArena's `EXACT`: the final URL equals a gold URL.
    Exact,
    /// A rule this version does not know: scored as `GOLD in PRED`, and reported.
    Other(String),
}

impl From<String> for UrlRule {
    fn from(s: String) -> Self {
        if s.eq_ignore_ascii_case("EXACT") {
            UrlRule::Exact
        } else if s.eq_ignore_ascii_case("GOLD in PRED") {
            UrlRule::GoldInPred
        } else {
            UrlRule::Other(s)
        }
    }
}

impl From<UrlRule> for String {
    fn from(r: UrlRule) -> Self {
        match r {
            UrlRule::GoldInPred => "GOLD in PRED".into(),
            UrlRule::Exact => "EXACT".into(),
            UrlRule::Other(s) => s,
        }
    }
}

/// What a text must satisfy: `reference_answers` for the answer, `required_contents` for a page check.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Required {
    /// The text must equal this (after WebArena's cleaning); a list is joined by spaces, as theirs.
    #[serde(default, deserialize_with = "joined_text", skip_serializing_if = "Option::is_none")]
    pub exact_match: Option<String>,
    /// The text must contain each (` |OR| ` alternatives).
    #[serde(default, deserialize_with = "texts", skip_serializing_if = "Vec::is_empty")]
    pub must_include: Vec<String>,
    /// The text must contain none.
    #[serde(default, deserialize_with = "texts", skip_serializing_if = "Vec::is_empty")]
    pub must_exclude: Vec<String>,
    /// The text must contain one of these.
    #[serde(default, deserialize_with = "texts", skip_serializing_if = "Vec::is_empty")]
    pub one_of: Vec<String>,
    /// VisualWebArena's inequalities on the text read as a number (`>= 12`, ` |OR| ` alternatives).
    #[serde(default, deserialize_with = "texts", skip_serializing_if = "Vec::is_empty")]
    pub required_values: Vec<String>,
    /// What a model decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuzzy_match: Option<Fuzzy>,
    /// Keys not known here.
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

impl Required {
    /// `exact_match`, `must_include` and `fuzzy_match`'s texts.
    pub fn answer_texts(&self) -> Vec<String> {
        let mut out: Vec<String> = self.exact_match.iter().cloned().collect();
        out.extend(self.must_include.iter().cloned());
        if let Some(Fuzzy::Match(f)) = &self.fuzzy_match {
            out.extend(f.iter().cloned());
        }
        out
    }
}

/// `fuzzy_match`: texts a model compares the answer with, or `"N/A"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fuzzy {
    /// `"N/A"`: the task cannot be done, and the answer should say why (`string_note`).
    Unachievable,
    /// The answer should mean each of these.
    Match(Vec<String>),
}

impl Serialize for Fuzzy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Fuzzy::Unachievable => s.serialize_str("N/A"),
            Fuzzy::Match(list) => list.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Fuzzy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if s == "N/A" => Ok(Fuzzy::Unachievable),
            v => texts_of(v).map(Fuzzy::Match).map_err(de::Error::custom),
        }
    }
}

/// One `program_html` check.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HtmlCheckSpec {
    /// Where: a URL, `last` (the page the agent ended on), or a `func:` helper giving one.
    #[serde(default)]
    pub url: String,
    /// What: a JavaScript expression, a `func:` helper, or empty (the page's HTML).
    #[serde(default)]
    pub locator: String,
    /// What the located text must satisfy.
    #[serde(default)]
    pub required_contents: Required,
    /// Scripts run before the locator.
    #[serde(default, deserialize_with = "texts", skip_serializing_if = "Vec::is_empty")]
    pub prep_actions: Vec<String>,
    /// Keys not known here.
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

/// One VisualWebArena `page_image_query`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ImageQuerySpec {
    /// Where: a URL, `last`, or a `func:` helper.
    #[serde(default)]
    pub eval_image_url: String,
    /// Which images: a `.class` selector, or empty for every image.
    #[serde(default)]
    pub eval_image_class: String,
    /// Gold images (` |OR| ` alternatives) some page image must resemble (SSIM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval_fuzzy_image_match: Option<String>,
    /// This query's SSIM threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssim_threshold: Option<f64>,
    /// Questions about the images, for a model.
    #[serde(default, deserialize_with = "null_as_empty", skip_serializing_if = "Vec::is_empty")]
    pub eval_vqa: Vec<VqaSpec>,
    /// Keys not known here.
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

/// A question about a query's images and the text its answer must contain.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VqaSpec {
    /// The question.
    #[serde(default)]
    pub question: String,
    /// What the answer must contain.
    #[serde(default)]
    pub answer: String,
    /// Keys not known here.
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

/// A WebVoyager-format task line's `eval` (this project's own format, the demo's): what the answer and the
/// final URL must satisfy. The agent reads its answers (for the contamination check), the evaluator scores
/// it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebVoyagerEval {
    /// The answer must equal this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact_match: Option<String>,
    /// The answer must contain each of these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub must_include: Vec<String>,
    /// The answer must contain none of these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub must_exclude: Vec<String>,
    /// A model decides whether the answer means this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuzzy_match: Option<String>,
    /// The final URL must be this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_match: Option<String>,
}

impl WebVoyagerEval {
    /// True when no matcher is set.
    pub fn is_empty(&self) -> bool {
        self == &WebVoyagerEval::default()
    }

    /// `exact_match`, `must_include` and `fuzzy_match`: the answer's texts.
    pub fn answer_texts(&self) -> Vec<String> {
        let mut out: Vec<String> = self.exact_match.iter().cloned().collect();
        out.extend(self.must_include.iter().cloned());
        out.extend(self.fuzzy_match.iter().cloned());
        out
    }
}

/// Python's `str()` of a JSON value, as the benchmarks' Python harnesses compare values: strings as they
/// are, `None`, `True` / `False`, numbers as JSON prints them (which is how Python prints ints and the
/// floats the harnesses meet).
pub fn python_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        other => other.to_string(),
    }
}

/// A text, or a number read as its text.
fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Why a list of texts could not be read.
#[derive(Debug, thiserror::Error)]
enum TextsError {
    #[error("expected a text or a number in the list, found {0}")]
    Item(Value),
    #[error("expected a text or a list of texts, found {0}")]
    Shape(Value),
}

/// A list of texts as task files give it: a list, one text, a number, or `null` (none).
fn texts_of(v: Value) -> Result<Vec<String>, TextsError> {
    match v {
        Value::Null => Ok(Vec::new()),
        Value::Array(a) => a.into_iter().map(|x| text_of(&x).ok_or(TextsError::Item(x))).collect(),
        v => text_of(&v).map(|s| vec![s]).ok_or(TextsError::Shape(v)),
    }
}

fn texts<'de, D: Deserializer<'de>, T: From<String>>(d: D) -> Result<Vec<T>, D::Error> {
    texts_of(Value::deserialize(d)?).map(|v| v.into_iter().map(T::from).collect()).map_err(de::Error::custom)
}

/// `exact_match`: one text (a list is joined by spaces, as WebArena does); `null` is none.
fn joined_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        v => texts_of(v).map(|t| Some(t.join(" "))).map_err(de::Error::custom),
    }
}

fn null_as_empty<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_benchmark_spec_round_trips_through_a_trajectory() {
        // (spec as a trajectory carries it, its benchmark): WebArena's object and WebArena-Verified's list
        // as older versions wrote them, the others tagged.
        let cases = [
            (
                json!({"eval_types": ["string_match"], "reference_answers": {"must_include": ["k"]}}),
                Benchmark::WebArena,
            ),
            (
                json!([{"evaluator": "AgentResponseEvaluator", "expected": {"status": "SUCCESS"}}]),
                Benchmark::WebArenaVerified,
            ),
            (json!({"benchmark": "webvoyager", "must_include": ["k"]}), Benchmark::WebVoyager),
            (
                json!({"benchmark": "assistantbench", "answer": "12", "gold_url": "https://a/"}),
                Benchmark::AssistantBench,
            ),
        ];
        for (v, b) in cases {
            let spec: TaskEvalSpec = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(spec.benchmark(), Some(b), "{v}");
            assert_eq!(serde_json::to_value(&spec).unwrap(), v);
        }
        for bad in [json!({"benchmark": "mind2web"}), json!({"benchmark": "assistantbench"}), json!(5)] {
            let spec: TaskEvalSpec = serde_json::from_value(bad.clone()).unwrap();
            assert!(
                matches!(&spec, TaskEvalSpec::Unreadable { spec, .. } if *spec == bad),
                "{bad}: {spec:?}"
            );
        }
    }

    #[test]
    fn task_files_forms_read_as_one_model() {
        // (eval as a task file gives it, what the model must hold)
        let cases: Vec<(Value, WebArenaEval)> = vec![
            (
                json!({"eval_types": ["string_match"], "reference_answers": {"must_include": "kettle"}}),
                WebArenaEval {
                    eval_types: vec![EvalType::StringMatch],
                    reference_answers: Some(Required {
                        must_include: vec!["kettle".into()],
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            ),
            (
                json!({"eval_types": ["string_match"], "reference_answers": {"exact_match": ["a", 5], "fuzzy_match": "N/A"},
                       "string_note": "gone", "reference_url": null, "program_html": null}),
                WebArenaEval {
                    eval_types: vec![EvalType::StringMatch],
                    reference_answers: Some(Required {
                        exact_match: Some("a 5".into()),
                        fuzzy_match: Some(Fuzzy::Unachievable),
                        ..Default::default()
                    }),
                    string_note: Some("gone".into()),
                    ..Default::default()
                },
            ),
            (
                json!({"eval_types": ["url_match", "magic_match"], "reference_answers": null,
                       "reference_url": "http://x/a", "url_note": "EXACT", "reviewer": "bo"}),
                WebArenaEval {
                    eval_types: vec![EvalType::UrlMatch, EvalType::Other("magic_match".into())],
                    reference_url: Some("http://x/a".into()),
                    url_note: Some(UrlRule::Exact),
                    unknown: [("reviewer".to_string(), json!("bo"))].into(),
                    ..Default::default()
                },
            ),
            (
                json!({"eval_types": ["program_html"], "program_html": [{"url": "last", "locator": "",
                       "required_contents": {"required_values": [">= 3"], "fuzzy_match": "red |OR| blue"},
                       "prep_actions": ["x()"]}]}),
                WebArenaEval {
                    eval_types: vec![EvalType::ProgramHtml],
                    program_html: vec![HtmlCheckSpec {
                        url: "last".into(),
                        required_contents: Required {
                            required_values: vec![">= 3".into()],
                            fuzzy_match: Some(Fuzzy::Match(vec!["red |OR| blue".into()])),
                            ..Default::default()
                        },
                        prep_actions: vec!["x()".into()],
                        ..Default::default()
                    }],
                    ..Default::default()
                },
            ),
        ];
        for (i, (v, want)) in cases.into_iter().enumerate() {
            let got = WebArenaEval::from_value(v).unwrap_or_else(|e| panic!("case {i}: {e}"));
            assert_eq!(got, want, "case {i}");
            // What a trajectory keeps reads back the same.
            let again = WebArenaEval::from_value(serde_json::to_value(&got).unwrap()).unwrap();
            assert_eq!(again, want, "case {i} round trip");
        }
    }

    #[test]
    fn bad_parts_are_named_and_unknown_parts_listed() {
        // (eval, the error's path)
        let bad: &[(Value, &str)] = &[
            (json!({"eval_types": [{"x": 1}]}), "eval.eval_types"),
            (json!({"reference_answers": {"must_include": [["a"]]}}), "eval.reference_answers.must_include"),
            (json!({"program_html": [{"url": 3}]}), "eval.program_html[0].url"),
            (
                json!({"page_image_query": [{"ssim_threshold": "high"}]}),
                "eval.page_image_query[0].ssim_threshold",
            ),
        ];
        for (v, path) in bad {
            let e = WebArenaEval::from_value(v.clone()).unwrap_err();
            assert_eq!(e.path, *path, "{v}: {e}");
        }
        let spec = WebArenaEval::from_value(json!({
            "eval_types": ["program_html", "odd"], "url_note": "ROUGHLY", "extra": 1,
            "program_html": [{"url": "last", "locator": "", "required_contents": {"must_rhyme": ["x"]}}],
            "page_image_query": [{"eval_image_url": "last", "eval_vqa": [{"question": "q", "answer": "a", "hint": "h"}]}]
        }))
        .unwrap();
        assert_eq!(
            spec.unknown_parts(),
            [
                "eval.extra",
                "eval.eval_types: odd",
                "eval.url_note: ROUGHLY",
                "eval.program_html[0].required_contents.must_rhyme",
                "eval.page_image_query[0].eval_vqa[0].hint",
            ]
        );
        assert_eq!(spec.helper_texts().collect::<Vec<_>>(), ["last", "", "last"]);
    }

    #[test]
    fn a_webvoyager_line_eval_gives_its_answer_texts() {
        let e: WebVoyagerEval =
            serde_json::from_value(json!({"exact_match": "a", "must_include": ["b", "c"],
            "must_exclude": ["x"], "fuzzy_match": "d", "url_match": "https://s.test/"}))
            .unwrap();
        assert_eq!(e.answer_texts(), ["a", "b", "c", "d"]);
        assert!(!e.is_empty() && WebVoyagerEval::default().is_empty());
        assert!(serde_json::from_value::<WebVoyagerEval>(json!({"must_include": [1]})).is_err());
    }

    #[test]
    fn a_trajectory_keeps_a_spec_it_cannot_read() {
        let v = json!({"eval_types": "string_match", "program_html": 7});
        let t: TaskEvalSpec = serde_json::from_value(v.clone()).unwrap();
        assert!(
            matches!(&t, TaskEvalSpec::Unreadable { error, .. } if error.contains("eval.program_html")),
            "{t:?}"
        );
        assert_eq!(serde_json::to_value(&t).unwrap(), v);
        // A WebArena-Verified evaluator without its `expected` is kept the same way.
        let list = json!([{"evaluator": "AgentResponseEvaluator"}]);
        let t: TaskEvalSpec = serde_json::from_value(list.clone()).unwrap();
        assert!(matches!(&t, TaskEvalSpec::Unreadable { error, .. } if error.contains("eval[0]")), "{t:?}");
        assert_eq!(serde_json::to_value(&t).unwrap(), list);
    }
}
