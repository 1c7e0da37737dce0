//! A real single-node Slurm cluster on localhost for one test, through `scripts/slurm/local-cluster.sh`
//! (the same script the throughput benchmark uses): munged, slurmctld and slurmd from Debian's
//! `slurm-wlm` and `munge` with their own key, sockets, ports and state in a temporary directory,
//! stopped on drop. Needs root (slurmd runs jobs as the submitting user).

use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) struct SlurmCluster {
    pub dir: PathBuf,
    pub conf: PathBuf,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm/local-cluster.sh")
}

impl SlurmCluster {
    /// Start the daemons; returns once the node is idle (the script polls with a deadline).
    pub(crate) fn start(dir: &Path) -> SlurmCluster {
        let out = Command::new("bash").arg(script()).arg("start").arg(dir).output().unwrap();
        assert!(
            out.status.success(),
            "starting Slurm failed (it needs root and `apt-get install -y slurm-wlm munge`; scripts/test.sh \
             installs them): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let dir = std::fs::canonicalize(dir).unwrap();
        SlurmCluster { conf: dir.join("slurm.conf"), dir }
    }

    /// A Slurm client command (sbatch, squeue, ...) pointed at this cluster.
    pub(crate) fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("SLURM_CONF", &self.conf);
        cmd
    }
}

impl Drop for SlurmCluster {
    fn drop(&mut self) {
        let _ = Command::new("bash").arg(script()).arg("stop").arg(&self.dir).output();
    }
}
