//! Bot walls, access denials and rate limits, told apart from the site itself.
//!
//! A walled page recorded as the site makes the agent fail the task and the score count it as the
//! model's failure. [`classify`] looks at one document response (status, headers, title, the start of
//! its HTML) for the markers of the walls WebVoyager-style tasks meet (Cloudflare, Akamai, DataDome,
//! PerimeterX/HUMAN, reCAPTCHA, hCaptcha, Turnstile), for access denials (401/403/407/999 with a short
//! page) and rate limits (429, or 503 with Retry-After), and names the evidence.
//!
//! Captcha widgets alone are not a wall (login forms embed them): they count only on a short page or an
//! error status.
//!
//! A status alone (429, 503 with Retry-After, 401/403/999 on a short page) answering the agent's own write
//! (a form's POST) is the site's answer to that write, not a wall in front of the task: WordPress answers a
//! second comment within 15 seconds 429 ("You are posting comments too quickly"), after accepting the first.
//! The run goes on and is scored (found by the held-out WordPress run of `bench agreement`). A wall's own
//! markers (headers, markup, titles) still count after a write.

use serde::{Deserialize, Serialize};

/// What kind of block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    /// A bot wall or challenge page (CAPTCHA, "checking your browser").
    Challenge,
    /// Access denied (401/403/407/999 with a short page).
    AccessDenied,
    /// Rate limited (429, or 503 with Retry-After).
    RateLimited,
}

/// A document the site did not really serve: a wall, a denial, a rate limit, with the evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blocked {
    /// What kind.
    pub kind: BlockKind,
    /// The document's URL.
    pub url: String,
    /// Its host.
    pub host: String,
    /// Its HTTP status (0 when unknown).
    pub status: u16,
    /// Which marker matched (`header cf-mitigated: challenge`, `title "Just a moment..."`, `status 429`).
    pub marker: String,
}

/// One document response, as the browser got it.
#[derive(Debug, Clone, Default)]
pub struct DocumentResponse<'a> {
    /// URL.
    pub url: &'a str,
    /// The request's method ("" when unknown: read as a GET).
    pub method: &'a str,
    /// HTTP status (0 when unknown).
    pub status: u16,
    /// Response headers (names lower-case).
    pub headers: &'a [(String, String)],
    /// The page title.
    pub title: &'a str,
    /// The start of the HTML (the first 64 KiB is plenty).
    pub html: &'a str,
    /// The length of the page's visible text.
    pub text_len: usize,
}

/// A page with less visible text than this is "short": walls and error pages are.
const SHORT_PAGE: usize = 2000;

/// Markers in the HTML that only walls carry (vendor scripts and challenge forms).
const WALL_HTML: &[(&str, &str)] = &[
    ("/cdn-cgi/challenge-platform/", "Cloudflare challenge platform"),
    ("cf_chl_opt", "Cloudflare challenge"),
    ("cf-chl-", "Cloudflare challenge"),
    ("captcha-delivery.com", "DataDome"),
    ("px-captcha", "PerimeterX/HUMAN"),
    ("_pxcaptcha", "PerimeterX/HUMAN"),
    ("perimeterx", "PerimeterX/HUMAN"),
    ("errors.edgesuite.net", "Akamai"),
    ("/_incapsula_resource", "Imperva/Incapsula"),
];

/// Captcha widgets: a wall on a short page or with an error status.
const CAPTCHA_HTML: &[(&str, &str)] = &[
    ("challenges.cloudflare.com/turnstile", "Turnstile"),
    ("cf-turnstile", "Turnstile"),
    ("www.google.com/recaptcha", "reCAPTCHA"),
    ("www.recaptcha.net/recaptcha", "reCAPTCHA"),
    ("g-recaptcha", "reCAPTCHA"),
    ("hcaptcha.com", "hCaptcha"),
    ("h-captcha", "hCaptcha"),
];

