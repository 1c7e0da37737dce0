//! WebArena-Verified's schema formats that need more than a string rule: `date`, `distance`,
//! `coordinates` and `location-name`, each written from its data type in webarena-verified 1.2.3
//! (`core/evaluation/data_types/{date,distance,coordinates,location_name}.py`). Their libraries
//! (dateutil, pint, geopy, thefuzz) read more than this module does; what it reads is what the dataset's
//! values are written in, and a value it cannot read is an error for an expected value and a value that
//! matches nothing for the agent's, as theirs is when their library cannot read it:
//!
//! - `date`: ISO `2024-01-15` or `2024/01/15`; US `01/15/2024` (also `-` and `.`); `Jan 15, 2024`,
//!   `January 15th 2024`, `15 January 2024` (their `dayfirst=False`); to `YYYY-MM-DD`.
//! - `distance`: a number with a unit (m, km, cm, mm, mi, ft, yd, in and their spelled-out names; `110k`
//!   is km), to meters; a bare number is not a distance. Equal within max(10 m, 2% of the larger).
//! - `coordinates`: `{"latitude", "longitude"}` (any prefix of the words, or `lng`), `[lat, lon]`, or
//!   `"lat, lon"`; latitude within [-90, 90], longitude wrapped into [-180, 180]. Equal within 1e-5
//!   degrees on both.
//! - `location-name`: thefuzz's `token_sort_ratio` (ASCII only, lower case, anything not a letter or
//!   digit a space, tokens sorted, rapidfuzz's Indel ratio, rounded half to even) of at least 80.

use serde_json::Value;

/// A date as `YYYY-MM-DD`, from the text their pipeline hands `Date` (already lower case).
pub fn date(text: &str) -> Option<String> {
    // Their `re.sub(r",(?! )", ", ", value)`, then tokens.
    let t = text.replace(',', " ");
    let words: Vec<&str> = t.split_whitespace().collect();
    let (y, m, d) = match words.as_slice() {
        [one] => numeric_date(one)?,
        [a, b, c] => match (month_of(a), month_of(b)) {
            (Some(m), _) => (year(c)?, m, day(b)?),
            (None, Some(m)) => (year(c)?, m, day(a)?),
            _ => return None,
        },
        _ => return None,
    };
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    };
    (1..=days).contains(&d).then(|| format!("{y:04}-{m:02}-{d:02}"))
}

fn numeric_date(s: &str) -> Option<(u32, u32, u32)> {
    let sep = ['/', '-', '.'].into_iter().find(|c| s.contains(*c))?;
    let parts: Vec<&str> = s.split(sep).collect();
    let [a, b, c] = parts.as_slice() else { return None };
    let num = |p: &str| {
        (!p.is_empty() && p.len() <= 4 && p.bytes().all(|b| b.is_ascii_digit()))
            .then(|| p.parse::<u32>().ok())
            .flatten()
    };
    let (a, b, c) = (num(a)?, num(b)?, num(c)?);
    if parts[0].len() == 4 {
        // Year first: year, month, day.
        (1..=12).contains(&b).then_some((a, b, c))
    } else if parts[2].len() == 4 {
        // Month first (dayfirst=False): month, day, year.
        (1..=12).contains(&a).then_some((c, a, b))
    } else {
        None
    }
}

fn year(s: &str) -> Option<u32> {
    (s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok()).flatten()
}

fn day(s: &str) -> Option<u32> {
    let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &s[digits.len()..];
    if !["", "st", "nd", "rd", "th"].contains(&suffix) || digits.is_empty() || digits.len() > 2 {
        return None;
    }
    digits.parse().ok()
}

fn month_of(s: &str) -> Option<u32> {
    let s = s.trim_end_matches('.');
    super::read::MONTH_NAMES
        .iter()
        .position(|m| *m == s || (s.len() == 3 && m.starts_with(s)) || (s == "sept" && *m == "september"))
        .map(|i| i as u32 + 1)
}

/// A distance in meters, from the text their pipeline hands `Distance` (already lower case).
pub fn distance(text: &str) -> Option<f64> {
    let t = text.trim();
    if t.parse::<f64>().is_ok() {
        // "Distance must include a unit".
        return None;
    }
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))?;
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().ok()?;
    let per_meter = match unit.trim() {
        // Their `110k` -> `110 km`.
        "k" | "km" | "kilometer" | "kilometers" | "kilometre" | "kilometres" => 1000.0,
        "m" | "meter" | "meters" | "metre" | "metres" => 1.0,
        "cm" | "centimeter" | "centimeters" | "centimetre" | "centimetres" => 0.01,
        "mm" | "millimeter" | "millimeters" | "millimetre" | "millimetres" => 0.001,
        "mi" | "mile" | "miles" => 1609.344,
        "ft" | "foot" | "feet" => 0.3048,
        "yd" | "yard" | "yards" => 0.9144,
        "in" | "inch" | "inches" => 0.0254,
        _ => return None,
    };
    Some(n * per_meter)
}

/// Their `Distance.__eq__` for two distances in meters.
pub fn distances_equal(a: f64, b: f64) -> bool {
    (a - b).abs() <= 10f64.max(a.max(b) * 0.02)
}

