//! What a client's TLS ClientHello and HTTP/2 preface say about it, read from the bytes the proxy
//! terminates, so origin connections can present the same (see [`crate::upstream::TlsBackend`]).
//!
//! The parser is written here rather than taken from `tls-parser`: it is about a hundred bounds-checked
//! lines over the few fields a fingerprint needs, it must keep GREASE and unknown code points in their
//! order (a crate's typed enums fold them), and it also reassembles the ClientHello from TLS records for
//! the tunnel sniffing. It never panics on any input (fuzzed with the rest of the parsers).
//!
//! [`ClientHello::ja4`] is FoxIO's JA4 (TCP, version, SNI, counts, ALPN, hashed sorted ciphers, hashed
//! sorted extensions + signature algorithms), the fingerprint walls compare against a User-Agent.
//!
//! Size: ~450 lines of parser and fingerprint, then their table tests.

use sha2::{Digest, Sha256};

/// Extension code points the fingerprint cares about.
pub mod ext {
    /// server_name
    pub const SERVER_NAME: u16 = 0x0000;
    /// status_request (OCSP stapling)
    pub const STATUS_REQUEST: u16 = 0x0005;
    /// supported_groups
    pub const SUPPORTED_GROUPS: u16 = 0x000a;
    /// signature_algorithms
    pub const SIGNATURE_ALGORITHMS: u16 = 0x000d;
    /// application_layer_protocol_negotiation
    pub const ALPN: u16 = 0x0010;
    /// signed_certificate_timestamp
    pub const SCT: u16 = 0x0012;
    /// compress_certificate
    pub const COMPRESS_CERTIFICATE: u16 = 0x001b;
    /// session_ticket
    pub const SESSION_TICKET: u16 = 0x0023;
    /// supported_versions
    pub const SUPPORTED_VERSIONS: u16 = 0x002b;
    /// application_settings (ALPS), the code point Chromium used first
    pub const ALPS_OLD: u16 = 17513;
    /// application_settings (ALPS), the code point Chromium uses since 2024
    pub const ALPS_NEW: u16 = 17613;
    /// encrypted_client_hello (sent as GREASE when the site has no ECH config)
    pub const ECH: u16 = 0xfe0d;
    /// trust_anchors (draft-ietf-tls-trust-anchor-ids), sent by Chromium since 2025
    pub const TRUST_ANCHORS: u16 = 0xca34;
}

/// RFC 8701 GREASE values (0x0a0a, 0x1a1a, ... 0xfafa).
pub fn is_grease(v: u16) -> bool {
    (v & 0x0f0f) == 0x0a0a && (v >> 8) == (v & 0xff)
}

/// A ClientHello that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed TLS ClientHello: {0}")]
pub struct HelloError(pub &'static str);

/// The parts of a ClientHello that make its fingerprint, in the client's order (GREASE kept).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ClientHello {
    /// Cipher suites.
    pub ciphers: Vec<u16>,
    /// Extension types.
    pub extensions: Vec<u16>,
    /// The server name, if sent.
    pub sni: Option<String>,
    /// ALPN protocols.
    pub alpn: Vec<String>,
    /// ALPS protocols (application_settings, either code point).
    pub alps: Vec<String>,
    /// Supported groups (key exchange).
    pub groups: Vec<u16>,
    /// Signature algorithms.
    pub sigalgs: Vec<u16>,
    /// Supported versions (TLS 1.3's extension).
    pub versions: Vec<u16>,
    /// Certificate compression algorithms (1 zlib, 2 brotli, 3 zstd).
    pub cert_compression: Vec<u16>,
    /// The trust anchor IDs requested (the extension's list, without its length), if sent.
    pub trust_anchors: Option<Vec<u8>>,
    /// The legacy version field of the hello.
    pub legacy_version: u16,
}

struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], HelloError> {
        if self.b.len() < n {
            return Err(HelloError("truncated"));
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }
    fn u8(&mut self) -> Result<u8, HelloError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, HelloError> {
        let s = self.take(2)?;
        Ok(u16::from_be_bytes([s[0], s[1]]))
    }
    fn u24(&mut self) -> Result<usize, HelloError> {
        let s = self.take(3)?;
        Ok((usize::from(s[0]) << 16) | (usize::from(s[1]) << 8) | usize::from(s[2]))
    }
    fn vec8(&mut self) -> Result<Reader<'a>, HelloError> {
        let n = usize::from(self.u8()?);
        Ok(Reader { b: self.take(n)? })
    }
    fn vec16(&mut self) -> Result<Reader<'a>, HelloError> {
        let n = usize::from(self.u16()?);
        Ok(Reader { b: self.take(n)? })
    }
    fn u16s(mut self) -> Result<Vec<u16>, HelloError> {
        if !self.b.len().is_multiple_of(2) {
            return Err(HelloError("odd-length list of 16-bit values"));
        }
        let mut v = Vec::with_capacity(self.b.len() / 2);
        while !self.b.is_empty() {
            v.push(self.u16()?);
        }
        Ok(v)
    }
    fn protocols(mut self) -> Result<Vec<String>, HelloError> {
        let mut list = self.vec16()?;
        let mut v = Vec::new();
        while !list.b.is_empty() {
            let p = list.vec8()?;
            v.push(String::from_utf8_lossy(p.b).into_owned());
        }
        Ok(v)
    }
}

/// Largest ClientHello reassembled from records (Chromium's with post-quantum key shares is ~1.8 KiB).
pub const MAX_HELLO: usize = 64 * 1024;

/// How many bytes of TLS records the ClientHello at the start of `buf` needs: `Ok(None)` when `buf`
/// holds it whole, `Ok(Some(n))` when at least `n` more bytes are needed.
pub fn hello_needs(buf: &[u8]) -> Result<Option<usize>, HelloError> {
    match reassemble(buf) {
        Ok(_) => Ok(None),
        Err(Need::More(n)) => Ok(Some(n)),
        Err(Need::Bad(e)) => Err(e),
    }
}

enum Need {
    More(usize),
    Bad(HelloError),
}

/// The handshake message bytes of the first ClientHello in `buf`, joined across records.
fn reassemble(buf: &[u8]) -> Result<Vec<u8>, Need> {
    let mut hs = Vec::new();
    let mut at = 0usize;
    loop {
        if hs.len() >= 4 {
            let want = 4 + ((usize::from(hs[1]) << 16) | (usize::from(hs[2]) << 8) | usize::from(hs[3]));
            if want > MAX_HELLO {
                return Err(Need::Bad(HelloError("ClientHello larger than 64 KiB")));
            }
            if hs.len() >= want {
                hs.truncate(want);
                return Ok(hs);
            }
        }
        let head = buf.get(at..at + 5).ok_or_else(|| Need::More(at + 5 - buf.len()))?;
        if head[0] != 0x16 {
            return Err(Need::Bad(HelloError("not a handshake record")));
        }
        let len = usize::from(u16::from_be_bytes([head[3], head[4]]));
        if len == 0 || len > 16384 + 2048 {
            return Err(Need::Bad(HelloError("bad record length")));
        }
        let body = buf.get(at + 5..at + 5 + len).ok_or_else(|| Need::More(at + 5 + len - buf.len()))?;
        hs.extend_from_slice(body);
        at += 5 + len;
        if hs.first().is_some_and(|t| *t != 1) {
            return Err(Need::Bad(HelloError("first handshake message is not a ClientHello")));
        }
    }
}

impl ClientHello {
    /// Read the ClientHello from the TLS records at the start of `buf`.
    pub fn from_records(buf: &[u8]) -> Result<Self, HelloError> {
        match reassemble(buf) {
            Ok(hs) => Self::from_handshake(&hs),
            Err(Need::More(_)) => Err(HelloError("truncated")),
            Err(Need::Bad(e)) => Err(e),
        }
    }

