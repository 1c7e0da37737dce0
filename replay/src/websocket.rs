//! Replaying a recorded WebSocket connection.
//!
//! The handshake is matched like any request; its recorded exchange (a 101 with a
//! [`snapshots::format::WebSocketLog`]) is answered with a fresh `Sec-WebSocket-Accept` for the browser's key
//! and a [`RecordedSocket`] the proxy plays ([`proxy::websocket`]):
//!
//! - at open, the server messages recorded before the first client message;
//! - on each client message, the first recorded client message not yet answered that equals it (exactly,
//!   else once both are normalised: JSON with its volatile fields dropped by the request layer's rules, see
//!   [`normalise`]), then the server messages recorded after that one and before the next client message;
//! - a client message nothing matches is a WebSocket miss in the [`crate::Report`], answered by nothing
//!   (the connection stays open);
//! - pacing ([`WsPacing`]): each server message after the delay it had in the recording from the event
//!   that released it (open, or its client message), or all at once.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use proxy::websocket::{WsKind, WsMessage, WsScript, WsSend};
use snapshots::format::{WebSocketLog, WsOpcode, WsSide};
use snapshots::Store;

use crate::rules::Rules;

pub use proxy_settings::WsPacing;

pub use proxy_report::replay::WsMissEntry;

/// Where a replayed connection reports its misses.
pub type WsMisses = Arc<Mutex<Vec<WsMissEntry>>>;

struct Recorded {
    from: WsSide,
    kind: WsKind,
    payload: Bytes,
    close_code: Option<u16>,
    at_ms: f64,
    /// For client messages: the normalised form (None when it is the payload itself).
    normalised: Option<Vec<u8>>,
}

/// A recorded connection, played as a [`WsScript`].
pub struct RecordedSocket {
    messages: Vec<Recorded>,
    /// Indexes of the recorded client messages, and whether each was answered.
    clients: Vec<(usize, bool)>,
    pacing: WsPacing,
    rules: Rules,
    url: String,
    episode: u64,
    misses: WsMisses,
}

impl std::fmt::Debug for RecordedSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordedSocket").field("url", &self.url).finish_non_exhaustive()
    }
}

/// Where a recorded connection is played, and where its misses go.
pub struct Playback {
    /// The WebSocket's URL.
    pub url: String,
    /// Pacing.
    pub pacing: WsPacing,
    /// Normalisation rules.
    pub rules: Rules,
    /// The episode it opened in.
    pub episode: u64,
    /// The report's miss list.
    pub misses: WsMisses,
}

impl RecordedSocket {
    /// The script for `log`, its payloads read from `store` now (a connection's messages are bounded by
    /// [`snapshots::format::WS_MAX_MESSAGES`]).
    pub fn load(
        store: &Store,
        log: &WebSocketLog,
        playback: Playback,
    ) -> Result<Self, snapshots::StoreError> {
        let mut messages = Vec::with_capacity(log.messages.len());
        for m in &log.messages {
            let payload = Bytes::from(store.read_blob(&m.payload.hash)?.read_all()?);
            messages.push((m.from, m.opcode, payload, m.close_code, m.at_ms));
        }
        Ok(Self::new(messages, playback))
    }

    fn new(messages: Vec<(WsSide, WsOpcode, Bytes, Option<u16>, f64)>, p: Playback) -> Self {
        let messages: Vec<Recorded> = messages
            .into_iter()
            .map(|(from, opcode, payload, close_code, at_ms)| {
                let kind = match opcode {
                    WsOpcode::Text => WsKind::Text,
                    WsOpcode::Binary => WsKind::Binary,
                    WsOpcode::Close => WsKind::Close,
                };
                let normalised = (from == WsSide::Client && kind == WsKind::Text)
                    .then(|| normalise(&p.rules, &payload))
                    .flatten();
                Recorded { from, kind, payload, close_code, at_ms, normalised }
            })
            .collect();
        let clients = messages
            .iter()
            .enumerate()
            .filter(|(_, m)| m.from == WsSide::Client)
            .map(|(i, _)| (i, false))
            .collect();
        Self {
            messages,
            clients,
            pacing: p.pacing,
            rules: p.rules,
            url: p.url,
            episode: p.episode,
            misses: p.misses,
        }
    }

