//! WebArena-Verified's typed values: a value normalized by its JSON schema type (`string`, `number` /
//! `integer`, `boolean`, `null`; objects and arrays of them), with alternatives (an expected value
//! written as a list of two or more is "any of these"), and compared the way its `ValueComparator` does
//! (objects key by key, arrays in order or by greedy unordered matching).
//!
//! Written from webarena-verified 1.2.3's `core/evaluation` (value_normalizer.py, value_comparator.py,
//! data_types/{base,string,number,boolean,empty,currency,duration,month,string_list}.py): the same rules,
//! in Rust; `date`, `distance`, `coordinates` and `location-name` are in [`super::formats`], `url` in
//! [`super::url`]. Its other types (the schema `format`s `markdown`, `json`, `full_address`, `base64`,
//! which the dataset does not use) are not here yet:
//! [`Unsupported`] names them, and a task whose spec uses one is reported as not scored.
//!
//! Size: ~520 lines of kinds, normalization and comparison (the value readers are `read.rs`), then table
//! tests.

use std::collections::BTreeMap;

use super::VerifiedError;
use serde_json::Value;

use super::formats;
use super::py_re;
use super::read::truthy;
use super::read::{currency, duration, month, parse_number, py_text};
pub use super::read::{is_regexp, normalize_text};
pub use super::schema::Schema;

/// A schema type this module does not normalize yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported(pub String);

/// The scalar kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `string` (their `NormalizedString`).
    Str,
    /// `number` and `integer` (their `Number`: a float).
    Number,
    /// `boolean`.
    Bool,
    /// `null` (their `Empty`: none, "", "n/a", "null", ...).
    Empty,
    /// The `currency` format: an amount read as `price-parser` reads it, equal within 0.1.
    Currency,
    /// The `duration` format: seconds, as `pytimeparse2` reads the text; equal within max(3 min, 10%).
    Duration,
    /// The `month` format: a month number 1-12 (from a number or a month's name).
    Month,
    /// The `string_list` format: comma-separated items, sorted.
    StringList,
    /// The `date` format: `YYYY-MM-DD`.
    Date,
    /// The `distance` format: meters, equal within max(10 m, 2%).
    Distance,
    /// The `coordinates` format: latitude and longitude, equal within 1e-5 degrees.
    Coordinates,
    /// The `location-name` format: names equal when thefuzz's token sort ratio is at least 80.
    LocationName,
    /// The `url` format: their `URL` type ([`super::url`]).
    Url,
}

/// One normalized alternative.
#[derive(Debug, Clone, PartialEq)]
pub enum Alt {
    /// A string (lower case, ASCII, single spaces), or a regular expression (`^...$`, kept as written).
    Str(String),
    /// A number.
    Number(f64),
    /// A boolean.
    Bool(bool),
    /// The empty value.
    Empty,
    /// A coordinate pair (latitude, longitude).
    Point(f64, f64),
    /// A URL.
    Url(Box<super::url::NormUrl>),
}

/// A normalized value.
#[derive(Debug, Clone, PartialEq)]
pub enum Norm {
    /// A scalar of a kind, with its alternatives (one or more).
    Typed(Kind, Vec<Alt>),
    /// A value that could not be normalized (the agent's): compared as it is, so it matches nothing typed.
    Raw(Value),
    /// An object's properties.
    Object(BTreeMap<String, Norm>),
    /// An array.
    Array(Vec<Norm>),
    /// None.
    Null,
}

/// The kind a schema names (`format` first, then `type`; no schema: string).
pub fn kind_of(schema: Option<&Schema>) -> Result<Kind, Unsupported> {
    let Some(s) = schema else { return Ok(Kind::Str) };
    let name = s.format.as_deref().or(s.ty.as_deref());
    match name.unwrap_or("string") {
        "string" => Ok(Kind::Str),
        "number" | "integer" => Ok(Kind::Number),
        "boolean" => Ok(Kind::Bool),
        "null" => Ok(Kind::Empty),
        "currency" => Ok(Kind::Currency),
        "duration" => Ok(Kind::Duration),
        "month" => Ok(Kind::Month),
        "string_list" => Ok(Kind::StringList),
        "date" => Ok(Kind::Date),
        "distance" => Ok(Kind::Distance),
        "coordinates" => Ok(Kind::Coordinates),
        "location-name" => Ok(Kind::LocationName),
        "url" => Ok(Kind::Url),
        other => Err(Unsupported(other.to_string())),
    }
}

