//! Issue 23: origins that misbehave mid-response. For each, the client through the recording proxy sees
//! what it sees connecting directly; the exchange is recorded as truncated or failed (never as a complete
//! response it was not); and a sealed replay gives the client the same thing again.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::support::*;

const PARTIAL: &[u8] = &[b'p'; 100];

fn broken_gzip() -> Vec<u8> {
    let mut g = gzip(&[b'z'; 4000]);
    g.truncate(g.len() / 2);
    g.extend_from_slice(b"this is not deflate data");
    g
}

const BROKEN_BR: &[u8] = b"\xff\xfe\xfd not a brotli stream at all";

/// How each path misbehaves, and how the exchange must be recorded.
struct Case {
    path: &'static str,
    what: &'static str,
    /// The client gives up after this many body bytes (a stalled origin).
    give_up_after: Option<usize>,
    /// Recorded flags: (truncated, decode_failed).
    flags: (bool, bool),
}

const CASES: &[Case] = &[
    Case {
        path: "/reset",
        what: "resets the connection mid-body",
        give_up_after: None,
        flags: (true, false),
    },
    Case {
        path: "/close",
        what: "closes before its Content-Length",
        give_up_after: None,
        flags: (true, false),
    },
    Case {
        path: "/short",
        what: "sends more bytes than its Content-Length (the length frames the response)",
        give_up_after: None,
        flags: (false, false),
    },
    Case { path: "/gzip", what: "sends a broken gzip stream", give_up_after: None, flags: (false, true) },
    Case { path: "/br", what: "sends a broken brotli stream", give_up_after: None, flags: (false, true) },
    Case {
        path: "/stall",
        what: "stalls mid-body (the client gives up)",
        give_up_after: Some(PARTIAL.len()),
        flags: (true, false),
    },
    Case {
        path: "/h2",
        what: "sends an invalid HTTP/2 frame mid-body",
        give_up_after: None,
        flags: (true, false),
    },
];

