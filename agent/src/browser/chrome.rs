//! Finding Chromium, and the flags every agent browser starts with (the identity it presents, the proxy
//! and the CA pin).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::BrowserError;

/// Where to look for a browser when none is named.
pub const CANDIDATES: &[&str] = &[
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
    "/snap/bin/chromium",
];

/// Flags every agent browser gets (chromiumoxide takes them without leading dashes): no GPU, no QUIC (so
/// nothing bypasses the proxy), no first-run UI, as little background traffic as Chromium allows.
pub const CHROMIUM_ARGS: &[&str] = &[
    "disable-gpu",
    "disable-quic",
    "no-first-run",
    "disable-background-networking",
    "disable-component-update",
    "disable-sync",
    // Chromium's own calls home: network time, and the password leak check after a login form.
    "disable-features=NetworkTimeServiceQuerying,PasswordLeakDetection",
];

/// The flags that send a Chromium through a webfreeze proxy at `proxy` (HOST:PORT) and trust its CA by
/// SPKI hash (without leading dashes, as chromiumoxide takes them): the proxy for every scheme, loopback
/// included (Chromium bypasses loopback by default), and the pin. `webfreeze env` gives the same to other
/// harnesses.
pub fn proxy_args(proxy: &str, ca_spki: &str) -> [String; 3] {
    [
        format!("proxy-server=http://{proxy}"),
        "proxy-bypass-list=<-loopback>".to_string(),
        format!("ignore-certificate-errors-spki-list={ca_spki}"),
    ]
}

/// chromiumoxide's default switches (puppeteer's), less `enable-automation` and its `lang`: used in
/// their place when the browser does not disclose automation.
const QUIET_DEFAULT_ARGS: &[&str] = &[
    "disable-background-networking",
    "enable-features=NetworkService,NetworkServiceInProcess",
    "disable-background-timer-throttling",
    "disable-backgrounding-occluded-windows",
    "disable-breakpad",
    "disable-client-side-phishing-detection",
    "disable-component-extensions-with-background-pages",
    "disable-default-apps",
    "disable-dev-shm-usage",
    "disable-features=TranslateUI",
    "disable-hang-monitor",
    "disable-ipc-flooding-protection",
    "disable-popup-blocking",
    "disable-prompt-on-repost",
    "disable-renderer-backgrounding",
    "disable-sync",
    "force-color-profile=srgb",
    "metrics-recording-only",
    "no-first-run",
    "password-store=basic",
    "use-mock-keychain",
    "enable-blink-features=IdleDetection",
];

/// The switches that make a headless Chromium present itself as the Chromium it is: no
/// `enable-automation` (chromiumoxide's default, which sets `navigator.webdriver`), the
/// `AutomationControlled` Blink feature off, and the User-Agent a headed Chromium of the same version
/// sends (headless mode says `HeadlessChrome/N`; its `Sec-CH-UA` brands already say `Chromium`, and the
/// `--user-agent` switch keeps them and the header order, unlike a CDP override).
pub fn identity_args(chrome: &Path) -> Vec<String> {
    let mut v: Vec<String> = QUIET_DEFAULT_ARGS.iter().map(|s| s.to_string()).collect();
    v.push("disable-blink-features=AutomationControlled".into());
    if let Some(ua) = user_agent_of(chrome) {
        v.push(format!("user-agent={ua}"));
    }
    v
}

/// The User-Agent a headed Chromium at `chrome` sends (Chromium's reduced form, Linux), from its
/// `--version`; cached per binary.
pub fn user_agent_of(chrome: &Path) -> Option<String> {
    static CACHE: Mutex<BTreeMap<PathBuf, Option<String>>> = Mutex::new(BTreeMap::new());
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    cache
        .entry(chrome.to_path_buf())
        .or_insert_with(|| {
            let out = std::process::Command::new(chrome).arg("--version").output().ok()?;
            let major = major_version(&String::from_utf8_lossy(&out.stdout))?;
            Some(format!(
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{major}.0.0.0 Safari/537.36"
            ))
        })
        .clone()
}

/// The major version in `chromium --version` output (`Chromium 156.0.8078.79 built on Debian ...`).
fn major_version(version: &str) -> Option<u32> {
    version
        .split_whitespace()
        .find_map(|w| w.split('.').next()?.parse::<u32>().ok().filter(|_| w.contains('.')))
}

/// Find the browser: an explicit path, else the first of [`CANDIDATES`] that exists.
pub fn find_chrome(explicit: Option<&Path>) -> Result<PathBuf, BrowserError> {
    if let Some(p) = explicit {
        return if p.exists() {
            Ok(p.to_path_buf())
        } else {
            Err(BrowserError::NotFound { looked: p.display().to_string() })
        };
    }
    CANDIDATES
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .ok_or_else(|| BrowserError::NotFound { looked: CANDIDATES.join(", ") })
}

/// What `<chrome> --version` prints (run.json records it), or "" when it says nothing.
pub fn browser_version(chrome: &Path) -> String {
    std::process::Command::new(chrome)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chromium_major_version_table() {
        for (out, want) in [
            ("Chromium 156.0.8078.79 built on Debian GNU/Linux 12 (bookworm)\n", Some(156)),
            ("Google Chrome 131.0.6778.85 \n", Some(131)),
            ("Chromium\n", None),
            ("", None),
        ] {
            assert_eq!(major_version(out), want, "{out:?}");
        }
    }

    #[test]
    fn identity_args_leave_out_automation() {
        let args = identity_args(Path::new("/nonexistent/chromium"));
        assert!(!args.iter().any(|a| a.contains("enable-automation")));
        assert!(args.iter().any(|a| a == "disable-blink-features=AutomationControlled"));
        // No binary, no version: no User-Agent switch rather than a wrong one.
        assert!(!args.iter().any(|a| a.starts_with("user-agent=")));
    }
}
