//! Where a HAR carries the label of the control that sent a request (the button or link the agent used),
//! for `webfreeze guard check`, which judges a write also by its control's label as the live guard does:
//!
//! 1. the entry's `_webfreeze.control` (a string): webfreeze's own field, beside the others its export
//!    writes under `_webfreeze`; a harness that records its agent's clicks puts the label there;
//! 2. else the request header `x-webfreeze-control` (`proxy::guard::CONTROL_HEADER`): agents that told the
//!    proxy the label by a header, captured by the browser that sent it.
//!
//! Chromium's `_initiator` (`{type: "parser" | "script" | "other", url, lineNumber, stack}`) names the
//! document or script that started a request, never the control: it is not read. A run's wire log keeps
//! the label the agent told the proxy (`proxy_report::wire::WireEntry::control`), and the HAR a run's
//! tasks are exported to (`webfreeze eval --har`) writes it as `_webfreeze.control`; snapshots keep no
//! label, so a snapshot's export carries none.

use serde_json::Value;

/// The field under an entry's `_webfreeze` that holds the control's label.
pub const CONTROL_FIELD: &str = "control";

/// The request header that may carry the label (`proxy::guard::CONTROL_HEADER`).
pub const CONTROL_HEADER: &str = "x-webfreeze-control";

/// The label of the control that sent a HAR entry's request, when the HAR carries one (see the module
/// docs for where); blank labels are none.
pub fn control_label(entry: &Value) -> Option<String> {
    let ours = entry.get("_webfreeze").and_then(|w| w.get(CONTROL_FIELD)).and_then(Value::as_str);
    let header = || {
        entry.pointer("/request/headers")?.as_array()?.iter().find_map(|h| {
            let name = h.get("name")?.as_str()?;
            name.eq_ignore_ascii_case(CONTROL_HEADER).then(|| h.get("value")?.as_str()).flatten()
        })
    };
    ours.or_else(header).map(str::trim).filter(|l| !l.is_empty()).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_label_comes_from_our_field_else_the_header() {
        let rows = [
            (
                json!({"_webfreeze": {"control": "Place order"}, "request": {"headers": []}}),
                Some("Place order"),
            ),
            (
                json!({"request": {"headers": [{"name": "X-Webfreeze-Control", "value": "Pay now"}]}}),
                Some("Pay now"),
            ),
            (
                json!({"_webfreeze": {"control": "Send"},
                       "request": {"headers": [{"name": "x-webfreeze-control", "value": "Other"}]}}),
                Some("Send"),
            ),
            (json!({"_webfreeze": {"control": "  "}, "request": {}}), None),
            (
                json!({"_initiator": {"type": "script", "url": "https://a.example/app.js"}, "request": {}}),
                None,
            ),
            (json!({"request": {"headers": [{"name": "content-type", "value": "text/html"}]}}), None),
        ];
        for (entry, want) in rows {
            assert_eq!(control_label(&entry).as_deref(), want, "{entry}");
        }
    }
}