    /// Read a ClientHello handshake message (type, 24-bit length, body).
    pub fn from_handshake(hs: &[u8]) -> Result<Self, HelloError> {
        let mut r = Reader { b: hs };
        if r.u8()? != 1 {
            return Err(HelloError("not a ClientHello"));
        }
        let len = r.u24()?;
        let mut r = Reader { b: r.take(len)? };
        let mut h = ClientHello { legacy_version: r.u16()?, ..Default::default() };
        r.take(32)?; // random
        r.vec8()?; // session id
        h.ciphers = r.vec16()?.u16s()?;
        r.vec8()?; // compression methods
        if r.b.is_empty() {
            return Ok(h);
        }
        let mut exts = r.vec16()?;
        while !exts.b.is_empty() {
            let t = exts.u16()?;
            let mut body = exts.vec16()?;
            h.extensions.push(t);
            match t {
                ext::SERVER_NAME => {
                    let mut list = body.vec16()?;
                    while !list.b.is_empty() {
                        let kind = list.u8()?;
                        let name = list.vec16()?;
                        if kind == 0 && h.sni.is_none() {
                            h.sni = Some(String::from_utf8_lossy(name.b).into_owned());
                        }
                    }
                }
                ext::ALPN => h.alpn = body.protocols()?,
                ext::ALPS_OLD | ext::ALPS_NEW => h.alps = body.protocols()?,
                ext::SUPPORTED_GROUPS => h.groups = body.vec16()?.u16s()?,
                ext::SIGNATURE_ALGORITHMS => h.sigalgs = body.vec16()?.u16s()?,
                ext::SUPPORTED_VERSIONS => h.versions = body.vec8()?.u16s()?,
                ext::COMPRESS_CERTIFICATE => h.cert_compression = body.vec8()?.u16s()?,
                ext::TRUST_ANCHORS => h.trust_anchors = Some(body.vec16()?.b.to_vec()),
                _ => {}
            }
        }
        Ok(h)
    }

    /// The ClientHello of Chromium 156 (Debian's, measured 2026-11-24: JA4
    /// `t13d1517h2_8daaf6152771_cb7bf5808d99`): what origins see when the client presented nothing to
    /// mirror (plain HTTP to the proxy, or a non-browser TLS client). GREASE values are placeholders; the TLS
    /// stack draws its own.
    pub fn chrome() -> Self {
        let g = 0x0a0a;
        Self {
            ciphers: vec![
                g, 0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc013, 0xc014,
                0x009c, 0x009d, 0x002f, 0x0035,
            ],
            extensions: vec![
                g,
                0x0000,
                0x0005,
                0x000a,
                0x000b,
                0x000d,
                0x0010,
                0x0012,
                0x0017,
                0x001b,
                0x0023,
                0x002b,
                0x002d,
                0x0033,
                ext::ALPS_NEW,
                ext::TRUST_ANCHORS,
                ext::ECH,
                0xff01,
                g,
            ],
            sni: None,
            alpn: vec!["h2".into(), "http/1.1".into()],
            alps: vec!["h2".into()],
            groups: vec![g, 0x11ec, 0x001d, 0x0017, 0x0018],
            sigalgs: vec![
                g, 0x0904, 0x0905, 0x0906, 0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601,
            ],
            versions: vec![g, 0x0304, 0x0303],
            cert_compression: vec![2],
            trust_anchors: Some(CHROME_TRUST_ANCHORS.to_vec()),
            legacy_version: 0x0303,
        }
    }

    /// Whether the hello has the marks of a browser's TLS stack (GREASE, or certificate compression),
    /// which OpenSSL-, Go- and rustls-based clients do not send. Only such a hello is mirrored upstream.
    pub fn is_browser(&self) -> bool {
        self.ciphers.iter().any(|c| is_grease(*c))
            || self.extensions.iter().any(|e| is_grease(*e))
            || self.extensions.contains(&ext::COMPRESS_CERTIFICATE)
    }

    /// The hello as a profile to present: what is drawn per connection left out, so that every
    /// connection of one browser gives the same profile (one pool, one TLS context): GREASE values become
    /// 0x0a0a, the server name is dropped (each origin gets its own), and the extension order is sorted
    /// when the client permutes it (Chromium does, per connection; the backend permutes too).
    pub fn canonical(mut self) -> Self {
        let g = |v: &mut Vec<u16>| v.iter_mut().filter(|x| is_grease(**x)).for_each(|x| *x = 0x0a0a);
        for v in
            [&mut self.ciphers, &mut self.extensions, &mut self.groups, &mut self.sigalgs, &mut self.versions]
        {
            g(v);
        }
        if self.ciphers.contains(&0x0a0a) {
            self.extensions.sort_unstable();
        }
        self.sni = None;
        self
    }

    /// Whether ALPS is sent with the newer code point.
    pub fn alps_new_codepoint(&self) -> bool {
        self.extensions.contains(&ext::ALPS_NEW)
    }