    /// The server messages from index `from` up to the next client message, timed from `since_ms`.
    fn server_run(&self, from: usize, since_ms: f64) -> Vec<WsSend> {
        self.messages[from..]
            .iter()
            .take_while(|m| m.from == WsSide::Server)
            .map(|m| WsSend {
                after: match self.pacing {
                    WsPacing::Recorded => Duration::from_secs_f64((m.at_ms - since_ms).max(0.0) / 1000.0),
                    WsPacing::Fast => Duration::ZERO,
                },
                kind: m.kind,
                payload: m.payload.clone(),
                close_code: m.close_code,
            })
            .collect()
    }

    /// The recorded client message a live one answers to: the first unanswered equal one, else the first
    /// unanswered one equal once normalised.
    fn find(&self, msg: &WsMessage) -> Option<usize> {
        let open = || self.clients.iter().enumerate().filter(|(_, (_, done))| !done);
        let same_kind = |i: usize| self.messages[i].kind == msg.kind;
        if let Some((c, _)) =
            open().find(|(_, (i, _))| same_kind(*i) && self.messages[*i].payload == msg.payload)
        {
            return Some(c);
        }
        let live = normalise(&self.rules, &msg.payload)?;
        open()
            .find(|(_, (i, _))| {
                same_kind(*i) && self.messages[*i].normalised.as_deref() == Some(live.as_slice())
            })
            .map(|(c, _)| c)
    }
}

impl WsScript for RecordedSocket {
    fn open(&mut self) -> Vec<WsSend> {
        self.server_run(0, 0.0)
    }

    fn client(&mut self, msg: &WsMessage) -> Vec<WsSend> {
        match self.find(msg) {
            Some(c) => {
                self.clients[c].1 = true;
                let i = self.clients[c].0;
                self.server_run(i + 1, self.messages[i].at_ms)
            }
            None => {
                if msg.kind != WsKind::Close {
                    let message = match msg.kind {
                        WsKind::Binary => format!("<{} bytes>", msg.payload.len()),
                        _ => String::from_utf8_lossy(&msg.payload).chars().take(200).collect(),
                    };
                    tracing::info!("replay WebSocket miss: {} sent {message}", self.url);
                    if let Ok(mut m) = self.misses.lock() {
                        m.push(WsMissEntry { episode: self.episode, url: self.url.clone(), message });
                    }
                }
                Vec::new()
            }
        }
    }
}

