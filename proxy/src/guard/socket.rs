//! WebSocket messages judged by the write rules (issue 60, part 4): a JSON message a page sends over a
//! socket (a chat message, a GraphQL mutation, an RPC call) is judged as the request it stands for, by the
//! same rules as an HTTP request (`GuardConfig::judge_as`, without the learned judge, which learned
//! HTTP requests and not a socket protocol's verbs): a `POST` to the socket's URL with the
//! message's JSON as its body and the message's verb as its `action` (`?action=VERB`, what the judge
//! reads an action's name from). What this module adds is only the reading of the socket protocols that
//! wrap a message, so the judge sees the request inside:
//!
//! - **graphql-ws / subscriptions-transport-ws**: `{"type": "subscribe"|"start", "payload": {"query",
//!   "operationName", "variables"}}` is the GraphQL request `payload` (a `subscription` or a `query`
//!   passes, a `mutation` is judged by its operation); the protocol's own messages (`connection_init`,
//!   `ping`, `pong`, `ka`, `complete`, `stop`, ...) pass;
//! - **Action Cable**: `{"command": "subscribe"|"unsubscribe"}` passes (a stream subscription);
//!   `{"command": "message", "data": "{\"action\": ...}"}` is the request `data`, its `action` the verb;
//! - **Phoenix channels**: `{"topic", "event", "payload"}` and the v2 array `[join_ref, ref, topic, event,
//!   payload]`: the event is the verb, the payload the body (`phx_join`, `phx_leave`, `heartbeat` pass);
//! - **Socket.IO**: `42["event", args...]` (an event packet, with or without a namespace and an ack id):
//!   the event is the verb, `{"args": [...]}` the body;
//! - **SignalR** (the JSON hub protocol's records, each ended by `0x1E`, and the MessagePack hub
//!   protocol's length-prefixed frames): an invocation's `target` is the verb, `{"arguments": [...]}` the
//!   body; pings, completions and closes pass;
//! - **MessagePack**: a binary message that is one MessagePack object or array (Socket.IO's msgpack
//!   parser, a game's or a chat's binary protocol) is read as the JSON it encodes, by the rules above;
//! - **any other JSON object**: its `type`, `event`, `action`, `command`, `method` (JSON-RPC), `op` or
//!   `cmd` is the verb, the whole object the body.
//!
//! A socket's verbs mean something of their own: subscribing to, joining or leaving a stream, a
//! heartbeat, a ping, typing, presence, an acknowledgement are the socket's machinery and pass before
//! the judge (on HTTP, `subscribe` is a newsletter); a verb that names a message sent (`message`, `chat`,
//! `say`, `speak`, `msg`, `dm`, `whisper`) is given to the judge as sending one (`send_VERB`). A frame of
//! several records (SignalR's) is refused when any of them acts. Messages that are neither JSON nor
//! MessagePack (text protocols, protobuf and other binary encodings) are not read and pass: the guard
//! cannot tell what they do (said in README's guard section). The control's label is not used: a message
//! is judged by what it says.

use super::acts::words;
use super::{Blocked, GuardConfig};

/// The method a refused message is reported with (its URL is the socket's).
pub const WS_METHOD: &str = "WS";

/// What a socket message stands for.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageView {
    /// The socket protocol's own machinery (a ping, a subscription, a join): passes unjudged.
    Machinery(String),
    /// Not JSON, or JSON that names nothing: not read, passes.
    Unread,
    /// A request: its verb (when the message names one) and its JSON body.
    Request {
        /// The verb, as given to the judge.
        verb: Option<String>,
        /// The body the judge reads.
        body: serde_json::Value,
    },
}

/// graphql-ws's and subscriptions-transport-ws's own message types (not operations).
const GRAPHQL_WS_MACHINERY: &[&str] = &[
    "connection_init",
    "connection_ack",
    "connection_error",
    "connection_terminate",
    "connection_keep_alive",
    "ka",
    "ping",
    "pong",
    "complete",
    "stop",
    "next",
    "data",
    "error",
];

/// Words that make a verb the socket's machinery.
const MACHINERY: &[&str] = &[
    "subscribe",
    "unsubscribe",
    "subscription",
    "join",
    "leave",
    "phx",
    "heartbeat",
    "ping",
    "pong",
    "keepalive",
    "ka",
    "ack",
    "typing",
    "presence",
    "hello",
    "identify",
    "auth",
    "authenticate",
    "resume",
    "init",
    "ready",
    "listen",
    "unlisten",
    "watch",
    "unwatch",
    "sub",
    "unsub",
];

