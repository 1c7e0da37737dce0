//! `webfreeze ca init|show|export`.

use std::path::Path;

use anyhow::{bail, Context as _};
use proxy::CertificateAuthority;
use serde_json::json;

use crate::cli::{CaCmd, CertFormat};
use crate::config::Config;

pub(crate) fn run(cfg: &Config, cmd: CaCmd) -> anyhow::Result<()> {
    let dir = cfg.ca_dir();
    match cmd {
        CaCmd::Init { force } => {
            #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
            let now = time::OffsetDateTime::now_utc();
            let ca = CertificateAuthority::init(&dir, force, now)?;
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
