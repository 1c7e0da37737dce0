//! AssistantBench's scorer: an answer's accuracy in 0..1 against the gold answer, by the rules of their
//! `question_scorer` (browsergym-assistantbench 0.14.2, `evaluation/evaluator.py` and
//! `evaluate_utils/`), which the test command runs beside this one on the same cases:
//! - the answer is read as JSON when it is JSON, else as text;
//! - a gold answer of one line that reads as a number is scored by the log distance of the two numbers
//!   (`1 - ln(max/min)`, at least 0); one line of JSON by the F1 of keys and values of objects; other text
//!   by the token F1 of the normalised answers (DROP's: lower case, punctuation and articles dropped,
//!   numbers as floats, numbers must agree); several lines as a list, each item aligned with one of the
//!   answer's (the assignment that maximises the total, as scipy's `linear_sum_assignment`).
//!
//! Where their scorer raises an exception (an answer of `true` or `null`, a list of numbers against an
//! object, ...), the task is not scored here, with why: their harness would stop there too.
//!
//! Python's value model is mirrored by [`Py`]: the rules turn on Python types (`int` made `float`, a
//! one-item list of a number made a tuple by their `fix_number`), and on `str()` of those values.

use pathfinding::prelude::{kuhn_munkres, Matrix};
use serde_json::Value;

/// Why their scorer would fail on this answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("AssistantBench's scorer fails on this answer ({0})")]
pub struct Unscorable(pub String);

/// A Python value as their scorer sees it.
#[derive(Debug, Clone, PartialEq)]
enum Py {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    None,
    List(Vec<Py>),
    Dict(Vec<(String, Py)>),
    /// `fix_number`'s `(value, is_number)`, which their `fix_prediction` keeps as the prediction.
    Tuple(Box<Py>, bool),
}