/// An SSH clone URL (`ssh://git@host:port/path`, `git@host:path`) in their short form with the host
/// template (`git@__SSH_HOST__:path`, lower case), as their URL derendering writes it; other text as is.
fn ssh_template(s: &str) -> String {
    let t = s.trim();
    let lower = t.to_lowercase();
    if let Some(rest) = lower.strip_prefix("ssh://") {
        let (user, hostpath) = rest.split_once('@').unwrap_or(("git", rest));
        let path = hostpath.split_once('/').map(|(_, p)| p).unwrap_or("");
        return format!("{user}@__SSH_HOST__:{}", path.trim_start_matches('/'));
    }
    if lower.starts_with("git@") && !lower.contains("://") && !lower.contains(' ') {
        if let Some((user, hostpath)) = lower.split_once('@') {
            if let Some((host, path)) = hostpath.split_once(':') {
                // git@host:2222/path keeps the port's path part; git@host:group/repo is the path.
                let path = if host.is_empty() {
                    path
                } else {
                    path.split_once('/')
                        .filter(|(p, _)| p.chars().all(|c| c.is_ascii_digit()))
                        .map(|(_, r)| r)
                        .unwrap_or(path)
                };
                return format!("{user}@__SSH_HOST__:{}", path.trim_start_matches('/'));
            }
        }
    }
    s.to_string()
}

/// One raw value of a kind, normalized (`Err`: it is not of that kind).
fn alt(kind: Kind, v: &Value) -> Result<Alt, ()> {
    match kind {
        Kind::Str => {
            // `if not value: return ""`; `str(value)` of anything else.
            if !truthy(v) {
                return Ok(Alt::Str(String::new()));
            }
            let s = match v {
                Value::String(s) => normalize_text(&ssh_template(s)),
                Value::Bool(b) => if *b { "True" } else { "False" }.to_string(),
                other => other.to_string(),
            };
            Ok(Alt::Str(if is_regexp(&s) { s.trim().to_string() } else { s.trim().to_lowercase() }))
        }
        Kind::Number => match v {
            Value::Bool(b) => Ok(Alt::Number(if *b { 1.0 } else { 0.0 })),
            Value::Number(n) => n.as_f64().map(Alt::Number).ok_or(()),
            Value::String(s) if !s.is_empty() => parse_number(&normalize_text(s)).map(Alt::Number).ok_or(()),
            _ => Err(()),
        },
        Kind::Bool => match v {
            Value::Bool(b) => Ok(Alt::Bool(*b)),
            Value::Number(n) => Ok(Alt::Bool(n.as_f64().is_some_and(|f| f != 0.0))),
            Value::String(s) if !s.is_empty() => match normalize_text(s).trim() {
                "true" | "yes" | "y" | "1" | "t" | "on" => Ok(Alt::Bool(true)),
                "false" | "no" | "n" | "0" | "f" | "off" => Ok(Alt::Bool(false)),
                _ => Err(()),
            },
            _ => Err(()),
        },
        Kind::Currency => currency(v).map(Alt::Number).ok_or(()),
        Kind::Duration => duration(v).map(Alt::Number).ok_or(()),
        Kind::Month => month(v).map(|m| Alt::Number(f64::from(m))).ok_or(()),
        Kind::Date => match v {
            Value::String(s) if !s.is_empty() => formats::date(&normalize_text(s)).map(Alt::Str).ok_or(()),
            _ => Err(()),
        },
        Kind::Distance => match v {
            Value::String(s) if !s.is_empty() => {
                formats::distance(&normalize_text(s)).map(Alt::Number).ok_or(())
            }
            _ => Err(()),
        },
        Kind::Coordinates => {
            let v = match v {
                Value::String(s) => Value::String(normalize_text(s)),
                other => other.clone(),
            };
            formats::coordinates(&v).map(|(lat, lon)| Alt::Point(lat, lon)).ok_or(())
        }
        Kind::Url => match v {
            // Their URL skips the string pipeline: only surrounding space is dropped.
            Value::String(s) if !s.trim().is_empty() => super::url::UrlRules::default()
                .normalize(s.trim(), None)
                .map(|u| Alt::Url(Box::new(u)))
                .map_err(|_| ()),
            _ => Err(()),
        },
        Kind::LocationName => match v {
            Value::Null => Err(()),
            Value::String(s) => Ok(Alt::Str(normalize_text(s).trim().to_lowercase())),
            other if !truthy(other) => Ok(Alt::Str(String::new())),
            other => Ok(Alt::Str(py_text(other).to_lowercase().trim().to_string())),
        },
        Kind::StringList => {
            if !truthy(v) {
                return Err(());
            }
            let text = py_text(v);
            let mut items: Vec<&str> = text.split(',').map(str::trim).filter(|i| !i.is_empty()).collect();
            if items.is_empty() {
                return Err(());
            }
            items.sort_unstable();
            Ok(Alt::Str(items.join("\u{0}")))
        }
        Kind::Empty => match v {
            Value::Number(_) => Err(()),
            v if !truthy(v) => Ok(Alt::Empty),
            Value::String(s) => {
                let t = s.trim().to_lowercase();
                let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
                let t = t.replace(" / ", "/").replace(" /", "/").replace("/ ", "/");
                if ["n/a", "na", "nan", "null", "none"].contains(&t.as_str()) {
                    Ok(Alt::Empty)
                } else {
                    Err(())
                }
            }
            _ => Err(()),
        },
    }
}

