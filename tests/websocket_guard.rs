//! Issue 60 part 4 with real sockets on 127.0.0.1: a WebSocket origin that acknowledges every message it
//! gets, reached through a guarded live proxy (the guards around a wire tap around a pass-through, as a
//! live task's proxy is built). Reads pass and are acknowledged (graphql-ws's `connection_init` and
//! `ping`, a subscription, a query, a channel subscription); messages that act (a GraphQL mutation over
//! graphql-ws, a chat message sent) are refused: never reach the origin, are in the guards' log (the
//! report) and in the wire log as blocked, and the connection stays open for the next message.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;
use trajectory::proxy_report::wire::{Answer, WireEntry, WireTap};

/// A WebSocket origin on 127.0.0.1: answers each text message `ack: MESSAGE` and keeps what it got.
async fn ack_origin() -> (std::net::SocketAddr, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let got = Arc::new(Mutex::new(Vec::new()));
    let kept = got.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let kept = kept.clone();
            tokio::spawn(async move {
                let Ok(mut ws) = tokio_tungstenite::accept_async(tcp).await else { return };
                while let Some(Ok(m)) = ws.next().await {
                    if let Message::Text(t) = m {
                        kept.lock().unwrap().push(t.to_string());
                        if ws.send(Message::text(format!("ack: {t}"))).await.is_err() {
                            break;
                        }
                    }
                }
            });
        }
    });
    (addr, got)
}

/// A wire tap that keeps its entries.
#[derive(Debug, Default)]
struct Kept(Mutex<Vec<WireEntry>>);

impl WireTap for Kept {
    fn record(&self, entry: WireEntry) {
        self.0.lock().unwrap().push(entry);
    }
}

/// Open `ws://ORIGIN/graphql` through the proxy at `proxy` (an absolute-form upgrade).
async fn open(
    proxy: std::net::SocketAddr,
    origin: std::net::SocketAddr,
) -> WebSocketStream<tokio::net::TcpStream> {
    let mut tcp = tokio::net::TcpStream::connect(proxy).await.unwrap();
    let head = format!(
        "GET http://{origin}/graphql HTTP/1.1\r\nHost: {origin}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        tcp.read_exact(&mut byte).await.unwrap();
        got.push(byte[0]);
    }
    let got = String::from_utf8_lossy(&got).to_ascii_lowercase();
    assert!(got.starts_with("http/1.1 101"), "{got}");
    WebSocketStream::from_raw_socket(tcp, Role::Client, None).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_messages_that_act_are_refused_and_reported_reads_pass() {
    let home = tempfile::tempdir().unwrap();
    let (origin, got) = ack_origin().await;
    let kept = Arc::new(Kept::default());
    let tapped = Arc::new(proxy::wire_tap::WireTapped::new(Arc::new(proxy::PassThrough), kept.clone()));
    let log = Arc::new(proxy::guard::GuardLog::default());
    let guard = proxy::guard::Guard::new(
        tapped,
        Arc::new(proxy::guard::GuardConfig::standard(Vec::new())),
        log.clone(),
    );
    #[allow(clippy::disallowed_methods)]
    let now = time::OffsetDateTime::now_utc();
    let ca = Arc::new(proxy::CertificateAuthority::init(&home.path().join("ca"), true, now).unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let p = proxy::Proxy::new(Arc::new(guard), ca, proxy::ProxyConfig::default()).unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(p.serve(listener, async move {
        let _ = stopped.await;
    }));

    // (message, the rule that refuses it, or "" when it passes)
    let rows: &[(&str, &str)] = &[
        (r#"{"type":"connection_init","payload":{}}"#, ""),
        (r#"{"type":"ping"}"#, ""),
        (
            r#"{"id":"1","type":"subscribe","payload":{"query":"subscription { messageAdded { id text } }"}}"#,
            "",
        ),
        (
            r#"{"id":"2","type":"subscribe","payload":{"operationName":"CreateTweet","query":"mutation CreateTweet($t: String!) { createTweet(text: $t) { id } }","variables":{"t":"hello"}}}"#,
            "post",
        ),
        (r#"{"id":"3","type":"subscribe","payload":{"query":"query { rooms { id name } }"}}"#, ""),
        (r#"{"type":"message","room":"general","text":"hello everyone"}"#, "message"),
        (r#"{"command":"subscribe","identifier":"{\"channel\":\"RoomChannel\"}"}"#, ""),
    ];
    let mut ws = open(addr, origin).await;
    for (msg, rule) in rows {
        ws.send(Message::text(*msg)).await.unwrap();
        if rule.is_empty() {
            // A read reaches the origin, which answers it (in order: a refused message before it got no answer).
            let answer = tokio::time::timeout(Duration::from_secs(10), ws.next()).await.expect("an answer");
            assert_eq!(answer.unwrap().unwrap(), Message::text(format!("ack: {msg}")), "{msg}");
        }
    }
    let passed: Vec<&str> = rows.iter().filter(|r| r.1.is_empty()).map(|r| r.0).collect();
    assert_eq!(*got.lock().unwrap(), passed, "the origin got the reads only");

    // The report: each refusal with the socket's URL and its rule.
    let url = format!("http://{origin}/graphql");
    let blocked = log.blocked();
    let seen: Vec<(&str, &str, &str)> =
        blocked.iter().map(|b| (b.method.as_str(), b.url.as_str(), b.rule.as_str())).collect();
    let want: Vec<(&str, &str, &str)> =
        rows.iter().filter(|r| !r.1.is_empty()).map(|r| ("WS", url.as_str(), r.1)).collect();
    assert_eq!(seen, want, "{blocked:?}");
    // The wire log: each refused message as a blocked entry with the message as its body.
    let entries = kept.0.lock().unwrap().clone();
    let refused: Vec<(&str, Option<&str>)> = entries
        .iter()
        .filter(|e| e.answer == Answer::Blocked)
        .map(|e| (e.method.as_str(), e.request_body.as_deref()))
        .collect();
    let want: Vec<(&str, Option<&str>)> =
        rows.iter().filter(|r| !r.1.is_empty()).map(|r| ("WS", Some(r.0))).collect();
    assert_eq!(refused, want, "{entries:?}");
    assert!(entries.iter().all(|e| e.url == url), "{entries:?}");

    ws.close(None).await.unwrap();
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}
