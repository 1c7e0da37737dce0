//! The certificate authority: an ECDSA P-256 root made per install, and leaf certificates minted per host.
//!
//! Files in the CA directory: `ca.pem` (the certificate, shareable) and `ca.key` (the private key, created
//! with mode 0600; never exported, logged or copied into a snapshot). Leaves share one P-256 key per
//! process (minting is then one signature), are valid for the host's DNS name or IP, and are cached in a
//! bounded LRU of ready rustls server configurations.

use std::fs;
use std::io::Write;
use std::net::IpAddr;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
    KeyPair, KeyUsagePurpose, PublicKeyData, SanType,
};
use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use sha2::{Digest, Sha256};

const CERT_FILE: &str = "ca.pem";
const KEY_FILE: &str = "ca.key";
const BUNDLE_FILE: &str = "client-bundle.pem";
const CA_COMMON_NAME: &str = "webfreeze local CA";
/// How many hosts' leaf configurations are kept.
pub const LEAF_CACHE: usize = 1024;

/// CA errors.
#[derive(Debug, thiserror::Error)]
pub enum CaError {
    /// No CA exists yet in that directory.
    #[error("no CA in {0}; run `webfreeze ca init` (recording and replay also create one on first use)")]
    Missing(PathBuf),
    /// A CA exists and `--force` was not given.
    #[error("a CA exists already in {0}; pass --force to replace it (browsers trusting the old one must be updated)")]
    Exists(PathBuf),
    /// File access failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The key file is readable by others.
    #[error("{0} is readable by group or others; run `chmod 600 {0}` (the CA key must stay private)")]
    KeyPermissions(PathBuf),
    /// Certificate generation or parsing failed.
    #[error("certificate error: {0}")]
    Cert(String),
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> CaError {
    let context = context.into();
    move |source| CaError::Io { context, source }
}

fn cert_err(e: impl std::fmt::Display) -> CaError {
    CaError::Cert(e.to_string())
}

/// Public facts about the CA (what `webfreeze ca show` prints).
#[derive(Debug, Clone)]
pub struct CaInfo {
    /// Base64 SHA-256 of the certificate's SubjectPublicKeyInfo: the value for Chromium's
    /// `--ignore-certificate-errors-spki-list`.
    pub spki_sha256: String,
    /// Subject common name.
    pub subject: String,
    /// Validity start (RFC 3339).
    pub not_before: String,
    /// Validity end (RFC 3339).
    pub not_after: String,
    /// Path of the certificate file.
    pub cert_path: PathBuf,
}

/// A loaded CA that can mint leaf certificates.
pub struct CertificateAuthority {
    issuer: Issuer<'static, KeyPair>,
    cert_der: CertificateDer<'static>,
    cert_pem: String,
    info: CaInfo,
    leaf_key: KeyPair,
    leaves: Mutex<lru::LruCache<String, Arc<ServerConfig>>>,
}

impl std::fmt::Debug for CertificateAuthority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never prints key material.
        f.debug_struct("CertificateAuthority").field("subject", &self.info.subject).finish_non_exhaustive()
    }
}

fn fmt_time(t: time::OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

fn ca_params(not_before: time::OffsetDateTime) -> CertificateParams {
    let mut p = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, CA_COMMON_NAME);
    dn.push(DnType::OrganizationName, "webfreeze");
    p.distinguished_name = dn;
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.key_usages =
        vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    p.not_before = not_before;
    p.not_after = not_before + time::Duration::days(3650);
    p
}

/// Write `data` to `path` with mode 0600 from the first byte (never briefly world-readable).
fn write_private(path: &Path, data: &[u8]) -> Result<(), CaError> {
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension("key.tmp");
    let _ = fs::remove_file(&tmp);
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(io(format!("cannot create {}", tmp.display())))?;
    f.write_all(data).map_err(io(format!("cannot write {}", tmp.display())))?;
    f.sync_all().map_err(io(format!("cannot sync {}", tmp.display())))?;
    fs::rename(&tmp, path).map_err(io(format!("cannot write {}", path.display())))
}