/// A scalar of `kind`: a list of two or more is alternatives. `strict` (expected values): a value that is
/// not of the kind is an error; otherwise (the agent's) it is kept raw.
pub fn scalar(kind: Kind, v: &Value, strict: bool) -> Result<Norm, VerifiedError> {
    let alts: Result<Vec<Alt>, ()> = match v {
        // Their Coordinates: a pair of numbers or strings is one coordinate, not two alternatives.
        Value::Array(a)
            if kind == Kind::Coordinates
                && a.len() == 2
                && a.iter().all(|x| x.is_number() || x.is_string()) =>
        {
            alt(kind, v).map(|a| vec![a])
        }
        Value::Array(a) if a.len() >= 2 => a.iter().map(|x| alt(kind, x)).collect(),
        Value::Array(_) => Err(()),
        other => alt(kind, other).map(|a| vec![a]),
    };
    match alts {
        Ok(a) => Ok(Norm::Typed(kind, a)),
        Err(()) if strict => Err(VerifiedError::Value(format!("{v} is not a {kind:?} value"))),
        Err(()) => Ok(Norm::Raw(v.clone())),
    }
}

/// What a property schema holds: a scalar kind, an array of something, or an object schema (their
/// `_extract_type_from_schema`).
enum Shape<'a> {
    Scalar(Kind),
    Array(Box<Shape<'a>>),
    Object(&'a Schema),
}

fn shape_of(schema: &Schema) -> Result<Shape<'_>, Unsupported> {
    match schema.ty.as_deref() {
        Some("array") => {
            let items = match &schema.items {
                Some(items) => shape_of(items)?,
                None => Shape::Scalar(Kind::Str),
            };
            Ok(Shape::Array(Box::new(items)))
        }
        Some("object") => Ok(Shape::Object(schema)),
        _ => kind_of(Some(schema)).map(Shape::Scalar),
    }
}

