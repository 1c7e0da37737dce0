//! `webfreeze env`: how a client is told to use a running proxy, for harnesses that start their own
//! browsers and subprocesses (the Python package's `Proxy.env()` and `chromium_args()` read its JSON).

use std::collections::BTreeMap;
use std::net::SocketAddr;

use serde_json::json;

use crate::cli::{EnvArgs, EnvFormat};
use crate::config::{env, load_ca, Config};
use crate::usage::UsageError;

/// Hosts that never go through the proxy: loopback (chromedriver, a local model server, the harness's
/// own services).
const LOOPBACK: &[&str] = &["localhost", "127.0.0.1", "::1", "127.0.0.0/8"];

/// `--disable-features` for harness browsers: HTTPS-Upgrades would turn a recorded `http://` navigation
/// into an `https://` one the snapshot never saw; the rest as the agent's own browser.
const DISABLE_FEATURES: &str =
    "disable-features=HttpsUpgrades,NetworkTimeServiceQuerying,PasswordLeakDetection";

pub(crate) fn run(cfg: &Config, a: EnvArgs) -> anyhow::Result<()> {
    let addr: SocketAddr = a
        .proxy
        .parse()
        .map_err(|_| UsageError(format!("--proxy {:?} is not an IP:PORT address", a.proxy)))?;
    let ca = load_ca(cfg)?;
    let (bundle, _) = ca.write_client_bundle()?;
    let info = ca.info();
    let mut no_proxy: Vec<String> = LOOPBACK.iter().map(|s| s.to_string()).collect();
    let api = std::env::var(env::OPENAI_BASE_URL).ok().filter(|v| !v.is_empty());
    for h in a.no_proxy.iter().map(String::as_str).chain(api.as_deref()) {
        let h = host_or_value(h);
        if !h.is_empty() && !no_proxy.contains(&h) {
            no_proxy.push(h);
        }
    }
    let no_proxy = no_proxy.join(",");
    let proxy_url = format!("http://{addr}");
    let mut chromium_args: Vec<String> =
        agent::browser::proxy_args(&addr.to_string(), &info.spki_sha256).into_iter().collect();
    chromium_args.extend(["disable-quic".to_string(), DISABLE_FEATURES.to_string()]);
    let chromium_args: Vec<String> = chromium_args.into_iter().map(|a| format!("--{a}")).collect();
    let bundle_s = bundle.display().to_string();
    let cert_s = info.cert_path.display().to_string();
    let vars: BTreeMap<&str, &str> = [
        ("HTTP_PROXY", proxy_url.as_str()),
        ("HTTPS_PROXY", proxy_url.as_str()),
        ("http_proxy", proxy_url.as_str()),
        ("https_proxy", proxy_url.as_str()),
        ("NO_PROXY", no_proxy.as_str()),
        ("no_proxy", no_proxy.as_str()),
        // One file with the system roots and this CA: Python's ssl and requests, curl, OpenSSL.
        ("SSL_CERT_FILE", bundle_s.as_str()),
        ("REQUESTS_CA_BUNDLE", bundle_s.as_str()),
        ("CURL_CA_BUNDLE", bundle_s.as_str()),
        // Node adds this to its own roots (Playwright's driver, npm tools).
        ("NODE_EXTRA_CA_CERTS", cert_s.as_str()),
        // For launch wrappers in subprocesses (the Python package's process-wide mode).
        ("WEBFREEZE_PROXY", a.proxy.as_str()),
        ("WEBFREEZE_CA_SPKI", info.spki_sha256.as_str()),
    ]
    .into_iter()
    .collect();
    match a.format {
        EnvFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "proxy_url": proxy_url,
                "no_proxy": no_proxy,
                "ca_certificate": cert_s,
                "ca_bundle": bundle_s,
                "ca_spki_sha256": info.spki_sha256,
                "chromium_args": chromium_args,
                "env": vars,
            }))?
        ),
        EnvFormat::Shell => {
            for (k, v) in &vars {
                println!("export {k}={}", shell_quote(v));
            }
            println!("# Chromium: {}", chromium_args.join(" "));
        }
    }
    Ok(())
}

/// The host of a URL (`https://api.example.com/v1` -> `api.example.com`), or the value itself.
fn host_or_value(v: &str) -> String {
    match v.parse::<http::Uri>() {
        Ok(u) if u.scheme().is_some() => u.host().unwrap_or(v).trim_matches(['[', ']']).to_string(),
        _ => v.trim().to_string(),
    }
}

/// POSIX single-quoting.
fn shell_quote(v: &str) -> String {
    format!("'{}'", v.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_from_urls_and_names() {
        for (input, want) in [
            ("https://api.openai.com/v1", "api.openai.com"),
            ("http://127.0.0.1:8000/v1", "127.0.0.1"),
            ("http://[::1]:8000/v1", "::1"),
            ("models.internal", "models.internal"),
            (" spaced.example ", "spaced.example"),
        ] {
            assert_eq!(host_or_value(input), want, "{input}");
        }
    }

    #[test]
    fn shell_quoting_survives_quotes() {
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