impl CertificateAuthority {
    /// Create a new CA in `dir` (fails if one exists, unless `force`). `now` is the validity start.
    pub fn init(dir: &Path, force: bool, now: time::OffsetDateTime) -> Result<Self, CaError> {
        let cert_path = dir.join(CERT_FILE);
        let key_path = dir.join(KEY_FILE);
        if !force && (cert_path.exists() || key_path.exists()) {
            return Err(CaError::Exists(dir.to_path_buf()));
        }
        fs::create_dir_all(dir).map_err(io(format!("cannot create {}", dir.display())))?;
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o700));
        }
        let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).map_err(cert_err)?;
        // Back-date by a day so clocks that are slightly behind still accept it.
        let params = ca_params(now - time::Duration::days(1));
        let cert = params.self_signed(&key).map_err(cert_err)?;
        write_private(&key_path, key.serialize_pem().as_bytes())?;
        fs::write(&cert_path, cert.pem()).map_err(io(format!("cannot write {}", cert_path.display())))?;
        Self::load(dir)
    }

    /// Load the CA in `dir`, or create it if there is none (first use).
    pub fn load_or_init(dir: &Path, now: time::OffsetDateTime) -> Result<Self, CaError> {
        if dir.join(CERT_FILE).exists() && dir.join(KEY_FILE).exists() {
            Self::load(dir)
        } else {
            Self::init(dir, true, now)
        }
    }

    /// Load the CA in `dir`. Refuses a key file that group or others can read.
    pub fn load(dir: &Path) -> Result<Self, CaError> {
        let cert_path = dir.join(CERT_FILE);
        let key_path = dir.join(KEY_FILE);
        if !cert_path.exists() || !key_path.exists() {
            return Err(CaError::Missing(dir.to_path_buf()));
        }
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&key_path).map_err(io(format!("cannot stat {}", key_path.display())))?;
            if mode.permissions().mode() & 0o077 != 0 {
                return Err(CaError::KeyPermissions(key_path));
            }
        }
        let key_pem =
            fs::read_to_string(&key_path).map_err(io(format!("cannot read {}", key_path.display())))?;
        let cert_pem =
            fs::read_to_string(&cert_path).map_err(io(format!("cannot read {}", cert_path.display())))?;
        let key = KeyPair::from_pem(&key_pem).map_err(cert_err)?;
        let cert_der = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
            .next()
            .ok_or_else(|| CaError::Cert(format!("{} holds no certificate", cert_path.display())))?
            .map_err(|e| CaError::Cert(format!("{}: {e}", cert_path.display())))?;
        let spki =
            base64::engine::general_purpose::STANDARD.encode(Sha256::digest(key.subject_public_key_info()));
        let (_, parsed) = x509_parser::parse_x509_certificate(&cert_der)
            .map_err(|e| CaError::Cert(format!("{}: {e}", cert_path.display())))?;
        let subject = parsed
            .subject()
            .iter_common_name()
            .next()
            .and_then(|cn| cn.as_str().ok())
            .unwrap_or(CA_COMMON_NAME)
            .to_string();
        let info = CaInfo {
            spki_sha256: spki,
            subject,
            not_before: fmt_time(parsed.validity().not_before.to_datetime()),
            not_after: fmt_time(parsed.validity().not_after.to_datetime()),
            cert_path,
        };
        let issuer = Issuer::from_ca_cert_der(&cert_der, key).map_err(cert_err)?;
        let leaf_key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).map_err(cert_err)?;
        Ok(Self {
            issuer,
            cert_der,
            cert_pem,
            info,
            leaf_key,
            leaves: Mutex::new(lru::LruCache::new(
                NonZeroUsize::new(LEAF_CACHE).unwrap_or(NonZeroUsize::MIN),
            )),
        })
    }

    /// Public facts about the CA.
    pub fn info(&self) -> &CaInfo {
        &self.info
    }

    /// Write `client-bundle.pem` beside the CA certificate: the system's trusted roots followed by this
    /// CA's certificate (never the key), for clients that take one CA file (Python `requests` and `ssl`,
    /// curl, Node) and reach both the proxy and hosts it does not see (a model API). Rewritten on each
    /// call, atomically. Returns its path and how many system roots it holds.
    pub fn write_client_bundle(&self) -> Result<(PathBuf, usize), CaError> {
        let dir = self.info.cert_path.parent().map(Path::to_path_buf).unwrap_or_default();
        let path = dir.join(BUNDLE_FILE);
        let native = rustls_native_certs::load_native_certs();
        let mut out = String::new();
        for c in &native.certs {
            out.push_str(&pem::encode(&pem::Pem::new("CERTIFICATE", c.as_ref())));
        }
        out.push_str(&self.cert_pem);
        let tmp = dir.join(format!(".{BUNDLE_FILE}.tmp"));
        fs::write(&tmp, out).map_err(io(format!("cannot write {}", tmp.display())))?;
        fs::rename(&tmp, &path).map_err(io(format!("cannot write {}", path.display())))?;
        Ok((path, native.certs.len()))
    }

    /// The CA certificate in PEM.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// The CA certificate in DER.
    pub fn cert_der(&self) -> &CertificateDer<'static> {
        &self.cert_der
    }

    /// Mint (or fetch from the LRU) a TLS server configuration for `host`, offering ALPN h2 and
    /// http/1.1, serving the chain [leaf, CA].
    pub fn server_config(&self, host: &str) -> Result<Arc<ServerConfig>, CaError> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if let Ok(mut cache) = self.leaves.lock() {
            if let Some(c) = cache.get(&host) {
                return Ok(c.clone());
            }
        }
        let mut params = CertificateParams::default();
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, host.clone());
        params.distinguished_name = dn;
        params.subject_alt_names = vec![match host.trim_matches(['[', ']']).parse::<IpAddr>() {
            Ok(ip) => SanType::IpAddress(ip),
            Err(_) => SanType::DnsName(host.clone().try_into().map_err(cert_err)?),
        }];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.use_authority_key_identifier_extension = true;
        #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now - time::Duration::days(1);
        params.not_after = now + time::Duration::days(365);
        let leaf = params.signed_by(&self.leaf_key, &self.issuer).map_err(cert_err)?;
        let chain = vec![leaf.der().clone(), self.cert_der.clone()];
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.leaf_key.serialize_der()));
        let mut cfg = ServerConfig::builder_with_provider(crate::crypto_provider())
            .with_safe_default_protocol_versions()
            .map_err(cert_err)?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(cert_err)?;
        cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let cfg = Arc::new(cfg);
        if let Ok(mut cache) = self.leaves.lock() {
            cache.put(host, cfg.clone());
        }
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_writes_private_key_0600_and_refuses_to_overwrite() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        #[allow(clippy::disallowed_methods)]
        let now = time::OffsetDateTime::now_utc();
        let ca = CertificateAuthority::init(d.path(), false, now).unwrap();
        let mode = fs::metadata(d.path().join(KEY_FILE)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(matches!(CertificateAuthority::init(d.path(), false, now), Err(CaError::Exists(_))));
        let spki = ca.info().spki_sha256.clone();
        assert_eq!(base64::engine::general_purpose::STANDARD.decode(&spki).unwrap().len(), 32);
        // Reloading gives the same SPKI; --force makes a new one.
        assert_eq!(CertificateAuthority::load(d.path()).unwrap().info().spki_sha256, spki);
        let again = CertificateAuthority::init(d.path(), true, now).unwrap();
        assert_ne!(again.info().spki_sha256, spki);
        // A key readable by others is refused.
        fs::set_permissions(d.path().join(KEY_FILE), fs::Permissions::from_mode(0o644)).unwrap();
        assert!(matches!(CertificateAuthority::load(d.path()), Err(CaError::KeyPermissions(_))));
        // The certificate never contains the key.
        assert!(!ca.cert_pem().contains("PRIVATE KEY"));
    }

    #[test]
    fn leaves_for_names_and_ips_are_cached() {
        let d = tempfile::tempdir().unwrap();
        #[allow(clippy::disallowed_methods)]
        let ca = CertificateAuthority::init(d.path(), false, time::OffsetDateTime::now_utc()).unwrap();
        let a = ca.server_config("Example.TEST").unwrap();
        let b = ca.server_config("example.test").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        ca.server_config("127.0.0.1").unwrap();
        ca.server_config("[::1]").unwrap();
        assert_eq!(a.alpn_protocols, vec![b"h2".to_vec(), b"http/1.1".to_vec()]);
    }
}
