//! WebArena / VisualWebArena evaluation specs (`eval` in their task configs), scored the way their
//! harnesses do: the task's score is the product of its eval types' scores.
//!
//! - `string_match` over the agent's answer, after their `clean_answer` (trim, surrounding quotes dropped,
//!   lower case): `exact_match` (equality), `must_include` (substring; each item may list `|OR|`
//!   alternatives; word-level when the spec has a single one-character item, so "5" does not match
//!   "15"), `must_exclude`, `one_of` (any), and `fuzzy_match` (a model judges; `"N/A"` means the task is
//!   unachievable and the model compares the answer with `string_note`: `ua_match`).
//! - `url_match` over the final URL: WebArena's rule by default (`url_note` "GOLD in PRED": some gold
//!   URL's host+path is contained in the final URL's, and every gold query parameter has one of its gold
//!   values among the final URL's), VWA's `EXACT` rule (the final URL equals one gold URL); the gold URL
//!   may list `|OR|` alternatives.
//! - `program_html`: the run executed each check at the end of the task (`Trajectory::html_checks`, see
//!   the agent's runner); here each result (HTML entities unescaped, as their harness does) is matched
//!   against the check's `required_contents`: `exact_match`, `must_include` (`|OR|` alternatives,
//!   substring), `must_exclude`. A check whose `func:` helper the run could not execute makes the task
//!   not scorable, by name (the shop's REST helpers run as HTTP calls in the agent's runner).
//!   `fuzzy_match` there goes to the model with the element's text.
//! - `required_values` (VWA, in `reference_answers` and in `required_contents`): the answer (or the
//!   element's text) read as an integer, commas dropped, must satisfy each inequality (`>= 12`,
//!   `< 700`, `== 3`; ` |OR| ` alternatives); text that is not an integer fails, as in VWA.
//! - `page_image_query` (VWA): the run collected each query's images and gold images
//!   (`Trajectory::image_checks`, saved next to the trajectory); `eval_fuzzy_image_match` passes when
//!   some page image has an SSIM above the threshold (the query's `ssim_threshold`, else 0.8 or
//!   `--ssim-threshold`) with some gold image ([`crate::image_match`]); each `eval_vqa` question goes
//!   to the model with each image as `Q: question A:` and passes when some reply contains the answer
//!   (VWA asked BLIP-2; here the OpenAI-compatible model answers). A query with no image on the page
//!   fails, as in VWA.
//!
//! An unknown eval type, and a `func:` helper the run could not execute, make the task not scorable, by name.
//!
//! Size: ~490 lines of rules, then their table tests.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use trajectory::{EvalType, Fuzzy, HtmlCheck, ImageCheck, Required, UrlRule, WebArenaEval};

use crate::matchers::Check;

/// VWA's default SSIM threshold.
pub const DEFAULT_SSIM_THRESHOLD: f64 = 0.8;

/// What the model is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    /// Does this text mean the reference? (`pred` None: the agent's answer.)
    Fuzzy {
        /// The text judged.
        pred: Option<String>,
    },
    /// A question about images; passes when a reply for some image contains the reference.
    Vqa {
        /// The question.
        question: String,
        /// The images (files).
        images: Vec<PathBuf>,
    },
}

/// A check that needs the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelCheck {
    /// `string_match.fuzzy_match`, `string_match.ua_match`, `program_html[i].fuzzy_match`,
    /// `page_image_query[i].eval_vqa`.
    pub matcher: String,
    /// What the answer should mean (or contain, for a VQA question).
    pub reference: String,
    /// What to ask.
    pub ask: Ask,
}

/// The answer's check for `required_values`: every inequality (or one of its `|OR|` alternatives)
/// holds for the value: a number a helper returned as is, text read as an integer (VWA's `str_2_int`:
/// trimmed, commas dropped; anything else fails).
fn required_values(text: &str, numeric: bool, values: &[String]) -> Vec<(String, bool)> {
    let n: Option<f64> = if numeric {
        text.trim().parse().ok()
    } else {
        text.trim().replace(',', "").parse::<i64>().ok().map(|n| n as f64)
    };
    values
        .iter()
        .map(|v| {
            let pass = n.is_some_and(|n| v.split(" |OR| ").any(|alt| inequality(n, alt) == Some(true)));
            (v.clone(), pass)
        })
        .collect()
}

