//! A real single-node Slurm cluster on localhost for one test: munged, slurmctld and slurmd from
//! Debian's `slurm-wlm` and `munge`, with their own key, sockets, ports, state and logs in a temporary
//! directory, stopped (killed) on drop. Needs root (slurmd runs jobs as the submitting user).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const INSTALL: &str = "apt-get install -y slurm-wlm munge";

pub(crate) struct SlurmCluster {
    pub dir: PathBuf,
    pub conf: PathBuf,
    children: Vec<Child>,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn need(bin: &str) -> PathBuf {
    for d in ["/usr/sbin", "/usr/bin", "/sbin", "/bin"] {
        let p = Path::new(d).join(bin);
        if p.is_file() {
            return p;
        }
    }
    panic!("{bin} not found: the Slurm test needs Slurm and munge (Debian: `{INSTALL}`; scripts/test.sh installs them)")
}

impl SlurmCluster {
    /// Start munged, slurmctld and slurmd, and wait until the node is idle.
    pub(crate) fn start(dir: &Path) -> SlurmCluster {
        assert!(
            is_root(),
            "the Slurm test runs slurmd, which must run as root (CI runs as root); run the tests as root"
        );
        let (munged, slurmctld, slurmd) = (need("munged"), need("slurmctld"), need("slurmd"));
        need("sbatch");
        std::fs::create_dir_all(dir).unwrap();
        let dir = std::fs::canonicalize(dir).unwrap();
        for sub in ["state", "spool"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let mut key = vec![0u8; 1024];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom").unwrap(), &mut key).unwrap();
        std::fs::write(dir.join("munge.key"), key).unwrap();
        std::fs::set_permissions(dir.join("munge.key"), std::fs::Permissions::from_mode(0o400)).unwrap();
        let d = dir.display();
        let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let conf = dir.join("slurm.conf");
        std::fs::write(
            &conf,
            format!(
                "ClusterName=webfreeze-test\nSlurmctldHost=localhost\nSlurmctldPort={}\nSlurmdPort={}\n\
                 AuthType=auth/munge\nAuthInfo=socket={d}/munge.sock\nCryptoType=crypto/munge\nMpiDefault=none\n\
                 ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nReturnToService=2\nSlurmUser=root\n\
                 SlurmdUser=root\nStateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\n\
                 SlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd.pid\n\
                 SlurmctldLogFile={d}/slurmctld.log\nSlurmdLogFile={d}/slurmd.log\nSwitchType=switch/none\n\
                 SchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n\
                 JobCompType=jobcomp/none\nJobAcctGatherType=jobacct_gather/none\n\
                 AccountingStorageType=accounting_storage/none\n\
                 NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\n\
                 PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP\n",
                free_port(),
                free_port()
            ),
        )
        .unwrap();
        let mut c = SlurmCluster { dir: dir.clone(), conf: conf.clone(), children: Vec::new() };
        let spawn = |cmd: &mut Command, log: &str| -> Child {
            cmd.env("SLURM_CONF", &conf)
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(dir.join(log)).unwrap())
                .spawn()
                .unwrap()
        };
        c.children.push(spawn(
            Command::new(munged).args([
                "-F",
                "--force",
                &format!("--key-file={d}/munge.key"),
                &format!("--socket={d}/munge.sock"),
                &format!("--pid-file={d}/munged.pid"),
                &format!("--log-file={d}/munged.log"),
                &format!("--seed-file={d}/munge.seed"),
            ]),
            "munged.stderr",
        ));
        c.wait_for("the munge socket", || dir.join("munge.sock").exists());
        c.children.push(spawn(Command::new(slurmctld).args(["-D", "-i"]), "slurmctld.stderr"));
        c.children.push(spawn(Command::new(slurmd).args(["-D", "-N", "localhost"]), "slurmd.stderr"));
        c.wait_for("the node to be idle", || {
            c.command("sinfo")
                .args(["-h", "-o", "%t"])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
                .unwrap_or(false)
        });
        c
    }

    /// A Slurm client command (sbatch, squeue, ...) pointed at this cluster.
    pub(crate) fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("SLURM_CONF", &self.conf);
        cmd
    }

    fn logs(&self) -> String {
        ["munged.stderr", "slurmctld.log", "slurmd.log"]
            .iter()
            .map(|f| format!("--- {f}\n{}", std::fs::read_to_string(self.dir.join(f)).unwrap_or_default()))
            .collect()
    }

    /// Poll `ready` (a daemon coming up has no event to wait on) until it holds, with a deadline.
    fn wait_for(&self, what: &str, mut ready: impl FnMut() -> bool) {
        let t0 = Instant::now();
        while !ready() {
            assert!(
                t0.elapsed() < Duration::from_secs(60),
                "Slurm: timed out waiting for {what}\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

fn is_root() -> bool {
    // /proc/self/status "Uid:" line: real, effective, saved, fs.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("Uid:")).map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

impl Drop for SlurmCluster {
    fn drop(&mut self) {
        // Cancel anything still queued, then stop the daemons (slurmd last to go, munged after them).
        let _ = self.command("scancel").args(["--user", "root"]).output();
        for c in self.children.iter_mut().rev() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