impl Py {
    fn from_json(v: Value) -> Py {
        match v {
            Value::String(s) => Py::Str(s),
            Value::Bool(b) => Py::Bool(b),
            Value::Null => Py::None,
            Value::Number(n) => match n.as_i64() {
                Some(i) => Py::Int(i),
                None => Py::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::Array(a) => Py::List(a.into_iter().map(Py::from_json).collect()),
            Value::Object(o) => Py::Dict(o.into_iter().map(|(k, v)| (k, Py::from_json(v))).collect()),
        }
    }

    /// Python's `len()`, where the type has one.
    fn len(&self) -> Option<usize> {
        match self {
            Py::Str(s) => Some(s.chars().count()),
            Py::List(l) => Some(l.len()),
            Py::Dict(d) => Some(d.len()),
            Py::Tuple(..) => Some(2),
            Py::Int(_) | Py::Float(_) | Py::Bool(_) | Py::None => None,
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Py::Str(_) => "str",
            Py::Int(_) => "int",
            Py::Float(_) => "float",
            Py::Bool(_) => "bool",
            Py::None => "NoneType",
            Py::List(_) => "list",
            Py::Dict(_) => "dict",
            Py::Tuple(..) => "tuple",
        }
    }

    /// Python's `repr()`.
    fn repr(&self) -> String {
        match self {
            Py::Str(s) => {
                if s.contains('\'') && !s.contains('"') {
                    format!("\"{s}\"")
                } else {
                    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
                }
            }
            Py::List(l) => format!("[{}]", l.iter().map(Py::repr).collect::<Vec<_>>().join(", ")),
            Py::Dict(d) => format!(
                "{{{}}}",
                d.iter()
                    .map(|(k, v)| format!("{}: {}", Py::Str(k.clone()).repr(), v.repr()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Py::Tuple(v, b) => format!("({}, {})", v.repr(), Py::Bool(*b).repr()),
            other => other.str(),
        }
    }

    /// Python's `str()`.
    fn str(&self) -> String {
        match self {
            Py::Str(s) => s.clone(),
            Py::Int(i) => i.to_string(),
            Py::Float(f) => float_repr(*f),
            Py::Bool(b) => if *b { "True" } else { "False" }.into(),
            Py::None => "None".into(),
            other => other.repr(),
        }
    }
}

/// Python's `repr(float)`: shortest round-trip digits, exponent form below 1e-4 and from 1e16.
fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    let a = f.abs();
    if a != 0.0 && !(1e-4..1e16).contains(&a) {
        let e = format!("{f:e}");
        let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        return format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    format!("{f:?}")
}

/// Python's `float(text)`: surrounding whitespace allowed, `_` between digits allowed.
fn py_float(text: &str) -> Option<f64> {
    let t = text.trim();
    let t = if t.contains('_') {
        let b = t.as_bytes();
        let ok = b.iter().enumerate().all(|(i, c)| {
            *c != b'_' || (i > 0 && i + 1 < b.len() && b[i - 1].is_ascii_digit() && b[i + 1].is_ascii_digit())
        });
        if !ok {
            return None;
        }
        t.replace('_', "")
    } else {
        t.to_string()
    };
    // Rust reads forms Python does not ("infinity" is read by both; a bare sign by neither).
    t.parse::<f64>().ok()
}

/// Their `fix_number` on text: `$`, `%` and `sqft` dropped, `,` read as `.` (the evaluator's version also
/// drops " square kilometers").
fn fix_number_text(s: &str, square_km: bool) -> Option<f64> {
    let mut t = s.replace(['$', '%'], " ").replace("sqft", " ").trim().replace(',', ".");
    if square_km {
        t = t.replace(" square kilometers", "");
    }
    py_float(&t)
}

/// Their `fix_number` (the evaluator's): `(value, is_number)`.
fn fix_number(v: Py) -> (Py, bool) {
    match v {
        Py::Str(s) => match fix_number_text(&s, true) {
            Some(f) => (Py::Float(f), true),
            None => (Py::Str(s), false),
        },
        Py::Int(i) => (Py::Float(i as f64), true),
        other => (other, true),
    }
}

/// Their `fix_ans`: single-quoted dicts made JSON.
fn fix_ans(a: &str) -> String {
    a.replace("{'", "{\"")
        .replace("', '", "\", \"")
        .replace("': '", "\": \"")
        .replace("'}", "\"}")
        .replace("': ", "\": ")
}

/// The gold answer as their `parse_answer` reads it.
#[derive(Debug, Clone, PartialEq)]
enum Gold {
    Number(f64),
    Json(Vec<Py>),
    Str(String),
    StrList(Vec<String>),
}

fn parse_gold(lines: &[&str]) -> Gold {
    if let [one] = lines {
        if let Some(f) = fix_number_text(one, true) {
            return Gold::Number(f);
        }
        return match serde_json::from_str::<Value>(&fix_ans(one)) {
            Ok(v) => Gold::Json(vec![Py::from_json(v)]),
            Err(_) => Gold::Str(one.to_string()),
        };
    }
    let parsed: Result<Vec<Py>, _> =
        lines.iter().map(|l| serde_json::from_str::<Value>(&fix_ans(l)).map(Py::from_json)).collect();
    match parsed {
        Ok(list) => Gold::Json(list),
        Err(_) => Gold::StrList(lines.iter().map(|l| l.to_string()).collect()),
    }
}

/// An answer's accuracy against the gold answer, in 0..1 (their `question_scorer`'s first value).
pub fn accuracy(prediction: &str, gold: &str) -> Result<f64, Unscorable> {
    let pred = serde_json::from_str::<Value>(prediction)
        .map(Py::from_json)
        .unwrap_or_else(|_| Py::Str(prediction.into()));
    let lines: Vec<&str> = gold.split('\n').filter(|l| !l.trim().is_empty()).collect();
    let gold = parse_gold(&lines);
    let (pred, run_eval) = fix_prediction(pred, &gold);
    // Their `has_ans`, computed before the verdict: `len()` of a value without one raises.
    let len_fails = |p: &Py| !matches!(p, Py::Float(_)) && p.len().is_none();
    if len_fails(&pred) {
        return Err(Unscorable(format!("len() of a {}", pred.type_name())));
    }
    if let Py::List(items) = &pred {
        // Their `all(...)` over the items stops at the first that is neither empty nor NaN.
        for p in items {
            let empty = match p {
                Py::Float(f) => f.is_nan(),
                Py::Int(_) => false,
                other => match other.len() {
                    Some(n) => n == 0,
                    None => {
                        return Err(Unscorable(format!(
                            "len() of a {} in the answer's list",
                            other.type_name()
                        )))
                    }
                },
            };
            if !empty {
                break;
            }
        }
    }
    if !run_eval {
        return Ok(0.0);
    }
    match gold {
        Gold::Number(g) => numbers(&pred, g),
        Gold::Str(g) => Ok(strings(&pred, &Py::Str(g))),
        Gold::StrList(g) => Ok(strings(&pred, &Py::List(g.into_iter().map(Py::Str).collect()))),
        Gold::Json(g) => dicts(&pred, &g),
    }
}

/// Their `fix_prediction`: the prediction as scored, and whether it is scored at all.
fn fix_prediction(pred: Py, gold: &Gold) -> (Py, bool) {
    let mut pred = match pred {
        Py::List(l) if l.len() == 1 && one_number(&l[0]) => {
            let (v, is_num) = fix_number(l.into_iter().next().unwrap_or(Py::None));
            Py::Tuple(Box::new(v), is_num)
        }
        other => other,
    };
    if !matches!(pred, Py::List(_)) {
        pred = fix_number(pred).0;
        if matches!(gold, Gold::Json(_)) {
            pred = match &pred {
                Py::Str(s) => {
                    let lines: Result<Vec<Py>, _> =
                        s.split('\n').map(|l| serde_json::from_str::<Value>(l).map(Py::from_json)).collect();
                    Py::List(lines.unwrap_or_else(|_| vec![pred.clone()]))
                }
                _ => Py::List(vec![pred]),
            };
        }
    }
    if pred.len() == Some(0) {
        return (pred, false);
    }
    if matches!((&pred, gold), (Py::List(l), Gold::Number(_)) if l.len() > 1) {
        return (pred, false);
    }
    (pred, true)
}

/// `type(x) == int or (type(x) == str and x.isnumeric())`.
fn one_number(p: &Py) -> bool {
    match p {
        Py::Int(_) => true,
        Py::Str(s) => !s.is_empty() && s.chars().all(char::is_numeric),
        _ => false,
    }
}

/// Their `evaluate_numbers`.
fn numbers(pred: &Py, gold: f64) -> Result<f64, Unscorable> {
    let p = match pred {
        Py::Float(f) => *f,
        Py::Int(i) => *i as f64,
        Py::Bool(b) => f64::from(u8::from(*b)),
        Py::Str(s) => match py_float(s) {
            Some(f) => f,
            None => return Ok(0.0),
        },
        other => return Err(Unscorable(format!("float() of a {}", other.type_name()))),
    };
    Ok(log_distance(p, gold))
}

/// `max(0, 1 - ln(max/min))`, zeros read as 1e-4.
fn log_distance(pred: f64, gold: f64) -> f64 {
    if pred == 0.0 && gold == 0.0 {
        return 1.0;
    }
    let (p, g) = (if pred == 0.0 { 1e-4 } else { pred }, if gold == 0.0 { 1e-4 } else { gold });
    let ratio = if p > g { p / g } else { g / p };
    // A negative ratio is a NaN logarithm in numpy, and max(0, nan) is 0 in Python.
    let d = 1.0 - ratio.ln();
    if d > 0.0 {
        d
    } else {
        0.0
    }
}

/// Their `evaluate_strings`: the mean token F1 of the best one-to-one alignment of answer and gold items.
fn strings(pred: &Py, gold: &Py) -> f64 {
    let spans = |p: &Py| -> Option<Vec<String>> {
        match p {
            Py::List(l) => {
                l.iter().map(|x| if let Py::Str(s) = x { Some(s.clone()) } else { None }).collect()
            }
            Py::Str(s) => Some(vec![s.clone()]),
            other => Some(vec![other.str()]),
        }
    };
    // A non-text item makes their normaliser raise, which they catch as 0.
    let (Some(p), Some(g)) = (spans(pred), spans(gold)) else { return 0.0 };
    let bag = |s: &String| -> Vec<String> {
        let mut b: Vec<String> = normalize(s).split_whitespace().map(str::to_string).collect();
        b.sort();
        b.dedup();
        b
    };
    let (pb, gb): (Vec<Vec<String>>, Vec<Vec<String>>) =
        (p.iter().map(bag).collect(), g.iter().map(bag).collect());
    let scores: Vec<Vec<f64>> = gb
        .iter()
        .map(|gi| pb.iter().map(|pi| if numbers_agree(gi, pi) { f1(pi, gi) } else { 0.0 }).collect())
        .collect();
    aligned_mean(&scores, pb.len()).unwrap_or(0.0)
}

/// DROP's normalisation of one answer text.
fn normalize(text: &str) -> String {
    let parts: Vec<String> = text
        .split([' ', '-'])
        .map(|tok| {
            let lower = tok.to_lowercase();
            let no_punc = if py_float(&lower).is_some() {
                lower
            } else {
                lower.chars().filter(|c| !c.is_ascii_punctuation()).collect()
            };
            let num = match py_float(&no_punc) {
                Some(f) => float_repr(f),
                None => no_punc,
            };
            drop_articles(&num).split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .filter(|p| !p.trim().is_empty())
        .collect();
    parts.join(" ").trim().to_string()
}

/// `re.sub(r"\b(a|an|the)\b", " ", text)`: every whole word `a`, `an` or `the` made a space (a word is a
/// run of Unicode letters, digits and `_`, as Python's `\b` reads them).
fn drop_articles(text: &str) -> String {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let is_word = word(c);
        let end = rest.find(|x: char| word(x) != is_word).unwrap_or(rest.len());
        let run = &rest[..end];
        out.push_str(if is_word && matches!(run, "a" | "an" | "the") { " " } else { run });
        rest = &rest[end..];
    }
    out
}

fn numbers_agree(gold: &[String], pred: &[String]) -> bool {
    let gn: Vec<&String> = gold.iter().filter(|w| py_float(w).is_some()).collect();
    gn.is_empty() || gn.iter().any(|g| pred.contains(g))
}

fn f1(pred: &[String], gold: &[String]) -> f64 {
    let inter = gold.iter().filter(|g| pred.contains(g)).count() as f64;
    let precision = if pred.is_empty() { 1.0 } else { inter / pred.len() as f64 };
    let recall = if gold.is_empty() { 1.0 } else { inter / gold.len() as f64 };
    if precision == 0.0 && recall == 0.0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    }
}

/// Their `_align_bags` then `np.mean`: the best one-to-one assignment of gold rows to answer columns, its
/// scores summed and divided by the larger side. None when a score is not finite (scipy raises).
fn aligned_mean(scores: &[Vec<f64>], cols: usize) -> Option<f64> {
    let rows = scores.len();
    let n = rows.max(cols);
    if n == 0 || scores.iter().flatten().any(|s| !s.is_finite()) {
        return None;
    }
    let k = rows.min(cols);
    if k == 0 {
        return Some(0.0);
    }
    // Kuhn-Munkres on integer weights wants rows <= columns: transpose when needed. Scores are in 0..1;
    // scaled to 1e9 the best assignment's total is found to 1e-9 per pair.
    let transposed = rows > cols;
    let get = |r: usize, c: usize| if transposed { scores[c][r] } else { scores[r][c] };
    let (h, w) = if transposed { (cols, rows) } else { (rows, cols) };
    let mut m = Matrix::new(h, w, 0i64);
    for r in 0..h {
        for c in 0..w {
            m[(r, c)] = (get(r, c) * 1e9).round() as i64;
        }
    }
    let (_, assign) = kuhn_munkres(&m);
    let total: f64 = assign.iter().enumerate().map(|(r, &c)| get(r, c)).sum();
    Some(total / n as f64)
}

/// Their `evaluate_dicts`: the best alignment of the answer's objects with the gold ones, each pair scored
/// by the F1 of its keys' recall both ways.
fn dicts(pred: &Py, gold: &[Py]) -> Result<f64, Unscorable> {
    let ok = match pred {
        Py::Dict(_) => true,
        Py::List(l) => l.is_empty() || matches!(l[0], Py::Dict(_)),
        other => other.len() == Some(0),
    };
    if !ok {
        return Ok(0.0);
    }
    let items: Vec<&Py> = match pred {
        Py::List(l) => l.iter().collect(),
        // Iterating a dict gives its keys: their pairing then fails on a text.
        Py::Dict(_) => return Err(Unscorable("a dict's keys paired with the gold objects".into())),
        _ => Vec::new(),
    };
    let as_dict = |p: &Py| -> Result<Vec<(String, Py)>, Unscorable> {
        match p {
            Py::Dict(d) => Ok(d.clone()),
            other => Err(Unscorable(format!("a {} where an object is compared", other.type_name()))),
        }
    };
    let mut scores = vec![vec![0.0; items.len()]; gold.len()];
    for (gi, g) in gold.iter().enumerate() {
        for (pi, p) in items.iter().enumerate() {
            let (pd, gd) = (as_dict(p)?, as_dict(g)?);
            let recall = recall_of(&pd, &gd, true)?;
            let precision = recall_of(&gd, &pd, false)?;
            scores[gi][pi] =
                if precision + recall == 0.0 { 0.0 } else { 2.0 * precision * recall / (precision + recall) };
        }
    }
    aligned_mean(&scores, items.len())
        .ok_or_else(|| Unscorable("an empty object compared (a NaN score)".into()))
}

/// Their `calc_recall`: the mean over `gold`'s keys of each value's score in `pred`.
fn recall_of(pred: &[(String, Py)], gold: &[(String, Py)], by_gold_type: bool) -> Result<f64, Unscorable> {
    let fix = |v: Py| match v {
        Py::Str(s) => match fix_number_text(&s, false) {
            Some(f) => Py::Float(f),
            None => Py::Str(s),
        },
        Py::Int(i) => Py::Float(i as f64),
        other => other,
    };
    let mut out = Vec::with_capacity(gold.len());
    for (k, gv) in gold {
        let pv = pred.iter().find(|(pk, _)| pk == k).map(|(_, v)| v.clone());
        let gv = fix(gv.clone());
        let Some(pv) = pv.map(fix) else {
            out.push(0.0);
            continue;
        };
        let by = if by_gold_type { &gv } else { &pv };
        if !matches!(by, Py::Str(_) | Py::Int(_) | Py::Float(_) | Py::Bool(_) | Py::List(_)) {
            return Err(Unscorable(format!("no scorer for a {} value", by.type_name())));
        }
        if std::mem::discriminant(&pv) != std::mem::discriminant(&gv) {
            out.push(0.0);
            continue;
        }
        out.push(match by {
            Py::Int(_) | Py::Float(_) => match (&pv, &gv) {
                (Py::Float(p), Py::Float(g)) => log_distance(*p, *g),
                _ => 0.0,
            },
            _ => strings(&pv, &gv),
        });
    }
    Ok(if out.is_empty() { f64::NAN } else { out.iter().sum::<f64>() / out.len() as f64 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn their_answer_types_score_as_theirs() {
        // (answer, gold, accuracy): the figures their question_scorer gives (browsergym-assistantbench
        // 0.14.2); the test command also runs it on a larger table (tests/assistantbench.rs).
        let cases = [
            ("42", "42", 1.0),
            ("$45", "40", 0.882_216_964_343_616_5),
            ("Paris", "paris", 1.0),
            ("a b c", "a b", 0.666_666_666_666_666_6),
            ("[\"x\",\"y\"]", "x\ny", 1.0),
            ("{\"a\": 1}", "{\"a\": 1}", 1.0),
            ("", "5", 0.0),
            ("1,000", "1", 1.0),
            ("no idea", "12", 0.0),
        ];
        for (p, g, want) in cases {
            let got = accuracy(p, g).unwrap();
            assert!((got - want).abs() < 1e-9, "{p:?} vs {g:?}: {got} != {want}");
        }
    }

    #[test]
    fn where_their_scorer_raises_the_task_is_not_scored() {
        for (p, g) in [("true", "x"), ("null", "5"), ("{\"a\": 1}", "{\"a\": null}")] {
            assert!(accuracy(p, g).is_err(), "{p:?} vs {g:?}: {:?}", accuracy(p, g));
        }
    }

    #[test]
    fn python_reprs() {
        for (f, s) in
            [(45.0, "45.0"), (0.1, "0.1"), (1e16, "1e+16"), (1.5e-5, "1.5e-05"), (1e15, "1000000000000000.0")]
        {
            assert_eq!(float_repr(f), s);
        }
        assert_eq!(Py::Dict(vec![("a".into(), Py::Str("it's".into()))]).str(), "{'a': \"it's\"}");
        assert_eq!(normalize("The Big-Apple, 5"), "big apple 5.0");
        assert_eq!(drop_articles("the"), " ");
        assert_eq!(drop_articles("theatre–a"), "theatre– ");
    }
}