/// An object as their `_normalize_object` does it: each of its own properties by the schema's type for
/// it (a string when the schema has none); None stays None. Not an object: an error when `strict`, else
/// kept raw. A string holding a JSON object is read as the object.
pub fn object(v: &Value, schema: &Schema, strict: bool) -> Result<Option<Norm>, VerifiedError> {
    let parsed;
    let mut v = v;
    if let Value::String(s) = v {
        if let Ok(p @ Value::Object(_)) = serde_json::from_str::<Value>(s) {
            parsed = p;
            v = &parsed;
        }
    }
    let Some(o) = v.as_object() else {
        return if strict {
            Err(VerifiedError::Value(format!("{v} is not an object")))
        } else {
            Ok(Some(Norm::Raw(v.clone())))
        };
    };
    let mut out = BTreeMap::new();
    for (name, pv) in o {
        if pv.is_null() {
            out.insert(name.clone(), Norm::Null);
            continue;
        }
        let shape = match schema.property(name) {
            None => Shape::Scalar(Kind::Str),
            Some(ps) => shape_of(ps)?,
        };
        out.insert(name.clone(), by_shape(pv, &shape, strict)?);
    }
    Ok(Some(Norm::Object(out)))
}

fn by_shape(v: &Value, shape: &Shape, strict: bool) -> Result<Norm, VerifiedError> {
    match shape {
        Shape::Scalar(k) => scalar(*k, v, strict),
        Shape::Object(schema) => Ok(object(v, schema, strict)?.unwrap_or(Norm::Null)),
        Shape::Array(item) => {
            let list = match v {
                Value::Array(a) => a.clone(),
                Value::String(s) => match serde_json::from_str::<Value>(s) {
                    Ok(Value::Array(a)) => a,
                    _ if strict => return Err(VerifiedError::Value(format!("{v} is not an array"))),
                    _ => return Ok(Norm::Raw(v.clone())),
                },
                _ if strict => return Err(VerifiedError::Value(format!("{v} is not an array"))),
                _ => return Ok(Norm::Raw(v.clone())),
            };
            Ok(Norm::Array(list.iter().map(|x| by_shape(x, item, strict)).collect::<Result<_, _>>()?))
        }
    }
}

/// A URL's query parameter value normalized by its property schema (an array's `items`), compared as
/// text (their `normalize_query_params_fct`): a regular expression, or a value its type cannot read, is
/// kept as it is.
pub fn param_text(prop: &Schema, v: String) -> String {
    if is_regexp(&v) {
        return v;
    }
    let Ok(kind) = kind_of(prop.element()) else { return v };
    match scalar(kind, &Value::String(v.clone()), false) {
        Ok(Norm::Typed(_, alts)) => match alts.as_slice() {
            [Alt::Str(s)] => s.clone(),
            [Alt::Number(n)] => n.to_string(),
            _ => v,
        },
        _ => v,
    }
}

/// An array by its schema (`items`); not strict: a string holding a JSON list is read, anything else is
/// one item.
pub fn array(v: &Value, schema: Option<&Schema>, strict: bool) -> Result<Option<Norm>, VerifiedError> {
    let mut items: Vec<Value> = match v {
        Value::Array(a) => a.clone(),
        Value::String(s) if !strict => match serde_json::from_str::<Value>(s) {
            Ok(Value::Array(a)) => a,
            _ => vec![v.clone()],
        },
        other if !strict => vec![other.clone()],
        other => return Err(VerifiedError::Value(format!("{other} is not an array"))),
    };
    let empty = Schema::default();
    let items_schema = match schema {
        None => None,
        Some(s) => {
            let ty = s.ty.as_deref().unwrap_or("array");
            if ty != "array" {
                return Err(VerifiedError::Spec(format!("schema type must be 'array', got {ty:?}")));
            }
            Some(s.items.as_deref().unwrap_or(&empty))
        }
    };
    let item_type = items_schema.and_then(|s| s.ty.as_deref()).unwrap_or("string");
    let mut out = Vec::with_capacity(items.len());
    for item in items.drain(..) {
        if item_type == "object" {
            let schema = items_schema.unwrap_or(&empty);
            match &item {
                Value::Array(objs) => {
                    let mut list = Vec::new();
                    for o in objs {
                        list.push(object(o, schema, strict)?.unwrap_or(Norm::Null));
                    }
                    out.push(Norm::Array(list));
                }
                o => out.push(object(o, schema, strict)?.unwrap_or(Norm::Null)),
            }
        } else {
            let kind = kind_of(items_schema)?;
            out.push(scalar(kind, &item, strict)?);
        }
    }
    Ok(Some(Norm::Array(out)))
}

