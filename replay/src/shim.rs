//! The determinism shim: JavaScript that freezes what a page computes from time and randomness.
//!
//! - `Date`: the clock starts at the snapshot's seed (the recording's start) and advances by a fixed step on
//!   every read (`Date.now()`, `new Date()`), so a page reads the same sequence of times on every replay.
//! - `Math.random` and `crypto.getRandomValues`: a seeded PRNG (sfc32), same sequence every replay.
//! - Cookies set by script (`document.cookie`, the Cookie Store API): their absolute expiry, computed by the
//!   page from the frozen clock, is shifted to the real clock, so they live as long as on the recording day.
//!
//! [`for_snapshot`] is a library function: the agent installs it with `Page.addScriptToEvaluateOnNewDocument`
//! before any page script runs; `webfreeze replay --inject-shim` puts it first in each HTML `<head>` and
//! lets it through the page's Content-Security-Policy (see [`patch_csp`]) so the inline script may run.

/// The nonce the injected script carries; CSP headers get `'nonce-<this>'` added.
pub const NONCE: &str = "webfreeze-shim";

/// The shim for the snapshot named `snapshot_name` whose recording started at `start_ms`: the one
/// function recording and replay both call, so a recorded page and every replay of it read the same
/// clock and draw the same random numbers (and so request the same cache-busters, which replay then
/// matches exactly). `step_ms` is how far the clock moves per read.
pub fn for_snapshot(snapshot_name: &str, start_ms: i64, step_ms: u32) -> String {
    script(start_ms, rng_seed(snapshot_name, start_ms), step_ms)
}

/// The PRNG seed for a snapshot: derived from its name and recording start.
fn rng_seed(snapshot_name: &str, start_ms: i64) -> u64 {
    let h = blake3::hash(snapshot_name.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&h.as_bytes()[..8]);
    u64::from_le_bytes(b) ^ (start_ms as u64)
}

/// The shim for a snapshot: `seed_ms` is where `Date` starts, `rng_seed` seeds the PRNG, `step_ms` is how
/// far the clock moves per read.
fn script(seed_ms: i64, rng_seed: u64, step_ms: u32) -> String {
    let a = (rng_seed & 0xffff_ffff) as u32;
    let b = (rng_seed >> 32) as u32;
    format!(
        r#"(function(){{
if (window.__webfreezeShim) return; window.__webfreezeShim = true;
var seed = {seed_ms}, step = {step_ms}, reads = 0;
function now() {{ var t = seed + reads * step; reads += 1; return t; }}
var RealDate = Date;
function FrozenDate(a, b, c, d, e, f, g) {{
  if (!(this instanceof FrozenDate)) return new RealDate(now()).toString();
  var n = arguments.length;
  var dt = n === 0 ? new RealDate(now()) : n === 1 ? new RealDate(a) : new RealDate(a, b, n > 2 ? c : 1, n > 3 ? d : 0, n > 4 ? e : 0, n > 5 ? f : 0, n > 6 ? g : 0);
  Object.setPrototypeOf(dt, FrozenDate.prototype);
  return dt;
}}
FrozenDate.prototype = RealDate.prototype;
FrozenDate.now = function() {{ return now(); }};
FrozenDate.parse = RealDate.parse; FrozenDate.UTC = RealDate.UTC;
Object.defineProperty(FrozenDate, 'name', {{ value: 'Date' }});
window.Date = FrozenDate;
var s0 = {a} >>> 0, s1 = {b} >>> 0, s2 = 0x9e3779b9 >>> 0, s3 = 0x243f6a88 >>> 0;
function sfc32() {{
  var t = (((s0 + s1) >>> 0) + s3) >>> 0; s3 = (s3 + 1) >>> 0;
  s0 = s1 ^ (s1 >>> 9); s1 = (s2 + (s2 << 3)) >>> 0; s2 = (s2 << 21) | (s2 >>> 11); s2 = (s2 + t) >>> 0;
  return t >>> 0;
}}
for (var i = 0; i < 15; i++) sfc32();
Math.random = function() {{ return sfc32() / 4294967296; }};
// Cookies set by script: the page computes an absolute expiry from the frozen clock, the cookie jar judges
// it by the real one. Shift it by (real now - frozen now), without reading the frozen clock, so a cookie
// lives as long as it did on the recording day (max-age is relative and needs nothing).
function offset() {{ return RealDate.now() - (seed + reads * step); }}
var cd = Object.getOwnPropertyDescriptor(Document.prototype, 'cookie');
if (cd && cd.get && cd.set) {{
  Object.defineProperty(Document.prototype, 'cookie', {{ configurable: true, enumerable: cd.enumerable,
    get: function() {{ return cd.get.call(this); }},
    set: function(v) {{
      v = String(v).replace(/(;\s*expires\s*=\s*)([^;]*)/i, function(m, k, d) {{
        var t = RealDate.parse(d); return isNaN(t) ? m : k + new RealDate(t + offset()).toUTCString();
      }});
      cd.set.call(this, v);
    }} }});
}}
if (window.CookieStore && CookieStore.prototype.set) {{
  var cset = CookieStore.prototype.set;
  CookieStore.prototype.set = function(a, b) {{
    if (a && typeof a === 'object' && a.expires != null) {{
      var e = typeof a.expires === 'number' ? a.expires : new RealDate(a.expires).getTime();
      if (!isNaN(e)) a = Object.assign({{}}, a, {{ expires: e + offset() }});
    }}
    return arguments.length > 1 ? cset.call(this, a, b) : cset.call(this, a);
  }};
}}
if (window.crypto && window.crypto.getRandomValues) {{
  var fill = function(arr) {{
    var bytes = new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength);
    for (var i = 0; i < bytes.length; i++) bytes[i] = sfc32() & 255;
    return arr;
  }};
  try {{ Object.defineProperty(Crypto.prototype, 'getRandomValues', {{ value: fill, configurable: true, writable: true }}); }} catch (e) {{ window.crypto.getRandomValues = fill; }}
  if (window.crypto.randomUUID) {{
    try {{ Object.defineProperty(Crypto.prototype, 'randomUUID', {{ configurable: true, writable: true, value: function() {{
      var b = fill(new Uint8Array(16)); b[6] = (b[6] & 15) | 64; b[8] = (b[8] & 63) | 128;
      var h = Array.prototype.map.call(b, function(x) {{ return (x + 256).toString(16).slice(1); }}).join('');
      return h.slice(0,8)+'-'+h.slice(8,12)+'-'+h.slice(12,16)+'-'+h.slice(16,20)+'-'+h.slice(20);
    }} }}); }} catch (e) {{}}
  }}
}}
}})();"#
    )
}

