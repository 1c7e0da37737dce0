//! An HTTPS keep-alive load generator: N connections, each CONNECT (through a proxy) + TLS + HTTP/1.1,
//! requesting one path in a loop until the deadline; latency per request.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[derive(Clone, Copy, Debug)]
pub(crate) enum Via {
    Direct(SocketAddr),
    Proxy(SocketAddr),
}

#[derive(Debug, Default)]
pub(crate) struct LoadResult {
    pub requests: u64,
    pub errors: u64,
    pub secs: f64,
    pub lat_us: Vec<u64>,
}

pub(crate) fn client_tls(roots_pem: &[String]) -> Arc<rustls::ClientConfig> {
    client_tls_alpn(roots_pem, b"http/1.1")
}

/// A rustls client trusting `roots_pem`, offering one ALPN protocol.
pub(crate) fn client_tls_alpn(roots_pem: &[String], alpn: &[u8]) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for pem in roots_pem {
        for c in CertificateDer::pem_slice_iter(pem.as_bytes()).flatten() {
            let _ = roots.add(c);
        }
    }
    let mut cfg = rustls::ClientConfig::builder_with_provider(proxy::crypto_provider())
        .with_safe_default_protocol_versions()
        .expect("tls versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    cfg.alpn_protocols = vec![alpn.to_vec()];
    Arc::new(cfg)
}

/// One connection ready to send requests.
pub(crate) async fn connect(
    via: Via,
    host: &str,
    port: u16,
    tls: Arc<rustls::ClientConfig>,
) -> anyhow::Result<hyper::client::conn::http1::SendRequest<Empty<Bytes>>> {
    let mut tcp = match via {
        Via::Direct(a) | Via::Proxy(a) => TcpStream::connect(a).await?,
    };
    tcp.set_nodelay(true)?;
    if let Via::Proxy(_) = via {
        tcp.write_all(format!("CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n").as_bytes())
            .await?;
        let mut buf = Vec::new();
        let mut b = [0u8; 1];
        while !buf.ends_with(b"\r\n\r\n") {
            tcp.read_exact(&mut b).await?;
            buf.push(b[0]);
        }
        anyhow::ensure!(
            buf.starts_with(b"HTTP/1.1 200") || buf.starts_with(b"HTTP/1.0 200"),
            "CONNECT: {}",
            String::from_utf8_lossy(&buf)
        );
    }
    let name = ServerName::try_from(host.to_string())?;
    let tls = tokio_rustls::TlsConnector::from(tls).connect(name, tcp).await?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls)).await?;
    tokio::spawn(conn);
    Ok(sender)
}

/// `conc` connections hammering `path` for `secs`.
#[allow(clippy::too_many_arguments)] // a benchmark cell is described by exactly these values
pub(crate) async fn run(
    via: Via,
    host: &str,
    port: u16,
    path: &str,
    conc: usize,
    secs: f64,
    roots: &[String],
    expect_len: usize,
) -> LoadResult {
    let tls = client_tls(roots);
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..conc {
        let (tls, host, path) = (tls.clone(), host.to_string(), path.to_string());
        tasks.push(tokio::spawn(async move {
            let mut r = LoadResult::default();
            let mut sender = match connect(via, &host, port, tls).await {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("connect failed: {e:#}");
                    r.errors += 1;
                    return r;
                }
            };
            let authority = if port == 443 { host.clone() } else { format!("{host}:{port}") };
            while Instant::now() < deadline {
                let req = http::Request::builder()
                    .uri(&path)
                    .header("host", &authority)
                    .body(Empty::<Bytes>::new())
                    .expect("request");
                let t = Instant::now();
                match sender.send_request(req).await {
                    Ok(res) => match res.into_body().collect().await.map(|b| b.to_bytes()) {
                        Ok(b) if b.len() == expect_len => {
                            r.requests += 1;
                            r.lat_us.push(t.elapsed().as_micros() as u64);
                        }
                        _ => {
                            r.errors += 1;
                            break;
                        }
                    },
                    Err(_) => {
                        r.errors += 1;
                        break;
                    }
                }
            }
            r
        }));
    }
    gather(tasks, start).await
}

/// Where one connection of [`run_paths`] goes: a host (port 443), and the paths it requests in turn.
pub(crate) type ConnPlan = (String, Arc<Vec<String>>);

/// `plans.len()` connections, each requesting its paths in turn (wrapping round) for `secs`; any 200
/// with a body counts. For loads whose URLs differ request by request (a cold store).
pub(crate) async fn run_paths(via: Via, plans: Vec<ConnPlan>, secs: f64, roots: &[String]) -> LoadResult {
    let tls = client_tls(roots);
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for (host, paths) in plans {
        let tls = tls.clone();
        tasks.push(tokio::spawn(async move {
            let mut r = LoadResult::default();
            let mut sender = match connect(via, &host, 443, tls).await {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("connect failed: {e:#}");
                    r.errors += 1;
                    return r;
                }
            };
            let mut i = 0usize;
            while Instant::now() < deadline && !paths.is_empty() {
                let req = http::Request::builder()
                    .uri(&paths[i % paths.len()])
                    .header("host", &host)
                    .body(Empty::<Bytes>::new())
                    .expect("request");
                i += 1;
                let t = Instant::now();
                match sender.send_request(req).await {
                    Ok(res) if res.status() == 200 => {
                        match res.into_body().collect().await.map(|b| b.to_bytes()) {
                            Ok(b) if !b.is_empty() => {
                                r.requests += 1;
                                r.lat_us.push(t.elapsed().as_micros() as u64);
                            }
                            _ => {
                                r.errors += 1;
                                break;
                            }
                        }
                    }
                    _ => {
                        r.errors += 1;
                        break;
                    }
                }
            }
            r
        }));
    }
    gather(tasks, start).await
}

/// The connections' results as one, timed from `start`.
async fn gather(tasks: Vec<tokio::task::JoinHandle<LoadResult>>, start: Instant) -> LoadResult {
    let mut total = LoadResult::default();
    for t in tasks {
        if let Ok(r) = t.await {
            total.requests += r.requests;
            total.errors += r.errors;
            total.lat_us.extend(r.lat_us);
        }
    }
    total.secs = start.elapsed().as_secs_f64();
    total.lat_us.sort_unstable();
    total
}
