//! The `webfreeze` binary as a child process: spawned with its own WEBFREEZE_HOME, its `listening on ADDR`
//! line read, its stderr kept; one-shot CLI calls; the Chromium the tests use.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The `webfreeze` binary run as a child process.
pub(crate) struct Webfreeze {
    pub child: Child,
    pub addr: SocketAddr,
    pub home: PathBuf,
    pub stderr_path: PathBuf,
}

pub(crate) fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_webfreeze")
}

impl Webfreeze {
    /// Run `webfreeze ARGS --listen 127.0.0.1:0` with WEBFREEZE_HOME=home and wait for `listening on`.
    pub(crate) fn spawn(home: &Path, args: &[&str]) -> Webfreeze {
        Self::spawn_cmd(home, args, &[])
    }

    fn spawn_cmd(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Webfreeze {
        let stderr_path = home.join(format!(
            "stderr-{}.log",
            args.join("_").replace(['/', ':', '.'], "_").chars().take(60).collect::<String>()
        ));
        let stderr = std::fs::File::create(&stderr_path).unwrap();
        let mut child = Command::new(bin())
            .args(args)
            .args(["--listen", "127.0.0.1:0"])
            .env("WEBFREEZE_HOME", home)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let addr = line
            .strip_prefix("listening on ")
            .unwrap_or_else(|| {
                panic!(
                    "first line was {line:?}; stderr: {}",
                    std::fs::read_to_string(&stderr_path).unwrap_or_default()
                )
            })
            .trim()
            .parse()
            .unwrap();
        Webfreeze { child, addr, home: home.to_path_buf(), stderr_path }
    }

    /// Like [`Webfreeze::spawn`], with extra environment variables for the child.
    pub(crate) fn spawn_env(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Webfreeze {
        Self::spawn_cmd(home, args, env)
    }

    /// Like [`Webfreeze::spawn`], with extra owned arguments (e.g. from [`https_origin`]).
    pub(crate) fn spawn_with(home: &Path, args: &[&str], extra: &[String]) -> Webfreeze {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(extra.iter().map(String::as_str));
        Self::spawn(home, &all)
    }

    pub(crate) fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// Send a signal (INT, TERM) and wait for the exit status.
    pub(crate) fn signal_and_wait(&mut self, sig: &str) -> std::process::ExitStatus {
        Command::new("kill").args([&format!("-{sig}"), &self.child.id().to_string()]).status().unwrap();
        self.child.wait().unwrap()
    }

    /// Peak resident memory of the child (VmHWM), in KiB.
    pub(crate) fn peak_rss_kib(&self) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        s.lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    pub(crate) fn ca_pem_path(&self) -> PathBuf {
        self.home.join("ca/ca.pem")
    }
}

impl Drop for Webfreeze {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Run `webfreeze ARGS` to completion with WEBFREEZE_HOME=home.
pub(crate) fn run_cli(home: &Path, args: &[&str]) -> std::process::Output {
    Command::new(bin()).args(args).env("WEBFREEZE_HOME", home).output().unwrap()
}

/// Which Chromium to use: $WEBFREEZE_CHROME, else /usr/bin/chromium. A missing browser is an error
/// that says how to install it, never a skip.
pub(crate) fn chromium_path() -> PathBuf {
    let p = std::env::var_os("WEBFREEZE_CHROME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        p.exists(),
        "Chromium not found at {} : install it with `apt-get install -y chromium` (or set WEBFREEZE_CHROME)",
        p.display()
    );
    p
}

/// SIGKILL every process whose command line contains `pattern` (read from /proc); returns how many.
pub(crate) fn kill_matching(pattern: &str) -> usize {
    let me = std::process::id().to_string();
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !name.chars().all(|c| c.is_ascii_digit()) || name == me {
            continue;
        }
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            if String::from_utf8_lossy(&cmd).contains(pattern) {
                pids.push(name);
            }
        }
    }
    if !pids.is_empty() {
        let _ = Command::new("sh").arg("-c").arg(format!("kill -9 {}", pids.join(" "))).status();
    }
    pids.len()
}

/// Run the binary with WEBFREEZE_HOME=home and extra environment.
pub(crate) fn run_cli_env(home: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    Command::new(bin()).args(args).env("WEBFREEZE_HOME", home).envs(env.iter().copied()).output().unwrap()
}

/// The binary run off the async runtime (so in-process servers keep serving), timed on stderr.
pub(crate) async fn cli(home: &Path, args: Vec<String>, env: Vec<(String, String)>) -> std::process::Output {
    let home = home.to_path_buf();
    let t0 = std::time::Instant::now();
    let what = args.iter().take(6).cloned().collect::<Vec<_>>().join(" ");
    let _guard = Elapsed(t0, what);
    tokio::task::spawn_blocking(move || {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let e: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        run_cli_env(&home, &a, &e)
    })
    .await
    .unwrap()
}

/// Prints how long a CLI call took (shown with --nocapture, and on failure).
struct Elapsed(std::time::Instant, String);

impl Drop for Elapsed {
    fn drop(&mut self) {
        eprintln!("[{:>6.1}s] {}", self.0.elapsed().as_secs_f64(), self.1);
    }
}

pub(crate) fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The Python the tests run PyPI tools with (moto, pywb, llama-cpp-python): $WEBFREEZE_TEST_PYTHON, which
/// scripts/test.sh sets, else pyenv's 3.13.
pub(crate) fn test_python() -> PathBuf {
    std::env::var_os("WEBFREEZE_TEST_PYTHON").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".pyenv/versions/3.13.0/bin/python")
    })
}

/// Runs `tests/support/SCRIPT` under [`test_python`] with `args`, `stdin` written to it; its stdout. A
/// script that fails fails the test with its stderr.
pub(crate) fn python_script(script: &str, args: &[&str], stdin: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/support").join(script);
    let mut child = std::process::Command::new(test_python())
        .arg(&path)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // A script that fails before reading says why on stderr (checked below), not by a broken pipe.
    let _ = input.write_all(stdin);
    drop(input);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{script} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// The environment that runs a program `offset` ahead of (or behind) the real clock: libfaketime
/// (Debian's `faketime`), wall clock only (`CLOCK_MONOTONIC` stays real, so timers and timeouts do), with
/// the setting Chromium needs to run under it (`FAKETIME_FORCE_MONOTONIC_FIX=0`; without it, Chromium 156
/// hangs before its first page). `offset` is libfaketime's: `+1d`, `-2h`.
pub(crate) fn faketime_env(offset: &str) -> Vec<(String, String)> {
    let lib = Path::new("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1");
    assert!(
        lib.exists(),
        "{} is missing: install Debian's faketime (`apt-get install faketime`; scripts/test.sh does)",
        lib.display()
    );
    [
        ("LD_PRELOAD", lib.to_str().unwrap()),
        ("FAKETIME", offset),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
        ("FAKETIME_FORCE_MONOTONIC_FIX", "0"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// The trajectory of task `id` in run directory `run` (the test fails if there is none).
pub(crate) fn traj(run: &Path, id: &str) -> trajectory::Trajectory {
    trajectory::RunDir::new(run)
        .task(id)
        .read_trajectory()
        .unwrap()
        .unwrap_or_else(|| panic!("no trajectory for {id}"))
}