/// Titles walls use.
const WALL_TITLES: &[&str] = &[
    "just a moment",
    "attention required! | cloudflare",
    "access to this page has been denied",
    "verify you are human",
    "are you a robot",
    "human verification",
    "security check",
    "pardon our interruption",
    "robot check",
];

/// The header webfreeze's guards put on the pages they answer with (`proxy::guard::BLOCKED_HEADER`).
pub const GUARD_HEADER: &str = "x-webfreeze-blocked";

/// Classify one document response; None when it is the site's own page (or a guard's refusal).
pub fn classify(r: &DocumentResponse<'_>) -> Option<Blocked> {
    let header =
        |name: &str| r.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str());
    let host = url::Url::parse(r.url).ok().and_then(|u| u.host_str().map(str::to_string)).unwrap_or_default();
    let found = |kind: BlockKind, marker: String| {
        Some(Blocked { kind, url: r.url.to_string(), host: host.clone(), status: r.status, marker })
    };
    // webfreeze's own guards answered this (a refused write, a place answers are published): the run's
    // rule, not the site's wall. The task goes on and the guard reports it.
    if header(GUARD_HEADER).is_some() {
        return None;
    }
    if let Some(v) = header("cf-mitigated") {
        return found(BlockKind::Challenge, format!("header cf-mitigated: {v}"));
    }
    if header("x-datadome").is_some() && r.status >= 400 {
        return found(BlockKind::Challenge, "header x-datadome on an error status".into());
    }
    let html = r.html.to_ascii_lowercase();
    let title = r.title.trim().to_ascii_lowercase();
    let short = r.text_len < SHORT_PAGE;
    let error = r.status >= 400;
    if let Some((_, vendor)) = WALL_HTML.iter().find(|(m, _)| html.contains(m)) {
        if short || error {
            return found(BlockKind::Challenge, format!("{vendor} markup"));
        }
    }
    if let Some(t) = WALL_TITLES.iter().find(|t| title.starts_with(**t)) {
        if short || error {
            return found(BlockKind::Challenge, format!("title {t:?}"));
        }
    }
    if let Some((_, vendor)) = CAPTCHA_HTML.iter().find(|(m, _)| html.contains(m)) {
        if short || error {
            return found(BlockKind::Challenge, format!("{vendor} widget on a short page"));
        }
    }
    // A status alone answering the agent's own write is the site's answer to it (module docs); a proxy's
    // 407 is never the site's.
    let wrote = ["POST", "PUT", "PATCH", "DELETE"].iter().any(|m| r.method.eq_ignore_ascii_case(m));
    if wrote && r.status != 407 {
        return None;
    }
    if r.status == 429 {
        return found(BlockKind::RateLimited, "status 429".into());
    }
    if r.status == 503 && header("retry-after").is_some() {
        return found(BlockKind::RateLimited, "status 503 with Retry-After".into());
    }
    if matches!(r.status, 401 | 403 | 407 | 999) && short {
        return found(BlockKind::AccessDenied, format!("status {} with a short page", r.status));
    }
    None
}

/// The text of an HTML document's `<title>` (empty when it has none).
pub fn html_title(html: &str) -> &str {
    let lower = html.to_ascii_lowercase();
    let Some(open) = lower.find("<title") else { return "" };
    let Some(gt) = lower[open..].find('>') else { return "" };
    let start = open + gt + 1;
    let end = lower[start..].find("</title").map_or(html.len(), |e| start + e);
    html.get(start..end).unwrap_or("").trim()
}

/// About how much visible text an HTML document has: characters outside tags, `<script>` and
/// `<style>`, whitespace not counted. For pages read from a recording, where no browser laid them out.
pub fn visible_text_len(html: &str) -> usize {
    visible_text(html).chars().filter(|c| !c.is_whitespace()).count()
}

