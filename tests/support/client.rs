//! A client that goes direct or through a proxy (absolute-form for http, CONNECT + TLS for https).

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A rustls client config trusting the given PEM roots.
pub(crate) fn client_tls(roots_pem: &[&str], alpn: &[&[u8]]) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for pem in roots_pem {
        for c in CertificateDer::pem_slice_iter(pem.as_bytes()) {
            roots.add(c.unwrap()).unwrap();
        }
    }
    let mut cfg = rustls::ClientConfig::builder_with_provider(proxy::crypto_provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(cfg)
}

/// A response as the test sees it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Got {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub version: http::Version,
}

impl Got {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

async fn collect(res: Response<Incoming>) -> Got {
    let status = res.status().as_u16();
    let version = res.version();
    let headers = res
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    let body = res.into_body().collect().await.unwrap().to_bytes().to_vec();
    Got { status, headers, body, version }
}

/// How to reach a URL.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Via {
    Direct,
    Proxy(SocketAddr),
}

/// Send one request for `url` (absolute) directly or through a proxy. `h2` picks ALPN h2 for https.
/// `connect_to` is where the origin really is (the URL's host may be a name only the proxy resolves).
pub(crate) async fn fetch(
    via: Via,
    url: &str,
    connect_to: SocketAddr,
    roots: &[&str],
    h2: bool,
    req: Request<Full<Bytes>>,
) -> Got {
    collect(send(via, url, connect_to, roots, h2, req).await.unwrap()).await
}

/// [`fetch`]'s request, returning the response head (or the error) with its body unread.
pub(crate) async fn send(
    via: Via,
    url: &str,
    connect_to: SocketAddr,
    roots: &[&str],
    h2: bool,
    req: Request<Full<Bytes>>,
) -> Result<Response<Incoming>, hyper::Error> {
    let uri: http::Uri = url.parse().unwrap();
    let https = uri.scheme_str() == Some("https");
    let host = uri.host().unwrap().to_string();
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let (mut parts, body) = req.into_parts();
    let tcp = match via {
        Via::Direct => TcpStream::connect(connect_to).await.unwrap(),
        Via::Proxy(p) => TcpStream::connect(p).await.unwrap(),
    };
    if !https {
        parts.uri = uri.clone();
        if matches!(via, Via::Direct) {
            parts.uri = uri.path_and_query().unwrap().as_str().parse().unwrap();
        }
        parts.headers.insert("host", uri.authority().unwrap().as_str().parse().unwrap());
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await.unwrap();
        tokio::spawn(conn);
        return sender.send_request(Request::from_parts(parts, body)).await;
    }
    let mut tcp = tcp;
    if let Via::Proxy(_) = via {
        tcp.write_all(format!("CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut buf = Vec::new();
        let mut byte = [0u8; 1];
        while !buf.ends_with(b"\r\n\r\n") {
            tcp.read_exact(&mut byte).await.unwrap();
            buf.push(byte[0]);
        }
        assert!(buf.starts_with(b"HTTP/1.1 200"), "CONNECT answered {}", String::from_utf8_lossy(&buf));
    }
    let alpn: &[&[u8]] = if h2 { &[b"h2"] } else { &[b"http/1.1"] };
    let tls = tokio_rustls::TlsConnector::from(client_tls(roots, alpn))
        .connect(ServerName::try_from(host.clone()).unwrap(), tcp)
        .await
        .unwrap();
    let negotiated_h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
    assert_eq!(negotiated_h2, h2, "ALPN");
    if h2 {
        parts.uri = uri.clone();
        parts.version = http::Version::HTTP_2;
        let (mut sender, conn) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tls)).await.unwrap();
        tokio::spawn(conn);
        sender.send_request(Request::from_parts(parts, body)).await
    } else {
        parts.uri = uri.path_and_query().unwrap().as_str().parse().unwrap();
        parts.headers.insert("host", uri.authority().unwrap().as_str().parse().unwrap());
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls)).await.unwrap();
        tokio::spawn(conn);
        sender.send_request(Request::from_parts(parts, body)).await
    }
}