/// VWA's `compare_inequality`: `<= x`, `>= x`, `== x`, `< x`, `> x` (tolerance 1e-8); None when the text
/// is not one.
fn inequality(value: f64, text: &str) -> Option<bool> {
    const TOL: f64 = 1e-8;
    for op in ["<=", ">=", "==", "<", ">"] {
        if let Some((_, num)) = text.split_once(op) {
            let y: f64 = num.trim().parse().ok()?;
            return Some(match op {
                "<=" => value <= y + TOL,
                ">=" => value >= y - TOL,
                "==" => (value - y).abs() <= TOL,
                "<" => value < y + TOL,
                _ => value > y - TOL,
            });
        }
    }
    None
}

/// What the non-model part of a spec gave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WaChecks {
    /// Checks decided here.
    pub checks: Vec<Check>,
    /// Checks the model has to decide.
    pub model: Vec<ModelCheck>,
}

/// WebArena's `clean_answer`.
fn clean(s: &str) -> String {
    let t = s.trim();
    let t = t.strip_prefix('"').and_then(|x| x.strip_suffix('"')).unwrap_or(t);
    let t = t.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')).unwrap_or(t);
    t.to_lowercase()
}

fn words(s: &str) -> Vec<String> {
    // nltk's word_tokenize splits punctuation off words; this is close enough for one-character items.
    let mut out = Vec::new();
    let mut cur = String::new();
    for ch in s.chars() {
        if ch.is_alphanumeric() || ch == '.' && cur.chars().last().is_some_and(|c| c.is_ascii_digit()) {
            cur.push(ch);
        } else {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            if !ch.is_whitespace() {
                out.push(ch.to_string());
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn includes(pred: &str, reference: &str, tokenize: bool) -> bool {
    let (r, p) = (clean(reference), clean(pred));
    if tokenize && r.chars().count() == 1 {
        return words(&p).contains(&r);
    }
    p.contains(&r)
}

/// Scores `string_match` (all but the model checks).
pub fn string_match(eval: &WebArenaEval, answer: &str) -> WaChecks {
    let mut out = WaChecks::default();
    let no_refs = Required::default();
    let refs = eval.reference_answers.as_ref().unwrap_or(&no_refs);
    let mut push = |matcher: &str, expected: String, pass: bool| {
        out.checks.push(Check { matcher: format!("string_match.{matcher}"), expected, pass });
    };
    if let Some(e) = &refs.exact_match {
        push("exact_match", e.clone(), clean(answer) == clean(e));
    }
    let tokenize = refs.must_include.len() == 1;
    for item in &refs.must_include {
        let pass = item.split(" |OR| ").any(|alt| includes(answer, alt, tokenize));
        push("must_include", item.clone(), pass);
    }
    for item in &refs.must_exclude {
        push("must_exclude", item.clone(), !includes(answer, item, false));
    }
    if !refs.one_of.is_empty() {
        let pass = refs.one_of.iter().any(|i| includes(answer, i, false));
        push("one_of", refs.one_of.join(" | "), pass);
    }
    for (v, pass) in required_values(answer, false, &refs.required_values) {
        push("required_values", v, pass);
    }
    match &refs.fuzzy_match {
        None => {}
        Some(Fuzzy::Unachievable) => {
            let note = eval.string_note.as_deref().unwrap_or("");
            out.model.push(ModelCheck {
                matcher: "string_match.ua_match".into(),
                reference: format!(
                    "The task cannot be done; the answer should say so, for this reason: {note}"
                ),
                ask: Ask::Fuzzy { pred: None },
            });
        }
        Some(Fuzzy::Match(refs)) => {
            for r in refs {
                out.model.push(ModelCheck {
                    matcher: "string_match.fuzzy_match".into(),
                    reference: r.clone(),
                    ask: Ask::Fuzzy { pred: None },
                });
            }
        }
    }
    out
}

fn clean_url(u: &str) -> String {
    let t = u.trim().trim_end_matches('/');
    percent_encoding::percent_decode_str(t).decode_utf8_lossy().into_owned()
}

/// (host + path, query parameters), as WebArena's `parse_url`.
fn parse_url(u: &str) -> (String, BTreeMap<String, Vec<String>>) {
    match url::Url::parse(u) {
        Ok(p) => {
            let host = match p.port() {
                Some(port) => format!("{}:{port}", p.host_str().unwrap_or("")),
                None => p.host_str().unwrap_or("").to_string(),
            };
            let mut q: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for (k, v) in p.query_pairs() {
                q.entry(k.into_owned()).or_default().push(v.into_owned());
            }
            (format!("{host}{}", p.path()), q)
        }
        Err(_) => (u.to_string(), BTreeMap::new()),
    }
}

/// Scores `url_match` against the final URL.
pub fn url_match(eval: &WebArenaEval, final_url: &str) -> Check {
    let gold = eval.reference_url.as_deref().unwrap_or("");
    let rule = eval.url_note.clone().unwrap_or(UrlRule::GoldInPred);
    let refs: Vec<String> = gold.split(" |OR| ").map(clean_url).filter(|u| !u.is_empty()).collect();
    let pred = clean_url(final_url);
    let pass = if refs.is_empty() {
        false
    } else if rule == UrlRule::Exact {
        refs.contains(&pred)
    } else {
        let (pred_base, pred_q) = parse_url(&pred);
        let parsed: Vec<_> = refs.iter().map(|r| parse_url(r)).collect();
        let base_ok = parsed.iter().any(|(b, _)| pred_base.contains(b.as_str()));
        let mut gold_q: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (_, q) in &parsed {
            for (k, vs) in q {
                gold_q.entry(k.clone()).or_default().extend(vs.iter().cloned());
            }
        }
        let query_ok =
            gold_q.iter().all(|(k, vs)| vs.iter().any(|v| pred_q.get(k).is_some_and(|p| p.contains(v))));
        base_ok && query_ok
    };
    Check { matcher: "url_match".into(), expected: format!("{gold} ({})", String::from(rule)), pass }
}

/// Why a WebArena-format spec, or one of its eval types, cannot be scored here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotScorable {
    /// The spec lists no eval types.
    #[error("the eval spec has no eval_types")]
    NoEvalTypes,
    /// An eval type listed with nothing to check: `program_html with no checks`.
    #[error("{eval_type} with no {what}")]
    Empty {
        /// The eval type.
        eval_type: &'static str,
        /// What it lacks ("checks", "queries").
        what: &'static str,
    },
    /// A check the run could not execute here (the run recorded why: a helper not supported).
    #[error("{check}: {detail}")]
    Check {
        /// Which check (`program_html check 2`).
        check: String,
        /// What the run recorded.
        detail: String,
    },
    /// The eval types that cannot be scored, each with why.
    #[error("cannot score eval type {}", .0.join(", "))]
    Types(Vec<String>),
}

/// Scores `program_html` from the evidence the run collected (its `fuzzy_match` items go to the model).
/// `Err`: a check that cannot be scored here.
pub fn program_html(eval: &WebArenaEval, evidence: &[HtmlCheck]) -> Result<WaChecks, NotScorable> {
    let mut out = Vec::new();
    let mut model = Vec::new();
    for (i, spec) in eval.program_html.iter().enumerate() {
        let locator = spec.locator.as_str();
        let Some(ev) = evidence.get(i) else {
            out.push(Check {
                matcher: format!("program_html[{i}]"),
                expected: format!("{locator} (the run did not execute this check)"),
                pass: false,
            });
            continue;
        };
        if let Some(e) = ev.error.as_deref().filter(|e| e.contains("is not supported")) {
            return Err(NotScorable::Check {
                check: format!("program_html check {i}"),
                detail: e.to_string(),
            });
        }
        let found = html_escape::decode_html_entities(&ev.result).into_owned();
        let rc = &spec.required_contents;
        let at = if ev.url == "last" { "the last page".to_string() } else { ev.url.clone() };
        let mut push = |m: &str, expected: String, pass: bool| {
            out.push(Check {
                matcher: format!("program_html[{i}].{m}"),
                expected: format!("{expected} (at {at}: {locator})"),
                pass,
            });
        };
        if let Some(e) = &rc.exact_match {
            push("exact_match", e.clone(), clean(&found) == clean(e));
        }
        for item in &rc.must_include {
            let pass = item.split(" |OR| ").any(|alt| includes(&found, alt, false));
            push("must_include", item.clone(), pass);
        }
        for item in &rc.must_exclude {
            push("must_exclude", item.clone(), !includes(&found, item, false));
        }
        for (v, pass) in required_values(&found, ev.numeric, &rc.required_values) {
            push("required_values", v, pass);
        }
        // Their harness compares the element's text with the target (` |OR| ` alternatives); "N/A" here
        // is a target like any other.
        let targets: Vec<&str> = match &rc.fuzzy_match {
            None => Vec::new(),
            Some(Fuzzy::Unachievable) => vec!["N/A"],
            Some(Fuzzy::Match(t)) => t.iter().flat_map(|t| t.split(" |OR| ")).collect(),
        };
        for target in targets {
            model.push(ModelCheck {
                matcher: format!("program_html[{i}].fuzzy_match"),
                reference: target.to_string(),
                ask: Ask::Fuzzy { pred: Some(found.clone()) },
            });
        }
    }
    if out.is_empty() && model.is_empty() {
        return Err(NotScorable::Empty { eval_type: "program_html", what: "checks" });
    }
    Ok(WaChecks { checks: out, model })
}

/// Scores `page_image_query` from the images the run collected (`task_dir` holds their files): SSIM
/// against the gold images here, VQA questions for the model. `Err`: a query that cannot be scored.
pub fn page_image_query(
    eval: &WebArenaEval,
    evidence: &[ImageCheck],
    task_dir: &Path,
    default_threshold: f64,
) -> Result<WaChecks, NotScorable> {
    let specs = &eval.page_image_query;
    if specs.is_empty() {
        return Err(NotScorable::Empty { eval_type: "page_image_query", what: "queries" });
    }
    let mut out = WaChecks::default();
    for (i, spec) in specs.iter().enumerate() {
        let name = |m: &str| format!("page_image_query[{i}].{m}");
        let Some(ev) = evidence.get(i) else {
            out.checks.push(Check {
                matcher: name("images"),
                expected: "the run did not execute this query".into(),
                pass: false,
            });
            continue;
        };
        if let Some(e) =
            ev.error.as_deref().filter(|e| e.contains("is not supported") || e.contains("unknown"))
        {
            return Err(NotScorable::Check { check: format!("page_image_query {i}"), detail: e.to_string() });
        }
        let files: Vec<PathBuf> =
            ev.images.iter().filter(|f| !f.file.is_empty()).map(|f| task_dir.join(&f.file)).collect();
        let at = if ev.url == "last" { "the last page".to_string() } else { ev.url.clone() };
        if files.is_empty() {
            // VWA scores a query with no image 0.
            out.checks.push(Check {
                matcher: name("images"),
                expected: format!("images matching {:?} at {at} (none found)", ev.locator),
                pass: false,
            });
            continue;
        }
        if let Some(gold) = &spec.eval_fuzzy_image_match {
            let threshold = spec.ssim_threshold.unwrap_or(default_threshold);
            let page: Vec<Vec<u8>> = files.iter().filter_map(|f| std::fs::read(f).ok()).collect();
            let mut best: Option<f64> = None;
            let mut problems = Vec::new();
            for g in &ev.gold {
                let bytes = match (&g.error, std::fs::read(task_dir.join(&g.file))) {
                    (None, Ok(b)) if !g.file.is_empty() => b,
                    (Some(e), _) => {
                        problems.push(format!("gold {}: {e}", g.url));
                        continue;
                    }
                    (_, Err(e)) => {
                        problems.push(format!("gold {}: {e}", g.url));
                        continue;
                    }
                    _ => continue,
                };
                for p in &page {
                    match crate::image_match::ssim_bytes(p, &bytes) {
                        Ok(s) => best = Some(best.map_or(s, |b: f64| b.max(s))),
                        Err(e) => problems.push(e.to_string()),
                    }
                }
            }
            let pass = best.is_some_and(|b| b > threshold);
            let best_text = best.map_or("none computed".to_string(), |b| format!("best {b:.3}"));
            let note = if problems.is_empty() { String::new() } else { format!("; {}", problems.join("; ")) };
            out.checks.push(Check {
                matcher: name("eval_fuzzy_image_match"),
                expected: format!("SSIM > {threshold} with {gold} ({best_text}{note})"),
                pass,
            });
        }
        for qa in &spec.eval_vqa {
            out.model.push(ModelCheck {
                matcher: name("eval_vqa"),
                reference: qa.answer.clone(),
                ask: Ask::Vqa { question: qa.question.clone(), images: files.clone() },
            });
        }
    }
    Ok(out)
}

/// What a run left for scoring one task.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    /// The agent's answer.
    pub answer: &'a str,
    /// The final URL.
    pub final_url: &'a str,
    /// `program_html` checks' results.
    pub html: &'a [HtmlCheck],
    /// `page_image_query` queries' images.
    pub images: &'a [ImageCheck],
    /// Where the images' files are.
    pub task_dir: &'a Path,
    /// SSIM threshold for queries without their own.
    pub ssim_threshold: f64,
}

/// Scores a whole spec's non-model checks, with the evidence the run collected. `Err` names the eval
/// types that cannot be scored here.
pub fn check(eval: &WebArenaEval, ev: &Evidence<'_>) -> Result<WaChecks, NotScorable> {
    let (answer, final_url, html) = (ev.answer, ev.final_url, ev.html);
    if eval.eval_types.is_empty() {
        return Err(NotScorable::NoEvalTypes);
    }
    let mut out = WaChecks::default();
    let mut unsupported = Vec::new();
    for t in &eval.eval_types {
        match t {
            EvalType::StringMatch => {
                let s = string_match(eval, answer);
                out.checks.extend(s.checks);
                out.model.extend(s.model);
            }
            EvalType::UrlMatch => out.checks.push(url_match(eval, final_url)),
            EvalType::ProgramHtml => match program_html(eval, html) {
                Ok(c) => {
                    out.checks.extend(c.checks);
                    out.model.extend(c.model);
                }
                Err(e) => unsupported.push(format!("program_html ({e})")),
            },
            EvalType::PageImageQuery => {
                match page_image_query(eval, ev.images, ev.task_dir, ev.ssim_threshold) {
                    Ok(c) => {
                        out.checks.extend(c.checks);
                        out.model.extend(c.model);
                    }
                    Err(e) => unsupported.push(format!("page_image_query ({e})")),
                }
            }
            EvalType::Other(other) => unsupported.push(format!("{other} (unknown eval type)")),
        }
    }
    if !unsupported.is_empty() {
        return Err(NotScorable::Types(unsupported));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// A spec as a task file gives it.
    fn wa(v: Value) -> WebArenaEval {
        WebArenaEval::from_value(v).unwrap()
    }

    fn hc(result: &str, error: Option<&str>) -> HtmlCheck {
        HtmlCheck {
            url: "last".into(),
            visited: "http://x/".into(),
            locator: "document.title".into(),
            result: result.into(),
            numeric: false,
            error: error.map(str::to_string),
        }
    }

    fn ev<'a>(answer: &'a str, url: &'a str, html: &'a [HtmlCheck]) -> Evidence<'a> {
        Evidence {
            answer,
            final_url: url,
            html,
            images: &[],
            task_dir: Path::new("."),
            ssim_threshold: DEFAULT_SSIM_THRESHOLD,
        }
    }

    #[test]
    fn string_match_table() {
        // (reference_answers, answer, every check passes)
        let cases: &[(Value, &str, bool)] = &[
            (json!({"exact_match": "Sarah Miller"}), "  \"sarah miller\" ", true),
            (json!({"exact_match": "Sarah Miller"}), "It is Sarah Miller", false),
            (json!({"must_include": ["Blue Kettle", "24"]}), "The Blue Kettle costs $24.00", true),
            (json!({"must_include": ["Blue Kettle", "31"]}), "The Blue Kettle costs $24.00", false),
            (json!({"must_include": ["kettle |OR| teapot"]}), "a green teapot", true),
            (json!({"must_include": ["5"]}), "15 reviews", false),
            (json!({"must_include": ["5"]}), "5 reviews", true),
            (json!({"must_include": ["5", "x"]}), "15 x", true),
            (json!({"must_exclude": ["mug"]}), "The Red Mug", false),
            (json!({"must_exclude": ["mug"]}), "The kettle", true),
            (json!({"one_of": ["red", "blue"]}), "blue", true),
            (json!({"one_of": ["red", "blue"]}), "green", false),
            (json!({"required_values": [">= 12"]}), "12", true),
            (json!({"required_values": [">= 12"]}), "1,204", true),
            (json!({"required_values": [">= 12"]}), "11", false),
            (json!({"required_values": ["< 700", "> 5"]}), " 699 ", true),
            (json!({"required_values": ["== 3 |OR| == 4"]}), "4", true),
            (json!({"required_values": ["== 3"]}), "3 items", false),
            (json!({"required_values": ["about 3"]}), "3", false),
        ];
        for (refs, answer, want) in cases {
            let s = string_match(&wa(json!({"reference_answers": refs})), answer);
            assert!(!s.checks.is_empty(), "{refs}");
            assert_eq!(s.checks.iter().all(|c| c.pass), *want, "{refs} vs {answer:?}: {:?}", s.checks);
        }
    }

    #[test]
    fn fuzzy_and_unachievable_go_to_the_model() {
        let s = string_match(&wa(json!({"reference_answers": {"fuzzy_match": ["about 20 dollars"]}})), "x");
        assert_eq!(
            s.model,
            vec![ModelCheck {
                matcher: "string_match.fuzzy_match".into(),
                reference: "about 20 dollars".into(),
                ask: Ask::Fuzzy { pred: None },
            }]
        );
        let s = string_match(
            &wa(json!({"reference_answers": {"fuzzy_match": "N/A"}, "string_note": "no such order"})),
            "x",
        );
        assert_eq!(s.model[0].matcher, "string_match.ua_match");
        assert!(s.model[0].reference.contains("no such order"));
    }

    #[test]
    fn url_match_table() {
        // (reference_url, url_note, final url, pass)
        let cases = [
            ("http://shop:7770/catalog", "GOLD in PRED", "http://shop:7770/catalog/", true),
            (
                "http://shop:7770/search?q=kettle",
                "GOLD in PRED",
                "http://shop:7770/search?q=kettle&page=1",
                true,
            ),
            ("http://shop:7770/search?q=kettle", "GOLD in PRED", "http://shop:7770/search?q=mug", false),
            ("http://shop:7770/search?q=kettle", "GOLD in PRED", "http://shop:7770/search", false),
            ("http://shop:7770/a |OR| http://shop:7770/b", "GOLD in PRED", "http://shop:7770/b", true),
            ("http://shop:7770/p/red%20mug", "GOLD in PRED", "http://shop:7770/p/red mug", true),
            ("http://shop:7770/p", "EXACT", "http://shop:7770/p/extra", false),
            ("http://shop:7770/p |OR| http://shop:7770/q", "EXACT", "http://shop:7770/q/", true),
            ("", "GOLD in PRED", "http://shop:7770/", false),
        ];
        for (gold, note, url, want) in cases {
            let c = url_match(&wa(json!({"reference_url": gold, "url_note": note})), url);
            assert_eq!(c.pass, want, "{gold} {note} {url}");
        }
    }

    #[test]
    fn unscorable_types_are_named() {
        let e = check(
            &wa(json!({"eval_types": ["string_match", "page_image_query"]})),
            &ev("a", "http://x", &[]),
        )
        .unwrap_err();
        assert!(e.to_string().contains("page_image_query (page_image_query with no queries)"), "{e}");
        let e = check(&wa(json!({"eval_types": ["frobnicate"]})), &ev("a", "http://x", &[])).unwrap_err();
        assert!(e.to_string().contains("frobnicate (unknown eval type)"), "{e}");
        assert!(check(&wa(json!({})), &ev("a", "http://x", &[])).is_err());
        let ok = check(
            &wa(json!({"eval_types": ["string_match", "url_match"], "reference_answers": {"must_include": ["a"]}, "reference_url": "http://x/"})),
            &ev("a", "http://x", &[]),
        )
        .unwrap();
        assert_eq!(ok.checks.len(), 2);
        assert!(ok.checks.iter().all(|c| c.pass));
    }

    #[test]
    fn program_html_table() {
        let spec = |rc: Value| {
            wa(
                json!({"eval_types": ["program_html"], "program_html": [{"url": "last", "locator": "document.title", "required_contents": rc}]}),
            )
        };
        // (required_contents, evidence, pass)
        let cases: Vec<(Value, Vec<HtmlCheck>, bool)> = vec![
            (json!({"exact_match": "Order #12"}), vec![hc("order #12", None)], true),
            (json!({"must_include": ["Tom &amp; Jerry"]}), vec![hc("<b>Tom &amp; Jerry</b>", None)], false),
            (json!({"must_include": ["Tom & Jerry"]}), vec![hc("<b>Tom &amp; Jerry</b>", None)], true),
            (json!({"must_include": ["red |OR| blue"]}), vec![hc("a blue mug", None)], true),
            (json!({"must_include": ["5"]}), vec![hc("15", None)], true),
            (json!({"must_exclude": ["draft"]}), vec![hc("Draft post", None)], false),
            (json!({"must_include": ["x"]}), vec![hc("", Some("locator: TypeError"))], false),
            (json!({"must_include": ["x"]}), vec![], false),
            (json!({"required_values": [">= 12"]}), vec![hc("1,024", None)], true),
            (json!({"required_values": ["< 700"]}), vec![hc("$699", None)], false),
            (json!({"required_values": ["< 700"]}), vec![hc("699.5", None)], false),
            (
                json!({"required_values": ["< 700"]}),
                vec![HtmlCheck { numeric: true, ..hc("699.5", None) }],
                true,
            ),
        ];
        for (rc, evidence, want) in cases {
            let c = check(&spec(rc.clone()), &ev("", "", &evidence)).unwrap();
            assert_eq!(c.checks.iter().all(|c| c.pass), want, "{rc} {evidence:?}: {:?}", c.checks);
        }
        let func =
            [hc("", Some("func:shopping_get_latest_order_url() is not supported (it needs the site's API)"))];
        let e = check(&spec(json!({"must_include": ["x"]})), &ev("", "", &func)).unwrap_err();
        assert!(e.to_string().contains("func:shopping_get_latest_order_url"), "{e}");
    }

    #[test]
    fn program_html_fuzzy_goes_to_the_model_with_the_element_text() {
        let spec =
            wa(json!({"eval_types": ["program_html"], "program_html": [{"url": "last", "locator": "x",
            "required_contents": {"fuzzy_match": "a cheap mug |OR| a mug"}}]}));
        let html = [hc("The Red Mug, $8.50", None)];
        let c = check(&spec, &ev("", "", &html)).unwrap();
        assert!(c.checks.is_empty());
        assert_eq!(c.model.len(), 2);
        assert_eq!(c.model[0].ask, Ask::Fuzzy { pred: Some("The Red Mug, $8.50".into()) });
    }

    #[test]
    fn page_image_query_table() {
        let dir = tempfile::tempdir().unwrap();
        let png = |name: &str, f: &dyn Fn(u32, u32) -> u8| {
            let img = image::GrayImage::from_fn(32, 32, |x, y| image::Luma([f(x, y)]));
            img.save(dir.path().join(name)).unwrap();
            trajectory::ImageFile { url: format!("https://shop.test/{name}"), file: name.into(), error: None }
        };
        let mug = png("mug.png", &|x, y| ((x * 8) ^ (y * 5)) as u8);
        let kettle = png("kettle.png", &|x, y| if (x / 4 + y / 4) % 2 == 0 { 10 } else { 240 });
        let gold = png("gold.png", &|x, y| ((x * 8) ^ (y * 5)) as u8);
        let q = |extra: Value| {
            let mut q = json!({"eval_image_url": "last", "eval_image_class": ".photo"});
            q.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            wa(json!({"eval_types": ["page_image_query"], "page_image_query": [q]}))
        };
        let found = |images: Vec<trajectory::ImageFile>, gold: Vec<trajectory::ImageFile>| ImageCheck {
            url: "last".into(),
            visited: "https://shop.test/p".into(),
            locator: ".photo".into(),
            images,
            gold,
            error: None,
        };
        let score = |spec: &WebArenaEval, e: &ImageCheck, threshold: f64| {
            let images = [e.clone()];
            let evidence = Evidence {
                images: &images,
                task_dir: dir.path(),
                ssim_threshold: threshold,
                ..ev("", "", &[])
            };
            check(spec, &evidence)
        };
        let fuzzy = q(json!({"eval_fuzzy_image_match": "https://x/gold.png"}));
        // (spec, page images, gold, threshold, pass)
        let cases = [
            (fuzzy.clone(), vec![kettle.clone(), mug.clone()], vec![gold.clone()], 0.8, true),
            (fuzzy.clone(), vec![kettle.clone()], vec![gold.clone()], 0.8, false),
            (fuzzy.clone(), vec![], vec![gold.clone()], 0.8, false),
            // The query's own threshold wins over the default.
            (
                q(json!({"eval_fuzzy_image_match": "g", "ssim_threshold": 1.5})),
                vec![mug.clone()],
                vec![gold.clone()],
                0.8,
                false,
            ),
            (fuzzy.clone(), vec![kettle.clone()], vec![gold.clone()], -1.0, true),
        ];
        for (i, (spec, images, g, threshold, want)) in cases.into_iter().enumerate() {
            let c = score(&spec, &found(images, g), threshold).unwrap();
            assert!(!c.checks.is_empty(), "case {i}");
            assert_eq!(c.checks.iter().all(|c| c.pass), want, "case {i}: {:?}", c.checks);
        }
        // VQA questions go to the model with the page's images.
        let vqa = q(json!({"eval_vqa": [{"question": "Is it a mug?", "answer": "yes"}]}));
        let c = score(&vqa, &found(vec![mug.clone()], vec![]), 0.8).unwrap();
        assert_eq!(
            c.model[0].ask,
            Ask::Vqa { question: "Is it a mug?".into(), images: vec![dir.path().join("mug.png")] }
        );
        // A func: URL or a locator VWA does not take: not scorable, by name.
        let mut bad = found(vec![], vec![]);
        bad.error = Some("func:get_image() is not supported (it needs the site's API)".into());
        assert!(score(&fuzzy, &bad, 0.8).unwrap_err().to_string().contains("func:get_image()"));
    }
}
