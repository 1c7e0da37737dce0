//! Playwright's storage-state JSON (which WebArena's task configs name), loaded into a fresh browser.

use std::path::Path;

use chromiumoxide::cdp::browser_protocol::network::{CookieParam, CookieSameSite, TimeSinceEpoch};

use super::BrowserError;

/// Reads Playwright's storage-state JSON: the cookies, and one page script per origin that fills its
/// localStorage the first time a document of that origin loads in the tab (later documents keep what the
/// pages changed).
pub(super) fn read_storage_state(path: &Path) -> Result<(Vec<CookieParam>, Option<String>), BrowserError> {
    let bad = |d: String| BrowserError::Setup(format!("storage_state {}: {d}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
    let mut cookies = Vec::new();
    for (i, c) in v.get("cookies").and_then(|c| c.as_array()).into_iter().flatten().enumerate() {
        let s = |k: &str| c.get(k).and_then(|x| x.as_str()).map(str::to_string);
        let (Some(name), Some(value)) = (s("name"), s("value")) else {
            return Err(bad(format!("cookie {i} has no name or value")));
        };
        let mut p = CookieParam::new(name, value);
        p.domain = s("domain");
        p.path = s("path");
        p.secure = c.get("secure").and_then(|x| x.as_bool());
        p.http_only = c.get("httpOnly").and_then(|x| x.as_bool());
        p.same_site = match s("sameSite").as_deref() {
            Some("Strict") => Some(CookieSameSite::Strict),
            Some("Lax") => Some(CookieSameSite::Lax),
            Some("None") => Some(CookieSameSite::None),
            _ => None,
        };
        // Playwright writes -1 for a session cookie.
        p.expires = c.get("expires").and_then(|x| x.as_f64()).filter(|e| *e > 0.0).map(TimeSinceEpoch::new);
        if p.domain.is_none() {
            return Err(bad(format!("cookie {i} ({}) has no domain", p.name)));
        }
        cookies.push(p);
    }
    let mut by_origin = serde_json::Map::new();
    for o in v.get("origins").and_then(|o| o.as_array()).into_iter().flatten() {
        let Some(origin) = o.get("origin").and_then(|x| x.as_str()) else { continue };
        let items: Vec<serde_json::Value> = o
            .get("localStorage")
            .and_then(|x| x.as_array())
            .into_iter()
            .flatten()
            .filter_map(|kv| Some(serde_json::json!([kv.get("name")?.as_str()?, kv.get("value")?.as_str()?])))
            .collect();
        by_origin.insert(origin.trim_end_matches('/').to_string(), serde_json::Value::Array(items));
    }
    let script = (!by_origin.is_empty()).then(|| {
        format!(
            "(() => {{ const m = {}; const items = m[location.origin]; \
             try {{ if (items && !sessionStorage.getItem('__webfreeze_storage_state')) {{ \
             for (const [k, v] of items) localStorage.setItem(k, v); \
             sessionStorage.setItem('__webfreeze_storage_state', '1'); }} }} catch (e) {{}} }})();",
            serde_json::Value::Object(by_origin)
        )
    });
    Ok((cookies, script))
}