fn find_ci(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle))
}

/// Insert `<script nonce=..>js</script>` first thing in the document's `<head>` (or after `<html>`, or at
/// the start after any doctype), so it runs before every page script. The element removes itself once it
/// has run: the DOM the page and the harness see is the recorded one (harnesses that number elements,
/// BrowserGym's `bid`s, would otherwise count one more).
pub fn inject_html(html: &[u8], js: &str) -> Vec<u8> {
    let tag = format!(
        "<script nonce=\"{NONCE}\">{js}\n;(function(s){{if(s&&s.parentNode)s.parentNode.removeChild(s)}})(document.currentScript);</script>"
    );
    let scan = &html[..html.len().min(64 * 1024)];
    let after_tag = |name: &[u8]| -> Option<usize> {
        let mut from = 0;
        while let Some(i) = find_ci(&scan[from..], name) {
            let start = from + i;
            let next = scan.get(start + name.len()).copied();
            if matches!(next, Some(b'>') | Some(b' ') | Some(b'\t') | Some(b'\n') | Some(b'\r')) {
                return scan[start..].iter().position(|&b| b == b'>').map(|j| start + j + 1);
            }
            from = start + name.len();
        }
        None
    };
    let at = after_tag(b"<head").or_else(|| after_tag(b"<html")).or_else(|| {
        find_ci(scan, b"<!doctype").and_then(|i| scan[i..].iter().position(|&b| b == b'>').map(|j| i + j + 1))
    });
    let at = at.unwrap_or(0);
    let mut out = Vec::with_capacity(html.len() + tag.len());
    out.extend_from_slice(&html[..at]);
    out.extend_from_slice(tag.as_bytes());
    out.extend_from_slice(&html[at..]);
    out
}

/// Allow the shim's inline script under a Content-Security-Policy (or `-Report-Only`) header value, and
/// change nothing else the page's policy allows or forbids. A value may hold several policies
/// (comma-separated); each must allow the shim, so each is patched. In a policy, the directive that
/// governs `<script>` elements is `script-src-elem`, else `script-src`, else `default-src`:
/// - none of them, or one that allows every inline script (`'unsafe-inline'` with no nonce, hash or
///   `'strict-dynamic'`): the shim runs already; the policy is left as it is. (Adding a nonce there would
///   make the browser ignore `'unsafe-inline'` and stop the page's own inline scripts.)
/// - `script-src-elem`: the nonce is added to it (`'none'` dropped, as it cannot combine).
/// - `script-src` or `default-src`: a `script-src-elem` with the same sources plus the nonce is added, so
///   the nonce touches only script elements: inline event handlers (`script-src-attr`) and styles (which
///   fall back to `default-src`) keep their `'unsafe-inline'`.
pub fn patch_csp(value: &str) -> String {
    value.split(',').map(|p| patch_policy(p.trim())).collect::<Vec<_>>().join(", ")
}

