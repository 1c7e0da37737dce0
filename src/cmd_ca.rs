//! `webfreeze ca init|show|export|install`.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context as _};
use proxy::CertificateAuthority;
use serde_json::json;

use crate::cli::{CaCmd, CertFormat};
use crate::config::Config;

pub(crate) fn run(cfg: &Config, cmd: CaCmd) -> anyhow::Result<()> {
    let dir = cfg.ca_dir();
    match cmd {
        CaCmd::Init { force } => {
            let ca = CertificateAuthority::init(&dir, force, now_utc())?;
            println!("created CA in {} (private key mode 0600)", dir.display());
            println!("SPKI sha256: {}", ca.info().spki_sha256);
            println!("trust it in a client with `webfreeze ca export --out webfreeze-ca.pem`");
        }
        CaCmd::Show { json: as_json } => {
            let ca = CertificateAuthority::load(&dir)?;
            let i = ca.info();
            if as_json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&json!({
                        "subject": i.subject, "spki_sha256": i.spki_sha256,
                        "not_before": i.not_before, "not_after": i.not_after,
                        "certificate": i.cert_path.display().to_string(),
                    }))?
                );
            } else {
                println!("subject      {}", i.subject);
                println!("spki sha256  {}", i.spki_sha256);
                println!("valid        {} .. {}", i.not_before, i.not_after);
                println!("certificate  {}", i.cert_path.display());
                println!("chromium     --ignore-certificate-errors-spki-list={}", i.spki_sha256);
            }
        }
        CaCmd::Install { nssdb } => {
            let ca = CertificateAuthority::load_or_init(&dir, now_utc())?;
            let db = match nssdb.filter(|p| !p.as_os_str().is_empty()) {
                Some(p) => p,
                None => std::env::var_os(crate::env_names::HOME)
                    .map(|h| Path::new(&h).join(".pki/nssdb"))
                    .context("HOME is not set; pass --nssdb DIR")?,
            };
            install_nssdb(&db, ca.info())?;
            println!(
                "trusted the webfreeze CA (SPKI sha256 {}) in the NSS database {}",
                ca.info().spki_sha256,
                db.display()
            );
        }
        CaCmd::Export { format, out } => {
            let ca = CertificateAuthority::load(&dir)?;
            let bytes = match format {
                CertFormat::Pem => ca.cert_pem().as_bytes().to_vec(),
                CertFormat::Der => ca.cert_der().to_vec(),
            };
            match out {
                Some(p) if p != Path::new("-") => {
                    std::fs::write(&p, &bytes).with_context(|| format!("cannot write {}", p.display()))?;
                    eprintln!("wrote the CA certificate (not the key) to {}", p.display());
                }
                _ => {
                    if matches!(format, CertFormat::Der) {
                        bail!("DER is binary: pass --out FILE");
                    }
                    use std::io::Write;
                    std::io::stdout().write_all(&bytes)?;
                }
            }
        }
    }
    Ok(())
}

#[allow(clippy::disallowed_methods)] // certificate validity needs the real time
fn now_utc() -> time::OffsetDateTime {
    time::OffsetDateTime::now_utc()
}

/// The nickname webfreeze's CA gets in an NSS database (one entry per install, replaced on reinstall).
const NSS_NICKNAME: &str = "webfreeze local CA";

/// Add the CA certificate to the NSS database `db` as a trusted TLS issuer with Debian's `certutil`
/// (libnss3-tools): NSS's database format is NSS's own, and certutil is the tool it documents for this.
fn install_nssdb(db: &Path, info: &proxy::CaInfo) -> anyhow::Result<()> {
    std::fs::create_dir_all(db).with_context(|| format!("cannot create {}", db.display()))?;
    let sql = format!("sql:{}", db.display());
    let certutil = |args: &[&str]| -> anyhow::Result<std::process::Output> {
        Command::new("certutil").args(args).output().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                anyhow::anyhow!("certutil not found: install it with `apt-get install -y libnss3-tools`")
            } else {
                anyhow::anyhow!("cannot run certutil: {e}")
            }
        })
    };
    if !db.join("cert9.db").exists() {
        let out = certutil(&["-N", "-d", &sql, "--empty-password"])?;
        if !out.status.success() {
            bail!(
                "certutil could not create the NSS database {}: {}",
                db.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
    }
    // An earlier install (perhaps of another CA after `ca init --force`): replace it. Absent is fine.
    let _ = certutil(&["-D", "-d", &sql, "-n", NSS_NICKNAME])?;
    let cert = info.cert_path.display().to_string();
    let out = certutil(&["-A", "-d", &sql, "-n", NSS_NICKNAME, "-t", "C,,", "-i", &cert])?;
    if !out.status.success() {
        bail!(
            "certutil could not add {} to {}: {}",
            cert,
            db.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}
