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
//!   substring), `must_exclude`. A check that needed a `func:` helper (a site's REST API) makes the task
//!   not scorable, by name.
//! - `page_image_query` is not built yet: a task that needs it is reported as not scorable, by name (as
//!   is an unknown eval type).

use std::collections::BTreeMap;

use serde_json::Value;

use trajectory::HtmlCheck;

use crate::matchers::Check;

/// A check that needs the model: (matcher name, reference text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelCheck {
    /// `fuzzy_match` or `ua_match`.
    pub matcher: String,
    /// What the answer should mean.
    pub reference: String,
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

fn as_list(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a
            .iter()
            .filter_map(|x| match x {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .collect(),
        Value::Number(n) => vec![n.to_string()],
        _ => Vec::new(),
    }
}

/// Scores `string_match` (all but the model checks).
pub fn string_match(eval: &Value, answer: &str) -> WaChecks {
    let mut out = WaChecks::default();
    let refs = eval.get("reference_answers").cloned().unwrap_or(Value::Null);
    let mut push = |matcher: &str, expected: String, pass: bool| {
        out.checks.push(Check { matcher: format!("string_match.{matcher}"), expected, pass });
    };
    if let Some(e) = refs.get("exact_match").filter(|v| !v.is_null()) {
        let e = as_list(e).join(" ");
        push("exact_match", e.clone(), clean(answer) == clean(&e));
    }
    if let Some(items) = refs.get("must_include").filter(|v| !v.is_null()) {
        let items = as_list(items);
        let tokenize = items.len() == 1;
        for item in &items {
            let pass = item.split(" |OR| ").any(|alt| includes(answer, alt, tokenize));
            push("must_include", item.clone(), pass);
        }
    }
    if let Some(items) = refs.get("must_exclude").filter(|v| !v.is_null()) {
        for item in as_list(items) {
            let pass = !includes(answer, &item, false);
            push("must_exclude", item, pass);
        }
    }
    if let Some(items) = refs.get("one_of").filter(|v| !v.is_null()) {
        let items = as_list(items);
        let pass = items.iter().any(|i| includes(answer, i, false));
        push("one_of", items.join(" | "), pass);
    }
    if let Some(f) = refs.get("fuzzy_match").filter(|v| !v.is_null()) {
        if f.as_str() == Some("N/A") {
            let note = eval.get("string_note").and_then(Value::as_str).unwrap_or("").to_string();
            out.model.push(ModelCheck {
                matcher: "string_match.ua_match".into(),
                reference: format!(
                    "The task cannot be done; the answer should say so, for this reason: {note}"
                ),
            });
        } else {
            for r in as_list(f) {
                out.model.push(ModelCheck { matcher: "string_match.fuzzy_match".into(), reference: r });
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
pub fn url_match(eval: &Value, final_url: &str) -> Check {
    let gold = eval.get("reference_url").and_then(Value::as_str).unwrap_or("");
    let rule = eval.get("url_note").and_then(Value::as_str).unwrap_or("GOLD in PRED");
    let refs: Vec<String> = gold.split(" |OR| ").map(clean_url).filter(|u| !u.is_empty()).collect();
    let pred = clean_url(final_url);
    let pass = if refs.is_empty() {
        false
    } else if rule.eq_ignore_ascii_case("EXACT") {
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
    Check { matcher: "url_match".into(), expected: format!("{gold} ({rule})"), pass }
}

/// Scores `program_html` from the evidence the run collected. `Err`: a check that cannot be scored here.
pub fn program_html(eval: &Value, evidence: &[HtmlCheck]) -> Result<Vec<Check>, String> {
    let specs = eval.get("program_html").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut out = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let locator = spec.get("locator").and_then(Value::as_str).unwrap_or("");
        let Some(ev) = evidence.get(i) else {
            out.push(Check {
                matcher: format!("program_html[{i}]"),
                expected: format!("{locator} (the run did not execute this check)"),
                pass: false,
            });
            continue;
        };
        if let Some(e) = ev.error.as_deref().filter(|e| e.contains("is not supported")) {
            return Err(format!("program_html check {i}: {e}"));
        }
        let found = html_escape::decode_html_entities(&ev.result).into_owned();
        let rc = spec.get("required_contents").cloned().unwrap_or(Value::Null);
        let at = if ev.url == "last" { "the last page".to_string() } else { ev.url.clone() };
        let mut push = |m: &str, expected: String, pass: bool| {
            out.push(Check {
                matcher: format!("program_html[{i}].{m}"),
                expected: format!("{expected} (at {at}: {locator})"),
                pass,
            });
        };
        if let Some(e) = rc.get("exact_match").filter(|v| !v.is_null()) {
            let e = as_list(e).join(" ");
            push("exact_match", e.clone(), clean(&found) == clean(&e));
        }
        for item in rc.get("must_include").map(as_list).unwrap_or_default() {
            let pass = item.split(" |OR| ").any(|alt| includes(&found, alt, false));
            push("must_include", item, pass);
        }
        for item in rc.get("must_exclude").map(as_list).unwrap_or_default() {
            let pass = !includes(&found, &item, false);
            push("must_exclude", item, pass);
        }
    }
    if out.is_empty() {
        return Err("program_html with no checks".into());
    }
    Ok(out)
}

/// Scores a whole spec's non-model checks, with the `program_html` evidence the run collected. `Err`
/// names the eval types that cannot be scored here.
pub fn check(eval: &Value, answer: &str, final_url: &str, html: &[HtmlCheck]) -> Result<WaChecks, String> {
    let types = as_list(eval.get("eval_types").unwrap_or(&Value::Null));
    if types.is_empty() {
        return Err("the eval spec has no eval_types".into());
    }
    let mut out = WaChecks::default();
    let mut unsupported = Vec::new();
    for t in &types {
        match t.as_str() {
            "string_match" => {
                let s = string_match(eval, answer);
                out.checks.extend(s.checks);
                out.model.extend(s.model);
            }
            "url_match" => out.checks.push(url_match(eval, final_url)),
            "program_html" => match program_html(eval, html) {
                Ok(c) => out.checks.extend(c),
                Err(e) => unsupported.push(format!("program_html ({e})")),
            },
            "page_image_query" => unsupported.push(format!("{t} (not built yet)")),
            other => unsupported.push(format!("{other} (unknown eval type)")),
        }
    }
    if !unsupported.is_empty() {
        return Err(format!("cannot score eval type {}", unsupported.join(", ")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        ];
        for (refs, answer, want) in cases {
            let s = string_match(&json!({"reference_answers": refs}), answer);
            assert!(!s.checks.is_empty(), "{refs}");
            assert_eq!(s.checks.iter().all(|c| c.pass), *want, "{refs} vs {answer:?}: {:?}", s.checks);
        }
    }

    #[test]
    fn fuzzy_and_unachievable_go_to_the_model() {
        let s = string_match(&json!({"reference_answers": {"fuzzy_match": ["about 20 dollars"]}}), "x");
        assert_eq!(
            s.model,
            vec![ModelCheck {
                matcher: "string_match.fuzzy_match".into(),
                reference: "about 20 dollars".into()
            }]
        );
        let s = string_match(
            &json!({"reference_answers": {"fuzzy_match": "N/A"}, "string_note": "no such order"}),
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
            let c = url_match(&json!({"reference_url": gold, "url_note": note}), url);
            assert_eq!(c.pass, want, "{gold} {note} {url}");
        }
    }

    #[test]
    fn unscorable_types_are_named() {
        let e = check(&json!({"eval_types": ["string_match", "page_image_query"]}), "a", "http://x", &[])
            .unwrap_err();
        assert!(e.contains("page_image_query (not built yet)"), "{e}");
        let e = check(&json!({"eval_types": ["frobnicate"]}), "a", "http://x", &[]).unwrap_err();
        assert!(e.contains("frobnicate (unknown eval type)"), "{e}");
        assert!(check(&json!({}), "a", "http://x", &[]).is_err());
        let ok = check(
            &json!({"eval_types": ["string_match", "url_match"], "reference_answers": {"must_include": ["a"]}, "reference_url": "http://x/"}),
            "a",
            "http://x",
            &[],
        )
        .unwrap();
        assert_eq!(ok.checks.len(), 2);
        assert!(ok.checks.iter().all(|c| c.pass));
    }

    #[test]
    fn program_html_table() {
        let ev = |result: &str, error: Option<&str>| HtmlCheck {
            url: "last".into(),
            visited: "http://x/".into(),
            locator: "document.title".into(),
            result: result.into(),
            error: error.map(str::to_string),
        };
        let spec = |rc: Value| json!({"eval_types": ["program_html"], "program_html": [{"url": "last", "locator": "document.title", "required_contents": rc}]});
        // (required_contents, evidence, pass)
        let cases: Vec<(Value, Vec<HtmlCheck>, bool)> = vec![
            (json!({"exact_match": "Order #12"}), vec![ev("order #12", None)], true),
            (json!({"must_include": ["Tom &amp; Jerry"]}), vec![ev("<b>Tom &amp; Jerry</b>", None)], false),
            (json!({"must_include": ["Tom & Jerry"]}), vec![ev("<b>Tom &amp; Jerry</b>", None)], true),
            (json!({"must_include": ["red |OR| blue"]}), vec![ev("a blue mug", None)], true),
            (json!({"must_include": ["5"]}), vec![ev("15", None)], true),
            (json!({"must_exclude": ["draft"]}), vec![ev("Draft post", None)], false),
            (json!({"must_include": ["x"]}), vec![ev("", Some("locator: TypeError"))], false),
            (json!({"must_include": ["x"]}), vec![], false),
        ];
        for (rc, evidence, want) in cases {
            let c = check(&spec(rc.clone()), "", "", &evidence).unwrap();
            assert_eq!(c.checks.iter().all(|c| c.pass), want, "{rc} {evidence:?}: {:?}", c.checks);
        }
        let e = check(
            &spec(json!({"must_include": ["x"]})),
            "",
            "",
            &[ev(
                "",
                Some("func:shopping_get_latest_order_url() is not supported (it needs the site's API)"),
            )],
        )
        .unwrap_err();
        assert!(e.contains("func:shopping_get_latest_order_url"), "{e}");
    }
}
