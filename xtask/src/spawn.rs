//! Programs under test as child processes: one that announces `listening on ADDR` (the webfreeze binary,
//! the benches' peers), killed on drop. Its own room so the benches share it without depending on each
//! other.

use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A child process, killed (and reaped) when dropped.
pub(crate) struct Kill(pub(crate) Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start `bin ARGS --listen 127.0.0.1:0` with its own home, quiet logs, and wait for its address.
pub(crate) fn spawn_listening(bin: &Path, home: &Path, args: &[&str]) -> anyhow::Result<(Kill, SocketAddr)> {
    let child = Command::new(bin)
        .args(args)
        .args(["--listen", "127.0.0.1:0"])
        .env("WEBFREEZE_HOME", home)
        .env("RUST_LOG", "error")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    listening(child)
}

/// A child that prints `listening on ADDR` first: it (killed on drop) and ADDR.
pub(crate) fn listening(mut child: Child) -> anyhow::Result<(Kill, SocketAddr)> {
    let mut line = String::new();
    BufReader::new(child.stdout.take().ok_or_else(|| anyhow::anyhow!("no stdout"))?).read_line(&mut line)?;
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .ok_or_else(|| anyhow::anyhow!("bad first line {line:?}"))?
        .parse();
    // Killed on every path, a bad first line included.
    let kill = Kill(child);
    Ok((kill, addr?))
}

/// On SIGINT, SIGTERM or SIGHUP, every process this one started, and theirs (nginx, php-fpm and its
/// workers, MariaDB, Chromium and its helpers), gets SIGTERM before this one exits with the signal's
/// status. A normal end (or an error) drops each child's guard ([`Kill`], the applications' own); a
/// signal skips destructors, and a stopped bench used to leave its servers and browsers running.
pub(crate) fn end_descendants_on_signal() {
    let spawned = std::thread::Builder::new().name("signals".into()).spawn(|| {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
        rt.block_on(async {
            use tokio::signal::unix::{signal, SignalKind};
            let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
                signal(SignalKind::hangup()),
            ) else {
                return;
            };
            let status = tokio::select! {
                _ = int.recv() => 130,
                _ = term.recv() => 143,
                _ = hup.recv() => 129,
            };
            let pids = descendants(std::process::id(), &processes());
            eprintln!("xtask: stopped by a signal; ending {} processes it started", pids.len());
            for pid in pids {
                if let Some(p) = rustix::process::Pid::from_raw(pid as i32) {
                    let _ = rustix::process::kill_process(p, rustix::process::Signal::TERM);
                }
            }
            std::process::exit(status);
        });
    });
    if let Err(e) = spawned {
        eprintln!("xtask: cannot watch for signals ({e}): a stopped bench may leave its servers running");
    }
}

/// Every process's (pid, parent pid), from `/proc`.
fn processes() -> Vec<(u32, u32)> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| {
        let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        Some((pid, parent_of(&stat)?))
    })
    .collect()
}

/// The parent pid in a `/proc/PID/stat` line: the second field after the command name, which is in
/// parentheses and may hold spaces or parentheses itself.
fn parent_of(stat: &str) -> Option<u32> {
    stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

/// The descendants of `root` in `procs` ((pid, parent) pairs), parents before their children.
fn descendants(root: u32, procs: &[(u32, u32)]) -> Vec<u32> {
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for &(pid, parent) in procs {
            if parent == p && pid != root && !out.contains(&pid) {
                out.push(pid);
                frontier.push(pid);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descendants_are_found_through_every_generation() {
        // 1 -> 10 (xtask) -> 11 (nginx), 12 (php-fpm) -> 13 (worker); 20 is another's.
        let procs = [(10, 1), (11, 10), (12, 10), (13, 12), (20, 1), (21, 20)];
        let mut got = descendants(10, &procs);
        got.sort();
        assert_eq!(got, vec![11, 12, 13]);
        assert!(descendants(13, &procs).is_empty());
        assert_eq!(parent_of("42 (php-fpm: pool (www)) S 12 42 42 0"), Some(12));
        assert_eq!(parent_of("garbage"), None);
    }

    /// A real child and its own child are found from this process's `/proc`.
    #[test]
    fn a_real_grandchild_is_found() {
        // sh prints its child's pid once it has forked it: no waiting on time.
        let mut child = Command::new("sh")
            .args(["-c", "sleep 30 & echo $!; wait"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("sh runs");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped");
        BufReader::new(stdout).read_line(&mut line).expect("sh prints its child's pid");
        let grandchild: u32 = line.trim().parse().expect("a pid");
        let found = descendants(std::process::id(), &processes());
        let _ = rustix::process::kill_process(
            rustix::process::Pid::from_raw(grandchild as i32).expect("a pid"),
            rustix::process::Signal::TERM,
        );
        let _ = child.kill();
        let _ = child.wait();
        assert!(found.contains(&child.id()) && found.contains(&grandchild), "{found:?}");
    }
}