    /// FoxIO's JA4 fingerprint (`t13d1517h2_8daaf6152771_cb7bf5808d99` for Chromium 156).
    pub fn ja4(&self) -> String {
        let version =
            self.versions.iter().copied().filter(|v| !is_grease(*v)).max().unwrap_or(self.legacy_version);
        let v = match version {
            0x0304 => "13",
            0x0303 => "12",
            0x0302 => "11",
            0x0301 => "10",
            _ => "00",
        };
        let ciphers: Vec<u16> = self.ciphers.iter().copied().filter(|c| !is_grease(*c)).collect();
        let exts: Vec<u16> = self.extensions.iter().copied().filter(|e| !is_grease(*e)).collect();
        let alpn = match self.alpn.first().map(|a| a.as_bytes()) {
            Some([]) | None => "00".to_string(),
            Some(a) => {
                let (f, l) = (a[0] as char, a[a.len() - 1] as char);
                if f.is_ascii_alphanumeric() && l.is_ascii_alphanumeric() {
                    format!("{f}{l}")
                } else {
                    format!("{:x}{:x}", a[0] >> 4, a[a.len() - 1] & 0xf)
                }
            }
        };
        let a = format!(
            "t{v}{}{:02}{:02}{alpn}",
            if self.sni.is_some() { 'd' } else { 'i' },
            ciphers.len().min(99),
            exts.len().min(99)
        );
        let hex = |v: &[u16]| v.iter().map(|x| format!("{x:04x}")).collect::<Vec<_>>().join(",");
        let mut sorted = ciphers.clone();
        sorted.sort_unstable();
        let b = short_hash(&hex(&sorted));
        let mut e: Vec<u16> =
            exts.into_iter().filter(|e| *e != ext::SERVER_NAME && *e != ext::ALPN).collect();
        e.sort_unstable();
        let sig: Vec<u16> = self.sigalgs.iter().copied().filter(|s| !is_grease(*s)).collect();
        let c_in = if sig.is_empty() { hex(&e) } else { format!("{}_{}", hex(&e), hex(&sig)) };
        let c = short_hash(&c_in);
        format!("{a}_{b}_{c}")
    }
}

/// The trust anchor IDs Chromium 156 requests (its extension body, without the list length).
const CHROME_TRUST_ANCHORS: &[u8] = &[
    0x05, 0x82, 0xdf, 0x13, 0x02, 0x01, 0x05, 0x82, 0xdf, 0x13, 0x02, 0x06, 0x05, 0x82, 0xdf, 0x13, 0x02,
    0x0d, 0x05, 0x82, 0xdf, 0x13, 0x02, 0x0e, 0x05, 0x82, 0xdf, 0x13, 0x02, 0x0f, 0x05, 0x82, 0xdf, 0x13,
    0x02, 0x12, 0x05, 0x82, 0xdf, 0x13, 0x02, 0x13, 0x05, 0x82, 0xdf, 0x13, 0x02, 0x14, 0x08, 0x83, 0x9a,
    0x64, 0x8c, 0x9b, 0x2d, 0x01, 0x07, 0x08, 0x83, 0x9a, 0x64, 0x8c, 0x9b, 0x2d, 0x01, 0x08, 0x08, 0x83,
    0x9a, 0x64, 0x8c, 0x9b, 0x2d, 0x01, 0x09, 0x08, 0x83, 0x9a, 0x64, 0x8c, 0x9b, 0x2d, 0x01, 0x0a, 0x08,
    0x83, 0x9a, 0x64, 0x8c, 0x9b, 0x2d, 0x01, 0x0b, 0x08, 0x83, 0x9a, 0x64, 0x8c, 0x9b, 0x2d, 0x01, 0x0c,
    0x08, 0x83, 0x9a, 0x64, 0x8c, 0x9b, 0x2d, 0x01, 0x0d, 0x08, 0x83, 0x9a, 0x64, 0x8c, 0x9b, 0x2d, 0x01,
    0x12, 0x08, 0x83, 0x9a, 0x64, 0x8c, 0x9b, 0x2d, 0x01, 0x13, 0x04, 0xd6, 0x79, 0x09, 0x01, 0x04, 0xd6,
    0x79, 0x09, 0x04, 0x04, 0xd6, 0x79, 0x09, 0x05, 0x04, 0xd6, 0x79, 0x09, 0x06, 0x04, 0xd6, 0x79, 0x09,
    0x07, 0x04, 0xd6, 0x79, 0x09, 0x08, 0x04, 0xd6, 0x79, 0x09, 0x0a, 0x04, 0xd6, 0x79, 0x09, 0x0b, 0x04,
    0xd6, 0x79, 0x09, 0x0c, 0x04, 0xd6, 0x79, 0x09, 0x0d, 0x04, 0xd6, 0x79, 0x09, 0x0f,
];

