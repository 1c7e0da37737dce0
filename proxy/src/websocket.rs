//! WebSocket connections through the proxy, message by message.
//!
//! - **Relay** (forwarded connections whose handler observes them, [`crate::Handler::observes_websocket`]:
//!   recording): after the origin's 101 both upgraded connections are framed (tungstenite: the browser's
//!   side as a server, the origin's as a client) and each text, binary or close message is passed on and
//!   shown to [`crate::Handler::websocket_message`] with the time since the connection opened. Pings and
//!   pongs are answered on each side by the proxy and not relayed. Compression (`permessage-deflate`) is
//!   not negotiated: the handshake's `Sec-WebSocket-Extensions` is dropped before it reaches the origin, so
//!   what is recorded is the payload. A handler that does not observe gets the bytes copied unchanged.
//!   A message the handler refuses ([`crate::Handler::websocket_verdict`]: the guards refuse a client
//!   message that acts, `crate::guard::socket`) is dropped; the connection stays open.
//! - **Scripted server** (replay): a handler answers the handshake itself with a 101 carrying a
//!   [`Scripted`] extension; the proxy accepts the upgrade and plays the [`WsScript`]: what it sends at open,
//!   and what it sends after each client message, each after its delay.
//! - **Shutdown**: when the proxy stops, open connections are closed (1001, going away) on both sides and
//!   the exchange completes, so a recording sealed at shutdown keeps every message that was relayed.
//!
//! HTTP/2's extended CONNECT (RFC 8441) is not offered to clients, so browsers open their WebSockets over
//! HTTP/1.1 Upgrade, which is what is relayed here.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

/// Which side sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WsFrom {
    /// The browser.
    Client,
    /// The origin (or, in replay, the script).
    Server,
}

/// A message's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WsKind {
    /// Text (UTF-8).
    Text,
    /// Binary.
    Binary,
    /// Close: the payload is the reason.
    Close,
}

/// One WebSocket message as the proxy relayed it.
#[derive(Debug, Clone, PartialEq)]
pub struct WsMessage {
    /// Who sent it.
    pub from: WsFrom,
    /// Its kind.
    pub kind: WsKind,
    /// Its payload (a close message's reason).
    pub payload: Bytes,
    /// A close message's code.
    pub close_code: Option<u16>,
    /// Time since the connection opened.
    pub at: Duration,
}

/// Whether a relayed message goes on ([`crate::Handler::websocket_verdict`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WsVerdict {
    /// Passed on.
    Pass,
    /// Refused by a guard: never passed on (the connection stays open).
    Refuse,
}

/// A handler hook that says nothing lets the message go.
impl From<()> for WsVerdict {
    fn from(_: ()) -> Self {
        WsVerdict::Pass
    }
}

/// A message the scripted server sends, `after` the event that released it (the connection opening, or
/// the client message it answers).
#[derive(Debug, Clone, PartialEq)]
pub struct WsSend {
    /// Delay after the releasing event.
    pub after: Duration,
    /// Kind.
    pub kind: WsKind,
    /// Payload.
    pub payload: Bytes,
    /// Close code for a close message.
    pub close_code: Option<u16>,
}

/// A WebSocket server played by a handler (replay's recorded connection).
pub trait WsScript: Send + 'static {
    /// What to send once the connection is open.
    fn open(&mut self) -> Vec<WsSend>;
    /// A client message arrived (`msg.at` is the time since open): what to send after it.
    fn client(&mut self, msg: &WsMessage) -> Vec<WsSend>;
}

/// The extension a handler puts on a 101 [`crate::Decision::Respond`] to play a WebSocket itself.
#[derive(Clone)]
pub struct Scripted(Arc<Mutex<Option<Box<dyn WsScript>>>>);

impl Scripted {
    /// Wrap a script.
    pub fn new(script: impl WsScript) -> Self {
        Self(Arc::new(Mutex::new(Some(Box::new(script)))))
    }

    fn take(&self) -> Option<Box<dyn WsScript>> {
        self.0.lock().ok().and_then(|mut s| s.take())
    }
}

