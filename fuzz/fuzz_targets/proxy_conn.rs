//! One client connection to the proxy, from its first byte: the sniffing (plain HTTP, CONNECT, TLS inside
//! a tunnel, HTTP/2 prior knowledge), HTTP/1 request heads, the ClientHello reader, the answer. The proxy
//! serves from a sealed replay of a small in-memory snapshot (a WebSocket among its exchanges, so client
//! frames reach the replayed connection), so nothing dials out. Time is paused
//! (tokio's test clock), so every timeout fires as soon as the connection is idle: each input ends.
#![no_main]
use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use proxy::{CertificateAuthority, Proxy, ProxyConfig};
use replay::{Replay, ReplayConfig};
use snapshots::Store;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const HAR: &str = r#"{"log":{"version":"1.2","creator":{"name":"fuzz","version":"1"},"entries":[
 {"startedDateTime":"2025-01-02T03:04:05.000Z","time":1,
  "request":{"method":"GET","url":"https://shop.test/","httpVersion":"HTTP/1.1","headers":[]},
  "response":{"status":200,"httpVersion":"HTTP/1.1","headers":[{"name":"content-type","value":"text/html"}],
   "content":{"size":20,"mimeType":"text/html","text":"<html><head></head></html>"}}},
 {"startedDateTime":"2025-01-02T03:04:05.000Z","time":1,
  "request":{"method":"GET","url":"http://plain.test/a?b=1","httpVersion":"HTTP/1.1","headers":[]},
  "response":{"status":200,"httpVersion":"HTTP/1.1","headers":[],"content":{"size":2,"mimeType":"text/plain","text":"ok"}}},
 {"startedDateTime":"2025-01-02T03:04:05.000Z","time":1,"_resourceType":"websocket",
  "request":{"method":"GET","url":"ws://plain.test/ws","httpVersion":"HTTP/1.1","headers":[{"name":"Upgrade","value":"websocket"}]},
  "response":{"status":101,"httpVersion":"HTTP/1.1","headers":[{"name":"Upgrade","value":"websocket"}],"content":{"size":0}},
  "_webSocketMessages":[{"type":"receive","time":1735787045.01,"opcode":1,"data":"hello"},
   {"type":"send","time":1735787045.02,"opcode":1,"data":"{\"id\":1,\"ts\":1735787045020}"},
   {"type":"receive","time":1735787045.03,"opcode":2,"data":"AAE="}]}]}}"#;

struct State {
    rt: tokio::runtime::Runtime,
    proxy: Proxy<Replay>,
}

fn state() -> &'static State {
    static S: OnceLock<State> = OnceLock::new();
    S.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().unwrap();
        let dir = std::env::temp_dir().join(format!("webfreeze-fuzz-ca-{}", std::process::id()));
        let ca = Arc::new(CertificateAuthority::load_or_init(&dir, time::OffsetDateTime::now_utc()).unwrap());
        let store = Store::in_memory();
        let opts = archive::ImportOptions { snapshot: "s".into(), source_file: "s.har".into(), now_ms: 0 };
        archive::har::import(&store, HAR.as_bytes(), &opts, |_| {}).unwrap();
        let m = store.manifest("s").unwrap();
        let replay = Arc::new(Replay::new(store, m, ReplayConfig::default()));
        let proxy = rt.block_on(async { Proxy::new(replay, ca, ProxyConfig::default()) }).unwrap();
        State { rt, proxy }
    })
}

fuzz_target!(|data: &[u8]| {
    let s = state();
    s.rt.block_on(async {
        let (client, server) = tokio::io::duplex(1 << 16);
        let serve = s.proxy.serve_stream(server, "127.0.0.1:9".parse().unwrap());
        let talk = async move {
            let (mut r, mut w) = tokio::io::split(client);
            let _ = w.write_all(data).await;
            let _ = w.shutdown().await;
            let mut answer = Vec::new();
            let _ = r.read_to_end(&mut answer).await;
        };
        tokio::join!(serve, talk);
    });
});
