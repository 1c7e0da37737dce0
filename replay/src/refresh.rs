//! Freshness as it was when recorded, whenever the replay runs (mitmproxy's server-replay "refresh").
//!
//! A browser judges a cached response's freshness, and a cookie's lifetime, against its own clock. A
//! response recorded with `Cache-Control: max-age=300` and its `Date` is fresh during the recording and
//! stale in every replay more than five minutes later, so the replay makes revalidation requests the
//! recording never made; a `Set-Cookie` with an absolute `Expires` is already expired for clients that do
//! not correct it by the response's `Date` (Python's `requests`). Serving shifts `Date`, `Expires`,
//! `Last-Modified` and `Set-Cookie`'s `Expires` by one offset (now minus the recorded `Date`, or the
//! exchange's start without one), so every interval between them, and between them and the client's
//! clock, is what it was at recording time. `Age` stays as recorded, and so does an HTML document's
//! `Last-Modified` (the page reads it as `document.lastModified`). The stored exchange is never changed.

use http::{header, HeaderMap, HeaderValue};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn parse_http_date(v: &str) -> Option<SystemTime> {
    let v = v.trim();
    httpdate::parse_http_date(v).ok().or_else(|| {
        // Cookie dates in the Netscape form, `Thu, 01-Jan-2030 00:00:00 GMT`.
        httpdate::parse_http_date(&v.replace('-', " ")).ok()
    })
}

fn to_ms(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

fn from_ms(ms: i64) -> SystemTime {
    if ms >= 0 {
        UNIX_EPOCH + Duration::from_millis(ms.unsigned_abs())
    } else {
        UNIX_EPOCH - Duration::from_millis(ms.unsigned_abs())
    }
}

fn shifted(v: &str, offset_ms: i64) -> Option<String> {
    let t = parse_http_date(v)?;
    Some(httpdate::fmt_http_date(from_ms(to_ms(t).saturating_add(offset_ms))))
}

/// A `Set-Cookie` value with its `Expires` attribute shifted (unchanged when it has none, or one that does
/// not parse).
pub fn shift_set_cookie(v: &str, offset_ms: i64) -> String {
    let mut parts: Vec<String> = v.split(';').map(str::to_string).collect();
    for p in parts.iter_mut().skip(1) {
        let Some((name, value)) = p.split_once('=') else { continue };
        if name.trim().eq_ignore_ascii_case("expires") {
            if let Some(s) = shifted(value, offset_ms) {
                let lead = &p[..p.len() - p.trim_start().len()];
                *p = format!("{lead}{}={s}", name.trim());
            }
        }
    }
    parts.join(";")
}

/// What [`refresh`] reads of a response head, parsed once per recorded head (replay keeps it with the head,
/// `serving::Head`), so serving a hit parses no date: the recorded `Date`, and the other dates it shifts.
#[derive(Debug, Clone, Default)]
pub struct RefreshPlan {
    /// The recorded `Date` (ms since the epoch), when it parses.
    recorded_ms: Option<i64>,
    /// The headers shifted by the offset, with their recorded times: `Date`, `Expires` and (but for an HTML
    /// document) `Last-Modified`, each when it parses (`Expires: 0` and other invalid dates mean "already
    /// expired": left as they are).
    dates: Vec<(header::HeaderName, i64)>,
    /// Whether any `Set-Cookie` is present (their `Expires` are shifted on each answer: rare).
    cookies: bool,
}

impl RefreshPlan {
    /// The plan for head `h`.
    pub fn of(h: &HeaderMap) -> RefreshPlan {
        let parsed = |name: &header::HeaderName| {
            h.get(name).and_then(|v| v.to_str().ok()).and_then(parse_http_date).map(to_ms)
        };
        // An HTML document's Last-Modified is what `document.lastModified` shows the page: left as recorded.
        let html = h
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().contains("text/html"));
        let names: &[header::HeaderName] = if html {
            &[header::DATE, header::EXPIRES]
        } else {
            &[header::DATE, header::EXPIRES, header::LAST_MODIFIED]
        };
        RefreshPlan {
            recorded_ms: parsed(&header::DATE),
            dates: names.iter().filter_map(|n| Some((n.clone(), parsed(n)?))).collect(),
            cookies: h.contains_key(header::SET_COOKIE),
        }
    }

    /// Shift `h` (the head this plan was made of) for a response recorded at `started_ms`, so its
    /// freshness reads as it did then, relative to `now_ms`. Returns the offset applied (ms).
    pub fn apply(&self, h: &mut HeaderMap, started_ms: i64, now_ms: i64) -> i64 {
        let offset = now_ms - self.recorded_ms.unwrap_or(started_ms);
        if offset == 0 {
            return 0;
        }
        for (name, t) in &self.dates {
            let s = httpdate::fmt_http_date(from_ms(t.saturating_add(offset)));
            if let Ok(v) = HeaderValue::from_str(&s) {
                h.insert(name.clone(), v);
            }
        }
        if self.cookies {
            let cookies: Vec<String> = h
                .get_all(header::SET_COOKIE)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .map(str::to_string)
                .collect();
            h.remove(header::SET_COOKIE);
            for c in cookies {
                if let Ok(v) = HeaderValue::from_str(&shift_set_cookie(&c, offset)) {
                    h.append(header::SET_COOKIE, v);
                }
            }
        }
        offset
    }
}