fn regex_full_match(pattern: &str, text: &str) -> bool {
    // Python's fullmatch of the pattern as written, case-insensitive.
    py_re::full_match(pattern, text, true)
}

fn strip_marks(s: &str) -> &str {
    s.trim_matches(|c| matches!(c, '\'' | '"' | '`' | '.' | ',' | ';' | ':' | '!' | '?'))
}

/// Their `NormalizedString.__eq__`: a regular expression on either side, a common alternative, or a
/// common alternative once quotes and punctuation at the ends are dropped.
fn strings_equal(a: &[String], b: &[String]) -> bool {
    for x in a.iter().filter(|x| is_regexp(x)) {
        if b.iter().any(|y| regex_full_match(x, y)) {
            return true;
        }
    }
    for y in b.iter().filter(|y| is_regexp(y)) {
        if a.iter().any(|x| regex_full_match(y, x)) {
            return true;
        }
    }
    if a.iter().any(|x| b.contains(x)) {
        return true;
    }
    a.iter().any(|x| b.iter().any(|y| strip_marks(x) == strip_marks(y)))
}

/// A raw value compared with a typed string: Python compares `NormalizedString == str` by normalizing
/// the string; anything else is unequal.
fn typed_equal(expected: &Norm, actual: &Norm) -> bool {
    let strs = |alts: &[Alt]| -> Vec<String> {
        alts.iter()
            .filter_map(|a| match a {
                Alt::Str(s) => Some(s.clone()),
                _ => None,
            })
            .collect()
    };
    match (expected, actual) {
        (Norm::Typed(Kind::Str, e), Norm::Typed(Kind::Str, a)) => strings_equal(&strs(e), &strs(a)),
        (Norm::Typed(Kind::Str, e), Norm::Raw(Value::String(s))) => {
            let Ok(Norm::Typed(_, a)) = scalar(Kind::Str, &Value::String(s.clone()), false) else {
                return false;
            };
            strings_equal(&strs(e), &strs(&a))
        }
        // Their Duration: any pair of alternatives within max(3 minutes, 10% of the larger).
        (Norm::Typed(Kind::Duration, e), Norm::Typed(Kind::Duration, a)) => e.iter().any(|x| {
            a.iter().any(|y| match (x, y) {
                (Alt::Number(x), Alt::Number(y)) => (x - y).abs() <= 180f64.max(x.max(*y) * 0.1),
                _ => false,
            })
        }),
        // Their Currency compares the first alternatives only, within 0.1.
        (Norm::Typed(Kind::Currency, e), Norm::Typed(Kind::Currency, a)) => match (e.first(), a.first()) {
            (Some(Alt::Number(x)), Some(Alt::Number(y))) => ((x - y).abs() * 1e9).round() <= 1e8,
            _ => false,
        },
        (Norm::Typed(Kind::Distance, e), Norm::Typed(Kind::Distance, a)) => e.iter().any(|x| {
            a.iter().any(
                |y| matches!((x, y), (Alt::Number(x), Alt::Number(y)) if formats::distances_equal(*x, *y)),
            )
        }),
        // Their Coordinates compares the normalized values (the first alternatives).
        (Norm::Typed(Kind::Coordinates, e), Norm::Typed(Kind::Coordinates, a)) => {
            match (e.first(), a.first()) {
                (Some(Alt::Point(x1, y1)), Some(Alt::Point(x2, y2))) => {
                    formats::coordinates_equal((*x1, *y1), (*x2, *y2))
                }
                _ => false,
            }
        }
        (Norm::Typed(Kind::Url, e), Norm::Typed(Kind::Url, a)) => e.iter().any(|x| {
            a.iter()
                .any(|y| matches!((x, y), (Alt::Url(x), Alt::Url(y)) if x.same_base(y) && x.same_query(y)))
        }),
        (Norm::Typed(Kind::LocationName, e), Norm::Typed(Kind::LocationName, a)) => e.iter().any(|x| {
            a.iter()
                .any(|y| matches!((x, y), (Alt::Str(x), Alt::Str(y)) if formats::location_names_equal(x, y)))
        }),
        (Norm::Typed(k1, e), Norm::Typed(k2, a)) if k1 == k2 => e.iter().any(|x| a.contains(x)),
        _ => false,
    }
}