/// A coordinate pair (latitude, longitude) from a dict, a pair or a string.
pub fn coordinates(v: &Value) -> Option<(f64, f64)> {
    let num = |v: &Value| match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    let (lat, lon) = match v {
        Value::Object(o) => {
            let key = |prefix: &str| {
                o.keys().find(|k| {
                    let k = k.to_lowercase();
                    k.len() >= 2
                        && if prefix == "la" {
                            "latitude".starts_with(&k)
                        } else {
                            "longitude".starts_with(&k) || k == "lng"
                        }
                })
            };
            (num(&o[key("la")?])?, num(&o[key("lo")?])?)
        }
        Value::Array(a) if a.len() == 2 => (num(&a[0])?, num(&a[1])?),
        Value::String(s) => {
            let (a, b) = s.split_once(',')?;
            (a.trim().parse().ok()?, b.trim().parse().ok()?)
        }
        _ => return None,
    };
    if !(-90.0..=90.0).contains(&lat) || !lat.is_finite() || !lon.is_finite() {
        return None;
    }
    // geopy wraps longitude into [-180, 180].
    let lon = if (-180.0..=180.0).contains(&lon) { lon } else { (lon + 180.0).rem_euclid(360.0) - 180.0 };
    Some((lat, lon))
}

/// Their `Coordinates.__eq__`.
pub fn coordinates_equal(a: (f64, f64), b: (f64, f64)) -> bool {
    (a.0 - b.0).abs() <= 1e-5 && (a.1 - b.1).abs() <= 1e-5
}

/// thefuzz's `token_sort_ratio(a, b)` (0-100).
pub fn token_sort_ratio(a: &str, b: &str) -> u32 {
    let process = |s: &str| -> String {
        let s: String = s
            .chars()
            .filter(char::is_ascii)
            .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { ' ' })
            .collect();
        let mut tokens: Vec<&str> = s.split_whitespace().collect();
        tokens.sort_unstable();
        tokens.join(" ")
    };
    let (a, b) = (process(a), process(b));
    let (x, y): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let total = x.len() + y.len();
    if total == 0 {
        return 100;
    }
    // Longest common subsequence: rapidfuzz's Indel distance is total - 2 * lcs.
    let mut prev = vec![0usize; y.len() + 1];
    for cx in &x {
        let mut cur = vec![0usize; y.len() + 1];
        for (j, cy) in y.iter().enumerate() {
            cur[j + 1] = if cx == cy { prev[j] + 1 } else { cur[j].max(prev[j + 1]) };
        }
        prev = cur;
    }
    let lcs = prev[y.len()];
    let score = 100.0 * (2 * lcs) as f64 / total as f64;
    // Python's round(): half to even.
    let r = score.round();
    let r = if (score - score.trunc() - 0.5).abs() < 1e-9 && r % 2.0 != 0.0 { r - 1.0 } else { r };
    r as u32
}

/// Their `LocationName.__eq__` for two names.
pub fn location_names_equal(a: &str, b: &str) -> bool {
    if a.is_empty() || b.is_empty() {
        return a == b;
    }
    token_sort_ratio(a, b) >= 80
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dates() {
        for (text, want) in [
            ("march 2, 2022", Some("2022-03-02")),
            ("may 23 2023", Some("2023-05-23")),
            ("may 31,2023", Some("2023-05-31")),
            ("03/11/2023", Some("2023-03-11")),
            ("1/6/2023", Some("2023-01-06")),
            ("2023-01-16", Some("2023-01-16")),
            ("16 jan 2023", Some("2023-01-16")),
            ("jan 2nd 2024", Some("2024-01-02")),
            ("sept. 9 2021", Some("2021-09-09")),
            ("feb 29 2023", None),
            ("13/01/2023", None),
            ("wrong", None),
            ("", None),
        ] {
            assert_eq!(date(text).as_deref(), want, "{text}");
        }
    }

    #[test]
    fn distances() {
        for (text, want) in [
            ("2km", Some(2000.0)),
            ("1.4 km", Some(1400.0)),
            ("110k", Some(110_000.0)),
            ("375m", Some(375.0)),
            ("3 miles", Some(4828.032)),
            ("914", None),
            ("5 parsecs", None),
        ] {
            let got = distance(text);
            assert!(
                got.zip(want).is_some_and(|(g, w)| (g - w).abs() < 1e-6) || got == want,
                "{text}: {got:?}"
            );
        }
        assert!(distances_equal(2000.0, 2039.0) && !distances_equal(2000.0, 2050.0));
        assert!(distances_equal(100.0, 109.0) && !distances_equal(100.0, 111.0));
    }

    #[test]
    fn coordinate_pairs() {
        let c = coordinates(&json!({"latitude": "40.4424191", "longitude": "-79.9397388"})).unwrap();
        assert_eq!(c, (40.4424191, -79.9397388));
        assert_eq!(coordinates(&json!({"lat": 1, "lng": 2})), Some((1.0, 2.0)));
        assert_eq!(coordinates(&json!([1.5, 200.0])), Some((1.5, -160.0)));
        assert_eq!(coordinates(&json!("40.7, -74.0")), Some((40.7, -74.0)));
        assert_eq!(coordinates(&json!({"lat": 91, "lon": 0})), None);
        assert_eq!(coordinates(&json!("nowhere")), None);
        assert!(coordinates_equal(c, (40.442425, -79.93974)) && !coordinates_equal(c, (40.4425, -79.93974)));
    }

    #[test]
    fn location_names() {
        // (a, b, thefuzz's token_sort_ratio)
        for (a, b, want) in [
            ("Apple Store Shadyside", "Shadyside Apple Store", 100),
            ("Carnegie Mellon University", "Carnegie Mellon Univ", 87),
            ("Starbucks on Craig Street", "Starbucks Craig St", 74),
            ("the exchange", "exchange", 80),
            ("grano", "beefsteak", 14),
        ] {
            assert_eq!(token_sort_ratio(a, b), want, "{a} / {b}");
        }
        assert!(location_names_equal("de fer coffee & tea", "De Fer Coffee and Tea"));
        assert!(!location_names_equal("grano", "nourish"));
    }
}