impl std::fmt::Debug for Scripted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scripted")
    }
}

/// `Sec-WebSocket-Accept` for a client's `Sec-WebSocket-Key` (RFC 6455 4.2.2).
pub fn accept_key(client_key: &[u8]) -> String {
    tokio_tungstenite::tungstenite::handshake::derive_accept_key(client_key)
}

/// Why a WebSocket connection ended other than by a close or the peer leaving.
#[derive(Debug, thiserror::Error)]
#[error("websocket {side}: {source}")]
pub struct WsError {
    /// "client" or "origin".
    pub side: &'static str,
    /// tungstenite's error.
    #[source]
    pub source: tokio_tungstenite::tungstenite::Error,
}

type Socket = WebSocketStream<TokioIo<Upgraded>>;

/// Resolves once the proxy shuts down (the guard `wait_for` returns is not held across an await).
pub(crate) async fn closing(rx: &mut watch::Receiver<bool>) {
    let _ = rx.wait_for(|s| *s).await;
}

async fn socket(io: Upgraded, role: Role) -> Socket {
    WebSocketStream::from_raw_socket(TokioIo::new(io), role, None).await
}

/// A relayed message in the proxy's terms; None for pings, pongs and raw frames (not relayed).
fn message_of(m: &Message, from: WsFrom, at: Duration) -> Option<WsMessage> {
    let (kind, payload, close_code) = match m {
        Message::Text(t) => (WsKind::Text, Bytes::copy_from_slice(t.as_bytes()), None),
        Message::Binary(b) => (WsKind::Binary, b.clone(), None),
        Message::Close(f) => (
            WsKind::Close,
            f.as_ref().map(|f| Bytes::copy_from_slice(f.reason.as_bytes())).unwrap_or_default(),
            f.as_ref().map(|f| u16::from(f.code)),
        ),
        Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => return None,
    };
    Some(WsMessage { from, kind, payload, close_code, at })
}

/// The tungstenite message for something to send; a text payload that is not UTF-8 goes as binary.
fn to_message(kind: WsKind, payload: &Bytes, close_code: Option<u16>) -> Message {
    match kind {
        WsKind::Text => match std::str::from_utf8(payload) {
            Ok(t) => Message::text(t),
            Err(_) => Message::Binary(payload.clone()),
        },
        WsKind::Binary => Message::Binary(payload.clone()),
        WsKind::Close => Message::Close(close_code.map(|c| CloseFrame {
            code: CloseCode::from(c),
            reason: String::from_utf8_lossy(payload).into_owned().into(),
        })),
    }
}

fn going_away() -> Message {
    Message::Close(Some(CloseFrame { code: CloseCode::Away, reason: "webfreeze proxy shutting down".into() }))
}

/// Whether an error is only the peer leaving (the browser closed the tab): not a failure of the exchange.
fn is_departure(e: &tokio_tungstenite::tungstenite::Error) -> bool {
    use tokio_tungstenite::tungstenite::error::ProtocolError;
    use tokio_tungstenite::tungstenite::Error;
    matches!(
        e,
        Error::ConnectionClosed
            | Error::AlreadyClosed
            | Error::Protocol(ProtocolError::ResetWithoutClosingHandshake)
            | Error::Io(_)
    )
}