fn short_hash(s: &str) -> String {
    if s.is_empty() {
        return "000000000000".into();
    }
    let d = Sha256::digest(s.as_bytes());
    d.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// The HTTP/2 connection preface's fingerprint: the client's SETTINGS (in order) and its first
/// connection WINDOW_UPDATE increment.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct H2Preface {
    /// SETTINGS as sent: (identifier, value).
    pub settings: Vec<(u16, u32)>,
    /// The connection-level WINDOW_UPDATE increment sent right after SETTINGS, if any.
    pub window_update: Option<u32>,
}

/// The client connection preface.
pub const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

impl H2Preface {
    /// Chromium's (measured on Chromium 156): `1:65536;2:0;4:6291456;6:262144|15663105`.
    pub fn chrome() -> Self {
        Self {
            settings: vec![(1, 65536), (2, 0), (4, 6_291_456), (6, 262_144)],
            window_update: Some(15_663_105),
        }
    }

    /// Read the preface, SETTINGS and an optional WINDOW_UPDATE from the start of `buf`. `Ok(None)`:
    /// more bytes are needed for the SETTINGS frame.
    pub fn parse(buf: &[u8]) -> Result<Option<Self>, HelloError> {
        let n = buf.len().min(H2_PREFACE.len());
        if buf[..n] != H2_PREFACE[..n] {
            return Err(HelloError("not an HTTP/2 connection preface"));
        }
        let frames = &buf[n..];
        if n < H2_PREFACE.len() || frames.len() < 9 {
            return Ok(None);
        }
        let len = (usize::from(frames[0]) << 16) | (usize::from(frames[1]) << 8) | usize::from(frames[2]);
        if frames[3] != 0x4 || !len.is_multiple_of(6) || len > 16384 {
            return Err(HelloError("the preface is not followed by SETTINGS"));
        }
        let Some(body) = frames.get(9..9 + len) else { return Ok(None) };
        let settings = body
            .chunks_exact(6)
            .map(|c| (u16::from_be_bytes([c[0], c[1]]), u32::from_be_bytes([c[2], c[3], c[4], c[5]])))
            .collect();
        let rest = &frames[9 + len..];
        let window_update = match rest.get(..13) {
            Some(f) if f[3] == 0x8 && f[5..9] == [0, 0, 0, 0] => {
                Some(u32::from_be_bytes([f[9], f[10], f[11], f[12]]) & 0x7fff_ffff)
            }
            _ => None,
        };
        Ok(Some(Self { settings, window_update }))
    }

    /// The value of a setting, if sent.
    pub fn get(&self, id: u16) -> Option<u32> {
        self.settings.iter().find(|(i, _)| *i == id).map(|(_, v)| *v)
    }

    /// The Akamai-style text `SETTINGS|WINDOW_UPDATE` (`1:65536;2:0;4:6291456;6:262144|15663105`).
    pub fn text(&self) -> String {
        let s: Vec<String> = self.settings.iter().map(|(k, v)| format!("{k}:{v}")).collect();
        format!("{}|{}", s.join(";"), self.window_update.unwrap_or(0))
    }
}

