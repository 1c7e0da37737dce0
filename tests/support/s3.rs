//! A real S3-compatible server for one test: moto (`moto.server`, from PyPI, in memory) on a free
//! loopback port, killed on drop. scripts/test.sh installs it and sets WEBFREEZE_TEST_MOTO (its
//! directory) and WEBFREEZE_TEST_PYTHON.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) struct S3Server {
    child: Child,
    pub endpoint: String,
}

const INSTALL: &str =
    "~/.pyenv/versions/3.13.0/bin/python -m pip install --target DIR 'moto[server]==5.1.*' and set \
     WEBFREEZE_TEST_MOTO=DIR (scripts/test.sh does both)";

impl S3Server {
    pub(crate) fn start() -> S3Server {
        let dir = std::env::var_os("WEBFREEZE_TEST_MOTO")
            .map(PathBuf::from)
            .unwrap_or_else(|| panic!("WEBFREEZE_TEST_MOTO is not set: the S3 test needs moto: {INSTALL}"));
        assert!(dir.join("moto").is_dir(), "no moto in {}: {INSTALL}", dir.display());
        let python = super::test_python();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(&python)
            .args(["-m", "moto.server", "-H", "127.0.0.1", "-p", &port.to_string()])
            .env("PYTHONPATH", &dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}: {INSTALL}", python.display()));
        let s = S3Server { child, endpoint: format!("http://127.0.0.1:{port}") };
        // A server coming up has no event to wait on: poll its port, with a deadline.
        let t0 = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(t0.elapsed() < Duration::from_secs(30), "moto did not start on port {port}");
            std::thread::sleep(Duration::from_millis(100));
        }
        s
    }

    /// `curl` against the server (bucket creation, tampering with an object).
    pub(crate) fn curl(&self, args: &[&str]) -> std::process::Output {
        Command::new("curl")
            .args(["-sS", "-o", "/dev/null", "-w", "%{http_code}"])
            .args(args)
            .output()
            .unwrap()
    }

    pub(crate) fn create_bucket(&self, bucket: &str) {
        let out = self.curl(&["-X", "PUT", &format!("{}/{bucket}", self.endpoint)]);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "200", "creating bucket {bucket}");
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