/// Their `ValueComparator.compare`: true when equal.
pub fn equal(expected: &Norm, actual: &Norm, ordered: bool, ignore_extra_keys: bool) -> bool {
    match (expected, actual) {
        (Norm::Null, Norm::Null) => true,
        (Norm::Null, _) | (_, Norm::Null) => false,
        (Norm::Object(e), Norm::Object(a)) => {
            if e.keys().any(|k| !a.contains_key(k))
                || (!ignore_extra_keys && a.keys().any(|k| !e.contains_key(k)))
            {
                return false;
            }
            e.iter().all(|(k, ev)| a.get(k).is_some_and(|av| equal(ev, av, ordered, ignore_extra_keys)))
        }
        (Norm::Object(_), _) => false,
        (Norm::Array(e), Norm::Array(a)) => {
            if ordered {
                return e.len() == a.len()
                    && e.iter().zip(a).all(|(x, y)| equal(x, y, ordered, ignore_extra_keys));
            }
            let mut used = vec![false; a.len()];
            for x in e {
                let Some(i) = (0..a.len()).find(|&i| !used[i] && equal(x, &a[i], ordered, ignore_extra_keys))
                else {
                    return false;
                };
                used[i] = true;
            }
            used.iter().all(|u| *u)
        }
        (Norm::Array(_), _) => false,
        (e, a) => typed_equal(e, a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_table() {
        // (input, normalized)
        for (i, want) in [
            ("  Quest Lumaflex\u{2122} Band ", "quest lumaflex band"),
            ("Caf\u{e9}\tau\nlait", "cafe au lait"),
            ("e-mail", "e mail"),
            ("10-20", "10-20"),
            ("\u{ff21}BC", "abc"),
            ("^Exact (Match)$", "^Exact (Match)$"),
        ] {
            assert_eq!(normalize_text(i), want, "{i:?}");
        }
    }

    #[test]
    fn equality_table() {
        let s = |v: Value, strict| scalar(Kind::Str, &v, strict).unwrap();
        let n = |v: Value| scalar(Kind::Number, &v, false).unwrap();
        // (expected, actual, equal)
        let cases = [
            (s(json!("Emma Lopez"), true), s(json!("emma lopez."), false), true),
            (s(json!(["yes", "ok"]), true), s(json!("OK"), false), true),
            (s(json!("^ord(er)?\\s*#?\\d+$"), true), s(json!("Order #12"), false), true),
            (s(json!("blue"), true), s(json!("blue kettle"), false), false),
            (n(json!(1234)), n(json!("1,234")), true),
            (n(json!(25)), n(json!("twenty five")), true),
            (n(json!(3)), n(json!("three apples")), false),
            (
                scalar(Kind::Bool, &json!(true), true).unwrap(),
                scalar(Kind::Bool, &json!("Yes"), false).unwrap(),
                true,
            ),
            (
                scalar(Kind::Empty, &json!(null), true).unwrap(),
                scalar(Kind::Empty, &json!("N / A"), false).unwrap(),
                true,
            ),
        ];
        for (i, (e, a, want)) in cases.iter().enumerate() {
            assert_eq!(equal(e, a, false, false), *want, "case {i}: {e:?} vs {a:?}");
        }
        // Arrays: unordered by greedy matching, duplicates counted; ordered when asked.
        let arr = |v: Value, strict| {
            array(&v, Some(&Schema::read(&json!({"type": "array", "items": {"type": "string"}}))), strict)
                .unwrap()
                .unwrap()
        };
        assert!(equal(&arr(json!(["a", "b"]), true), &arr(json!(["B", "a"]), false), false, false));
        assert!(!equal(&arr(json!(["a", "b"]), true), &arr(json!(["B", "a"]), false), true, false));
        assert!(!equal(&arr(json!(["a", "a"]), true), &arr(json!(["a"]), false), false, false));
        assert!(!equal(&arr(json!(["a"]), true), &arr(json!(["a", "b"]), false), false, false));
        // A string holding a JSON list is read as the list (the agent's side only).
        assert!(equal(&arr(json!(["a", "b"]), true), &arr(json!("[\"a\", \"b\"]"), false), false, false));
        assert_eq!(
            kind_of(Some(&Schema::read(&json!({"type": "string", "format": "date"})))),
            Ok(Kind::Date)
        );
        assert_eq!(
            kind_of(Some(&Schema::read(&json!({"type": "string", "format": "markdown"})))),
            Err(Unsupported("markdown".into()))
        );
        // The formats of `super::formats`, through the normalizer and the comparison.
        let typed = |k: Kind, e: Value, a: Value| {
            equal(&scalar(k, &e, true).unwrap(), &scalar(k, &a, false).unwrap(), false, false)
        };
        assert!(typed(Kind::Date, json!("March 2, 2022"), json!("2022-03-02")));
        assert!(!typed(Kind::Date, json!("03/11/2023"), json!("11/03/2023")));
        assert!(typed(Kind::Distance, json!("2km"), json!("2.03 km")));
        assert!(!typed(Kind::Distance, json!("375m"), json!("338m")));
        assert!(typed(
            Kind::Coordinates,
            json!({"latitude": "40.44", "longitude": "-79.94"}),
            json!([40.44, -79.94])
        ));
        assert!(typed(Kind::LocationName, json!(["Grano", "Nourish"]), json!("nourish")));
        assert!(!typed(Kind::LocationName, json!("Grano"), json!("Beefsteak")));
        assert!(typed(
            Kind::Url,
            json!("git@__SSH_HOST__:root/metaseq.git"),
            json!("ssh://git@gitlab:2222/root/MetaSeq.git")
        ));
        assert!(!typed(
            Kind::Url,
            json!("git@__SSH_HOST__:root/metaseq.git"),
            json!("git@gitlab:root/other.git")
        ));
        let d = |v: Value| scalar(Kind::Duration, &v, false).unwrap();
        for (e, a, want) in [
            (json!("1hr 35min"), json!("1 hour 35 minutes"), true),
            (json!("16min"), json!("18 min"), true),
            (json!("16min"), json!("20min"), false),
            (json!("3h 30min"), json!("3:30 hours"), true),
            (json!("2min"), json!("2"), false),
        ] {
            assert_eq!(equal(&d(e.clone()), &d(a.clone()), false, false), want, "{e} vs {a}");
        }
        let m = |v: Value| scalar(Kind::Month, &v, false).unwrap();
        for (e, a, want) in [
            (json!("May"), json!(5), true),
            (json!("Jan"), json!("january"), true),
            (json!("May"), json!("May extra"), false),
        ] {
            assert_eq!(equal(&m(e.clone()), &m(a.clone()), false, false), want, "{e} vs {a}");
        }
        let l = |v: Value| scalar(Kind::StringList, &v, false).unwrap();
        assert!(equal(&l(json!("632, 64,86")), &l(json!("86,632,64")), false, false));
        // Currency: read as price-parser reads it, equal within 0.1, first alternatives only.
        let c = |v: Value| scalar(Kind::Currency, &v, false).unwrap();
        for (e, a, want) in [
            (json!(12.99), json!("$12.99"), true),
            (json!("1,234.50"), json!("USD 1234.5"), true),
            (json!(10.0), json!("10.1"), true),
            (json!(10.0), json!("10.2"), false),
            (json!("-5"), json!("-$5.00"), true),
            (json!("1.234,50 \u{20ac}"), json!(1234.5), true),
            (json!([10, 20]), json!(20), false),
            (json!(3), json!("50%"), false),
        ] {
            assert_eq!(equal(&c(e.clone()), &c(a.clone()), false, false), want, "{e} vs {a}");
        }
    }
}
