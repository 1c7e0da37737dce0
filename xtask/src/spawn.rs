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
