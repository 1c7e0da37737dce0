//! The determinism shim: JavaScript that freezes what a page computes from time and randomness.
//!
//! - `Date`: the clock starts at the snapshot's seed (the recording's start) and advances by a fixed step on
//!   every read (`Date.now()`, `new Date()`), so a page reads the same sequence of times on every replay.
//! - `Math.random` and `crypto.getRandomValues`: a seeded PRNG (sfc32), same sequence every replay.
//!
//! [`for_snapshot`] is a library function: the agent installs it with `Page.addScriptToEvaluateOnNewDocument`
//! before any page script runs; `webfreeze replay --inject-shim` puts it first in each HTML `<head>` and
//! adds a nonce for it to the page's Content-Security-Policy so the inline script may run.

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
/// the start after any doctype), so it runs before every page script.
pub fn inject_html(html: &[u8], js: &str) -> Vec<u8> {
    let tag = format!("<script nonce=\"{NONCE}\">{js}</script>");
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

/// Allow the shim's nonce in a Content-Security-Policy value: added to `script-src-elem`, `script-src`,
/// or `default-src` (the first of those the policy has); a policy without them already allows it.
pub fn patch_csp(policy: &str) -> String {
    let nonce = format!("'nonce-{NONCE}'");
    let directives: Vec<String> =
        policy.split(';').map(|d| d.trim().to_string()).filter(|d| !d.is_empty()).collect();
    let names: Vec<String> =
        directives.iter().map(|d| d.split_whitespace().next().unwrap_or("").to_ascii_lowercase()).collect();
    let targets: Vec<&str> = if names.iter().any(|n| n == "script-src" || n == "script-src-elem") {
        vec!["script-src", "script-src-elem"]
    } else {
        vec!["default-src"]
    };
    directives
        .iter()
        .zip(&names)
        .map(|(d, n)| {
            if targets.contains(&n.as_str()) && !d.contains(&nonce) {
                // 'none' cannot be combined with sources.
                let d = d.replace("'none'", "");
                format!("{} {nonce}", d.trim())
            } else {
                d.clone()
            }
        })
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
            assert!(out.contains(&format!("<script nonce=\"{NONCE}\">X</script>")));
        }
    }

    #[test]
    fn csp_table() {
        let n = format!("'nonce-{NONCE}'");
        for (input, expected) in [
            ("default-src 'self'", format!("default-src 'self' {n}")),
            (
                "script-src 'self' 'nonce-abc'; img-src *",
                format!("script-src 'self' 'nonce-abc' {n}; img-src *"),
            ),
            (
                "default-src 'none'; script-src-elem 'self'",
                format!("default-src 'none'; script-src-elem 'self' {n}"),
            ),
            ("img-src *", "img-src *".to_string()),
            ("script-src 'none'", format!("script-src {n}")),
        ] {
            assert_eq!(patch_csp(input), expected, "{input}");
        }
    }

    #[test]
    fn script_depends_on_seed_only() {
        assert_eq!(script(1, 2, 1), script(1, 2, 1));
        assert_ne!(script(1, 2, 1), script(1, 3, 1));
        assert!(script(1_700_000_000_000, 7, 1).contains("var seed = 1700000000000"));
    }
}