/// Words that make a verb a message sent.
const SENDS: &[&str] = &["message", "msg", "chat", "say", "speak", "dm", "whisper", "tell", "text"];

/// The keys a generic JSON message names its verb with, in order.
const VERB_KEYS: &[&str] = &["type", "event", "action", "command", "method", "op", "cmd"];

/// SignalR's record separator (the JSON hub protocol ends each message with it).
const RECORD_SEPARATOR: char = '\u{1e}';

/// Read a client message's payload as the requests it stands for: one, or one per record of a frame
/// that carries several (SignalR's JSON records, its MessagePack frames).
pub fn views(payload: &[u8]) -> Vec<MessageView> {
    match std::str::from_utf8(payload) {
        Ok(text) if text.contains(RECORD_SEPARATOR) => text
            .split(RECORD_SEPARATOR)
            .filter(|r| !r.trim().is_empty())
            .map(|r| view(r.as_bytes()))
            .collect(),
        Ok(_) => vec![view(payload)],
        Err(_) => msgpack_values(payload)
            .map(|vs| vs.into_iter().map(json_view).collect())
            .unwrap_or_else(|| vec![MessageView::Unread]),
    }
}

/// A binary payload's MessagePack values: the whole payload one value, or SignalR's frames (each a
/// varint length, then that many bytes of one value). `None` when the bytes are neither.
fn msgpack_values(payload: &[u8]) -> Option<Vec<serde_json::Value>> {
    // Only an object or an array is a message: a lone number or string is any binary blob's first byte.
    let one = |bytes: &[u8]| -> Option<serde_json::Value> {
        let mut cursor = std::io::Cursor::new(bytes);
        let v: serde_json::Value =
            serde::Deserialize::deserialize(&mut rmp_serde::Deserializer::new(&mut cursor)).ok()?;
        (cursor.position() as usize == bytes.len() && (v.is_object() || v.is_array())).then_some(v)
    };
    if let Some(v) = one(payload) {
        return Some(vec![v]);
    }
    let mut out = Vec::new();
    let mut rest = payload;
    while !rest.is_empty() {
        let (len, used) = varint(rest)?;
        let frame = rest.get(used..used.checked_add(len)?)?;
        out.push(one(frame)?);
        rest = &rest[used + len..];
    }
    (!out.is_empty()).then_some(out)
}

/// A varint (7 bits a byte, low first, at most 5 bytes) and the bytes it took.
fn varint(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut n: usize = 0;
    for (i, b) in bytes.iter().take(5).enumerate() {
        n |= usize::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((n, i + 1));
        }
    }
    None
}

/// A decoded value read as a message.
fn json_view(v: serde_json::Value) -> MessageView {
    match v {
        serde_json::Value::Object(o) => object(o),
        serde_json::Value::Array(a) => array(a),
        _ => MessageView::Unread,
    }
}

/// Read a client message's payload as the request it stands for (see the module docs).
pub fn view(payload: &[u8]) -> MessageView {
    let Ok(text) = std::str::from_utf8(payload) else {
        return msgpack_values(payload)
            .and_then(|mut vs| (vs.len() == 1).then(|| vs.remove(0)))
            .map(json_view)
            .unwrap_or(MessageView::Unread);
    };
    let text = text.trim();
    if let Some(v) = socket_io(text) {
        return v;
    }
    serde_json::from_str::<serde_json::Value>(text).map(json_view).unwrap_or(MessageView::Unread)
}

/// A verb and its body, or the machinery when the verb is the socket's own.
fn request(verb: Option<&str>, body: serde_json::Value) -> MessageView {
    let Some(verb) = verb.map(str::trim).filter(|v| !v.is_empty()) else {
        return MessageView::Request { verb: None, body };
    };
    let ws = words(verb);
    let has = |set: &[&str]| ws.iter().any(|w| set.contains(&w.as_str()));
    let sends = has(SENDS) || ws.iter().any(|w| w == "messages");
    if has(MACHINERY) && !sends {
        return MessageView::Machinery(verb.to_string());
    }
    let verb =
        if sends && !ws.iter().any(|w| w == "send") { format!("send_{verb}") } else { verb.to_string() };
    MessageView::Request { verb: Some(verb), body }
}