/// Relay messages between the browser's and the origin's upgraded connections until either side closes
/// or `shutdown` turns true; each message goes to `observe` first, and one it refuses
/// ([`WsVerdict::Refuse`]: a guard's) is not passed on.
pub(crate) async fn relay<V: Into<WsVerdict>>(
    client: Upgraded,
    origin: Upgraded,
    observe: impl Fn(&WsMessage) -> V,
    mut shutdown: watch::Receiver<bool>,
) -> Result<(), WsError> {
    let opened = Instant::now();
    let (mut c_tx, mut c_rx) = socket(client, Role::Server).await.split();
    let (mut o_tx, mut o_rx) = socket(origin, Role::Client).await.split();
    loop {
        let (from, got) = tokio::select! {
            m = c_rx.next() => (WsFrom::Client, m),
            m = o_rx.next() => (WsFrom::Server, m),
            _ = closing(&mut shutdown) => {
                let _ = c_tx.send(going_away()).await;
                let _ = o_tx.send(going_away()).await;
                return Ok(());
            }
        };
        let side = if from == WsFrom::Client { "client" } else { "origin" };
        let m = match got {
            None => break,
            Some(Err(e)) if is_departure(&e) => break,
            Some(Err(e)) => return Err(WsError { side, source: e }),
            Some(Ok(m)) => m,
        };
        let Some(msg) = message_of(&m, from, opened.elapsed()) else { continue };
        if observe(&msg).into() == WsVerdict::Refuse {
            continue;
        }
        let to = if from == WsFrom::Client { &mut o_tx } else { &mut c_tx };
        let closing = msg.kind == WsKind::Close;
        if let Err(e) = to.send(m).await {
            if !is_departure(&e) {
                let side = if from == WsFrom::Client { "origin" } else { "client" };
                return Err(WsError { side, source: e });
            }
        }
        if closing {
            // The other side's answering close ends its stream; wait for it briefly, relaying nothing more.
            let (rx_other, tx_back) =
                if from == WsFrom::Client { (&mut o_rx, &mut c_tx) } else { (&mut c_rx, &mut o_tx) };
            let _ = tokio::time::timeout(Duration::from_secs(2), async {
                while let Some(Ok(m)) = rx_other.next().await {
                    if matches!(m, Message::Close(_)) {
                        break;
                    }
                }
            })
            .await;
            let _ = tx_back.close().await;
            break;
        }
    }
    let _ = c_tx.close().await;
    let _ = o_tx.close().await;
    Ok(())
}

/// Play `script` to the browser's upgraded connection until it closes or `shutdown` turns true.
pub(crate) async fn play(
    client: Upgraded,
    script: &Scripted,
    mut shutdown: watch::Receiver<bool>,
) -> Result<(), WsError> {
    let Some(mut script) = script.take() else { return Ok(()) };
    let opened = Instant::now();
    let mut ws = socket(client, Role::Server).await;
    // Messages waiting for their time, in time order; ties keep the order they were released in.
    let mut due: BTreeMap<(Instant, u64), WsSend> = BTreeMap::new();
    let mut n = 0u64;
    let mut schedule = |due: &mut BTreeMap<(Instant, u64), WsSend>, from: Instant, sends: Vec<WsSend>| {
        for s in sends {
            due.insert((from + s.after, n), s);
            n += 1;
        }
    };
    schedule(&mut due, opened, script.open());
    loop {
        let next = due.keys().next().map(|k| k.0);
        tokio::select! {
            _ = async { tokio::time::sleep_until(next.unwrap_or_else(Instant::now)).await }, if next.is_some() => {
                let Some((_, s)) = due.pop_first() else { continue };
                let m = to_message(s.kind, &s.payload, s.close_code);
                if let Err(e) = ws.send(m).await {
                    return if is_departure(&e) { Ok(()) } else { Err(WsError { side: "client", source: e }) };
                }
                if s.kind == WsKind::Close {
                    // The recorded server closed here; the browser's answering close ends the stream.
                    let _ = tokio::time::timeout(Duration::from_secs(2), async {
                        while let Some(Ok(_)) = ws.next().await {}
                    }).await;
                    return Ok(());
                }
            }
            got = ws.next() => {
                let m = match got {
                    None => return Ok(()),
                    Some(Err(e)) if is_departure(&e) => return Ok(()),
                    Some(Err(e)) => return Err(WsError { side: "client", source: e }),
                    Some(Ok(m)) => m,
                };
                let now = Instant::now();
                let Some(msg) = message_of(&m, WsFrom::Client, now - opened) else { continue };
                let sends = script.client(&msg);
                if msg.kind == WsKind::Close {
                    // tungstenite answered the close; nothing more is sent.
                    let _ = ws.close(None).await;
                    return Ok(());
                }
                schedule(&mut due, now, sends);
            }
            _ = closing(&mut shutdown) => {
                let _ = ws.send(going_away()).await;
                return Ok(());
            }
        }
    }
}
