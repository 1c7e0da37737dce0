//! The fingerprinting origin (`fingerprint_origin.py`): a TLS server on loopback that computes each
//! client's JA4 from its ClientHello and its HTTP/2 fingerprint from its preface and HEADERS frames, and,
//! as a bot wall, challenges clients whose fingerprint or User-Agent is not the expected browser's.
//! Needs `hpack` from PyPI: `$WEBFREEZE_TEST_HPACK` (scripts/test.sh installs it).

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::*;

pub(crate) struct FingerprintOrigin {
    child: Child,
    pub addr: std::net::SocketAddr,
    pub log: PathBuf,
    /// `--upstream-ca` and `--resolve` for `name` through webfreeze.
    pub reach: Vec<String>,
    pub name: String,
}

impl Drop for FingerprintOrigin {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn hpack_dir() -> PathBuf {
    let dir = std::env::var_os("WEBFREEZE_TEST_HPACK").map(PathBuf::from).unwrap_or_else(|| {
        panic!(
            "WEBFREEZE_TEST_HPACK is not set: the fingerprint origin needs hpack from PyPI. Install it with \
             `python3 -m pip install --target DIR 'hpack==4.*'` and set WEBFREEZE_TEST_HPACK=DIR (scripts/test.sh does)"
        )
    });
    assert!(dir.join("hpack").is_dir(), "no hpack package in WEBFREEZE_TEST_HPACK={}", dir.display());
    dir
}

impl FingerprintOrigin {
    /// Start it for `name` in `dir`; `wall`: the fingerprint to let through (JSON `{"ja4", "h2"}`).
    pub(crate) fn start(dir: &Path, name: &str, wall: Option<&serde_json::Value>) -> FingerprintOrigin {
        let tls = origin_tls(&[name], &[b"h2", b"http/1.1"]);
        let tag = format!("{name}-{}", wall.is_some());
        let (cert, key, ca, log) = (
            dir.join(format!("fp-{tag}-leaf.pem")),
            dir.join(format!("fp-{tag}-key.pem")),
            dir.join(format!("fp-{tag}-ca.pem")),
            dir.join(format!("fp-{tag}.jsonl")),
        );
        std::fs::write(&cert, &tls.leaf_pem).unwrap();
        std::fs::write(&key, &tls.key_pem).unwrap();
        std::fs::write(&ca, &tls.ca_pem).unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/fingerprint_origin.py");
        let mut cmd = Command::new(test_python());
        cmd.arg(&script).arg("--cert").arg(&cert).arg("--key").arg(&key).arg("--log").arg(&log);
        if let Some(w) = wall {
            let f = dir.join(format!("fp-{tag}-wall.json"));
            std::fs::write(&f, w.to_string()).unwrap();
            cmd.arg("--wall").arg(f);
        }
        let mut child = cmd
            .env("PYTHONPATH", hpack_dir())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", test_python().display()));
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let addr: std::net::SocketAddr = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("fingerprint origin said {line:?}"))
            .parse()
            .unwrap();
        let reach =
            strs(&["--upstream-ca", ca.to_str().unwrap(), "--resolve", &format!("{name}:443:{addr}")]);
        FingerprintOrigin { child, addr, log, reach, name: name.to_string() }
    }

    /// What it saw, one JSON object per request, in order.
    pub(crate) fn seen(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The request it saw for `path`.
    pub(crate) fn seen_for(&self, path: &str) -> serde_json::Value {
        self.seen()
            .into_iter()
            .find(|v| v["path"] == path)
            .unwrap_or_else(|| panic!("the origin saw no request for {path}: {:?}", self.seen()))
    }
}

/// Load `url` in a real headless Chromium (`--dump-dom`) with extra switches; the page's DOM.
pub(crate) fn chromium_dump(profile: &Path, url: &str, args: &[String]) -> String {
    let out = Command::new(chromium_path())
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-quic"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg("--dump-dom")
        .arg(url)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}