fn object(mut o: serde_json::Map<String, serde_json::Value>) -> MessageView {
    let s = |o: &serde_json::Map<String, serde_json::Value>, k: &str| {
        o.get(k).and_then(|v| v.as_str()).map(str::to_string)
    };
    // graphql-ws: an operation's payload is the GraphQL request; its other types are the protocol's.
    if let Some(t) = s(&o, "type") {
        let payload = o.get("payload").filter(|p| p.is_object());
        if matches!(t.as_str(), "subscribe" | "start") && payload.is_some() {
            let body = o.remove("payload").unwrap_or_default();
            return MessageView::Request { verb: None, body };
        }
        if GRAPHQL_WS_MACHINERY.contains(&t.as_str()) {
            return MessageView::Machinery(t);
        }
    }
    // SignalR's handshake (`{"protocol": "json", "version": 1}`) opens the hub.
    if o.len() == 2 && o.contains_key("protocol") && o.contains_key("version") {
        return MessageView::Machinery("signalr handshake".into());
    }
    // SignalR's JSON hub protocol: an invocation (type 1, or 4 a streaming one) calls its `target`;
    // its other types (a completion, a ping, a close) are the protocol's.
    if let (Some(t), true) =
        (o.get("type").and_then(|t| t.as_u64()), o.contains_key("target") || o.len() <= 3)
    {
        if matches!(t, 1 | 4) {
            if let Some(target) = s(&o, "target") {
                let args = o.remove("arguments").unwrap_or_default();
                return request(Some(&target), serde_json::json!({ "arguments": args }));
            }
        }
        if (2..=7).contains(&t) && !o.contains_key("target") {
            return MessageView::Machinery(format!("signalr {t}"));
        }
    }
    // Action Cable: a subscription passes; a message's data is the request, its action the verb.
    if let (Some(c), true) = (s(&o, "command"), o.contains_key("identifier")) {
        if c != "message" {
            return MessageView::Machinery(c);
        }
        let data = o.get("data").and_then(|d| match d {
            serde_json::Value::String(t) => serde_json::from_str::<serde_json::Value>(t).ok(),
            other => Some(other.clone()),
        });
        let data = data.unwrap_or_default();
        let verb = data.get("action").and_then(|a| a.as_str()).map(str::to_string);
        return request(verb.as_deref(), data);
    }
    // Phoenix channels: the event is the verb, the payload the body.
    if let (Some(e), true) = (s(&o, "event"), o.contains_key("topic")) {
        let body = o.remove("payload").unwrap_or_default();
        return request(Some(&e), body);
    }
    let verb = VERB_KEYS.iter().find_map(|k| s(&o, k));
    request(verb.as_deref(), serde_json::Value::Object(o))
}

fn array(mut a: Vec<serde_json::Value>) -> MessageView {
    // Phoenix v2: [join_ref, ref, topic, event, payload].
    if a.len() == 5 && a[2].is_string() && a[3].is_string() {
        let event = a[3].as_str().unwrap_or_default().to_string();
        let body = a.pop().unwrap_or_default();
        return request(Some(&event), body);
    }
    // SignalR's MessagePack hub protocol: [1, headers, invocation id, target, arguments, ...] calls its
    // target; [6] (a ping), [7, ...] (a close), [3, ...] (a completion) are the protocol's.
    if let Some(t) = a.first().and_then(|t| t.as_u64()) {
        if matches!(t, 1 | 4) && a.len() >= 5 && a[1].is_object() && a[3].is_string() {
            let target = a[3].as_str().unwrap_or_default().to_string();
            let args = a.swap_remove(4);
            return request(Some(&target), serde_json::json!({ "arguments": args }));
        }
        if (2..=7).contains(&t) && a.get(1).is_none_or(|h| h.is_object() || h.is_null() || h.is_string()) {
            return MessageView::Machinery(format!("signalr {t}"));
        }
    }
    if a.iter().all(|v| v.is_object()) && !a.is_empty() {
        // A batch (GraphQL's, JSON-RPC's): judged as one request with the batch as its body.
        return MessageView::Request { verb: None, body: serde_json::Value::Array(a) };
    }
    MessageView::Unread
}

