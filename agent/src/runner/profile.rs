//! The task's browser profile, and the guarantee that no browser process outlives its task.

/// The task's browser profile directory. Chromium's processes (browser, zygotes, renderers, GPU) all
/// carry it on their command line; when a task's future is dropped mid-run (`--task-timeout`, Ctrl-C)
/// the browser handle only kills the main process, so on drop every process still naming the profile
/// is killed before the directory is removed. After a normal close there are none and this is a scan
/// of `/proc`.
pub(crate) struct ProfileGuard(pub(crate) tempfile::TempDir);

impl ProfileGuard {
    pub(crate) fn path(&self) -> &std::path::Path {
        self.0.path()
    }
}

impl Drop for ProfileGuard {
    fn drop(&mut self) {
        let needle = self.0.path().as_os_str().as_encoded_bytes().to_vec();
        let me = std::process::id();
        let Ok(procs) = std::fs::read_dir("/proc") else { return };
        for e in procs.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
            if pid as u32 == me {
                continue;
            }
            let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else { continue };
            if cmd.windows(needle.len()).any(|w| w == needle.as_slice()) {
                if let Some(p) = rustix::process::Pid::from_raw(pid) {
                    let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
                }
            }
        }
    }
}