/// An HTML document's visible text, roughly: what lies outside tags, `<script>` and `<style>`, one line
/// per run of text between tags, blank runs dropped, entities left as written. For comparing recorded
/// pages (`snapshots diff`), where no browser laid them out.
pub fn visible_text(html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let (mut out, mut run, mut i) = (String::new(), String::new(), 0usize);
    let b = lower.as_bytes();
    let flush = |run: &mut String, out: &mut String| {
        let t = run.split_whitespace().collect::<Vec<_>>().join(" ");
        if !t.is_empty() {
            out.push_str(&t);
            out.push('\n');
        }
        run.clear();
    };
    while i < b.len() {
        if b[i] == b'<' {
            let skip_to = ["script", "style"].iter().find_map(|t| {
                lower[i + 1..].starts_with(t).then(|| lower[i..].find(&format!("</{t}")).map(|e| i + e))
            });
            i = match skip_to {
                Some(Some(e)) => e + 2,
                Some(None) => b.len(),
                None => i,
            };
            i = lower[i..].find('>').map_or(b.len(), |e| i + e + 1);
            flush(&mut run, &mut out);
            continue;
        }
        // Byte offsets are the same in `lower` and `html` (ASCII lowering keeps lengths); copy whole chars.
        let ch = html[i..].chars().next().unwrap_or(' ');
        run.push(ch);
        i += ch.len_utf8();
    }
    flush(&mut run, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// status, headers, title, html, visible text length, expected (kind, marker).
    type Case<'a> = (u16, Vec<(String, String)>, &'a str, &'a str, usize, Option<(BlockKind, &'a str)>);

    fn h(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn classify_table() {
        let long = 5000;
        #[rustfmt::skip]
        let cases: Vec<Case<'_>> = vec![
            (403, h(&[("cf-mitigated", "challenge")]), "Just a moment...", "", 100, Some((BlockKind::Challenge, "header cf-mitigated: challenge"))),
            (200, h(&[]), "Just a moment...", "<script src=/cdn-cgi/challenge-platform/h/b/orchestrate>", 50, Some((BlockKind::Challenge, "Cloudflare challenge platform markup"))),
            (403, h(&[("x-datadome", "protected")]), "", "", 10, Some((BlockKind::Challenge, "header x-datadome on an error status"))),
            (200, h(&[]), "", "<iframe src=\"https://geo.captcha-delivery.com/captcha/\">", 30, Some((BlockKind::Challenge, "DataDome markup"))),
            (200, h(&[]), "Access to this page has been denied", "<div id=px-captcha>", 80, Some((BlockKind::Challenge, "PerimeterX/HUMAN markup"))),
            (403, h(&[]), "Access Denied", "Reference #18.x https://errors.edgesuite.net/", 200, Some((BlockKind::Challenge, "Akamai markup"))),
            (200, h(&[]), "Robot Check", "<form action=/errors/validateCaptcha>", 300, Some((BlockKind::Challenge, "title \"robot check\""))),
            (200, h(&[]), "Sign in", "<div class=\"g-recaptcha\" data-sitekey=x>", 400, Some((BlockKind::Challenge, "reCAPTCHA widget on a short page"))),
            // A long page with a login captcha is the site.
            (200, h(&[]), "Sign in", "<div class=\"g-recaptcha\" data-sitekey=x>", long, None),
            (200, h(&[]), "", "<div class=h-captcha>", 10, Some((BlockKind::Challenge, "hCaptcha widget on a short page"))),
            (429, h(&[]), "Too Many Requests", "", 20, Some((BlockKind::RateLimited, "status 429"))),
            (503, h(&[("Retry-After", "120")]), "", "", 20, Some((BlockKind::RateLimited, "status 503 with Retry-After"))),
            (503, h(&[]), "Maintenance", "", 20, None),
            (403, h(&[]), "Forbidden", "", 40, Some((BlockKind::AccessDenied, "status 403 with a short page"))),
            (999, h(&[]), "", "", 0, Some((BlockKind::AccessDenied, "status 999 with a short page"))),
            // A site's own long 403 page is the site.
            (403, h(&[]), "Forbidden", "", long, None),
            (200, h(&[]), "Shop", "<h1>Welcome</h1>", long, None),
            (404, h(&[]), "Not found", "", 30, None),
        ];
        for (status, headers, title, html, text_len, want) in cases {
            let r = DocumentResponse {
                url: "https://shop.test/p",
                method: "GET",
                status,
                headers: &headers,
                title,
                html,
                text_len,
            };
            let got = classify(&r).map(|b| (b.kind, b.marker));
            assert_eq!(got, want.map(|(k, m)| (k, m.to_string())), "{status} {title:?} {html:?}");
        }
        let b = classify(&DocumentResponse { url: "https://shop.test/x", status: 429, ..Default::default() })
            .unwrap();
        assert_eq!((b.host.as_str(), b.status), ("shop.test", 429));
    }

    #[test]
    fn a_status_answering_the_agents_own_write_is_the_sites_answer() {
        let h = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs.iter().map(|(k, v)| (k.to_ascii_lowercase(), v.to_string())).collect()
        };
        let cf = h(&[("cf-mitigated", "challenge")]);
        let retry = h(&[("retry-after", "30")]);
        type Headers<'a> = &'a [(String, String)];
        #[rustfmt::skip]
        let cases: Vec<(&str, u16, Headers<'_>, &str, Option<BlockKind>)> = vec![
            // WordPress's comment flood check, after the first comment was accepted.
            ("POST", 429, &[], "You are posting comments too quickly. Slow down.", None),
            ("post", 429, &[], "", None),
            ("PUT", 503, &retry, "", None),
            ("DELETE", 403, &[], "Forbidden", None),
            // The same statuses on a page the agent went to are walls.
            ("GET", 429, &[], "", Some(BlockKind::RateLimited)),
            ("", 429, &[], "", Some(BlockKind::RateLimited)),
            ("HEAD", 503, &retry, "", Some(BlockKind::RateLimited)),
            ("GET", 403, &[], "Forbidden", Some(BlockKind::AccessDenied)),
            // A wall's own markers count after a write too; a proxy's 407 is never the site's.
            ("POST", 403, &cf, "", Some(BlockKind::Challenge)),
            ("POST", 200, &[], "<div id=px-captcha>", Some(BlockKind::Challenge)),
            ("POST", 407, &[], "", Some(BlockKind::AccessDenied)),
        ];
        for (method, status, headers, html, want) in cases {
            let r = DocumentResponse {
                url: "https://blog.test/wp-comments-post.php",
                method,
                status,
                headers,
                html,
                text_len: 60,
                ..Default::default()
            };
            assert_eq!(classify(&r).map(|b| b.kind), want, "{method} {status} {html:?}");
        }
    }

    #[test]
    fn html_helpers_table() {
        for (html, title, text) in [
            (
                "<html><head><TITLE> Just a moment... </TITLE></head><body>Hi there</body></html>",
                "Just a moment...",
                21,
            ),
            ("<p>a b</p><script>var x = '<p>';</script><style>p{}</style>c", "", 3),
            ("<title>unclosed", "unclosed", 8),
            ("no tags at all", "", 11),
            ("<script>never closed", "", 0),
            ("", "", 0),
        ] {
            assert_eq!(html_title(html), title, "{html}");
            assert_eq!(visible_text_len(html), text, "{html}");
        }
    }

    #[test]
    fn visible_text_keeps_one_line_per_run_of_text() {
        for (html, text) in [
            ("<p>a  b</p><script>var x = '<p>';</script><style>p{}</style>c", "a b\nc\n"),
            ("<ul><li>Price: <b>$24</b></li>\n <li>é ü</li></ul>", "Price:\n$24\né ü\n"),
            ("<br><br>", ""),
            ("plain", "plain\n"),
        ] {
            assert_eq!(visible_text(html), text, "{html}");
        }
    }
}