/// Socket.IO's event packet: `4` (an Engine.IO message), `2` (a Socket.IO event), an optional
/// `/namespace,`, an optional ack id, then the JSON array `["event", args...]`.
fn socket_io(text: &str) -> Option<MessageView> {
    let rest = text.strip_prefix("42")?;
    let rest = match rest.strip_prefix('/') {
        Some(ns) => ns.split_once(',')?.1,
        None => rest,
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    let serde_json::Value::Array(mut a) = serde_json::from_str::<serde_json::Value>(rest).ok()? else {
        return None;
    };
    if a.is_empty() || !a[0].is_string() {
        return None;
    }
    let event = a.remove(0).as_str().unwrap_or_default().to_string();
    Some(request(Some(&event), serde_json::json!({ "args": a })))
}

/// Why a client message sent over the socket at `url` must not go, if it must not: the message read as
/// a request ([`view`]) judged by `cfg` as an HTTP `POST` to the socket's URL would be. The refusal names
/// the socket's URL and [`WS_METHOD`].
pub fn judge_message(cfg: &GuardConfig, url: &http::Uri, payload: &[u8]) -> Option<Blocked> {
    views(payload).into_iter().find_map(|v| judge_view(cfg, url, v))
}

/// One request a message stands for, judged (see [`judge_message`]).
fn judge_view(cfg: &GuardConfig, url: &http::Uri, view: MessageView) -> Option<Blocked> {
    let MessageView::Request { verb, body } = view else { return None };
    let uri = match &verb {
        Some(v) => with_action(url, v)?,
        None => url.clone(),
    };
    let body = serde_json::to_vec(&body).ok()?;
    let mut b = cfg.judge_as("POST", &uri, Some("application/json"), Some(&body), None, false)?;
    b.method = WS_METHOD.to_string();
    b.url = url.to_string();
    Some(b)
}

/// `url` with `action=VERB` added to its query.
fn with_action(url: &http::Uri, verb: &str) -> Option<http::Uri> {
    let action: String = form_urlencoded::Serializer::new(String::new()).append_pair("action", verb).finish();
    let pq = match url.query() {
        // The verb first: the judge reads the first `action` it finds.
        Some(q) => format!("{}?{action}&{q}", url.path()),
        None => format!("{}?{action}", url.path()),
    };
    let mut parts = url.clone().into_parts();
    parts.path_and_query = Some(pq.parse().ok()?);
    http::Uri::from_parts(parts).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (message, what it is: "pass" or the rule it breaks) on a socket at `wss://chat.example/socket`.
    const CASES: &[(&str, &str)] = &[
        // graphql-ws and subscriptions-transport-ws.
        (r#"{"type":"connection_init","payload":{"authorization":"Bearer x"}}"#, "pass"),
        (r#"{"type":"ping"}"#, "pass"),
        (r#"{"type":"ka"}"#, "pass"),
        (
            r#"{"id":"1","type":"subscribe","payload":{"query":"subscription OnMessage { messageAdded(room: 1) { id text } }"}}"#,
            "pass",
        ),
        (r#"{"id":"2","type":"start","payload":{"query":"query Rooms { rooms { id } }"}}"#, "pass"),
        (
            r#"{"id":"3","type":"subscribe","payload":{"query":"mutation { createTweet(text: \"hi\") { id } }"}}"#,
            "post",
        ),
        (
            r#"{"id":"4","type":"start","payload":{"operationName":"PlaceOrder","query":"mutation PlaceOrder($c: ID!) { placeOrder(cart: $c) { id } }","variables":{"c":"9"}}}"#,
            "purchase",
        ),
        (r#"{"id":"4","type":"complete"}"#, "pass"),
        // Action Cable.
        (r#"{"command":"subscribe","identifier":"{\"channel\":\"RoomChannel\",\"room\":1}"}"#, "pass"),
        (
            r#"{"command":"message","identifier":"{\"channel\":\"RoomChannel\"}","data":"{\"action\":\"speak\",\"message\":\"hello\"}"}"#,
            "message",
        ),
        // Phoenix channels, v1 and v2.
        (r#"{"topic":"room:lobby","event":"phx_join","payload":{},"ref":"1"}"#, "pass"),
        (r#"{"topic":"phoenix","event":"heartbeat","payload":{},"ref":"2"}"#, "pass"),
        (r#"{"topic":"room:lobby","event":"new_msg","payload":{"body":"hi"},"ref":"3"}"#, "message"),
        (r#"["1","4","room:lobby","new_msg",{"body":"hi"}]"#, "message"),
        (r#"["1","5","room:lobby","phx_leave",{}]"#, "pass"),
        // Socket.IO.
        (r#"42["chat message","hello"]"#, "message"),
        (r#"42/chat,17["typing",{"room":1}]"#, "pass"),
        ("2", "pass"),
        // Plain JSON.
        (r#"{"type":"message","room":"general","text":"hello"}"#, "message"),
        (r#"{"type":"subscribe","channels":["ticker"]}"#, "pass"),
        (r#"{"action":"vote","poll":7,"choice":2}"#, "vote"),
        (r#"{"op":"place_order","item":"jar","qty":1}"#, "purchase"),
        (r#"{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}"#, "pass"),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"chat.postMessage","params":{"channel":"C1","text":"hi"}}"#,
            "message",
        ),
        (r#"{"id":1,"method":"quote","ts":1764000000000}"#, "pass"),
        (r#"{"type":"history","before":120}"#, "pass"),
        (r#"{"type":"payment","card":{"number":"4111111111111111","cvc":"123"}}"#, "payment"),
        // Not JSON: not read.
        ("hello", "pass"),
        ("PRIVMSG #chan :hi", "pass"),
    ];

    #[test]
    fn socket_messages_are_judged_as_the_requests_they_stand_for() {
        let cfg = GuardConfig::standard(Vec::new());
        let url: http::Uri = "https://chat.example/socket".parse().unwrap();
        let mut wrong = Vec::new();
        for (msg, want) in CASES {
            let got = judge_message(&cfg, &url, msg.as_bytes());
            let got_rule = got.as_ref().map_or("pass", |b| b.rule.as_str());
            if got_rule != *want {
                wrong.push(format!("{msg}: want {want}, got {got:?} ({:?})", view(msg.as_bytes())));
            }
            if let Some(b) = got {
                assert_eq!((b.method.as_str(), b.url.as_str()), (WS_METHOD, "https://chat.example/socket"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// SignalR's JSON records and MessagePack frames, and MessagePack binary messages: each record or
    /// value judged; a frame refused when any of its records acts.
    #[test]
    fn signalr_and_messagepack_messages() {
        let cfg = GuardConfig::standard(Vec::new());
        let url: http::Uri = "https://chat.example/hubs/chat".parse().unwrap();
        let pack = |v: serde_json::Value| rmp_serde::to_vec(&v).unwrap();
        let framed = |vs: &[serde_json::Value]| {
            let mut out = Vec::new();
            for v in vs {
                let b = pack(v.clone());
                assert!(b.len() < 128, "one varint byte in this test");
                out.push(b.len() as u8);
                out.extend(b);
            }
            out
        };
        let send = serde_json::json!([1, {}, "7", "SendMessage", ["general", "hello all"]]);
        let ping = serde_json::json!([6]);
        let rows: Vec<(&str, Vec<u8>, &str)> = vec![
            ("handshake", b"{\"protocol\":\"json\",\"version\":1}\x1e".to_vec(), "pass"),
            ("json ping", b"{\"type\":6}\x1e".to_vec(), "pass"),
            (
                "json invocation",
                b"{\"type\":1,\"target\":\"SendMessage\",\"arguments\":[\"general\",\"hello\"]}\x1e".to_vec(),
                "message",
            ),
            (
                "a ping then an order in one frame",
                b"{\"type\":6}\x1e{\"type\":1,\"target\":\"PlaceOrder\",\"arguments\":[{\"sku\":\"jar\"}]}\x1e".to_vec(),
                "purchase",
            ),
            ("msgpack ping", framed(std::slice::from_ref(&ping)), "pass"),
            ("msgpack invocation", framed(std::slice::from_ref(&send)), "message"),
            ("msgpack ping then invocation", framed(&[ping, send]), "message"),
            ("a bare msgpack object", pack(serde_json::json!({"action": "vote", "poll": 7})), "vote"),
            ("a bare msgpack read", pack(serde_json::json!({"type": "history", "before": 120})), "pass"),
            ("binary noise", vec![0xff, 0x00, 0x13, 0x37, 0xc1], "pass"),
        ];
        for (name, payload, want) in rows {
            let got = judge_message(&cfg, &url, &payload).map_or("pass".to_string(), |b| b.rule);
            assert_eq!(got, want, "{name}: {:?}", views(&payload));
        }
    }

    #[test]
    fn a_host_the_run_owns_takes_any_message() {
        let cfg = GuardConfig::standard(vec!["chat.example".into()]);
        let url: http::Uri = "https://chat.example/socket?vsn=2".parse().unwrap();
        assert_eq!(judge_message(&cfg, &url, br#"{"type":"message","text":"hi"}"#), None);
        let other: http::Uri = "https://other.example/socket?vsn=2".parse().unwrap();
        let b = judge_message(&cfg, &other, br#"{"type":"message","text":"hi"}"#).expect("refused");
        assert_eq!(b.url, "https://other.example/socket?vsn=2");
    }
}