fn patch_policy(policy: &str) -> String {
    let nonce = format!("'nonce-{NONCE}'");
    let mut directives: Vec<(String, Vec<String>)> = policy
        .split(';')
        .filter_map(|d| {
            let mut words = d.split_whitespace();
            let name = words.next()?.to_ascii_lowercase();
            Some((name, words.map(str::to_string).collect()))
        })
        .collect();
    // The first of a repeated directive is the one that counts.
    let first = |name: &str| directives.iter().position(|(n, _)| n == name);
    let Some(at) = first("script-src-elem").or_else(|| first("script-src")).or_else(|| first("default-src"))
    else {
        return policy.to_string();
    };
    let sources = &directives[at].1;
    let lower: Vec<String> = sources.iter().map(|s| s.to_ascii_lowercase()).collect();
    let has = |w: &str| lower.iter().any(|s| s == w);
    let keyed = lower.iter().any(|s| s.starts_with("'nonce-") || s.starts_with("'sha"));
    if sources.contains(&nonce) || (has("'unsafe-inline'") && !keyed && !has("'strict-dynamic'")) {
        return policy.to_string();
    }
    let mut with_nonce: Vec<String> =
        sources.iter().filter(|s| !s.eq_ignore_ascii_case("'none'")).cloned().collect();
    with_nonce.push(nonce);
    if directives[at].0 == "script-src-elem" {
        directives[at].1 = with_nonce;
    } else {
        directives.push(("script-src-elem".into(), with_nonce));
    }
    directives
        .iter()
        .map(|(n, s)| if s.is_empty() { n.clone() } else { format!("{n} {}", s.join(" ")) })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn injection_points_table() {
        for (html, expect_prefix) in [
            ("<!doctype html><html><head><title>x</title></head>", "<!doctype html><html><head><script"),
            ("<HTML lang=en><HEAD data-x=1><title>", "<HTML lang=en><HEAD data-x=1><script"),
            ("<html><body>no head</body></html>", "<html><script"),
            ("<!DOCTYPE html><p>bare", "<!DOCTYPE html><script"),
            ("just text", "<script"),
            ("<html><header>not head</header><head>", "<html><header>not head</header><head><script"),
        ] {
            let out = String::from_utf8(inject_html(html.as_bytes(), "X")).unwrap();
            assert!(out.starts_with(expect_prefix), "{html} -> {out}");
            assert!(out.contains(&format!("<script nonce=\"{NONCE}\">X\n;(function(s)")), "{out}");
        }
    }

    #[test]
    fn csp_table() {
        let n = format!("'nonce-{NONCE}'");
        let same = |p: &str| (p.to_string(), p.to_string());
        let cases: Vec<(String, String)> = vec![
            // No script directive at all: the shim runs already.
            same("img-src *"),
            same(""),
            // default-src fallback: a script-src-elem of its own, so styles keep default-src as it was.
            ("default-src 'self'".into(), format!("default-src 'self'; script-src-elem 'self' {n}")),
            // 'unsafe-inline' without nonces or hashes allows every inline script: untouched (a nonce would
            // switch the page's own inline scripts off).
            same("script-src 'self' 'unsafe-inline'"),
            same("default-src 'self' 'unsafe-inline' data:"),
            same("script-src-elem 'unsafe-inline'; script-src 'self'"),
            // A nonce or hash already makes the browser ignore 'unsafe-inline': ours joins them.
            (
                "script-src 'self' 'nonce-abc'; img-src *".into(),
                format!("script-src 'self' 'nonce-abc'; img-src *; script-src-elem 'self' 'nonce-abc' {n}"),
            ),
            (
                "script-src 'unsafe-inline' 'sha256-AAAA'".into(),
                format!("script-src 'unsafe-inline' 'sha256-AAAA'; script-src-elem 'unsafe-inline' 'sha256-AAAA' {n}"),
            ),
            // 'strict-dynamic': allowlists and 'unsafe-inline' are ignored, nonces are not.
            (
                "script-src 'strict-dynamic' 'nonce-xyz' 'unsafe-inline' https:".into(),
                format!(
                    "script-src 'strict-dynamic' 'nonce-xyz' 'unsafe-inline' https:; script-src-elem 'strict-dynamic' 'nonce-xyz' 'unsafe-inline' https: {n}"
                ),
            ),
            // script-src-elem governs elements: patched in place; script-src stays for attributes.
            (
                "default-src 'none'; script-src-elem 'self'; script-src 'unsafe-inline'".into(),
                format!("default-src 'none'; script-src-elem 'self' {n}; script-src 'unsafe-inline'"),
            ),
            ("script-src 'none'".into(), format!("script-src 'none'; script-src-elem {n}")),
            // The first of a repeated directive counts.
            (
                "script-src 'self'; script-src 'unsafe-inline'".into(),
                format!("script-src 'self'; script-src 'unsafe-inline'; script-src-elem 'self' {n}"),
            ),
            // Already allowed: unchanged (idempotent).
            same(&format!("script-src-elem 'self' {n}")),
            // Several policies in one header: each must allow the shim.
            (
                "script-src 'self', default-src 'unsafe-inline'".into(),
                format!("script-src 'self'; script-src-elem 'self' {n}, default-src 'unsafe-inline'"),
            ),
        ];
        for (input, expected) in &cases {
            assert_eq!(&patch_csp(input), expected, "{input}");
            assert_eq!(&patch_csp(expected), expected, "patching twice changes nothing: {expected}");
        }
    }

    #[test]
    fn script_depends_on_seed_only() {
        assert_eq!(script(1, 2, 1), script(1, 2, 1));
        assert_ne!(script(1, 2, 1), script(1, 3, 1));
        assert!(script(1_700_000_000_000, 7, 1).contains("var seed = 1700000000000"));
    }
}
