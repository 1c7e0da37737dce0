//! Origin connections over BoringSSL that present the browser's own ClientHello.
//!
//! A bot wall compares the TLS handshake with the User-Agent: a Chrome User-Agent on a rustls handshake
//! (JA4 `t13d1011h2_...`) is the classic bot signature. [`BoringBackend`] implements webfreeze's
//! upstream-connector seam ([`proxy::TlsBackend`]) with BoringSSL, the TLS library Chromium itself uses,
//! configured from the ClientHello the proxy terminated ([`proxy::ClientHello`]):
//!
//! | ClientHello field | how it is reproduced |
//! |---|---|
//! | TLS 1.2 cipher suites, in order | `SSL_CTX_set_cipher_list` (TLS 1.3 suites are BoringSSL's, as in Chrome) |
//! | supported groups incl. X25519MLKEM768 | `SSL_CTX_set1_curves_list` (key shares as Chrome: PQ + X25519) |
//! | signature algorithms incl. ML-DSA | `SSL_CTX_set_verify_algorithm_prefs` |
//! | GREASE, extension permutation | `SSL_CTX_set_grease_enabled`, `SSL_CTX_set_permute_extensions` |
//! | status_request, SCT | OCSP stapling and signed certificate timestamps requested |
//! | compress_certificate | brotli / zlib decompressors registered (a server that compresses works) |
//! | ALPN, ALPS (either code point), ECH GREASE, trust anchors | per connection (`SSL_add_application_settings`, ...) |
//! | session_ticket | `SSL_OP_NO_TICKET` when the browser did not offer it |
//!
//! Code points BoringSSL does not implement are left out (logged once at debug); everything Chromium 156
//! sends is implemented. A client with nothing to mirror gets [`proxy::ClientHello::chrome`].
//!
//! Connectors are built once per distinct ClientHello and cached. Trust is the proxy's: Mozilla's roots,
//! the system's, `--upstream-ca` files; `--insecure-upstream` turns verification off.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

use boring::ssl::{
    CertificateCompressionAlgorithm, CertificateCompressor, SslConnector, SslMethod, SslOptions,
    SslSignatureAlgorithm, SslVerifyMode, SslVersion,
};
use boring::x509::store::X509StoreBuilder;
use boring::x509::X509;
use proxy::hello::{ext, is_grease};
use proxy::upstream::{HandshakeError, HandshakeFuture, TlsConnected};
use proxy::{ClientHello, TlsBackend, UpstreamConfig};
use tokio::net::TcpStream;

mod ffi;

/// A backend that could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum BoringError {
    /// A CA file could not be read.
    #[error("--upstream-ca {path}: {detail}")]
    UpstreamCa {
        /// The file.
        path: String,
        /// Why.
        detail: String,
    },
    /// BoringSSL refused a setting.
    #[error("BoringSSL: {0}")]
    Ssl(#[from] boring::error::ErrorStack),
}

/// BoringSSL origin connections mirroring the browser's ClientHello.
pub struct BoringBackend {
    roots: Vec<X509>,
    insecure: bool,
    /// Connectors by the hello they present.
    connectors: Mutex<HashMap<Arc<ClientHello>, SslConnector>>,
    chrome: Arc<ClientHello>,
}

impl BoringBackend {
    /// Load the trust roots of `cfg`: Mozilla's, the system's (`system_roots`), `extra_ca_files`.
    pub fn new(cfg: &UpstreamConfig) -> Result<Self, BoringError> {
        let mut roots = Vec::new();
        let trusted = proxy::upstream::trust_roots(cfg).map_err(|e| match e {
            proxy::ServeError::UpstreamCa { path, detail } => BoringError::UpstreamCa { path, detail },
            other => BoringError::UpstreamCa { path: String::new(), detail: other.to_string() },
        })?;
        for r in trusted {
            match (X509::from_der(r.der.as_ref()), &r.file) {
                (Ok(c), _) => roots.push(c),
                (Err(e), Some(path)) => {
                    return Err(BoringError::UpstreamCa {
                        path: path.display().to_string(),
                        detail: e.to_string(),
                    })
                }
                // A built-in or system certificate BoringSSL cannot parse is left out.
                (Err(_), None) => {}
            }
        }
        let this = Self {
            roots,
            insecure: cfg.insecure,
            connectors: Mutex::new(HashMap::new()),
            chrome: Arc::new(ClientHello::chrome()),
        };
        // Fail at start, not on the first origin, if BoringSSL refuses Chrome's profile.
        this.connector(&this.chrome.clone())?;
        Ok(this)
    }

    fn connector(&self, hello: &Arc<ClientHello>) -> Result<SslConnector, BoringError> {
        let mut map = self.connectors.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = map.get(hello) {
            return Ok(c.clone());
        }
        let c = build_connector(hello, &self.roots, self.insecure)?;
        map.insert(hello.clone(), c.clone());
        Ok(c)
    }
}

