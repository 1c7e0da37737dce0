//! WebSocket messages judged by the write rules (issue 60, part 4): a JSON message a page sends over a
//! socket (a chat message, a GraphQL mutation, an RPC call) is judged as the request it stands for, by the
//! same judge as an HTTP request ([`super::GuardConfig::judge`]): a `POST` to the socket's URL with the
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
//! - **any other JSON object**: its `type`, `event`, `action`, `command`, `method` (JSON-RPC), `op` or
//!   `cmd` is the verb, the whole object the body.
//!
//! A socket's verbs mean something of their own: subscribing to, joining or leaving a stream, a
//! heartbeat, a ping, typing, presence, an acknowledgement are the socket's machinery and pass before
//! the judge (on HTTP, `subscribe` is a newsletter); a verb that names a message sent (`message`, `chat`,
//! `say`, `speak`, `msg`, `dm`, `whisper`) is given to the judge as sending one (`send_VERB`). Messages
//! that are not JSON (text protocols, binary frames that are not UTF-8 JSON) are not read and pass: the
//! guard cannot tell what they do (said in README's guard section). The control's label is not used: a
//! message is judged by what it says.

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

/// Read a client message's payload as the request it stands for (see the module docs).
pub fn view(payload: &[u8]) -> MessageView {
    let Ok(text) = std::str::from_utf8(payload) else { return MessageView::Unread };
    let text = text.trim();
    if let Some(v) = socket_io(text) {
        return v;
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(o)) => object(o),
        Ok(serde_json::Value::Array(a)) => array(a),
        _ => MessageView::Unread,
    }
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
    let MessageView::Request { verb, body } = view(payload) else { return None };
    let uri = match &verb {
        Some(v) => with_action(url, v)?,
        None => url.clone(),
    };
    let body = serde_json::to_vec(&body).ok()?;
    let mut b = cfg.judge("POST", &uri, Some("application/json"), Some(&body), None)?;
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