/// Answer one HTTP/1.1 request per connection, misbehaving as its path says.
async fn serve_h1(mut tcp: tokio::net::TcpStream, hold: Arc<tokio::sync::Notify>) {
    let Some(path) = read_request_path(&mut tcp).await else { return };
    let h = |len: usize, extra: &str| {
        format!("HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {len}\r\n{extra}\r\n")
    };
    let mut out = Vec::new();
    match path.as_str() {
        "/reset" | "/close" | "/stall" => {
            out.extend_from_slice(h(1000, "").as_bytes());
            out.extend_from_slice(PARTIAL);
        }
        "/short" => out.extend_from_slice(format!("{}0123456789EXTRA BYTES", h(10, "")).as_bytes()),
        "/gzip" => {
            let body = broken_gzip();
            out.extend_from_slice(h(body.len(), "content-encoding: gzip\r\n").as_bytes());
            out.extend_from_slice(&body);
        }
        "/br" => {
            out.extend_from_slice(h(BROKEN_BR.len(), "content-encoding: br\r\n").as_bytes());
            out.extend_from_slice(BROKEN_BR);
        }
        _ => out.extend_from_slice(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"),
    }
    if tcp.write_all(&out).await.is_err() {
        return;
    }
    match path.as_str() {
        "/reset" => {
            let _ = tcp.flush().await;
            let _ = tcp.set_zero_linger(); // close sends RST
        }
        "/stall" => hold.notified().await, // never notified: the connection hangs until the test ends
        _ => {
            let _ = tcp.shutdown().await;
        }
    }
}

async fn read_exactly<S: AsyncRead + Unpin>(s: &mut S, n: usize) -> Option<Vec<u8>> {
    let mut b = vec![0u8; n];
    s.read_exact(&mut b).await.ok()?;
    Some(b)
}

/// Speak just enough HTTP/2 to answer the first request with `:status 200`, five body bytes, then (once
/// `go` says the client has read them: h2 drops data a connection error overtakes) a DATA frame on stream 0,
/// a connection error (PROTOCOL_ERROR).
async fn serve_bad_h2<S: AsyncRead + AsyncWrite + Unpin>(mut s: S, go: Arc<tokio::sync::Notify>) {
    if read_exactly(&mut s, 24).await.is_none() {
        return; // the client preface
    }
    let frame = |ty: u8, flags: u8, stream: u32, payload: &[u8]| {
        let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
        f.extend_from_slice(&[ty, flags]);
        f.extend_from_slice(&stream.to_be_bytes());
        f.extend_from_slice(payload);
        f
    };
    let _ = s.write_all(&frame(4, 0, 0, &[])).await; // SETTINGS
    loop {
        let Some(head) = read_exactly(&mut s, 9).await else { return };
        let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
        let (ty, flags) = (head[3], head[4]);
        let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
        if read_exactly(&mut s, len).await.is_none() {
            return;
        }
        if ty == 4 && flags & 1 == 0 {
            let _ = s.write_all(&frame(4, 1, 0, &[])).await; // SETTINGS ACK
        }
        if ty == 1 {
            let mut out = frame(1, 0x4, stream, &[0x88]); // HEADERS, END_HEADERS, ":status: 200" (static index 8)
            out.extend(frame(0, 0, stream, b"hello"));
            let _ = s.write_all(&out).await;
            let _ = s.flush().await;
            go.notified().await;
            let _ = s.write_all(&frame(0, 0, 0, b"x")).await; // DATA on stream 0: invalid
            let _ = s.flush().await;
            // Keep the connection open: the client must fail on the frame, not on a close.
            let mut sink = [0u8; 1024];
            while matches!(s.read(&mut sink).await, Ok(n) if n > 0) {}
            return;
        }
    }
}

/// What the client saw.
#[derive(Debug, PartialEq)]
struct Seen {
    status: Option<u16>,
    encoding: Option<String>,
    body: Vec<u8>,
    /// The body ended as its framing says (false: an error, or the client gave up).
    whole: bool,
}

/// Fetch `url` and read its body to the end, an error, or `give_up` bytes; `go` is told once any body
/// byte has arrived.
async fn observe(
    via: Via,
    url: &str,
    origin: SocketAddr,
    roots: &[&str],
    h2: bool,
    give_up: Option<usize>,
    go: &tokio::sync::Notify,
) -> Seen {
    let req = Request::builder().uri(url).body(Full::new(Bytes::new())).unwrap();
    let res = match send(via, url, origin, roots, h2, req).await {
        Ok(r) => r,
        Err(_) => return Seen { status: None, encoding: None, body: Vec::new(), whole: false },
    };
    let status = Some(res.status().as_u16());
    let encoding = res.headers().get("content-encoding").map(|v| v.to_str().unwrap().to_string());
    let mut body = res.into_body();
    let mut got = Vec::new();
    loop {
        if give_up.is_some_and(|n| got.len() >= n) {
            return Seen { status, encoding, body: got, whole: false };
        }
        match body.frame().await {
            None => return Seen { status, encoding, body: got, whole: true },
            Some(Err(_)) => return Seen { status, encoding, body: got, whole: false },
            Some(Ok(f)) => {
                if let Ok(d) = f.into_data() {
                    if got.is_empty() && !d.is_empty() {
                        go.notify_one();
                    }
                    got.extend_from_slice(&d);
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misbehaving_origins_are_passed_on_as_they_are_and_never_recorded_complete() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let hold = Arc::new(tokio::sync::Notify::new());
    let l1 = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let plain = l1.local_addr().unwrap();
    let hold1 = hold.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = l1.accept().await {
            tokio::spawn(serve_h1(tcp, hold1.clone()));
        }
    });
    let tls = origin_tls(&["bad.test"], &[b"h2"]);
    let l2 = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let h2_addr = l2.local_addr().unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(tls.server.clone());
    let go = Arc::new(tokio::sync::Notify::new());
    let go2 = go.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = l2.accept().await {
            let (acceptor, go) = (acceptor.clone(), go2.clone());
            tokio::spawn(async move {
                if let Ok(s) = acceptor.accept(tcp).await {
                    serve_bad_h2(s, go).await;
                }
            });
        }
    });
    let origin_ca = h.join("origin-ca.pem");
    std::fs::write(&origin_ca, &tls.ca_pem).unwrap();
    let reach = [
        "--upstream-ca".to_string(),
        origin_ca.display().to_string(),
        "--resolve".to_string(),
        format!("bad.test:443:{h2_addr}"),
    ];
    let url = |c: &Case| {
        if c.path == "/h2" {
            "https://bad.test/h2".to_string()
        } else {
            format!("http://{plain}{}", c.path)
        }
    };
    let target = |c: &Case| if c.path == "/h2" { h2_addr } else { plain };
    // Only the HTTP/2 origin waits to be told; the other cases get a signal nobody listens to.
    let nobody = tokio::sync::Notify::new();
    let go_for = |c: &Case| if c.path == "/h2" { &*go } else { &nobody };

    let mut rec = Webfreeze::spawn_with(h, &["record", "--snapshot", "bad"], &reach);
    let proxy_ca = std::fs::read_to_string(rec.ca_pem_path()).unwrap();
    let mut through_proxy = Vec::new();
    for c in CASES {
        let h2 = c.path == "/h2";
        let direct =
            observe(Via::Direct, &url(c), target(c), &[&tls.ca_pem], h2, c.give_up_after, go_for(c)).await;
        let proxied =
            observe(Via::Proxy(rec.addr), &url(c), target(c), &[&proxy_ca], h2, c.give_up_after, go_for(c))
                .await;
        if c.path == "/reset" {
            // A reset may discard bytes the client had not read yet: compare what it reliably shows.
            assert_eq!((direct.status, direct.whole), (Some(200), false), "{}: direct {direct:?}", c.what);
            assert_eq!(
                (proxied.status, proxied.whole),
                (Some(200), false),
                "{}: proxied {proxied:?}",
                c.what
            );
            assert!(PARTIAL.starts_with(&proxied.body), "{}", c.what);
        } else {
            assert_eq!(proxied, direct, "{}: through the proxy vs direct; proxy: {}", c.what, rec.stderr());
        }
        through_proxy.push(proxied);
    }
    assert!(rec.signal_and_wait("INT").success(), "{}", rec.stderr());

    let out = run_cli(h, &["snapshots", "show", "bad", "--json", "--limit", "100"]);
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let xs = shown["exchanges"].as_array().unwrap();
    for c in CASES {
        let x = xs
            .iter()
            .find(|x| x["request"]["url"] == url(c))
            .unwrap_or_else(|| panic!("{}: not recorded: {}", c.what, shown));
        let flag = |f: &str| x["flags"][f] == true;
        assert_eq!((flag("truncated"), flag("decode_failed")), c.flags, "{}: flags of {x}", c.what);
    }

    // Sealed replay: the client is served what it was served while recording.
    let mut rep = Webfreeze::spawn(h, &["replay", "--snapshot", "bad"]);
    for (c, recorded) in CASES.iter().zip(&through_proxy) {
        let h2 = c.path == "/h2";
        let replayed =
            observe(Via::Proxy(rep.addr), &url(c), target(c), &[&proxy_ca], h2, c.give_up_after, go_for(c))
                .await;
        if c.path == "/reset" {
            assert_eq!(
                (replayed.status, replayed.whole),
                (Some(200), false),
                "{}: replayed {replayed:?}",
                c.what
            );
            assert!(PARTIAL.starts_with(&replayed.body), "{}", c.what);
        } else {
            assert_eq!(&replayed, recorded, "{}: replayed vs recorded", c.what);
        }
    }
    assert!(rep.signal_and_wait("INT").success(), "{}", rep.stderr());
    hold.notify_waiters();
}