/// What a client presented: the ClientHello (when it spoke TLS to the proxy) and the h2 preface (when it
/// spoke h2). Origin connections present the same, or Chrome's when there is nothing to mirror.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ClientProfile {
    /// The browser's ClientHello, when it is a browser's ([`ClientHello::is_browser`]).
    pub hello: Option<ClientHello>,
    /// The browser's HTTP/2 preface, when it spoke h2.
    pub h2: Option<H2Preface>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ClientHello handshake message with the given pieces.
    fn hello(ciphers: &[u16], exts: &[(u16, Vec<u8>)]) -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend([7u8; 32]);
        body.push(0);
        body.extend(((ciphers.len() * 2) as u16).to_be_bytes());
        for c in ciphers {
            body.extend(c.to_be_bytes());
        }
        body.extend([1, 0]);
        let mut e = Vec::new();
        for (t, b) in exts {
            e.extend(t.to_be_bytes());
            e.extend((b.len() as u16).to_be_bytes());
            e.extend(b);
        }
        body.extend((e.len() as u16).to_be_bytes());
        body.extend(e);
        let mut hs = vec![1];
        hs.extend(&(body.len() as u32).to_be_bytes()[1..]);
        hs.extend(body);
        hs
    }

    fn list16(v: &[u16]) -> Vec<u8> {
        let mut b = ((v.len() * 2) as u16).to_be_bytes().to_vec();
        for x in v {
            b.extend(x.to_be_bytes());
        }
        b
    }

    fn protos(p: &[&str]) -> Vec<u8> {
        let mut l = Vec::new();
        for s in p {
            l.push(s.len() as u8);
            l.extend(s.as_bytes());
        }
        let mut b = (l.len() as u16).to_be_bytes().to_vec();
        b.extend(l);
        b
    }

    fn record(hs: &[u8], split: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for part in [&hs[..split], &hs[split..]] {
            if part.is_empty() {
                continue;
            }
            out.extend([0x16, 3, 1]);
            out.extend((part.len() as u16).to_be_bytes());
            out.extend(part);
        }
        out
    }

    /// The ClientHello Chromium 156 sends, as measured (extensions in one of its permuted orders).
    fn chromium() -> Vec<u8> {
        let mut sni = vec![];
        let name = b"shop.test";
        sni.extend(((name.len() + 3) as u16).to_be_bytes());
        sni.push(0);
        sni.extend((name.len() as u16).to_be_bytes());
        sni.extend(name);
        let ciphers = [
            0x2a2a, 0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc013, 0xc014,
            0x009c, 0x009d, 0x002f, 0x0035,
        ];
        let sigalgs = list16(&[
            0xbaba, 0x0904, 0x0905, 0x0906, 0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601,
        ]);
        let mut anchors = (CHROME_TRUST_ANCHORS.len() as u16).to_be_bytes().to_vec();
        anchors.extend(CHROME_TRUST_ANCHORS);
        hello(
            &ciphers,
            &[
                (0x3a3a, vec![]),
                (ext::SUPPORTED_GROUPS, list16(&[0x4a4a, 0x11ec, 0x001d, 0x0017, 0x0018])),
                (ext::SERVER_NAME, sni),
                (0x0017, vec![]),
                (ext::ALPS_NEW, protos(&["h2"])),
                (ext::SESSION_TICKET, vec![]),
                (ext::SIGNATURE_ALGORITHMS, sigalgs),
                (ext::STATUS_REQUEST, vec![1, 0, 0, 0, 0]),
                (ext::ALPN, protos(&["h2", "http/1.1"])),
                (0x000b, vec![1, 0]),
                (ext::SCT, vec![]),
                (0xff01, vec![0]),
                (0x002d, vec![1, 1]),
                (ext::SUPPORTED_VERSIONS, vec![6, 0x5a, 0x5a, 3, 4, 3, 3]),
                (ext::COMPRESS_CERTIFICATE, vec![2, 0, 2]),
                (ext::ECH, vec![0; 8]),
                (ext::TRUST_ANCHORS, anchors),
                (0x0033, vec![0, 0]),
                (0x1a1a, vec![0]),
            ],
        )
    }

    #[test]
    fn chromium_hello_gives_its_measured_ja4_in_any_record_split() {
        let hs = chromium();
        for split in [hs.len(), 1, 4, 100] {
            let rec = record(&hs, split);
            assert_eq!(hello_needs(&rec), Ok(None));
            for cut in [1, 5, 6, rec.len() - 1] {
                assert!(matches!(hello_needs(&rec[..cut]), Ok(Some(_))), "split {split} cut {cut}");
            }
            let h = ClientHello::from_records(&rec).unwrap();
            assert_eq!(h.ja4(), "t13d1517h2_8daaf6152771_cb7bf5808d99", "split {split}");
            assert_eq!(h.sni.as_deref(), Some("shop.test"));
            assert_eq!(h.alpn, ["h2", "http/1.1"]);
            assert_eq!(h.alps, ["h2"]);
            assert!(h.alps_new_codepoint());
            assert_eq!(h.cert_compression, [2]);
            assert_eq!(h.trust_anchors.as_deref(), Some(CHROME_TRUST_ANCHORS));
            assert!(h.is_browser());
            // The fixed profile is the same browser.
            assert_eq!(ClientHello::chrome().ja4(), h.ja4().replace("t13d", "t13i"));
        }
    }

    #[test]
    fn one_browser_gives_one_profile_whatever_its_grease_order_and_server_name() {
        let a = ClientHello::from_handshake(&chromium()).unwrap();
        let mut b = a.clone();
        b.ciphers[0] = 0x8a8a;
        b.extensions.reverse();
        b.sni = Some("other.test".into());
        assert_ne!(a, b);
        assert_eq!(a.clone().canonical(), b.canonical());
        assert_eq!(a.clone().canonical().ja4().replace("t13i", "t13d"), a.ja4());
    }

    #[test]
    fn bad_hellos_are_errors_not_panics() {
        let hs = chromium();
        let rec = record(&hs, hs.len());
        for (input, what) in [
            (b"GET / HTTP/1.1\r\n".to_vec(), "not a handshake record"),
            (vec![0x16, 3, 1, 0, 0], "bad record length"),
            ([&[0x16, 3, 1, 0, 4, 2, 0, 0, 0][..]].concat(), "first handshake message is not a ClientHello"),
            ([&[0x16, 3, 1, 0, 4, 1, 0xff, 0xff, 0xff][..]].concat(), "ClientHello larger than 64 KiB"),
        ] {
            assert_eq!(ClientHello::from_records(&input), Err(HelloError(what)), "{input:?}");
        }
        // Every prefix of a valid hello, and every single-byte corruption of it, parses or errors.
        for i in 0..rec.len() {
            let _ = ClientHello::from_records(&rec[..i]);
            let mut bad = rec.clone();
            bad[i] ^= 0xff;
            let _ = ClientHello::from_records(&bad);
        }
    }

    #[test]
    fn a_non_browser_hello_is_not_mirrored() {
        // rustls-like: no GREASE, no certificate compression.
        let hs = hello(&[0x1302, 0x1301], &[(ext::ALPN, protos(&["http/1.1"])), (0x002b, vec![2, 3, 4])]);
        let h = ClientHello::from_handshake(&hs).unwrap();
        assert!(!h.is_browser());
        assert!(h.ja4().starts_with("t13i0202h1_"), "{}", h.ja4());
    }

    #[test]
    fn grease_table() {
        for (v, g) in
            [(0x0a0a, true), (0xfafa, true), (0x1a1a, true), (0x0a1a, false), (0x1301, false), (0, false)]
        {
            assert_eq!(is_grease(v), g, "{v:#x}");
        }
    }

    #[test]
    fn h2_preface_table() {
        let mut chrome = H2_PREFACE.to_vec();
        chrome.extend([0, 0, 24, 4, 0, 0, 0, 0, 0]);
        for (k, v) in H2Preface::chrome().settings {
            chrome.extend(k.to_be_bytes());
            chrome.extend(v.to_be_bytes());
        }
        chrome.extend([0, 0, 4, 8, 0, 0, 0, 0, 0]);
        chrome.extend(15_663_105u32.to_be_bytes());
        let parsed = H2Preface::parse(&chrome).unwrap().unwrap();
        assert_eq!(parsed, H2Preface::chrome());
        assert_eq!(parsed.text(), "1:65536;2:0;4:6291456;6:262144|15663105");
        // SETTINGS complete, WINDOW_UPDATE not yet read: no increment.
        assert_eq!(H2Preface::parse(&chrome[..24 + 9 + 24]).unwrap().unwrap().window_update, None);
        for cut in [0, 10, 24, 30, 24 + 9 + 23] {
            assert_eq!(H2Preface::parse(&chrome[..cut]), Ok(None), "cut {cut}");
        }
        assert!(H2Preface::parse(b"GET / HTTP/1.1").is_err());
        let mut not_settings = H2_PREFACE.to_vec();
        not_settings.extend([0, 0, 0, 1, 0, 0, 0, 0, 1]);
        assert!(H2Preface::parse(&not_settings).is_err());
    }
}
