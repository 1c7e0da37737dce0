//! A browser's profile directory, and the guarantee that no browser process outlives it.

/// A browser's profile directory. Chromium's processes (browser, zygotes, renderers, GPU) all carry it on
/// their command line; when a task's future is dropped mid-run (`--task-timeout`, Ctrl-C) the browser
/// handle only kills the main process, so on drop every process still naming the profile is killed
/// before the directory is removed. After a normal close there are none and this is a scan of `/proc`.
pub(crate) struct ProfileGuard(pub(crate) tempfile::TempDir);

impl ProfileGuard {
    pub(crate) fn path(&self) -> &std::path::Path {
        self.0.path()
    }

    /// The processes (other than this one) whose command line names the profile: the browser's tree.
    pub(crate) fn processes(&self) -> Vec<i32> {
        let needle = self.0.path().as_os_str().as_encoded_bytes().to_vec();
        let me = std::process::id();
        let Ok(procs) = std::fs::read_dir("/proc") else { return Vec::new() };
        procs
            .flatten()
            .filter_map(|e| {
                let pid = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok())?;
                let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
                (pid as u32 != me && cmd.windows(needle.len()).any(|w| w == needle.as_slice())).then_some(pid)
            })
            .collect()
    }

    /// The memory the browser's processes use together, KiB: the sum of their proportional set sizes
    /// (`Pss` in `/proc/PID/smaps_rollup`, which splits shared pages among their sharers, so the sum is
    /// not inflated by the zygote's pages), or of their resident sets where that file cannot be read.
    pub(crate) fn memory_kib(&self) -> u64 {
        self.processes().into_iter().map(process_memory_kib).sum()
    }
}

/// One process's PSS, else its RSS, KiB (0 once it is gone).
fn process_memory_kib(pid: i32) -> u64 {
    let field = |file: &str, key: &str| {
        std::fs::read_to_string(format!("/proc/{pid}/{file}")).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
    };
    field("smaps_rollup", "Pss:").or_else(|| field("status", "VmRSS:")).unwrap_or(0)
}

impl Drop for ProfileGuard {
    fn drop(&mut self) {
        for pid in self.processes() {
            if let Some(p) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_naming_the_profile_is_found_measured_and_killed_on_drop() {
        let guard = ProfileGuard(tempfile::tempdir().unwrap());
        assert!(guard.processes().is_empty());
        // A shell with the profile on its command line, waiting on its input (a builtin: no child process).
        let mut child = std::process::Command::new("sh")
            .args(["-c", "echo ready; read line"])
            .arg(guard.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The shell's first line: it runs (exec done), so its command line is its own.
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line)
            .unwrap();
        assert_eq!(line, "ready\n");
        assert_eq!(guard.processes(), vec![child.id() as i32]);
        assert!(guard.memory_kib() > 0);
        drop(guard);
        let status = child.wait().unwrap();
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(9), "killed on drop");
    }
}