/// A text message's normalised form: JSON with object keys sorted and every field the request layer
/// calls volatile ([`Rules::is_volatile`] on the field's name and scalar value: timestamps, cache
/// busters, tracking ids) dropped, at any depth. None when it is not JSON (then only exact matches count).
pub fn normalise(rules: &Rules, payload: &[u8]) -> Option<Vec<u8>> {
    let v: serde_json::Value = serde_json::from_slice(payload).ok()?;
    fn strip(rules: &Rules, v: serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match v {
            Value::Object(o) => Value::Object(
                o.into_iter()
                    .filter(|(k, v)| {
                        let scalar = match v {
                            Value::String(s) => Some(s.clone()),
                            Value::Number(n) => Some(n.to_string()),
                            _ => None,
                        };
                        scalar.is_none_or(|s| !rules.is_volatile(k, Some(&s)))
                    })
                    .map(|(k, v)| (k, strip(rules, v)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.into_iter().map(|x| strip(rules, x)).collect()),
            other => other,
        }
    }
    // serde_json's map is sorted by key (no preserve_order feature), so the text is canonical.
    serde_json::to_vec(&strip(rules, v)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(pacing: WsPacing, log: &[(WsSide, &str, f64)]) -> (RecordedSocket, WsMisses) {
        let misses = WsMisses::default();
        let msgs = log
            .iter()
            .map(|(from, text, at)| (*from, WsOpcode::Text, Bytes::from(text.to_string()), None, *at))
            .collect();
        let p = Playback {
            url: "wss://ws.test/s".into(),
            pacing,
            rules: Rules::builtin(),
            episode: 1,
            misses: misses.clone(),
        };
        (RecordedSocket::new(msgs, p), misses)
    }

    fn client(text: &str) -> WsMessage {
        WsMessage {
            from: proxy::websocket::WsFrom::Client,
            kind: WsKind::Text,
            payload: Bytes::from(text.to_string()),
            close_code: None,
            at: Duration::ZERO,
        }
    }

    fn texts(sends: &[WsSend]) -> Vec<String> {
        sends.iter().map(|s| String::from_utf8_lossy(&s.payload).into_owned()).collect()
    }

    use WsSide::{Client as C, Server as S};

    #[test]
    fn playback_table() {
        // (recording, client messages sent in replay, server texts expected after open and after each)
        let ticker: &[(WsSide, &str, f64)] = &[(S, "t1", 100.0), (S, "t2", 200.0), (S, "t3", 300.0)];
        let echo: &[(WsSide, &str, f64)] =
            &[(S, "hello", 5.0), (C, "a", 50.0), (S, "echo a", 51.0), (C, "b", 80.0), (S, "echo b", 81.0)];
        let rpc: &[(WsSide, &str, f64)] = &[
            (C, r#"{"id":1,"method":"quote","ts":1764100000123}"#, 10.0),
            (S, r#"{"id":1,"result":42}"#, 12.0),
            (C, r#"{"id":2,"method":"quote","ts":1764100000456}"#, 20.0),
            (S, r#"{"id":2,"result":43}"#, 22.0),
        ];
        type Row<'a> = (&'a str, &'a [(WsSide, &'a str, f64)], Vec<&'a str>, Vec<Vec<&'a str>>, usize);
        let rows: Vec<Row> = vec![
            ("ticker pushes from open", ticker, vec![], vec![vec!["t1", "t2", "t3"]], 0),
            ("echo in order", echo, vec!["a", "b"], vec![vec!["hello"], vec!["echo a"], vec!["echo b"]], 0),
            (
                "echo out of order",
                echo,
                vec!["b", "a"],
                vec![vec!["hello"], vec!["echo b"], vec!["echo a"]],
                0,
            ),
            (
                "a repeat beyond the recording misses",
                echo,
                vec!["a", "a"],
                vec![vec!["hello"], vec!["echo a"], vec![]],
                1,
            ),
            ("never recorded misses", echo, vec!["zzz"], vec![vec!["hello"], vec![]], 1),
            (
                "rpc with new timestamps matches once normalised",
                rpc,
                vec![
                    r#"{"ts":1799999999999,"id":1,"method":"quote"}"#,
                    r#"{"id":2,"method":"quote","ts":1800000000000}"#,
                ],
                vec![vec![], vec![r#"{"id":1,"result":42}"#], vec![r#"{"id":2,"result":43}"#]],
                0,
            ),
            (
                "rpc with another id misses",
                rpc,
                vec![r#"{"id":3,"method":"quote","ts":1799999999999}"#],
                vec![vec![], vec![]],
                1,
            ),
        ];
        for (name, log, sent, want, want_misses) in rows {
            let (mut s, misses) = script(WsPacing::Fast, log);
            let mut got = vec![texts(&s.open())];
            for m in &sent {
                got.push(texts(&s.client(&client(m))));
            }
            let want: Vec<Vec<String>> =
                want.iter().map(|v| v.iter().map(|s| s.to_string()).collect()).collect();
            assert_eq!(got, want, "{name}");
            assert_eq!(misses.lock().unwrap().len(), want_misses, "{name}");
        }
    }

    #[test]
    fn pacing_keeps_recorded_delays_or_drops_them() {
        let log: &[(WsSide, &str, f64)] =
            &[(S, "t1", 100.0), (C, "a", 150.0), (S, "r", 175.0), (S, "t2", 200.0)];
        let (mut s, _) = script(WsPacing::Recorded, log);
        let open: Vec<u128> = s.open().iter().map(|x| x.after.as_millis()).collect();
        assert_eq!(open, vec![100]);
        let after: Vec<u128> = s.client(&client("a")).iter().map(|x| x.after.as_millis()).collect();
        assert_eq!(after, vec![25, 50]);
        let (mut s, _) = script(WsPacing::Fast, log);
        assert!(s.open().iter().chain(s.client(&client("a")).iter()).all(|x| x.after.is_zero()));
    }

    #[test]
    fn normalisation_drops_volatile_fields_only() {
        let r = Rules::builtin();
        let n = |s: &str| normalise(&r, s.as_bytes());
        assert_eq!(n(r#"{"b":1,"ts":1764100000123,"a":"x"}"#), n(r#"{"a":"x","b":1,"ts":1700000000000}"#));
        assert_ne!(n(r#"{"id":1}"#), n(r#"{"id":2}"#));
        assert_eq!(n("not json"), None);
    }
}
