//! Reference matchers: exact_match, must_include, must_exclude, url_match (fuzzy_match needs a model and
//! lives in [`crate::judge`]). Text is compared after normalisation: case, whitespace, surrounding
//! punctuation, and number format (`$1,234.50` and `1234.5` are the same number).

use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use trajectory::WebVoyagerEval;

fn number_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?").unwrap_or_else(|_| std::process::abort())
    })
}

/// Canonical text: lower case, numbers in a single format, punctuation other than inside words dropped,
/// whitespace collapsed.
pub fn normalise(s: &str) -> String {
    let lower = s.to_lowercase();
    let numbers = number_re().replace_all(&lower, |c: &regex::Captures<'_>| {
        let raw = c[0].replace(',', "");
        match raw.parse::<f64>() {
            Ok(v) if v.is_finite() => {
                let mut t = format!("{v:.6}");
                while t.contains('.') && (t.ends_with('0') || t.ends_with('.')) {
                    t.pop();
                }
                t
            }
            _ => raw,
        }
    });
    let mut out = String::with_capacity(numbers.len());
    let chars: Vec<char> = numbers.chars().collect();
    for (i, &ch) in chars.iter().enumerate() {
        let keep = ch.is_alphanumeric()
            || ch.is_whitespace()
            // A decimal point between digits stays.
            || (ch == '.' && i > 0 && i + 1 < chars.len() && chars[i - 1].is_ascii_digit() && chars[i + 1].is_ascii_digit());
        out.push(if keep { ch } else { ' ' });
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whole-word containment of normalised `needle` in normalised `hay`.
pub fn includes(hay: &str, needle: &str) -> bool {
    let (h, n) = (normalise(hay), normalise(needle));
    if n.is_empty() {
        return true;
    }
    format!(" {h} ").contains(&format!(" {n} "))
}

/// Normalised equality.
pub fn exact_match(answer: &str, expected: &str) -> bool {
    normalise(answer) == normalise(expected)
}

/// URL equality ignoring scheme/host case, default ports, a trailing slash, the fragment and query order.
pub fn url_match(actual: &str, expected: &str) -> bool {
    fn canon(u: &str) -> String {
        match url::Url::parse(u.trim()) {
            Ok(mut p) => {
                p.set_fragment(None);
                let mut pairs: Vec<(String, String)> = p.query_pairs().into_owned().collect();
                pairs.sort();
                if pairs.is_empty() {
                    p.set_query(None);
                } else {
                    p.query_pairs_mut().clear().extend_pairs(pairs);
                }
                let s = p.to_string();
                s.strip_suffix('/').unwrap_or(&s).to_string()
            }
            Err(_) => u.trim().trim_end_matches('/').to_lowercase(),
        }
    }
    canon(actual) == canon(expected)
}

/// One matcher's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// Matcher name.
    pub matcher: String,
    /// What was expected.
    pub expected: String,
    /// Passed.
    pub pass: bool,
}

/// Run the non-model matchers of `spec`.
pub fn check(spec: &WebVoyagerEval, answer: &str, final_url: &str) -> Vec<Check> {
    let mut out = Vec::new();
    let mut push = |m: &str, e: &str, pass: bool| {
        out.push(Check { matcher: m.into(), expected: e.into(), pass });
    };
    if let Some(e) = &spec.exact_match {
        push("exact_match", e, exact_match(answer, e));
    }
    for e in &spec.must_include {
        push("must_include", e, includes(answer, e));
    }
    for e in &spec.must_exclude {
        push("must_exclude", e, !includes(answer, e));
    }
    if let Some(e) = &spec.url_match {
        push("url_match", e, url_match(final_url, e));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation() {
        let cases = [
            ("  Hello,   World! ", "hello world"),
            ("$1,234.50", "1234.5"),
            ("Price: 24.00 USD", "price 24 usd"),
            ("4.6-star, 181 reviews", "4.6 star 181 reviews"),
            ("ÉCOLE", "école"),
            ("3.", "3"),
        ];
        for (input, want) in cases {
            assert_eq!(normalise(input), want, "{input:?}");
        }
    }

    #[test]
    fn matchers() {
        // (matcher, answer/url, expected, pass)
        let cases: &[(&str, &str, &str, bool)] = &[
            ("exact", "$24.00", "24", true),
            ("exact", "The answer is 24", "24", false),
            ("exact", "glass JAR", "Glass Jar", true),
            ("include", "It costs $1,234.5 today", "1234.50", true),
            ("include", "Ana Silva wrote it", "ana silva", true),
            ("include", "48 reviews", "4", false),
            ("include", "148 reviews", "48", false),
            ("exclude", "Red Mug", "Blue", true),
            ("url", "https://Shop.test/product/red-mug/#top", "https://shop.test/product/red-mug", true),
            ("url", "https://shop.test:443/p?b=2&a=1", "https://shop.test/p?a=1&b=2", true),
            ("url", "https://shop.test/product/glass-jar", "https://shop.test/product/red-mug", false),
        ];
        for &(m, a, e, want) in cases {
            let got = match m {
                "exact" => exact_match(a, e),
                "include" => includes(a, e),
                "exclude" => !includes(a, e),
                _ => url_match(a, e),
            };
            assert_eq!(got, want, "{m} {a:?} {e:?}");
        }
    }

    #[test]
    fn spec_checks_all_matchers() {
        let spec = WebVoyagerEval {
            must_include: vec!["Glass Jar".into()],
            must_exclude: vec!["mug".into()],
            url_match: Some("https://shop.test/product/glass-jar".into()),
            ..Default::default()
        };
        let ok = check(&spec, "The Glass Jar", "https://shop.test/product/glass-jar");
        assert!(ok.iter().all(|c| c.pass) && ok.len() == 3);
        let bad = check(&spec, "The Glass Jar", "https://shop.test/product/red-mug");
        assert_eq!(bad.iter().filter(|c| !c.pass).count(), 1);
    }
}
