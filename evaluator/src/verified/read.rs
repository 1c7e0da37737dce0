//! Reading one raw value the way WebArena-Verified's Python evaluator reads it: numbers with commas or in
//! English words, currency and prices, durations, months, and Python's `str()` of a JSON value. Kept apart
//! from `value.rs`, which decides kinds and compares normalized values; this file uses none of it.

use serde_json::Value;

use unicode_normalization::UnicodeNormalization as _;

/// Their `is_regexp`: a string that starts with `^` and ends with `$`.
pub fn is_regexp(s: &str) -> bool {
    s.len() >= 2 && s.starts_with('^') && s.ends_with('$')
}

/// Python's truthiness of a JSON value.
pub(super) fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Their string pipeline (`NormalizedType._normalize_string`): trademark signs dropped, NFKC, a hyphen
/// next to a letter becomes a space, control characters dropped (tab and newlines become spaces),
/// transliterated to ASCII, spaces collapsed, case folded. A regular expression is kept as written.
pub fn normalize_text(s: &str) -> String {
    if s.is_empty() || is_regexp(s) {
        return s.to_string();
    }
    let s: String =
        s.chars().filter(|c| !matches!(c, '\u{2122}' | '\u{00AE}' | '\u{2120}' | '\u{00A9}')).collect();
    let s: String = s.nfkc().collect();
    let chars: Vec<char> = s.chars().collect();
    let hyphen = |c: char| {
        matches!(
            c,
            '\u{002D}'
                | '\u{2010}'
                | '\u{2011}'
                | '\u{2012}'
                | '\u{2013}'
                | '\u{2014}'
                | '\u{2015}'
                | '\u{2212}'
                | '\u{00AD}'
        )
    };
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        let letter_before = i > 0 && chars[i - 1].is_ascii_alphabetic();
        let letter_after = chars.get(i + 1).is_some_and(|n| n.is_ascii_alphabetic());
        if hyphen(c) && (letter_before || letter_after) {
            out.push(' ');
        } else if c.is_control() {
            if matches!(c, '\t' | '\n' | '\r') {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
    let ascii: String = deunicode::deunicode(&out).chars().filter(char::is_ascii).collect();
    ascii.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// Python's `float()` of a number written with commas or spaces, or in English words.
pub(super) fn parse_number(s: &str) -> Option<f64> {
    let t: String = s.chars().filter(|c| *c != ',' && *c != ' ').collect();
    let t = t.trim();
    let lower = t.to_ascii_lowercase();
    // Python's float() also reads these; a JSON number never says them.
    if matches!(lower.as_str(), "nan" | "inf" | "infinity" | "-inf" | "+inf" | "-infinity" | "+infinity") {
        return None;
    }
    if let Ok(f) = t.parse::<f64>() {
        return Some(f);
    }
    words_to_number(s)
}

/// The text a typed value reads: a string after the string pipeline, anything else as Python's `str()`.
pub(super) fn py_text(v: &Value) -> String {
    match v {
        Value::String(s) => normalize_text(s),
        Value::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        other => other.to_string(),
    }
}

/// Their `Currency._type_normalize`: the text (strings after the common string pipeline, so `€` is
/// already `eur`), a leading minus, the decimal separator guessed from the last `.` or `,`, and the
/// amount found the way `price_parser.Price.fromstring` finds it.
pub(super) fn currency(v: &Value) -> Option<f64> {
    if !truthy(v) && !v.is_number() {
        return None;
    }
    let text = py_text(v);
    let negative = text.starts_with('-');
    let text = if negative { text.replace('-', "") } else { text };
    let sep = if text.rfind('.').map_or(-1, |i| i as i64) > text.rfind(',').map_or(-1, |i| i as i64) {
        '.'
    } else {
        ','
    };
    let amount = price_text(&text)?;
    let num = amount.trim().replace(' ', "");
    let num = if sep == '.' { num.replace(',', "") } else { num.replace('.', "").replace(',', ".") };
    // Python's Decimal() of the text, then float().
    let valid = !num.is_empty()
        && num.chars().all(|c| c.is_ascii_digit() || c == '.')
        && num.matches('.').count() <= 1
        && num != ".";
    let f: f64 = if valid { num.parse().ok()? } else { return None };
    Some(if negative { -f } else { f })
}

/// `price_parser.extract_price_text` (its euro branch cannot apply: the string pipeline has already
/// written the euro sign as letters).
pub(super) fn price_text(price: &str) -> Option<String> {
    let price = price.split_whitespace().collect::<Vec<_>>().join(" ");
    let re = fancy_regex::Regex::new(r"([.]?\d[\d\s.,']*)\s*?(?:[^%\d]|$)").ok()?;
    if let Ok(Some(c)) = re.captures(&price) {
        let t = c.get(1)?.as_str().trim_end_matches([',', '.']).replace('\'', "");
        return Some(if t.matches('.').count() == 1 {
            t.trim().to_string()
        } else {
            t.trim_start_matches([',', '.']).trim().to_string()
        });
    }
    price.to_lowercase().contains("free").then(|| "0".to_string())
}

/// pytimeparse2's formats, compiled once: (the whole-text pattern, case-insensitive) in its order.
pub(super) fn duration_formats() -> &'static [fancy_regex::Regex] {
    static FORMATS: std::sync::OnceLock<Vec<fancy_regex::Regex>> = std::sync::OnceLock::new();
    FORMATS.get_or_init(|| {
        const YEARS: &str = r"(?P<years>[\d.]+)\s*(?:ys?|yrs?.?|years?)";
        const MONTHS: &str = r"(?P<months>[\d.]+)\s*(?:mos?.?|mths?.?|months?)";
        const WEEKS: &str = r"(?P<weeks>[\d.]+)\s*(?:w|wks?|weeks?)";
        const DAYS: &str = r"(?P<days>[\d.]+)\s*(?:d|dys?|days?)";
        const HOURS: &str = r"(?P<hours>[\d.]+)\s*(?:h|hrs?|hours?)";
        const MINS: &str = r"(?P<minutes>[\d.]+)\s*(?:m|(mins?)|(minutes?))";
        const SECS: &str = r"(?P<seconds>[\d.]+)\s*(?:s|secs?|seconds?)";
        const MILLIS: &str = r"(?P<milliseconds>[\d.]+)\s*(?:ms|msecs?|millis|milliseconds?)";
        const SECCLOCK: &str = r":(?P<seconds>\d{2}(?:\.\d+)?)";
        const MINCLOCK: &str = r"(?P<minutes>\d{1,2}):(?P<seconds>\d{2}(?:\.\d+)?)";
        const HOURCLOCK: &str = r"(?P<hours>\d+):(?P<minutes>\d{2}):(?P<seconds>\d{2}(?:\.\d+)?)";
        const DAYCLOCK: &str =
            r"(?P<days>\d+):(?P<hours>\d{2}):(?P<minutes>\d{2}):(?P<seconds>\d{2}(?:\.\d+)?)";
        let opt = |x: &str| format!("(?:{x})?");
        let optsep = |x: &str| format!(r"(?:{x}\s*(?:[,/]\s*)?)?");
        let formats = [
            format!(
                r"{}\s*{}\s*{}\s*{}\s*{}\s*{}\s*{}\s*{}",
                optsep(YEARS),
                optsep(MONTHS),
                optsep(WEEKS),
                optsep(DAYS),
                optsep(HOURS),
                optsep(MINS),
                opt(SECS),
                opt(MILLIS)
            ),
            format!(
                r"{}\s*{}\s*{}\s*{}\s*{}\s*{}",
                optsep(WEEKS),
                optsep(DAYS),
                optsep(HOURS),
                optsep(MINS),
                opt(SECS),
                opt(MILLIS)
            ),
            MINCLOCK.to_string(),
            format!(r"{}\s*{}\s*{HOURCLOCK}", optsep(WEEKS), optsep(DAYS)),
            DAYCLOCK.to_string(),
            SECCLOCK.to_string(),
            YEARS.to_string(),
            MONTHS.to_string(),
        ];
        formats.iter().filter_map(|f| fancy_regex::Regex::new(&format!(r"(?i)^\s*{f}\s*$")).ok()).collect()
    })
}

/// Their `Duration`: text with a unit or a clock form (a bare number is refused), read by
/// `pytimeparse2`'s formats (the same regular expressions), in seconds.
pub(super) fn duration(v: &Value) -> Option<f64> {
    if !truthy(v) {
        return None;
    }
    let mut text = py_text(v);
    if v.is_string() {
        // Their Duration's own string step: "3:30 hours" is 3h30m.
        text = fancy_regex::Regex::new(r"(\d+):(\d+)\s*hours?")
            .ok()?
            .replace_all(&text, "${1}h${2}m")
            .into_owned();
    }
    if text.trim().parse::<f64>().is_ok() {
        return None;
    }
    let bare = text.replacen('.', "", 1).replacen('-', "", 1).replacen('+', "", 1);
    if !bare.is_empty() && bare.chars().all(|c| c.is_ascii_digit()) {
        return text.parse().ok();
    }
    let sign_re = fancy_regex::Regex::new(r"^\s*(?P<sign>[+|-]|\+)?\s*(?P<unsigned>.*)$").ok()?;
    let caps = sign_re.captures(&text).ok()??;
    let sign = if caps.name("sign").map(|m| m.as_str()) == Some("-") { -1.0 } else { 1.0 };
    let unsigned = caps.name("unsigned").map_or("", |m| m.as_str());
    const MULT: [(&str, f64); 8] = [
        ("years", 31_536_000.0),
        ("months", 2_592_000.0),
        ("weeks", 604_800.0),
        ("days", 86_400.0),
        ("hours", 3_600.0),
        ("minutes", 60.0),
        ("seconds", 1.0),
        ("milliseconds", 1e-3),
    ];
    for re in duration_formats() {
        let Ok(Some(c)) = re.captures(unsigned) else { continue };
        if c.get(0).is_none_or(|m| m.as_str().trim().is_empty()) {
            continue;
        }
        let mut total = 0.0;
        for (name, mult) in MULT {
            if let Some(m) = c.name(name).filter(|m| !m.as_str().is_empty()) {
                total += m.as_str().parse::<f64>().ok()? * mult;
            }
        }
        return Some(sign * total);
    }
    None
}

/// The months' names, January first (the `month` format here, the `date` format in `super::formats`).
pub(crate) const MONTH_NAMES: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Their `Month`: a whole number 1-12, or text naming one month (its name or abbreviation, with a day
/// or a year around it), or an ISO (`2023-05`) or US (`05/31/2023`) date.
pub(super) fn month(v: &Value) -> Option<u32> {
    let from_num = |n: f64| (n.fract() == 0.0 && (1.0..=12.0).contains(&n)).then_some(n as u32);
    match v {
        Value::Number(n) => return from_num(n.as_f64()?),
        Value::Bool(b) => return from_num(if *b { 1.0 } else { 0.0 }),
        Value::String(_) => {}
        _ => return None,
    }
    let text = normalize_text(v.as_str()?);
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    if let Ok(n) = t.parse::<i64>() {
        return (1..=12).contains(&n).then_some(n as u32);
    }
    let named = |w: &str| {
        MONTH_NAMES
            .iter()
            .position(|n| *n == w || (w.len() >= 3 && n.starts_with(w) && (w.len() == 3 || w == "sept")))
    };
    let words: Vec<&str> =
        t.split(|c: char| c.is_whitespace() || c == ',' || c == '.').filter(|w| !w.is_empty()).collect();
    let mut found = None;
    for w in &words {
        if let Some(i) = named(w) {
            if found.is_some() {
                return None;
            }
            found = Some(i as u32 + 1);
        } else if !w.chars().all(|c| c.is_ascii_digit()) && !matches!(*w, "st" | "nd" | "rd" | "th") {
            return None;
        }
    }
    if found.is_some() {
        return found;
    }
    let iso = fancy_regex::Regex::new(r"^\d{4}-(\d{1,2})(-\d{1,2})?$").ok()?;
    if let Ok(Some(c)) = iso.captures(t) {
        return c.get(1)?.as_str().parse().ok().filter(|m| (1..=12).contains(m));
    }
    let us = fancy_regex::Regex::new(r"^(\d{1,2})/\d{1,2}/\d{2,4}$").ok()?;
    if let Ok(Some(c)) = us.captures(t) {
        return c.get(1)?.as_str().parse().ok().filter(|m| (1..=12).contains(m));
    }
    None
}

/// English number words ("twenty five", "one hundred and two") to a number.
pub(super) fn words_to_number(s: &str) -> Option<f64> {
    const SMALL: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 8] = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"];
    let (mut total, mut current, mut any) = (0f64, 0f64, false);
    for w in s.to_ascii_lowercase().replace('-', " ").split_whitespace() {
        if w == "and" {
            continue;
        }
        if let Some(n) = SMALL.iter().position(|x| *x == w) {
            current += n as f64;
        } else if let Some(n) = TENS.iter().position(|x| *x == w) {
            current += (n as f64 + 2.0) * 10.0;
        } else if w == "hundred" {
            current = current.max(1.0) * 100.0;
        } else if let Some(scale) = match w {
            "thousand" => Some(1e3),
            "million" => Some(1e6),
            "billion" => Some(1e9),
            _ => None,
        } {
            total += current.max(1.0) * scale;
            current = 0.0;
        } else {
            return None;
        }
        any = true;
    }
    any.then_some(total + current)
}
