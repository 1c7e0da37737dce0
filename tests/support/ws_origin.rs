//! A WebSocket origin over HTTPS (HTTP/1.1) with the three patterns pages use, and a page that renders what
//! it receives:
//! - `/ws/ticker`: pushes `tick N` every 100 ms from connect, five times, then `ticker done`;
//! - `/ws/echo`: answers each client message `echo: MESSAGE`;
//! - `/ws/rpc`: JSON-RPC style: `{"id", "method", "ts"}` in, `{"id", "result"}` out.
//!
//! Every server message carries the origin's generation (`@gen`, a per-start random number), so a page
//! served from a recording is told apart from a live one.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use super::origin::{full, origin_tls, volatile, BoxBody};

/// The page: three sockets, each rendered into its own list; `#done` once every socket said its part.
pub(crate) const WS_PAGE: &str = r#"<!doctype html><html><head><title>sockets</title></head><body>
<h1>sockets</h1><div id="ticker"></div><div id="echo"></div><div id="rpc"></div>
<script>
const base = 'wss://' + location.host + '/ws/';
const ok = { ticker: false, echo: 0, rpc: 0 };
function add(id, text) {
  const d = document.createElement('div'); d.textContent = id + ': ' + text;
  document.getElementById(id).appendChild(d);
  if (ok.ticker && ok.echo === 2 && ok.rpc === 2 && !document.getElementById('done')) {
    const p = document.createElement('p'); p.id = 'done'; p.textContent = 'all sockets done';
    document.body.appendChild(p);
  }
}
const t = new WebSocket(base + 'ticker');
t.onmessage = (m) => { if (m.data.startsWith('ticker done')) ok.ticker = true; add('ticker', m.data); };
const e = new WebSocket(base + 'echo');
e.onopen = () => e.send('hello');
e.onmessage = (m) => { ok.echo++; add('echo', m.data); if (ok.echo === 1) e.send('world'); };
const r = new WebSocket(base + 'rpc');
let id = 0;
// A timestamp that differs on every run: replay matches these calls once it is normalised away.
function call(method) { id++; r.send(JSON.stringify({ id, method, ts: 1764000000000 + Math.round(performance.now() * 1000) })); }
r.onopen = () => call('quote');
r.onmessage = (m) => { ok.rpc++; add('rpc', m.data); if (ok.rpc === 1) call('volume'); };
window.sendExtra = () => e.send('never recorded');
</script></body></html>"#;

pub(crate) struct WsOrigin {
    pub addr: SocketAddr,
    pub ca_pem: String,
    pub generation: u64,
    shutdown: Arc<Notify>,
}

impl Drop for WsOrigin {
    fn drop(&mut self) {
        self.shutdown.notify_waiters();
    }
}

async fn serve_socket(path: String, ws: WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>, generation: u64) {
    let (mut tx, mut rx) = ws.split();
    match path.as_str() {
        "/ws/ticker" => {
            let mut every = tokio::time::interval(Duration::from_millis(100));
            every.tick().await;
            for n in 1..=5 {
                every.tick().await;
                if tx.send(Message::text(format!("tick {n} @{generation}"))).await.is_err() {
                    return;
                }
            }
            let _ = tx.send(Message::text(format!("ticker done @{generation}"))).await;
            while let Some(Ok(_)) = rx.next().await {}
        }
        "/ws/echo" => {
            while let Some(Ok(m)) = rx.next().await {
                if let Message::Text(t) = m {
                    if tx.send(Message::text(format!("echo: {} @{generation}", t.as_str()))).await.is_err() {
                        return;
                    }
                }
            }
        }
        _ => {
            while let Some(Ok(m)) = rx.next().await {
                if let Message::Text(t) = m {
                    let call: serde_json::Value = serde_json::from_str(t.as_str()).unwrap_or_default();
                    let reply = serde_json::json!({
                        "id": call["id"],
                        "result": format!("{} ok @{generation}", call["method"].as_str().unwrap_or("?")),
                    });
                    if tx.send(Message::text(reply.to_string())).await.is_err() {
                        return;
                    }
                }
            }
        }
    }
}

async fn route(req: Request<Incoming>, generation: u64) -> Response<BoxBody> {
    let path = req.uri().path().to_string();
    if path == "/ws/" {
        let mut r = Response::new(full(WS_PAGE));
        r.headers_mut().insert("content-type", "text/html; charset=utf-8".parse().unwrap());
        r.headers_mut().insert("cache-control", "no-store".parse().unwrap());
        return r;
    }
    let key = req.headers().get("sec-websocket-key").map(|k| k.as_bytes().to_vec());
    let (Some(key), true) = (key, ["/ws/ticker", "/ws/echo", "/ws/rpc"].contains(&path.as_str())) else {
        let mut r = Response::new(full("not found"));
        *r.status_mut() = StatusCode::NOT_FOUND;
        return r;
    };
    let upgrade = hyper::upgrade::on(req);
    tokio::spawn(async move {
        if let Ok(up) = upgrade.await {
            let ws = WebSocketStream::from_raw_socket(TokioIo::new(up), Role::Server, None).await;
            serve_socket(path, ws, generation).await;
        }
    });
    let mut r = Response::new(full(""));
    *r.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    r.headers_mut().insert("upgrade", "websocket".parse().unwrap());
    r.headers_mut().insert("connection", "upgrade".parse().unwrap());
    let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(&key);
    r.headers_mut().insert("sec-websocket-accept", accept.parse().unwrap());
    r
}

impl WsOrigin {
    /// Start on 127.0.0.1:0 as `name` (HTTPS, HTTP/1.1, a throwaway CA).
    pub(crate) async fn start(name: &str) -> WsOrigin {
        let tls = origin_tls(&[name], &[b"http/1.1"]);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let generation = (volatile() % 1_000_000) as u64 + 1;
        let shutdown = Arc::new(Notify::new());
        let acceptor = tokio_rustls::TlsAcceptor::from(tls.server);
        let sd = shutdown.clone();
        tokio::spawn(async move {
            loop {
                let (tcp, _) = tokio::select! {
                    r = listener.accept() => match r { Ok(x) => x, Err(_) => continue },
                    _ = sd.notified() => break,
                };
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let svc =
                        service_fn(
                            move |req| async move { Ok::<_, Infallible>(route(req, generation).await) },
                        );
                    if let Ok(tls) = acceptor.accept(tcp).await {
                        let b = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                        let _ = b.serve_connection_with_upgrades(TokioIo::new(tls), svc).await;
                    }
                });
            }
        });
        WsOrigin { addr, ca_pem: tls.ca_pem, generation, shutdown }
    }
}
