//! WebSocket messages in HAR, as Chromium's DevTools writes them: the handshake's entry carries
//! `_resourceType: "websocket"`, a `ws://` / `wss://` URL and `_webSocketMessages`, each message
//! `{type: "send" | "receive", time: <Unix seconds>, opcode: 1 (text) | 2 (binary, data in base64), data}`.
//! Close messages, which DevTools leaves out, are written with opcode 8, the reason as `data` and the code as
//! `_code` so that export -> import keeps them.

use base64::Engine as _;
use serde_json::{json, Value};

use snapshots::format::{WebSocketLog, WsMessage, WsOpcode, WsSide};
use snapshots::{Exchange, Store, StoreError};

/// The URL a HAR names a WebSocket by (`wss://`) for the one the proxy recorded (`https://`).
pub(super) fn export_url(x: &Exchange) -> String {
    if x.websocket.is_none() {
        return x.request.url.clone();
    }
    if let Some(rest) = x.request.url.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if let Some(rest) = x.request.url.strip_prefix("http://") {
        format!("ws://{rest}")
    } else {
        x.request.url.clone()
    }
}

/// The URL a request for a HAR's `ws://` / `wss://` URL arrives with at the proxy.
pub(super) fn import_url(url: &str) -> String {
    if let Some(rest) = url.strip_prefix("wss://") {
        format!("https://{rest}")
    } else if let Some(rest) = url.strip_prefix("ws://") {
        format!("http://{rest}")
    } else {
        url.to_string()
    }
}

/// The entry's `_resourceType` and `_webSocketMessages`, for an exchange with messages.
pub(super) fn export_fields(store: &Store, x: &Exchange, entry: &mut Value) -> Result<(), StoreError> {
    let Some(log) = &x.websocket else { return Ok(()) };
    let mut messages = Vec::with_capacity(log.messages.len());
    for m in &log.messages {
        let bytes = store.blob_bytes(&m.payload.hash)?;
        let time = (x.started_ms as f64 + m.at_ms) / 1000.0;
        let kind = if m.from == WsSide::Client { "send" } else { "receive" };
        let mut v = match (m.opcode, String::from_utf8(bytes)) {
            (WsOpcode::Text, Ok(t)) => json!({"type": kind, "time": time, "opcode": 1, "data": t}),
            (WsOpcode::Close, Ok(t)) => json!({"type": kind, "time": time, "opcode": 8, "data": t}),
            (_, text) => {
                let raw = text.map(String::into_bytes).unwrap_or_else(|e| e.into_bytes());
                let data = base64::engine::general_purpose::STANDARD.encode(raw);
                json!({"type": kind, "time": time, "opcode": 2, "data": data})
            }
        };
        if let Some(code) = m.close_code {
            v["_code"] = json!(code);
        }
        messages.push(v);
    }
    entry["_resourceType"] = json!("websocket");
    entry["_webSocketMessages"] = Value::Array(messages);
    Ok(())
}

/// The connection's messages from an entry, when it is a WebSocket handshake (status 101, or
/// `_webSocketMessages` present). Messages of an unknown type or opcode are left out and counted.
pub(super) fn import_log(
    store: &Store,
    entry: &Value,
    status: u16,
    started_ms: i64,
) -> Result<Option<(WebSocketLog, u64)>, StoreError> {
    let list = entry.get("_webSocketMessages").and_then(Value::as_array);
    if list.is_none() && status != 101 {
        return Ok(None);
    }
    let mut log = WebSocketLog::default();
    let mut skipped = 0u64;
    for m in list.into_iter().flatten() {
        let from = match m.get("type").and_then(Value::as_str) {
            Some("send") => WsSide::Client,
            Some("receive") => WsSide::Server,
            _ => {
                skipped += 1;
                continue;
            }
        };
        let data = m.get("data").and_then(Value::as_str).unwrap_or("");
        let (opcode, payload) = match m.get("opcode").and_then(Value::as_u64) {
            Some(1) => (WsOpcode::Text, data.as_bytes().to_vec()),
            Some(2) => match base64::engine::general_purpose::STANDARD.decode(data.trim()) {
                Ok(b) => (WsOpcode::Binary, b),
                Err(_) => {
                    skipped += 1;
                    continue;
                }
            },
            Some(8) => (WsOpcode::Close, data.as_bytes().to_vec()),
            _ => {
                skipped += 1;
                continue;
            }
        };
        let time_ms = m.get("time").and_then(Value::as_f64).map(|t| t * 1000.0);
        let at_ms = time_ms.map(|t| (t - started_ms as f64).max(0.0)).unwrap_or(0.0);
        log.messages.push(WsMessage {
            from,
            opcode,
            at_ms,
            payload: store.put_blob(&payload)?,
            close_code: m.get("_code").and_then(Value::as_u64).and_then(|c| u16::try_from(c).ok()),
        });
    }
    // Times are not always in order in a capture; the log is.
    log.messages.sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms));
    Ok(Some((log, skipped)))
}