/// BoringSSL's names for the TLS 1.2 suites browsers offer (TLS 1.3 suites are not configurable).
fn cipher_name(id: u16) -> Option<&'static str> {
    Some(match id {
        0xc02b => "ECDHE-ECDSA-AES128-GCM-SHA256",
        0xc02f => "ECDHE-RSA-AES128-GCM-SHA256",
        0xc02c => "ECDHE-ECDSA-AES256-GCM-SHA384",
        0xc030 => "ECDHE-RSA-AES256-GCM-SHA384",
        0xcca9 => "ECDHE-ECDSA-CHACHA20-POLY1305",
        0xcca8 => "ECDHE-RSA-CHACHA20-POLY1305",
        0xc009 => "ECDHE-ECDSA-AES128-SHA",
        0xc00a => "ECDHE-ECDSA-AES256-SHA",
        0xc013 => "ECDHE-RSA-AES128-SHA",
        0xc014 => "ECDHE-RSA-AES256-SHA",
        0x009c => "AES128-GCM-SHA256",
        0x009d => "AES256-GCM-SHA384",
        0x002f => "AES128-SHA",
        0x0035 => "AES256-SHA",
        0x000a => "DES-CBC3-SHA",
        _ => return None,
    })
}

/// BoringSSL's names for the groups browsers offer.
fn group_name(id: u16) -> Option<&'static str> {
    Some(match id {
        0x11ec => "X25519MLKEM768",
        0x6399 => "X25519Kyber768Draft00",
        0x001d => "X25519",
        0x0017 => "P-256",
        0x0018 => "P-384",
        0x0019 => "P-521",
        _ => return None,
    })
}

/// BoringSSL's names of the non-GREASE code points in `ids`, in order; the ones it lacks are noted in
/// `skipped` as `what 0x....`.
fn names(
    ids: impl Iterator<Item = u16>,
    name_of: fn(u16) -> Option<&'static str>,
    what: &str,
    skipped: &mut Vec<String>,
) -> Vec<&'static str> {
    ids.filter(|id| !is_grease(*id))
        .filter_map(|id| {
            let n = name_of(id);
            if n.is_none() {
                skipped.push(format!("{what} {id:#06x}"));
            }
            n
        })
        .collect()
}

/// The signature algorithms BoringSSL can verify.
fn sigalg_known(id: u16) -> bool {
    matches!(
        id,
        0x0401
            | 0x0501
            | 0x0601
            | 0x0403
            | 0x0503
            | 0x0603
            | 0x0804
            | 0x0805
            | 0x0806
            | 0x0807
            | 0x0201
            | 0x0904
            | 0x0905
            | 0x0906
    )
}

fn build_connector(h: &ClientHello, roots: &[X509], insecure: bool) -> Result<SslConnector, BoringError> {
    let mut b = SslConnector::builder(SslMethod::tls())?;
    let browser_like = h.is_browser();
    b.set_grease_enabled(h.ciphers.iter().any(|c| is_grease(*c)));
    // Chromium shuffles its extensions per connection; a fixed-order client is not shuffled.
    b.set_permute_extensions(browser_like && h.ciphers.iter().any(|c| is_grease(*c)));
    let versions: Vec<u16> = h.versions.iter().copied().filter(|v| !is_grease(*v)).collect();
    let max = if versions.contains(&0x0304) || versions.is_empty() {
        SslVersion::TLS1_3
    } else {
        SslVersion::TLS1_2
    };
    let min = if versions.contains(&0x0303) || versions.is_empty() {
        SslVersion::TLS1_2
    } else {
        SslVersion::TLS1_3
    };
    b.set_min_proto_version(Some(min))?;
    b.set_max_proto_version(Some(max))?;
    let mut skipped: Vec<String> = Vec::new();
    let tls12 = h.ciphers.iter().copied().filter(|c| !(0x1301..=0x1303).contains(c));
    let ciphers = names(tls12, cipher_name, "cipher", &mut skipped);
    if !ciphers.is_empty() {
        b.set_cipher_list(&ciphers.join(":"))?;
    }
    let groups = names(h.groups.iter().copied(), group_name, "group", &mut skipped);
    if !groups.is_empty() {
        b.set_curves_list(&groups.join(":"))?;
    }
    let sigalgs: Vec<SslSignatureAlgorithm> = h
        .sigalgs
        .iter()
        .copied()
        .filter(|s| !is_grease(*s))
        .filter(|s| {
            let k = sigalg_known(*s);
            if !k {
                skipped.push(format!("signature algorithm {s:#06x}"));
            }
            k
        })
        .map(SslSignatureAlgorithm::from)
        .collect();
    if !sigalgs.is_empty() {
        b.set_verify_algorithm_prefs(&sigalgs)?;
    }
    if h.extensions.contains(&ext::STATUS_REQUEST) {
        b.enable_ocsp_stapling();
    }
    if h.extensions.contains(&ext::SCT) {
        b.enable_signed_cert_timestamps();
    }
    if !h.extensions.contains(&ext::SESSION_TICKET) {
        b.set_options(SslOptions::NO_TICKET);
    }
    for alg in &h.cert_compression {
        match *alg {
            1 => b.add_certificate_compression_algorithm(Zlib)?,
            2 => b.add_certificate_compression_algorithm(Brotli)?,
            other => skipped.push(format!("certificate compression {other}")),
        }
    }
    if let Some(ids) = &h.trust_anchors {
        ffi::set_requested_trust_anchors(&mut b, ids)?;
    }
    if insecure {
        b.set_verify(SslVerifyMode::NONE);
    } else {
        let mut store = X509StoreBuilder::new()?;
        for r in roots {
            // Duplicates (a root both in Mozilla's and the system's list) are refused: harmless.
            let _ = store.add_cert(r.clone());
        }
        b.set_verify_cert_store(store.build())?;
        b.set_verify(SslVerifyMode::PEER);
    }
    if !skipped.is_empty() {
        tracing::debug!(
            "upstream TLS: BoringSSL cannot present {} of the browser's ClientHello",
            skipped.join(", ")
        );
    }
    Ok(b.build())
}