/// Shift the freshness headers of a response recorded at `started_ms` so they read as they did then,
/// relative to `now_ms`. Returns the offset applied (ms). (Replay keeps each head's [`RefreshPlan`].)
pub fn refresh(h: &mut HeaderMap, started_ms: i64, now_ms: i64) -> i64 {
    RefreshPlan::of(h).apply(h, started_ms, now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400_000;

    #[test]
    fn set_cookie_expires_table() {
        for (input, offset, want) in [
            (
                "sid=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Path=/",
                DAY,
                "sid=1; Expires=Thu, 22 Oct 2015 07:28:00 GMT; Path=/",
            ),
            ("a=b; expires=Thu, 01-Jan-2015 00:00:00 GMT", DAY, "a=b; expires=Fri, 02 Jan 2015 00:00:00 GMT"),
            ("a=b; Max-Age=60; Path=/", DAY, "a=b; Max-Age=60; Path=/"),
            ("a=b; Expires=not a date", DAY, "a=b; Expires=not a date"),
            ("expires=Wed, 21 Oct 2015 07:28:00 GMT", DAY, "expires=Wed, 21 Oct 2015 07:28:00 GMT"),
            ("a=b;Expires=Wed, 21 Oct 2015 07:28:00 GMT", -DAY, "a=b;Expires=Tue, 20 Oct 2015 07:28:00 GMT"),
        ] {
            assert_eq!(shift_set_cookie(input, offset), want, "{input}");
        }
    }

    #[test]
    fn headers_keep_their_intervals_to_now() {
        let date = "Wed, 21 Oct 2015 07:28:00 GMT";
        let recorded = to_ms(parse_http_date(date).unwrap());
        let now = recorded + 30 * DAY + 1234;
        let mut h = HeaderMap::new();
        h.insert(header::DATE, HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"));
        h.insert(header::EXPIRES, HeaderValue::from_static("Wed, 21 Oct 2015 07:33:00 GMT"));
        h.insert(header::LAST_MODIFIED, HeaderValue::from_static("Tue, 20 Oct 2015 07:28:00 GMT"));
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("max-age=300"));
        h.insert(header::AGE, HeaderValue::from_static("10"));
        h.append(header::SET_COOKIE, HeaderValue::from_static("s=1; Expires=Wed, 21 Oct 2015 07:29:00 GMT"));
        h.append(header::SET_COOKIE, HeaderValue::from_static("t=2; Max-Age=5"));
        assert_eq!(refresh(&mut h, 0, now), 30 * DAY + 1234);
        let at = |n: header::HeaderName| to_ms(parse_http_date(h.get(n).unwrap().to_str().unwrap()).unwrap());
        // Second resolution: the Date is now, and every interval to it is as recorded.
        assert_eq!(at(header::DATE), (now / 1000) * 1000);
        assert_eq!(at(header::EXPIRES) - at(header::DATE), 300_000);
        assert_eq!(at(header::DATE) - at(header::LAST_MODIFIED), DAY);
        assert_eq!(h.get(header::AGE).unwrap(), "10");
        assert_eq!(h.get(header::CACHE_CONTROL).unwrap(), "max-age=300");
        let cookies: Vec<&str> = h.get_all(header::SET_COOKIE).iter().map(|v| v.to_str().unwrap()).collect();
        assert_eq!(cookies, ["s=1; Expires=Fri, 20 Nov 2015 07:29:01 GMT", "t=2; Max-Age=5"]);
    }

    #[test]
    fn an_html_documents_last_modified_stays_as_the_page_reads_it() {
        let mut h = HeaderMap::new();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
        h.insert(header::DATE, HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"));
        h.insert(header::LAST_MODIFIED, HeaderValue::from_static("Tue, 20 Oct 2015 07:28:00 GMT"));
        let recorded = to_ms(parse_http_date("Wed, 21 Oct 2015 07:28:00 GMT").unwrap());
        refresh(&mut h, 0, recorded + DAY);
        assert_eq!(h.get(header::DATE).unwrap(), "Thu, 22 Oct 2015 07:28:00 GMT");
        assert_eq!(h.get(header::LAST_MODIFIED).unwrap(), "Tue, 20 Oct 2015 07:28:00 GMT");
    }

    #[test]
    fn without_a_date_the_exchange_start_is_the_reference_and_bad_dates_stay() {
        let mut h = HeaderMap::new();
        h.insert(header::EXPIRES, HeaderValue::from_static("0"));
        h.insert(header::LAST_MODIFIED, HeaderValue::from_static("Thu, 01 Jan 1970 00:00:10 GMT"));
        assert_eq!(refresh(&mut h, 5_000, 5_000 + DAY), DAY);
        assert_eq!(h.get(header::EXPIRES).unwrap(), "0");
        assert_eq!(h.get(header::LAST_MODIFIED).unwrap(), "Fri, 02 Jan 1970 00:00:10 GMT");
        assert!(h.get(header::DATE).is_none(), "no Date is invented");
        let mut same = HeaderMap::new();
        same.insert(header::DATE, HeaderValue::from_static("Thu, 01 Jan 1970 00:00:05 GMT"));
        assert_eq!(refresh(&mut same, 0, 5_000), 0);
    }
}
