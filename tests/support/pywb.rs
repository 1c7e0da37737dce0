//! pywb (PyPI), the web-archive replay server users run, for the interop test: its collection manager
//! (`wb-manager`), its own CDXJ indexer and its server (`wayback`) on a free loopback port, killed on
//! drop. scripts/test.sh installs it and sets WEBFREEZE_TEST_PYWB (its directory) and
//! WEBFREEZE_TEST_PYTHON.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const INSTALL: &str =
    "~/.pyenv/versions/3.13.0/bin/python -m pip install --target DIR 'pywb==2.10.*' and set \
     WEBFREEZE_TEST_PYWB=DIR (scripts/test.sh does both)";

/// A pywb installation: runs its entry points with the install directory as a site directory (its
/// `.pth` files supply `distutils`, which Python 3.13 no longer ships).
pub(crate) struct Pywb {
    dir: PathBuf,
    python: PathBuf,
}

impl Pywb {
    pub(crate) fn find() -> Pywb {
        let dir = std::env::var_os("WEBFREEZE_TEST_PYWB").map(PathBuf::from).unwrap_or_else(|| {
            panic!("WEBFREEZE_TEST_PYWB is not set: the interop test needs pywb: {INSTALL}")
        });
        assert!(dir.join("pywb").is_dir(), "no pywb in {}: {INSTALL}", dir.display());
        let python = super::test_python();
        Pywb { dir, python }
    }

    /// `python -c` running `module.func()` with `argv`, in `cwd`.
    fn command(&self, cwd: &Path, module: &str, func: &str, argv: &[&str]) -> Command {
        let argv: Vec<String> = argv.iter().map(|a| format!("{a:?}")).collect();
        let code = format!(
            "import site, sys; site.addsitedir({dir:?}); sys.argv = [{argv}]; from {module} import {func}; sys.exit({func}())",
            dir = self.dir.display().to_string(),
            argv = argv.join(", "),
        );
        let mut c = Command::new(&self.python);
        c.arg("-c").arg(code).current_dir(cwd);
        c
    }

    /// `wb-manager ARGS` in `root`.
    pub(crate) fn manager(&self, root: &Path, args: &[&str]) -> Output {
        let mut argv = vec!["wb-manager"];
        argv.extend_from_slice(args);
        let out = self
            .command(root, "pywb.manager.manager", "main_wrap_exc", &argv)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}: {INSTALL}", self.python.display()));
        assert!(
            out.status.success(),
            "wb-manager {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// pywb's own CDXJ index of a WARC file (`cdx-indexer --cdxj`).
    pub(crate) fn index(&self, warc: &Path) -> String {
        let out = self
            .command(
                warc.parent().unwrap(),
                "pywb.indexer.cdxindexer",
                "main",
                &["cdx-indexer", "--cdxj", &warc.display().to_string()],
            )
            .output()
            .unwrap();
        assert!(out.status.success(), "cdx-indexer: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    /// `wayback` serving the collections under `root` on a free loopback port.
    pub(crate) fn serve(&self, root: &Path) -> Wayback {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = self
            .command(
                root,
                "pywb.apps.cli",
                "wayback",
                &["wayback", "-b", "127.0.0.1", "-p", &port.to_string(), "-d", &root.display().to_string()],
            )
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let w = Wayback { child, base: format!("http://127.0.0.1:{port}") };
        // A server coming up has no event to wait on: poll its port, with a deadline.
        let t0 = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(t0.elapsed() < Duration::from_secs(60), "pywb did not start on port {port}");
            std::thread::sleep(Duration::from_millis(100));
        }
        w
    }
}

/// A running `wayback` server.
pub(crate) struct Wayback {
    child: Child,
    pub base: String,
}

impl Drop for Wayback {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