/// Certificates compressed with brotli (RFC 8879), as Chromium accepts them.
struct Brotli;

impl CertificateCompressor for Brotli {
    const ALGORITHM: CertificateCompressionAlgorithm = CertificateCompressionAlgorithm::BROTLI;
    const CAN_COMPRESS: bool = false;
    const CAN_DECOMPRESS: bool = true;

    fn decompress<W: Write>(&self, input: &[u8], output: &mut W) -> std::io::Result<()> {
        let mut r = brotli::Decompressor::new(input, 4096);
        std::io::copy(&mut r, output).map(drop)
    }
}

/// Certificates compressed with zlib (RFC 8879).
struct Zlib;

impl CertificateCompressor for Zlib {
    const ALGORITHM: CertificateCompressionAlgorithm = CertificateCompressionAlgorithm::ZLIB;
    const CAN_COMPRESS: bool = false;
    const CAN_DECOMPRESS: bool = true;

    fn decompress<W: Write>(&self, input: &[u8], output: &mut W) -> std::io::Result<()> {
        let mut out = Vec::new();
        flate2::read::ZlibDecoder::new(input).read_to_end(&mut out)?;
        output.write_all(&out)
    }
}

impl TlsBackend for BoringBackend {
    fn name(&self) -> &'static str {
        "boring"
    }

    fn mirrors(&self) -> bool {
        true
    }

    fn handshake(
        &self,
        tcp: TcpStream,
        host: String,
        alpn: Vec<String>,
        hello: Option<Arc<ClientHello>>,
    ) -> HandshakeFuture {
        let hello = hello.unwrap_or_else(|| self.chrome.clone());
        let connector = self.connector(&hello);
        let insecure = self.insecure;
        Box::pin(async move {
            let setup = |e: &dyn std::fmt::Display| HandshakeError::Setup(e.to_string());
            let connector = connector.map_err(|e| setup(&e))?;
            let mut cfg = connector.configure().map_err(|e| setup(&e))?;
            if insecure {
                cfg.set_verify_hostname(false);
            }
            let mut wire = Vec::new();
            for p in &alpn {
                wire.push(u8::try_from(p.len()).map_err(|_| setup(&"ALPN protocol too long"))?);
                wire.extend_from_slice(p.as_bytes());
            }
            cfg.set_alpn_protos(&wire).map_err(|e| setup(&e))?;
            for p in hello.alps.iter().filter(|p| alpn.contains(p)) {
                ffi::add_application_settings(&mut cfg, p.as_bytes(), hello.alps_new_codepoint())
                    .map_err(|e| setup(&e))?;
            }
            if hello.extensions.contains(&ext::ECH) {
                cfg.set_enable_ech_grease(true);
            }
            let tls = tokio_boring::connect(cfg, &host, tcp)
                .await
                .map_err(|e| HandshakeError::Origin(e.to_string()))?;
            let alpn = tls.ssl().selected_alpn_protocol().map(|p| String::from_utf8_lossy(p).into_owned());
            Ok(TlsConnected { io: Box::new(tls), alpn })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chrome_profile_and_odd_hellos_build() {
        let cfg = UpstreamConfig { system_roots: false, ..UpstreamConfig::default() };
        let b = BoringBackend::new(&cfg).unwrap();
        // A hello with code points BoringSSL lacks still builds (they are left out).
        let mut odd = ClientHello::chrome();
        odd.ciphers.push(0x1234);
        odd.groups.push(0x0100);
        odd.sigalgs.push(0x0999);
        odd.cert_compression.push(3);
        odd.extensions.retain(|e| *e != ext::SESSION_TICKET);
        b.connector(&Arc::new(odd)).unwrap();
        // A TLS 1.2-only, no-GREASE client.
        let old = ClientHello {
            ciphers: vec![0xc02f, 0x009c],
            versions: vec![],
            legacy_version: 0x0303,
            ..ClientHello::default()
        };
        b.connector(&Arc::new(old)).unwrap();
    }

    #[test]
    fn name_tables() {
        for id in
            [0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035]
        {
            assert!(cipher_name(id).is_some(), "{id:#x}");
        }
        for id in [0x11ec, 0x001d, 0x0017, 0x0018] {
            assert!(group_name(id).is_some(), "{id:#x}");
        }
        assert!(cipher_name(0x1301).is_none());
        assert!(group_name(0x0a0a).is_none());
    }
}
